// The reference of a user kernel compiled as CudaBackend compiles it (cuda::kernel_compile_options), without a
// GPU: a reference given as a configuration of the tuned kernel gets that configuration's -D macros and entry
// points, for sm_90.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "test_support.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

std::string files_dir() { return autotune_test::data_dir() + "/files"; }

/// filed.tune.json with `reference` added and a guard in front of its source that fails the compilation unless
/// the macros are the named configuration's.
TuningSpec filed_with_reference(const std::string& reference) {
  std::ifstream in(files_dir() + "/filed.tune.json");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  text.insert(text.rfind('}'), ", \"reference\": " + reference);
  TuningSpec s = TuningSpec::from_json_text(text, files_dir(), true);
  s.source_text =
      "#if BLOCK_SIZE != 64 || VARIANT != 1\n#error \"not the reference configuration\"\n#endif\n" + s.source_text;
  return s;
}

bool has(const std::vector<std::string>& options, const std::string& o) {
  return std::find(options.begin(), options.end(), o) != options.end();
}

}  // namespace

TEST_CASE("a reference configuration compiles for sm_90 with its own macros", "[nvrtc][data_file]") {
  const TuningSpec s = filed_with_reference(R"({"configuration": {"BLOCK_SIZE": 64, "VARIANT": "planted"}})");
  auto a = kernels::make_adapter(s);
  const Workload w = s.workloads.front();
  const std::vector<std::string> options = cuda::kernel_compile_options(*a, w, s.reference_config(), true);
  CHECK(has(options, "-DBLOCK_SIZE=64"));
  CHECK(has(options, "-DVARIANT=1"));
  CHECK(has(options, "-DAUTOTUNE_STRICT=1"));
  CHECK(a->reference_source() == s.source_text);
  const cuda::CompileResult r = cuda::compile(a->reference_source(), s.headers, "filed_reference.cu", options, "sm_90");
  INFO(r.log);
  CHECK(r.ok);
  CHECK_FALSE(r.cubin.empty());
  // The guard does fail at the default configuration's macros: what compiled above had the reference's.
  const cuda::CompileResult d = cuda::compile(a->reference_source(), s.headers, "filed_reference.cu",
                                              cuda::kernel_compile_options(*a, w, s.default_config(), true), "sm_90");
  CHECK_FALSE(d.ok);
  CHECK_THAT(d.log, Catch::Contains("not the reference configuration"));
}

TEST_CASE("a reference configuration of a templated entry point names that instantiation", "[nvrtc][data_file]") {
  TuningSpec s = specs::load_spec(autotune_test::data_dir() + "/specs/pnpoly_cmem.tune.json");
  ReferenceSpec r;
  r.configuration = Config({{"BLOCK_SIZE", 64}, {"USE_CMEM", 1}});
  s.reference = r;
  auto a = kernels::make_adapter(s);
  const std::vector<std::string> options =
      cuda::kernel_compile_options(*a, s.workloads.front(), s.reference_config(), true);
  CHECK(has(options, std::string(cuda::kNameExpressionOption) + "pnpoly<64>"));
  CHECK(has(options, "-DBLOCK_SIZE=64"));
  // The reference kernel of the spec's own is not compiled: the configuration is the reference.
  for (const std::string& o : options) CHECK(o.find("pnpoly_reference") == std::string::npos);
  const cuda::CompileResult c =
      cuda::compile(a->reference_source(), s.headers, "pnpoly_reference.cu", options, "sm_90");
  INFO(c.log);
  REQUIRE(c.ok);
  CHECK(c.lowered_names.count("pnpoly<64>") == 1);
  // The tuned configurations compile with the spec's kernels alone (no empty reference entry point).
  const std::vector<std::string> tuned =
      cuda::kernel_compile_options(*a, s.workloads.front(), Config({{"BLOCK_SIZE", 256}, {"USE_CMEM", 0}}), false);
  CHECK(std::count_if(tuned.begin(), tuned.end(),
                      [](const std::string& o) { return o.rfind(cuda::kNameExpressionOption, 0) == 0; }) == 1);
  CHECK(has(tuned, std::string(cuda::kNameExpressionOption) + "pnpoly<256>"));
}
