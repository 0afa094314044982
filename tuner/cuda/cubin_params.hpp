// What a CUBIN says about its entry points' parameters, read from the image itself (no driver call): the
// parameter lists that the launch checks compare a plan's arguments with (plan_binding.cpp). The driver's
// cuFuncGetParamInfo answers one index at a time and tells the end of the list only by failing past it, which a
// CUDA API checker (compute-sanitizer) reports as an error of the application; reading the image asks nothing
// past the end.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace autotune::cuda::detail {

/// Each entry point's parameter sizes in bytes, in parameter order, by its symbol name (an extern "C" name as it
/// is, a C++ name mangled), from the image's .nv.info.<symbol> sections (EIATTR_KPARAM_INFO records). A function
/// of the image without parameters maps to an empty list. nullopt when the image is not a 64-bit little-endian
/// ELF, or a section or record runs past the image's end: then nothing is known. Thread-safe (no state).
using ParameterSizes = std::map<std::string, std::vector<std::size_t>>;
std::optional<ParameterSizes> cubin_parameter_sizes(const unsigned char* image, std::size_t bytes);

}  // namespace autotune::cuda::detail
