// KTT's public CUDA tuning scripts (tests/data/ktt/, as KTT ships them) load, build their space and compile their
// reference (or default) configuration and a sample of the others for sm_90, with no GPU, with the macros KTT
// defines for a launch: one per tuning parameter (KTT prepends "#define NAME VALUE" of each parameter to the source
// and defines nothing else), here -DNAME=VALUE. The n-body script's kernel reads WORK_GROUP_SIZE_Y, which the script
// does not tune: it fails to compile here as in KTT, and compiles once the name is defined.
#include <catch2/catch.hpp>

#include <algorithm>

#include "tests/ktt_support.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;

namespace {

struct Sample {
  std::size_t tried = 0, compiled = 0;
  std::string first_log;  // of the first configuration that did not compile
};

/// Compiles the reference configuration and every step-th valid configuration of the script, with the
/// configuration's options (the file's CompilerOptions, then -D of each parameter) and `extra`.
Sample compile_sample(const std::string& script, std::size_t step, const std::vector<std::string>& extra = {}) {
  const TuningSpec spec = interop::resolve_kernel(script, {});
  auto adapter = kernels::make_adapter(spec);
  const ParameterSpace space =
      spec.space(spec.problem_sizes.front(), sim::SyntheticBackend::fake_device(), spec.workloads.front());
  REQUIRE(space.size() > 0);
  std::vector<Config> configs = {spec.reference_config()};
  CHECK(space.is_valid(configs.front()));
  for (std::size_t i = step; i < space.size(); i += step) configs.push_back(space.config(i));
  Sample out;
  for (const Config& c : configs) {
    std::vector<std::string> o = cuda::kernel_compile_options(*adapter, spec.workloads.front(), c, false);
    // KTT's macros: every parameter, nothing else (the tuner's strict-mode flag aside).
    for (const Param& p : spec.params)
      CHECK(std::count_if(o.begin(), o.end(),
                          [&](const std::string& s) { return s.rfind("-D" + p.name + "=", 0) == 0; }) == 1);
    o.insert(o.end(), extra.begin(), extra.end());
    const cuda::CompileResult r = cuda::compile(spec.source_text, spec.headers, "ktt.cu", o, "sm_90");
    ++out.tried;
    if (r.ok)
      ++out.compiled;
    else if (out.first_log.empty())
      out.first_log = r.log;
  }
  return out;
}

}  // namespace

TEST_CASE("KTT's CUDA tuning scripts compile at their reference and sampled configurations", "[nvrtc][t1][ktt]") {
  const std::string tutorial = autotune_test::ktt_tutorial();
  const Sample t = compile_sample(tutorial, 1);  // the reference (the first value) and the other 3
  autotune_test::remove_ktt_tutorial(tutorial);
  CHECK(t.tried == 4);
  CHECK(t.compiled == t.tried);
  const std::vector<std::string> scripts = autotune_test::ktt_example_scripts();
  for (std::size_t k = 0; k < 2; ++k) {  // the Coulomb sums: 210 valid configurations each
    const Sample s = compile_sample(scripts[k], 41);
    INFO(scripts[k] << "\n" << s.first_log);
    CHECK(s.tried == 6);
    CHECK(s.compiled == s.tried);
  }
}

TEST_CASE("KTT's n-body script: its kernel reads a name the script does not tune, in KTT as here", "[nvrtc][t1][ktt]") {
  const std::string nbody = autotune_test::ktt_example_scripts()[2];
  const Sample as_shipped = compile_sample(nbody, 300);
  CHECK(as_shipped.tried == 6);  // 1568 valid configurations
  CHECK(as_shipped.compiled == 0);
  CHECK_THAT(as_shipped.first_log, Catch::Contains("WORK_GROUP_SIZE_Y"));
  const Sample defined = compile_sample(nbody, 300, {"-DWORK_GROUP_SIZE_Y=1"});
  INFO(defined.first_log);
  CHECK(defined.compiled == defined.tried);
}
