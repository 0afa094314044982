// The tuner's own kernels (tuner/cuda/device_kernels.*): the L2 flush, the draw, prefix and comparison kernels
// compile for the architectures the tuner targets, and every comparison a check can ask for has its entry point.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "tuner/core/draw.hpp"
#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/specs/embedded.hpp"

using namespace autotune;

namespace {

bool contains(const std::vector<unsigned char>& image, const std::string& text) {
  return std::search(image.begin(), image.end(), text.begin(), text.end()) != image.end();
}

}  // namespace

TEST_CASE("the tool kernels (L2 flush, draw, prefix, comparisons) compile for sm_80 and sm_90 with every entry point",
          "[nvrtc]") {
  for (const char* arch : {"sm_80", "sm_90"}) {
    const cuda::CompileResult r =
        cuda::compile(cuda::detail::tool_kernels_source(), {}, "autotune_tools.cu", cuda::detail::tool_kernels_options(), arch);
    INFO(arch << ": " << r.log);
    REQUIRE(r.ok);
    CHECK(contains(r.cubin, cuda::detail::kL2FlushKernel));
    CHECK(contains(r.cubin, cuda::detail::kDrawKernel + std::string(1, '\0')));
    for (const char* prefix :
         {cuda::detail::kPrefixTotalsKernel, cuda::detail::kPrefixCarriesKernel, cuda::detail::kPrefixWriteKernel})
      CHECK(contains(r.cubin, prefix + std::string(1, '\0')));
    OutputCheck c;
    using K = OutputCheck::Kind;
    for (K kind : {K::bits, K::float_equal, K::abs_tolerance, K::rel_tolerance}) {
      for (std::uint32_t es : {1u, 2u, 3u, 4u, 8u, 12u}) {
        if (kind != K::bits && es != 4 && es != 8) continue;
        c.kind = kind;
        c.element_bytes = es;
        const std::string name = cuda::detail::compare_kernel_name(c);
        INFO("kind " << static_cast<int>(kind) << ", " << es << " bytes: " << name);
        CHECK(contains(r.cubin, name + std::string(1, '\0')));
      }
    }
    c.kind = K::abs_tolerance;  // float outputs against float expected values and tolerances
    c.element_bytes = 4;
    c.reference_bytes = 4;
    CHECK(contains(r.cubin, cuda::detail::compare_kernel_name(c) + std::string(1, '\0')));
  }
}

TEST_CASE("comparison kernels are chosen by kind and element size", "[nvrtc]") {
  OutputCheck c;
  c.element_bytes = 4;
  CHECK(cuda::detail::compare_kernel_name(c) == "autotune_compare_bits4");
  c.element_bytes = 12;
  CHECK(cuda::detail::compare_kernel_name(c) == "autotune_compare_bytes");
  c.kind = OutputCheck::Kind::abs_tolerance;
  c.element_bytes = 8;
  CHECK(cuda::detail::compare_kernel_name(c) == "autotune_compare_abs8");
  c.element_bytes = 4;
  c.reference_bytes = 4;
  CHECK(cuda::detail::compare_kernel_name(c) == "autotune_compare_abs4f");
  c.kind = OutputCheck::Kind::rel_tolerance;
  c.element_bytes = 4;
  CHECK(cuda::detail::compare_kernel_name(c) == "autotune_compare_rel4");
}

TEST_CASE("the tool kernels' source is the embedded kernels_src/tools/device_kernels.cu with the host's hash constants",
          "[nvrtc]") {
  const std::optional<std::string_view> file = embedded::find(cuda::detail::kToolKernelsPath);
  REQUIRE(file.has_value());
  const std::string& source = cuda::detail::tool_kernels_source();
  CHECK(source == std::string(*file));
  // The first lines NVRTC sees: the u64 type, then the FNV-1a constants that tuner/core/draw.hpp hashes with.
  const std::string head =
      "typedef unsigned long long u64;\nconstexpr u64 kHashBasis = " + std::to_string(kDrawHashBasis) +
      "ull;\nconstexpr u64 kHashPrime = " + std::to_string(kDrawHashPrime) +
      "ull;\n\nextern \"C\" __global__ void autotune_l2_flush(";
  CHECK(source.compare(0, head.size(), head) == 0);
  // Every source compiles on its own: the file holds all it needs (sm_90 here; sm_80 above).
  const cuda::CompileResult r =
      cuda::compile(std::string(*file), {}, "device_kernels.cu", cuda::detail::tool_kernels_options(), "sm_90");
  INFO(r.log);
  CHECK(r.ok);
}

TEST_CASE("the L2 flush buffer is twice the L2 in whole 32-bit words, none when the L2 size is not known", "[nvrtc]") {
  CHECK(cuda::detail::l2_flush_bytes(50 << 20) == std::size_t{100} << 20);  // an H100's 50 MiB
  CHECK(cuda::detail::l2_flush_bytes(3) == 8);                              // 6 bytes, rounded up to 2 words
  CHECK(cuda::detail::l2_flush_bytes(0) == 0);
  CHECK(cuda::detail::l2_flush_bytes(-1) == 0);
}
