// The tuner's own kernels (tuner/cuda/device_kernels.*): the L2 flush, the draw, prefix and comparison kernels
// compile for the architectures the tuner targets, and every comparison a check can ask for has its entry point.
#include <catch2/catch.hpp>

#include <string>

#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/runtime.hpp"

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
