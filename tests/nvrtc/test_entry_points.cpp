// C++ entry points without a GPU: a kernel that is not extern "C" and a template instantiation, compiled as
// NVRTC name expressions (nvrtcAddNameExpression / nvrtcGetLoweredName), and the demangled-name match that
// finds them in a loaded module (tuner/cuda/plan_binding.*).
#include <catch2/catch.hpp>
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/cuda/runtime.hpp"

using namespace autotune;
using namespace autotune::cuda;

namespace {

const char* kCxxKernels = R"(
namespace geo {
__global__ void cn_pnpoly(int* bitmap, const float2* points, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) bitmap[i] = points[i].x > 0.0f;
}
}  // namespace geo
__global__ void cn_plain(int* out) { out[threadIdx.x] = 1; }
template <typename T, int N>
__global__ void my_kernel(T* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= T(N);
}
)";

bool contains(const std::vector<unsigned char>& image, const std::string& text) {
  return std::string(image.begin(), image.end()).find(text) != std::string::npos;
}

std::string demangled(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  REQUIRE(status == 0);
  return out.get();
}

}  // namespace

TEST_CASE("entry points: a templated and a C++-named kernel compile as name expressions", "[nvrtc][entry_points]") {
  const std::vector<std::string> entries = {"my_kernel<float, 4>", "geo::cn_pnpoly", "cn_plain"};
  CHECK(is_name_expression("my_kernel<float, 4>"));
  CHECK(is_name_expression("geo::cn_pnpoly"));
  CHECK_FALSE(is_name_expression("cn_plain"));  // a plain identifier: found by its demangled name when loaded
  const std::vector<std::string> options = name_expression_options(entries);
  REQUIRE(options.size() == 2);
  CHECK(options[0] == std::string(kNameExpressionOption) + "my_kernel<float, 4>");

  for (const char* arch : {"sm_80", "sm_90"}) {
    INFO(arch);
    CompileResult r = compile(kCxxKernels, {}, "cxx.cu", options, arch);
    INFO(r.log);
    REQUIRE(r.ok);
    REQUIRE(r.lowered_names.size() == 2);
    const std::string tmpl = r.lowered_names.at("my_kernel<float, 4>");
    const std::string scoped = r.lowered_names.at("geo::cn_pnpoly");
    CHECK(tmpl.rfind("_Z", 0) == 0);
    CHECK(contains(r.cubin, tmpl));  // the template was instantiated
    CHECK(contains(r.cubin, scoped));
    // The module lookup finds them by their demangled names.
    CHECK(entry_point_matches("my_kernel<float, 4>", demangled(tmpl)));
    CHECK(entry_point_matches("my_kernel<float,4>", demangled(tmpl)));
    CHECK(entry_point_matches("geo::cn_pnpoly", demangled(scoped)));
    CHECK_FALSE(entry_point_matches("my_kernel<float, 8>", demangled(tmpl)));
    CHECK_FALSE(entry_point_matches("cn_pnpoly", demangled(scoped)));
  }
  // Without the name expression the template is never instantiated: nothing to launch.
  CompileResult plain = compile(kCxxKernels, {}, "cxx.cu", {}, "sm_90");
  REQUIRE(plain.ok);
  CHECK(plain.lowered_names.empty());
  CHECK_FALSE(contains(plain.cubin, "my_kernel"));
  // An expression that names nothing is a compile failure of this configuration, with NVRTC's reason.
  CompileResult bad = compile(kCxxKernels, {}, "cxx.cu", name_expression_options({"my_kernel<nosuch, 4>"}), "sm_90");
  CHECK_FALSE(bad.ok);
  CHECK_FALSE(bad.log.empty());
  // The binary cache key covers the name expressions.
  CHECK(binary_key(kCxxKernels, {}, options, "sm_90") != binary_key(kCxxKernels, {}, {}, "sm_90"));
}

TEST_CASE("entry points: parameters in a templated entry point take the configuration's values",
          "[nvrtc][entry_points]") {
  const Config c({{"BLOCK_SIZE", 256}, {"ITEMS", 4}});
  CHECK(c.substitute("my_kernel<float, ITEMS>") == "my_kernel<float, 4>");
  CHECK(c.substitute("reduce<BLOCK_SIZE, ITEMS_X>") == "reduce<256, ITEMS_X>");  // whole identifiers only
  CompileResult r = compile(kCxxKernels, {}, "cxx.cu", name_expression_options({c.substitute("my_kernel<int, ITEMS>")}),
                            "sm_80");
  INFO(r.log);
  REQUIRE(r.ok);
  CHECK(entry_point_matches("my_kernel<int, 4>", demangled(r.lowered_names.at("my_kernel<int, 4>"))));
  CHECK(entry_point_matches("cn_plain", "cn_plain(int*)"));
}
