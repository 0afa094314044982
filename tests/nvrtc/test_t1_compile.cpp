// The T1 fixtures (tests/data/t1/) compile with the options the backend builds (compile options of the file, -D of
// every parameter, string- and float-valued ones as their text) at a sample of their valid configurations, for
// sm_90, with no GPU.
#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;

TEST_CASE("T1 kernels compile at their configurations with typed macros", "[nvrtc][t1]") {
  for (const char* file : {"vector_add.json", "blur.json"}) {
    const TuningSpec spec = interop::resolve_kernel(autotune_test::data_dir() + "/t1/" + file, {});
    auto adapter = kernels::make_adapter(spec);
    const ParameterSpace space =
        spec.space(spec.problem_sizes.front(), sim::SyntheticBackend::fake_device(), spec.workloads.front());
    std::size_t compiled = 0;
    for (std::size_t i = 0; i < space.size(); i += 13) {
      const Config c = space.config(i);
      const std::vector<std::string> o = cuda::kernel_compile_options(*adapter, spec.workloads.front(), c, false);
      const cuda::CompileResult r = cuda::compile(spec.source_text, spec.headers, "t1.cu", o, "sm_90");
      INFO(file << " " << c.str(&spec.params) << "\n" << r.log);
      CHECK(r.ok);
      ++compiled;
    }
    CHECK(compiled >= 10);
  }
  // The string macro is the text: another text is another type, and an unknown one does not compile.
  const TuningSpec blur = interop::resolve_kernel(autotune_test::data_dir() + "/t1/blur.json", {});
  const std::vector<std::string> d = cuda::config_defines(blur.default_config(), blur.params);
  CHECK(std::find(d.begin(), d.end(), "-Daccumulate=float_acc") != d.end());
  CHECK(std::find(d.begin(), d.end(), "-Dthreshold=1.0") != d.end());
  std::vector<std::string> wrong = d;
  for (std::string& o : wrong)
    if (o == "-Daccumulate=float_acc") o = "-Daccumulate=no_such_type";
  wrong.push_back("-DMAXW=5");
  CHECK_FALSE(cuda::compile(blur.source_text, blur.headers, "blur.cu", wrong, "sm_90").ok);
}
