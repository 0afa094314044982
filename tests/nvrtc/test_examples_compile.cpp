// The shipped user-kernel example compiles in strict mode for every valid configuration, and its
// reference kernel compiles, for sm_80 and sm_90 (no GPU needed).
#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;

TEST_CASE("the SAXPY example compiles at every configuration and its reference compiles", "[nvrtc]") {
  TuningSpec spec = specs::load_spec(autotune_test::data_dir() + "/../../examples/saxpy/saxpy.tune.json");
  auto adapter = kernels::make_adapter(spec);
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  ParameterSpace space = spec.space(spec.problem_sizes.front(), d, spec.workloads.front());
  REQUIRE(space.size() == 20);
  for (const std::string arch : {"sm_80", "sm_90"}) {
    for (std::size_t i = 0; i < space.size(); ++i) {
      Config c = space.config(i);
      INFO(arch << " " << c.str());
      cuda::CompileResult r = cuda::compile(spec.source_text, spec.headers, "saxpy.cu", cuda::config_defines(c), arch);
      INFO(r.log);
      CHECK(r.ok);
    }
    cuda::CompileResult ref = cuda::compile(adapter->reference_source(), {}, "saxpy_ref.cu", {}, arch);
    CHECK(ref.ok);
  }
  // Strict mode: a missing tunable macro is an error, not a silent default.
  cuda::CompileResult missing = cuda::compile(spec.source_text, spec.headers, "saxpy.cu", {"-DAUTOTUNE_STRICT=1", "-DBLOCK_SIZE=128"}, "sm_90");
  CHECK_FALSE(missing.ok);
  CHECK_THAT(missing.log, Catch::Contains("ITEMS_PER_THREAD"));
}
