// The parameter lists read from a CUBIN (tuner/cuda/cubin_params.*), checked against kernels NVRTC compiles here
// for sm_80 and sm_90: the launch checks take them from the image, so nothing asks the driver past a kernel's
// last parameter (compute-sanitizer reports such a call as an error of the application).
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "tuner/cuda/cubin_params.hpp"
#include "tuner/cuda/runtime.hpp"

using namespace autotune;
using autotune::cuda::detail::cubin_parameter_sizes;
using Sizes = std::vector<std::size_t>;

namespace {

const char* kKernels = R"(
struct Triple { double a, b, c; };
extern "C" __global__ void mixed(int* a, double b, char c, float2 d, Triple t, short s) {
  if (c) a[0] = (int)b + (int)d.x + (int)t.c + s;
}
extern "C" __global__ void none() {}
template <int N>
__global__ void scaled(float* x, int n) { if (n > 0) x[n] = N; }
)";

}  // namespace

TEST_CASE("cubin parameters: each entry point's parameter sizes in order, from the image", "[nvrtc][cubin]") {
  for (const char* arch : {"sm_80", "sm_90"}) {
    INFO(arch);
    const cuda::CompileResult r =
        cuda::compile(kKernels, {}, "params.cu", cuda::name_expression_options({"scaled<4>"}), arch);
    INFO(r.log);
    REQUIRE(r.ok);
    const auto sizes = cubin_parameter_sizes(r.cubin.data(), r.cubin.size());
    REQUIRE(sizes.has_value());
    CHECK(sizes->at("mixed") == Sizes{8, 8, 1, 8, 24, 2});
    CHECK(sizes->at("none").empty());
    const std::string scaled = r.lowered_names.at("scaled<4>");  // C++ entry points by their symbol
    CHECK(sizes->at(scaled) == Sizes{8, 4});
    CHECK(sizes->size() == 3);
  }
}

TEST_CASE("cubin parameters: an image that is not a readable ELF tells nothing", "[nvrtc][cubin]") {
  const cuda::CompileResult r = cuda::compile(kKernels, {}, "params.cu", {}, "sm_90");
  REQUIRE(r.ok);
  CHECK_FALSE(cubin_parameter_sizes(nullptr, 0).has_value());
  const std::vector<unsigned char> text(200, 'x');
  CHECK_FALSE(cubin_parameter_sizes(text.data(), text.size()).has_value());
  // Cut short: the section headers (at the end of the image) are past the end.
  CHECK_FALSE(cubin_parameter_sizes(r.cubin.data(), r.cubin.size() / 2).has_value());
  CHECK_FALSE(cubin_parameter_sizes(r.cubin.data(), 63).has_value());
  CHECK(cubin_parameter_sizes(r.cubin.data(), r.cubin.size()).has_value());
}
