#include <catch2/catch.hpp>
#include <cstring>

#include "tuner/core/error.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;

TEST_CASE("user adapter: plan, inputs and verification follow the spec", "[cpu][user]") {
  TuningSpec s = kernels::load_spec(std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs/tiny.tune.json");
  auto a = kernels::make_adapter(s);
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  Workload w = s.workloads.front();
  ProblemKey p = ProblemKey::parse("n=1001");
  Config c({{"BLOCK_SIZE", 64}});
  LaunchPlan plan = a->plan(c, w, p, d);
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].kernel == "tiny_kernel");
  CHECK(plan.steps[0].grid[0] == 16);  // ceil(1001 / 64)
  CHECK(plan.steps[0].block[0] == 64);
  REQUIRE(plan.steps[0].args.size() == 3);
  CHECK(plan.steps[0].args[2].i == 1001);
  REQUIRE(plan.find("y"));
  CHECK(plan.find("y")->role == BufferRole::output);
  CHECK(plan.find("x")->bytes == 1001 * 4);

  auto ref = a->reference_plan(w, p, d);
  REQUIRE(ref);
  CHECK(ref->steps[0].kernel == "tiny_reference");
  CHECK(ref->steps[0].grid[0] == 16);  // ceil(1001 / 64)
  CHECK_FALSE(a->reference(HostBuffers{}, w, p).has_value());

  HostBuffers in1 = a->make_inputs(w, p, 5), in2 = a->make_inputs(w, p, 5), in3 = a->make_inputs(w, p, 6);
  CHECK(in1.at("x") == in2.at("x"));
  CHECK(in1.at("x") != in3.at("x"));
  for (std::size_t i = 0; i < 1001; ++i) {
    float v;
    std::memcpy(&v, in1.at("x").data() + 4 * i, 4);
    CHECK(v != 0.0f);
  }

  HostBuffers expected{{"y", in1.at("x")}};
  CHECK(a->verify(expected, expected, w, p).empty());
  HostBuffers wrong = expected;
  wrong["y"][4 * 700] ^= 1;
  CHECK_THAT(a->verify(wrong, expected, w, p), Catch::Contains("[700]"));
  CHECK(a->bytes_moved(w, p) == 2.0 * 1001 * 4);
}

TEST_CASE("the shipped example spec loads", "[cpu][user]") {
  TuningSpec s = kernels::load_spec(std::string(AUTOTUNE_TEST_DATA_DIR) + "/../../examples/saxpy/saxpy.tune.json");
  auto a = kernels::make_adapter(s);
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  CHECK(s.space(s.problem_sizes.front(), d, s.workloads.front()).size() == 20);
  CHECK(a->bytes_moved(s.workloads.front(), ProblemKey::parse("n=10")) == 120);
}

TEST_CASE("unknown kernels and families are named", "[cpu][user]") {
  CHECK_THROWS_WITH(kernels::builtin_spec("nope"), Catch::Contains("unknown kernel 'nope'") && Catch::Contains("reduction"));
  TuningSpec s = kernels::load_spec(std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs/tiny.tune.json");
  s.family = "fft";
  CHECK_THROWS_WITH(kernels::make_adapter(s), Catch::Contains("unknown family 'fft'"));
}
