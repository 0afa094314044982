// The launch API for a spec of your own (autotune::Kernel, tuner/runtime/kernel*.cpp) without a GPU: the caller's
// arguments are checked against the spec and packed (KernelArguments), the plan of a spec with two launch steps
// and a __constant__ table marks the scalars the caller gives, and the kernel compiles at every configuration
// with the options the launch API uses.
#include <algorithm>
#include <catch2/catch.hpp>

#include <cstring>

#include "test_support.hpp"
#include "tuner/cuda/launcher.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/runtime/kernel_args.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using runtime_detail::KernelArguments;

namespace {

TuningSpec two_step() { return specs::load_spec(autotune_test::data_dir() + "/launch_api/two_step.tune.json"); }

template <class T>
T unpacked(std::uint64_t slot) {
  T v;
  std::memcpy(&v, &slot, sizeof v);
  return v;
}

std::string pack_error(const KernelArguments& k, std::initializer_list<Arg> args) {
  std::uintptr_t buffers[64] = {};
  std::uint64_t scalars[32] = {};
  try {
    k.pack(args, buffers, scalars);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("launch API: the caller's arguments are checked against the spec and packed", "[nvrtc][launch_api]") {
  const KernelArguments k(two_step());
  CHECK(k.buffer_names() == std::vector<std::string>{"x", "tmp", "out", "bias"});
  int* x = reinterpret_cast<int*>(0x1000);
  void* tmp = reinterpret_cast<void*>(0x2000);
  std::uintptr_t buffers[64] = {};
  std::uint64_t scalars[32] = {};
  k.pack({x, tmp, DevicePtr(0x3000ull), DevicePtr(0x4000ull), -5, 7u, std::int64_t{1000003}}, buffers, scalars);
  CHECK(buffers[0] == 0x1000);
  CHECK(buffers[1] == 0x2000);
  CHECK(buffers[2] == 0x3000);
  CHECK(buffers[3] == 0x4000);  // the constant's data
  CHECK(unpacked<std::int32_t>(scalars[0]) == -5);
  CHECK(unpacked<std::int32_t>(scalars[1]) == 7);
  CHECK(unpacked<std::int32_t>(scalars[2]) == 1000003);

  CHECK_THAT(pack_error(k, {x, tmp, tmp, tmp, 1, 2}),
             Catch::Contains("two_step takes 7 arguments, 6 were given (expected: x (int32 buffer"));
  float* f = nullptr;
  CHECK_THAT(pack_error(k, {f, tmp, tmp, tmp, 1, 2, 3}),
             Catch::Contains("argument 1 ('x') of two_step holds int32, but the pointer given points to float32"));
  CHECK_THAT(pack_error(k, {x, 5, tmp, tmp, 1, 2, 3}),
             Catch::Contains("argument 2 ('tmp') of two_step is a int32 buffer: give its device pointer"));
  CHECK_THAT(pack_error(k, {x, tmp, tmp, 9, 1, 2, 3}),
             Catch::Contains("argument 4 ('bias') of two_step is a int32 constant"));
  CHECK_THAT(pack_error(k, {x, tmp, tmp, tmp, x, 2, 3}),
             Catch::Contains("argument 5 ('a') of two_step is a int32 scalar, but a pointer was given"));
  CHECK_THAT(pack_error(k, {x, tmp, tmp, tmp, 2.5, 2, 3}), Catch::Contains("a floating-point number (2.5"));
  CHECK_THAT(pack_error(k, {x, tmp, tmp, tmp, 1, 2, std::int64_t{1} << 40}),
             Catch::Contains("argument 7 ('n') of two_step is a int32 scalar, which cannot hold 1099511627776"));
  CHECK_THAT(pack_error(k, {x, tmp, tmp, tmp, 1, 2, 4294967295u}), Catch::Contains("cannot hold 4294967295"));
  CHECK(pack_error(k, {x, tmp, tmp, tmp, 1, 2, 2147483647u}).empty());

  // A float scalar takes floats and integers; its slot holds the float's bits.
  const KernelArguments saxpy(specs::load_spec(autotune_test::data_dir() + "/../../examples/saxpy/saxpy.tune.json"));
  float* xs = nullptr;
  k.pack({x, tmp, tmp, tmp, 1, 2, 3}, buffers, scalars);
  saxpy.pack({xs, xs, xs, 2, 10}, buffers, scalars);
  CHECK(unpacked<float>(scalars[0]) == 2.0f);
  saxpy.pack({xs, xs, xs, 0.5, 10}, buffers, scalars);
  CHECK(unpacked<float>(scalars[0]) == 0.5f);

  // Built-in families have classes of their own.
  CHECK_THROWS_WITH(KernelArguments(specs::builtin_spec("reduction")), Catch::Contains("autotune::Reduction"));
}

TEST_CASE("launch API: a spec with two steps and a constant table binds the caller's scalars and compiles",
          "[nvrtc][launch_api]") {
  const TuningSpec spec = two_step();
  auto adapter = kernels::make_adapter(spec);
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const Workload& w = spec.workloads.front();
  const ProblemKey p = spec.problem_sizes.front();
  const ParameterSpace space = spec.space(p, d, w);
  REQUIRE(space.size() == 12);
  for (std::size_t i = 0; i < space.size(); ++i) {
    const Config c = space.config(i);
    INFO(c.str());
    const LaunchPlan plan = adapter->plan(c, w, p, d);
    REQUIRE(plan.steps.size() == 2);
    for (const LaunchStep& s : plan.steps) {
      REQUIRE(s.args.size() == 6);  // x, tmp, out, a, shift, n: the constant is a symbol, not a parameter
      for (std::size_t k = 0; k < 3; ++k) CHECK(s.args[k].scalar == -1);
      for (std::size_t k = 3; k < 6; ++k) CHECK(s.args[k].scalar == static_cast<int>(k - 3));
      CHECK(s.grid[0] == static_cast<std::uint32_t>((1000003 + c.at("BLOCK_SIZE") * c.at("ITEMS") - 1) /
                                                    (c.at("BLOCK_SIZE") * c.at("ITEMS"))));
    }
    REQUIRE(plan.constants.size() == 1);
    CHECK(plan.constants[0].symbol == "bias");
    const auto options = cuda::kernel_compile_options(*adapter, w, c, false);
    const cuda::CompileResult r = cuda::compile(spec.source_text, spec.headers, "two_step.cu", options, "sm_90");
    INFO(r.log);
    CHECK(r.ok);
  }
}

TEST_CASE("launch API: templated entry points compile with their name expressions under the tuner's key",
          "[nvrtc][launch_api]") {
  // The launch API, the tuner and explore take a configuration's options and binary key from one recipe
  // (cuda::compile_recipe). Options without the entry points' name expressions (what the launch API once used)
  // instantiate no template, so the launched binary would hold no kernel, and its key would miss the binary the
  // tuner cached.
  const TuningSpec spec = specs::load_spec(autotune_test::data_dir() + "/launch_api/two_step_template.tune.json");
  const auto adapter = kernels::make_adapter(spec);
  const Workload& w = spec.workloads.front();
  const Config c({{"BLOCK_SIZE", 128}, {"ITEMS", 4}});
  const cuda::CompileRecipe r = cuda::compile_recipe(*adapter, w, c, "sm_90");
  const std::string expr = cuda::kNameExpressionOption;
  CHECK(std::count(r.options.begin(), r.options.end(), expr + "stage1<128, 4>") == 1);
  CHECK(std::count(r.options.begin(), r.options.end(), expr + "stage2<128, 4>") == 1);
  CHECK(r.options == cuda::kernel_compile_options(*adapter, w, c, false));  // what CudaBackend compiles
  CHECK(r.key == cuda::binary_key(spec.source_text, spec.headers, r.options, "sm_90"));
  CHECK(r.key != cuda::compile_recipe(*adapter, w, c, "sm_80").key);
  CHECK(r.key != cuda::compile_recipe(*adapter, w, Config({{"BLOCK_SIZE", 128}, {"ITEMS", 2}}), "sm_90").key);

  const cuda::CompileResult cr =
      cuda::compile(spec.source_text, spec.headers, "two_step_template.cu", r.options, "sm_90");
  INFO(cr.log);
  REQUIRE(cr.ok);
  REQUIRE(cr.lowered_names.size() == 2);
  for (const auto& step : adapter->plan(c, w, spec.problem_sizes.front(), sim::SyntheticBackend::fake_device()).steps) {
    INFO(step.kernel);
    const auto lowered = cr.lowered_names.find(step.kernel);  // the plan names the instantiation the binary holds
    REQUIRE(lowered != cr.lowered_names.end());
    CHECK(std::string(cr.cubin.begin(), cr.cubin.end()).find(lowered->second) != std::string::npos);
  }
}
