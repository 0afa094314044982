// The tool kernels' source (kernels_src/tools/device_kernels.cu, embedded at build time) and the names and sizes
// the executor launches them with.
#include "tuner/cuda/device_kernels.hpp"

#include <optional>
#include <string_view>

#include "tuner/core/draw.hpp"
#include "tuner/core/error.hpp"
#include "tuner/specs/embedded.hpp"

namespace autotune::cuda::detail {

const std::string& tool_kernels_source() {
  static const std::string source = [] {
    const std::optional<std::string_view> text = embedded::find(kToolKernelsPath);
    if (!text) throw EnvironmentError(std::string("the tool kernels' source ") + kToolKernelsPath + " is not embedded");
    // Its first lines are the u64 type and the hash constants the host shares with it: they must match.
    const std::string head =
        "typedef unsigned long long u64;\nconstexpr u64 kHashBasis = " + std::to_string(kDrawHashBasis) +
        "ull;\nconstexpr u64 kHashPrime = " + std::to_string(kDrawHashPrime) + "ull;\n";
    if (text->substr(0, head.size()) != head)
      throw EnvironmentError(std::string(kToolKernelsPath) +
                             " does not start with the hash constants of "
                             "tuner/core/draw.hpp:\n" +
                             head);
    return std::string(*text);
  }();
  return source;
}

std::vector<std::string> tool_kernels_options() { return {"-fmad=false"}; }

std::string compare_kernel_name(const OutputCheck& c) {
  const std::uint32_t es = c.element_bytes;
  switch (c.kind) {
    case OutputCheck::Kind::bits:
      if (es == 1 || es == 2 || es == 4 || es == 8) return "autotune_compare_bits" + std::to_string(es);
      return "autotune_compare_bytes";
    case OutputCheck::Kind::float_equal: return "autotune_compare_feq" + std::to_string(es);
    case OutputCheck::Kind::abs_tolerance:
      return "autotune_compare_abs" + std::to_string(es) + (c.reference_bytes == 4 ? "f" : "");
    case OutputCheck::Kind::rel_tolerance: return "autotune_compare_rel" + std::to_string(es);
    case OutputCheck::Kind::user_kernel: return c.kernel;  // in the module of the user's comparison kernels
  }
  return "autotune_compare_bytes";
}

std::size_t l2_flush_bytes(int l2_bytes) {
  if (l2_bytes <= 0) return 0;
  return (2 * static_cast<std::size_t>(l2_bytes) + 3) / 4 * 4;
}

}  // namespace autotune::cuda::detail
