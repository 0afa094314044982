// Reduction adapter without a GPU: spec and space, launch plans, inputs, CPU reference, verification and
// the tolerance of floating-point sums.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "tuner/core/draw.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/reduction.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/embedded.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using autotune::kernels::load_element;
using autotune::kernels::store_element;
using autotune::kernels::to_bytes;
using autotune::kernels::reduction::Float3;

namespace {

ProblemKey problem(std::int64_t n) {
  ProblemKey p;
  p.dims["n"] = n;
  return p;
}

Config config(int variant, int block, int items = 1, int vec = 1, int bps = 1, int final_ = 0, int kahan = 0) {
  return Config({{"VARIANT", variant},
                 {"BLOCK_SIZE", block},
                 {"ITEMS_PER_THREAD", items},
                 {"VEC", vec},
                 {"BLOCKS_PER_SM", bps},
                 {"FINAL", final_},
                 {"KAHAN", kahan}});
}

const TuningSpec& reduction_spec() {
  static const TuningSpec spec = specs::builtin_spec("reduction");
  return spec;
}

std::shared_ptr<const KernelAdapter> adapter() {
  static const auto a = kernels::make_reduction_adapter(reduction_spec());
  return a;
}

/// The built-in spec with extra custom operators (appended to the shipped maxmag) and extra entries in
/// family_options and workloads.
TuningSpec spec_with_options(const nlohmann::json& extra_ops, const std::vector<std::string>& extra_workloads = {},
                             const nlohmann::json& extra_options = nlohmann::json::object()) {
  auto text = embedded::find("reduction/reduction.tune.json");
  REQUIRE(text);
  nlohmann::json j = nlohmann::json::parse(std::string(*text));
  if (extra_ops.is_array()) {
    for (const auto& op : extra_ops) j["family_options"]["custom_ops"].push_back(op);
  } else {
    j["family_options"]["custom_ops"] = extra_ops;  // deliberately malformed
  }
  for (auto it = extra_options.begin(); it != extra_options.end(); ++it) j["family_options"][it.key()] = it.value();
  for (const auto& w : extra_workloads) j["workloads"].push_back(w);
  TuningSpec s = TuningSpec::from_json_text(j.dump(), "", false);
  s.source_text = reduction_spec().source_text;
  return s;
}

HostBuffers one_value(const std::vector<unsigned char>& bytes) { return HostBuffers{{"out", bytes}}; }

// Simulated device orders of a float32 sum. Grid-stride: each of threads = blocks*block threads adds its
// strided elements sequentially, blocks reduce with a tree, block results are added one after another
// (the order of atomics into out, or of a single-block second pass).
float simulate_grid_stride(const std::vector<float>& x, std::size_t blocks, std::size_t block) {
  const std::size_t threads = blocks * block;
  std::vector<float> per_thread(threads, 0.0f);
  for (std::size_t i = 0; i < x.size(); ++i) per_thread[i % threads] += x[i];
  float total = 0.0f;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::vector<float> s(per_thread.begin() + b * block, per_thread.begin() + (b + 1) * block);
    for (std::size_t stride = block / 2; stride > 0; stride /= 2)
      for (std::size_t t = 0; t < stride; ++t) s[t] += s[t + stride];
    total += s[0];
  }
  return total;
}

float simulate_sequential(const std::vector<float>& x) {
  float s = 0.0f;
  for (float v : x) s += v;
  return s;
}

float simulate_pairwise(const std::vector<float>& x, std::size_t begin, std::size_t end) {
  if (end - begin == 1) return x[begin];
  const std::size_t mid = begin + (end - begin) / 2;
  return simulate_pairwise(x, begin, mid) + simulate_pairwise(x, mid, end);
}

std::vector<float> as_floats(const std::vector<unsigned char>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

}  // namespace

TEST_CASE("reduction: spec loads and the space has the documented size", "[cpu][reduction]") {
  const TuningSpec& s = reduction_spec();
  CHECK(s.family == "reduction");
  CHECK(s.workloads.front().key() == "float32/sum");
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const ProblemKey p = s.problem_sizes.front();

  // float32/sum: variants 0-5: 6 variants x 5 block sizes x 2 FINAL = 60; variants 6-7: 2 x 27 (BLOCK_SIZE,
  // BLOCKS_PER_SM) pairs with at most 2048 threads per SM x 11 (ITEMS, VEC) pairs with ITEMS*VEC <= 16 x 2 FINAL
  // x 2 KAHAN = 2376.
  ParameterSpace f32 = s.space(p, d, Workload::parse("float32/sum"));
  CHECK(f32.size() == 2436);
  CHECK(f32.default_index() >= 0);
  // No Kahan for integers or min/max: 60 + 1188.
  CHECK(s.space(p, d, Workload::parse("int32/sum")).size() == 1248);
  CHECK(s.space(p, d, Workload::parse("float64/max")).size() == 1248);
  // float3: no atomics (12 bytes), no Kahan: 30 + 594.
  ParameterSpace f3 = s.space(p, d, Workload::parse("float3/maxmag"));
  CHECK(f3.size() == 624);
  for (const auto& w : s.workloads) CHECK(s.space(p, d, w).default_index() >= 0);

  // Lecture variants ignore the grid-stride parameters.
  CHECK_FALSE(f32.is_valid(config(2, 256, 2, 1, 1, 0, 0)));
  CHECK_FALSE(f32.is_valid(config(4, 256, 1, 1, 2, 0, 0)));
  CHECK(f32.is_valid(config(4, 256)));
  CHECK(f32.is_valid(config(7, 256, 4, 4, 4, 1, 1)));
  CHECK_FALSE(f3.is_valid(config(7, 256, 1, 1, 1, 1, 0)));  // FINAL=1 needs a 4- or 8-byte type
}

TEST_CASE("reduction: compile options name the type and operator", "[cpu][reduction]") {
  auto a = adapter();
  using V = std::vector<std::string>;
  CHECK(a->compile_options(Workload::parse("float32/sum")) == V{"-DDTYPE_ID=1", "-DOP_ID=0"});
  CHECK(a->compile_options(Workload::parse("int32/max")) == V{"-DDTYPE_ID=0", "-DOP_ID=2"});
  CHECK(a->compile_options(Workload::parse("float64/min")) == V{"-DDTYPE_ID=2", "-DOP_ID=1"});
  V custom = a->compile_options(Workload::parse("float3/maxmag"));
  REQUIRE(custom.size() == 6);
  CHECK(custom[0] == "-DDTYPE_ID=3");
  CHECK(custom[1] == "-DOP_ID=3");
  CHECK(custom[2] == "-DCUSTOM_T=float3");
  CHECK(custom[3] == "-DCUSTOM_COMBINE(a,b)=maxmag_pick(a, b)");
  CHECK(custom[4] == "-DCUSTOM_IDENTITY=make_float3(0.0f, 0.0f, 0.0f)");
  CHECK_THAT(custom[5], Catch::StartsWith("-DCUSTOM_PRELUDE=__device__"));
  CHECK_THROWS_AS(a->compile_options(Workload::parse("float32/prod")), UsageError);
  CHECK_THROWS_AS(a->compile_options(Workload::parse("int64/sum")), UsageError);
}

TEST_CASE("reduction: plan of the default grid-stride config", "[cpu][reduction]") {
  auto a = adapter();
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const Workload w = Workload::parse("float32/sum");
  const std::int64_t n = std::int64_t{1} << 26;
  LaunchPlan plan = a->plan(reduction_spec().default_config(), w, problem(n), d);
  REQUIRE(plan.steps.size() == 2);
  const LaunchStep& pass = plan.steps[0];
  CHECK(pass.kind == LaunchStep::Kind::kernel);
  CHECK(pass.kernel == "reduce_pass");
  CHECK(pass.grid[0] == 4 * 132);  // BLOCKS_PER_SM * sm_count, far below ceil(n / (256 * 2 * 4))
  CHECK(pass.block[0] == 256);
  CHECK(pass.shared_bytes == 8 * 4);  // one float per warp
  REQUIRE(pass.args.size() == 3);
  CHECK(pass.args[0].buffer == "in");
  CHECK(pass.args[1].buffer == "partials");
  CHECK(pass.args[2].kind == KernelArg::Kind::u64);
  CHECK(pass.args[2].i == n);
  const LaunchStep& fin = plan.steps[1];
  CHECK(fin.kernel == "reduce_final");
  CHECK(fin.grid[0] == 1);
  CHECK(fin.block[0] == 256);
  REQUIRE(fin.args.size() == 3);
  CHECK(fin.args[0].buffer == "partials");
  CHECK(fin.args[1].buffer == "out");
  CHECK(fin.args[2].i == 4 * 132);
  REQUIRE(plan.find("in"));
  CHECK(plan.find("in")->bytes == static_cast<std::size_t>(n) * 4);
  CHECK(plan.find("in")->role == BufferRole::input);
  CHECK(plan.find("out")->bytes == 4);
  CHECK(plan.find("out")->role == BufferRole::output);
  CHECK(plan.find("partials")->bytes == 4 * 132 * 4);
  CHECK(plan.find("partials")->role == BufferRole::scratch);
}

TEST_CASE("reduction: grid-stride grids are capped so that no block is empty", "[cpu][reduction]") {
  auto a = adapter();
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const Workload w = Workload::parse("float64/sum");
  // n = 1000, 64 threads x 4 elements per block and iteration: 4 blocks, not 32 * 132.
  LaunchPlan plan = a->plan(config(6, 64, 1, 4, 32), w, problem(1000), d);
  REQUIRE(plan.steps.size() == 2);
  CHECK(plan.steps[0].grid[0] == 4);
  CHECK(plan.steps[0].shared_bytes == 64 * 8);  // variant 6 reduces in shared memory
  CHECK(plan.steps[1].args[2].i == 4);
  // A single block writes straight into out.
  plan = a->plan(config(7, 1024, 8, 2, 2), w, problem(16384), d);
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].grid[0] == 1);
  CHECK(plan.steps[0].args[1].buffer == "out");
  CHECK(plan.find("partials") == nullptr);
}

TEST_CASE("reduction: lecture variants chain passes until one block remains", "[cpu][reduction]") {
  auto a = adapter();
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const Workload w = Workload::parse("int32/sum");
  // 1000003 -> 15626 -> 245 -> 4 -> 1 with 64 threads and one element per thread.
  LaunchPlan plan = a->plan(config(0, 64), w, problem(1000003), d);
  REQUIRE(plan.steps.size() == 4);
  const std::int64_t counts[] = {1000003, 15626, 245, 4};
  const std::uint32_t grids[] = {15626, 245, 4, 1};
  const std::size_t region_b = 62720;  // 15626 * 4 bytes rounded up to 256
  for (int i = 0; i < 4; ++i) {
    INFO("pass " << i);
    CHECK(plan.steps[i].kernel == "reduce_pass");
    CHECK(plan.steps[i].grid[0] == grids[i]);
    CHECK(plan.steps[i].block[0] == 64);
    CHECK(plan.steps[i].shared_bytes == 64 * 4);
    CHECK(plan.steps[i].args[2].i == counts[i]);
  }
  CHECK(plan.steps[0].args[0].buffer == "in");
  CHECK(plan.steps[0].args[1].buffer == "partials");
  CHECK(plan.steps[0].args[1].offset_bytes == 0);
  CHECK(plan.steps[1].args[0].offset_bytes == 0);
  CHECK(plan.steps[1].args[1].offset_bytes == region_b);
  CHECK(plan.steps[2].args[0].offset_bytes == region_b);
  CHECK(plan.steps[2].args[1].offset_bytes == 0);
  CHECK(plan.steps[3].args[0].buffer == "partials");
  CHECK(plan.steps[3].args[1].buffer == "out");
  CHECK(plan.find("partials")->bytes == region_b + 245 * 4);

  // Variants 3-5 load two elements per thread: ceil(1000 / 2048) = 1 block, a single pass.
  plan = a->plan(config(3, 1024), w, problem(1000), d);
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].grid[0] == 1);
  CHECK(plan.steps[0].args[1].buffer == "out");
  // Two passes: partials of the first, then one block into out.
  plan = a->plan(config(5, 256), w, problem(1 << 16), d);
  REQUIRE(plan.steps.size() == 2);
  CHECK(plan.steps[0].grid[0] == 128);
  CHECK(plan.find("partials")->bytes == 128 * 4);
}

TEST_CASE("reduction: FINAL=1 initialises out to the identity", "[cpu][reduction]") {
  auto a = adapter();
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const Config c = config(7, 256, 2, 4, 4, 1);
  struct Case {
    const char* workload;
    std::uint32_t value;
    std::size_t count;
  };
  for (Case k : {Case{"float32/sum", 0u, 1}, Case{"float32/min", 0x7f800000u, 1}, Case{"float32/max", 0xff800000u, 1},
                 Case{"int32/sum", 0u, 1}, Case{"int32/min", 0x7fffffffu, 1}, Case{"int32/max", 0x80000000u, 1},
                 Case{"float64/sum", 0u, 2}}) {
    INFO(k.workload);
    LaunchPlan plan = a->plan(c, Workload::parse(k.workload), problem(12345), d);
    REQUIRE(plan.steps.size() == 2);
    CHECK(plan.steps[0].kind == LaunchStep::Kind::memset32);
    CHECK(plan.steps[0].buffer == "out");
    CHECK(plan.steps[0].value == k.value);
    CHECK(plan.steps[0].count == k.count);
    CHECK(plan.steps[1].kernel == "reduce_pass");
    CHECK(plan.steps[1].args[1].buffer == "out");
    CHECK(plan.find("partials") == nullptr);
  }
  // float64 +-inf is not one repeated 32-bit word: a one-thread kernel writes the identity.
  for (const char* wk : {"float64/min", "float64/max"}) {
    LaunchPlan plan = a->plan(c, Workload::parse(wk), problem(12345), d);
    REQUIRE(plan.steps.size() == 2);
    CHECK(plan.steps[0].kind == LaunchStep::Kind::kernel);
    CHECK(plan.steps[0].kernel == "reduce_init");
    CHECK(plan.steps[0].grid[0] == 1);
    CHECK(plan.steps[0].block[0] == 1);
    REQUIRE(plan.steps[0].args.size() == 1);
    CHECK(plan.steps[0].args[0].buffer == "out");
  }
  // Lecture variants with atomics: one pass over the whole input.
  LaunchPlan plan = a->plan(config(1, 128, 1, 1, 1, 1), Workload::parse("int32/min"), problem(1000003), d);
  REQUIRE(plan.steps.size() == 2);
  CHECK(plan.steps[1].grid[0] == 7813);
}

TEST_CASE("reduction: n = 1 works and n = 0 is a usage error", "[cpu][reduction]") {
  auto a = adapter();
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  for (const auto& w : reduction_spec().workloads) {
    for (int v = 0; v < 8; ++v) {
      INFO(w.key() << " variant " << v);
      Config c = v < 6 ? config(v, 64) : config(v, 64, 8, 2, 32);
      LaunchPlan plan = a->plan(c, w, problem(1), d);
      REQUIRE(plan.steps.size() == 1);
      CHECK(plan.steps[0].grid[0] == 1);
      CHECK(plan.steps[0].args[1].buffer == "out");
      HostBuffers in = a->make_inputs(w, problem(1), 3);
      CHECK(in.at("in").size() == static_cast<std::size_t>(dtype_size(w.dtype)));
    }
    CHECK_THROWS_WITH(a->plan(reduction_spec().default_config(), w, problem(0), d), "n must be at least 1");
    CHECK_THROWS_AS(a->make_inputs(w, problem(0), 1), UsageError);
    CHECK_THROWS_AS(a->bytes_moved(w, problem(-5)), UsageError);
  }
  CHECK_THROWS_AS(
      a->plan(reduction_spec().default_config(), Workload::parse("float32/sum"), ProblemKey::parse("rows=4"), d),
      UsageError);
}

TEST_CASE("reduction: bytes moved are the bytes read", "[cpu][reduction]") {
  auto a = adapter();
  CHECK(a->bytes_moved(Workload::parse("float32/sum"), problem(1000)) == 4000);
  CHECK(a->bytes_moved(Workload::parse("float64/max"), problem(1000)) == 8000);
  CHECK(a->bytes_moved(Workload::parse("float3/maxmag"), problem(1000)) == 12000);
}

TEST_CASE("reduction: inputs are seeded, non-zero and in the documented ranges", "[cpu][reduction]") {
  auto a = adapter();
  const ProblemKey p = problem(10007);
  for (const auto& w : reduction_spec().workloads) {
    INFO(w.key());
    HostBuffers x1 = a->make_inputs(w, p, 42), x2 = a->make_inputs(w, p, 42), x3 = a->make_inputs(w, p, 43);
    REQUIRE(x1.size() == 1);
    CHECK(x1.at("in") == x2.at("in"));
    CHECK(x1.at("in") != x3.at("in"));
    CHECK(x1.at("in").size() == 10007u * dtype_size(w.dtype));
  }
  const std::vector<unsigned char> f = a->make_inputs(Workload::parse("float32/sum"), p, 1).at("in");
  for (std::size_t i = 0; i < 10007; ++i) {
    const float v = load_element<float>(f, i);
    REQUIRE(std::fabs(v) >= 0.5f);
    REQUIRE(std::fabs(v) < 1.0f);
    REQUIRE(v * 64.0f == std::floor(v * 64.0f));  // a multiple of 2^-6
  }
  const std::vector<unsigned char> m = a->make_inputs(Workload::parse("float64/min"), p, 1).at("in");
  int distinct_bits = 0;
  for (std::size_t i = 0; i < 10007; ++i) {
    const double v = load_element<double>(m, i);
    REQUIRE(v != 0.0);
    REQUIRE(std::fabs(v) <= 1.0);
    if (v * 64.0 != std::floor(v * 64.0)) ++distinct_bits;
  }
  CHECK(distinct_bits > 10000);  // full precision for min/max
  const std::vector<unsigned char> is = a->make_inputs(Workload::parse("int32/sum"), p, 1).at("in");
  const std::vector<unsigned char> im = a->make_inputs(Workload::parse("int32/max"), p, 1).at("in");
  for (std::size_t i = 0; i < 10007; ++i) {
    const std::int32_t s = load_element<std::int32_t>(is, i), v = load_element<std::int32_t>(im, i);
    REQUIRE(s != 0);
    REQUIRE(s >= -1000);
    REQUIRE(s <= 1000);
    REQUIRE(v != 0);
    REQUIRE(std::abs(v) <= (1 << 30));
  }
  const std::vector<unsigned char> v3 = a->make_inputs(Workload::parse("float3/maxmag"), p, 1).at("in");
  for (std::size_t i = 0; i < 3 * 10007; ++i) REQUIRE(load_element<float>(v3, i) != 0.0f);
}

TEST_CASE("reduction: exact references and verification of int32 and min/max", "[cpu][reduction]") {
  auto a = adapter();
  const ProblemKey p = problem(3);
  auto ints = [](std::vector<std::int32_t> v) {
    std::vector<unsigned char> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return HostBuffers{{"in", b}};
  };
  // Integer sums wrap modulo 2^32 like the kernel's unsigned arithmetic.
  const HostBuffers in = ints({std::numeric_limits<std::int32_t>::max(), 5, 7});
  auto ref = a->reference(in, Workload::parse("int32/sum"), p);
  REQUIRE(ref);
  CHECK(load_element<std::int32_t>(ref->at("out"), 0) == std::numeric_limits<std::int32_t>::min() + 11);
  CHECK(load_element<std::int32_t>(a->reference(in, Workload::parse("int32/min"), p)->at("out"), 0) == 5);
  CHECK(load_element<std::int32_t>(a->reference(in, Workload::parse("int32/max"), p)->at("out"), 0) ==
        std::numeric_limits<std::int32_t>::max());

  const Workload w = Workload::parse("int32/max");
  const HostBuffers expected = *a->reference(in, w, p);
  CHECK(a->verify(expected, expected, w, p).empty());
  CHECK_THAT(a->verify(one_value(to_bytes<std::int32_t>(5)), expected, w, p),
             Catch::Contains("result 5 but expected 2147483647"));
  CHECK_THAT(a->verify(one_value(to_bytes<std::int32_t>(-1)), expected, w, p), Catch::Contains("int32/max"));
  CHECK_THAT(a->verify(HostBuffers{}, expected, w, p), Catch::Contains("missing"));
  CHECK_THAT(a->verify(one_value(to_bytes<double>(1.0)), expected, w, p), Catch::Contains("bytes"));

  // float min/max are exact selections: one ulp off is wrong.
  const Workload fmin = Workload::parse("float32/min");
  const ProblemKey big = problem(100003);
  const HostBuffers fin = a->make_inputs(fmin, big, 9);
  const HostBuffers fexp = *a->reference(fin, fmin, big);
  float best = 2.0f;
  for (std::size_t i = 0; i < 100003; ++i) best = std::min(best, load_element<float>(fin.at("in"), i));
  CHECK(load_element<float>(fexp.at("out"), 0) == best);
  CHECK(a->verify(one_value(to_bytes(best)), fexp, fmin, big).empty());
  CHECK_FALSE(a->verify(one_value(to_bytes(std::nextafter(best, 0.0f))), fexp, fmin, big).empty());
  CHECK_FALSE(a->verify(one_value(to_bytes(0xffffffffu)), fexp, fmin, big).empty());  // poison (NaN)
  const Workload dmax = Workload::parse("float64/max");
  const HostBuffers din = a->make_inputs(dmax, big, 9);
  const HostBuffers dexp = *a->reference(din, dmax, big);
  const double dbest = load_element<double>(dexp.at("out"), 0);
  CHECK(dbest > 0.99);
  CHECK(a->verify(one_value(to_bytes(dbest)), dexp, dmax, big).empty());
  CHECK_FALSE(a->verify(one_value(to_bytes(std::nextafter(dbest, 0.0))), dexp, dmax, big).empty());
}

TEST_CASE(
    "reduction: the recipes of inputs drawn on the GPU describe make_inputs, and their summaries give the "
    "same expected values",
    "[cpu][reduction]") {
  auto a = adapter();
  // Three whole chunks and a part of one: the chunks' seeds and the order of their combination both matter.
  const std::int64_t n = 3 * static_cast<std::int64_t>(kernels::kChunkElements) + 17;
  const ProblemKey p = problem(n);
  for (const char* key : {"int32/sum", "int32/min", "int32/max", "float32/sum", "float32/min", "float32/max",
                          "float64/sum", "float64/min", "float64/max"}) {
    INFO(key);
    const Workload w = Workload::parse(key);
    const HostBuffers in = a->make_inputs(w, p, 77);
    const std::vector<DrawRecipe> draws = a->device_draws(w, p, 77);
    REQUIRE(draws.size() == 1);
    const DrawRecipe& r = draws.front();
    CHECK(r.name == "in");
    CHECK(r.seed == 77);
    CHECK(r.count == static_cast<std::uint64_t>(n));
    CHECK(r.chunks() == 4);
    REQUIRE(r.bytes() == in.at("in").size());
    const std::vector<DrawChunk> chunks = summarize_draw(r, in.at("in"));
    const std::optional<HostBuffers> from_draws = a->reference_of_draws({{"in", chunks}}, w, p);
    REQUIRE(from_draws);
    CHECK(*from_draws == *a->reference(in, w, p));
    // The summaries are of these inputs: another seed gives other hashes and another reference.
    const std::vector<DrawChunk> other = summarize_draw(r, a->make_inputs(w, p, 78).at("in"));
    CHECK(other.front().hash != chunks.front().hash);
    CHECK(*a->reference_of_draws({{"in", other}}, w, p) != *from_draws);
    CHECK_THROWS_AS(a->reference_of_draws({{"in", {chunks.front()}}}, w, p), UsageError);  // too few chunks
    CHECK_THROWS_AS(a->reference_of_draws({}, w, p), UsageError);
  }
  // Custom operators keep their inputs on the host (their reference kernels read them there or on the device).
  CHECK(a->device_draws(Workload::parse("float3/maxmag"), p, 77).empty());
}

TEST_CASE("summarize_draw: one changed element changes its chunk's hash and extremes only", "[cpu][reduction]") {
  DrawRecipe r;
  r.name = "in";
  r.kind = DrawRecipe::Kind::int32_nonzero;
  r.count = 10;
  r.chunk = 4;
  std::vector<unsigned char> bytes(40);
  for (std::int32_t i = 0; i < 10; ++i) store_element(bytes, static_cast<std::size_t>(i), i + 1);
  const std::vector<DrawChunk> a = summarize_draw(r, bytes);
  REQUIRE(a.size() == 3);
  CHECK(a[1].min == 5);
  CHECK(a[1].max == 8);
  CHECK(a[2].wrapped == 19u);
  store_element(bytes, 5, std::int32_t{-7});
  const std::vector<DrawChunk> b = summarize_draw(r, bytes);
  CHECK(b[0].hash == a[0].hash);
  CHECK(b[1].hash != a[1].hash);
  CHECK(b[1].min == -7);
  CHECK(b[2].hash == a[2].hash);
  CHECK_THROWS_AS(summarize_draw(r, std::vector<unsigned char>(36)), UsageError);
}

TEST_CASE("reduction: maxmag picks the largest magnitude with deterministic ties", "[cpu][reduction]") {
  using kernels::reduction::maxmag_combine;
  auto same = [](Float3 a, Float3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; };
  const Float3 a{1, 0, 0}, b{0, -2, 0}, c{0, 0, 1}, d{-1, 0, 0};
  CHECK(same(maxmag_combine(a, b), b));
  CHECK(same(maxmag_combine(b, a), b));
  CHECK(same(maxmag_combine(a, c), a));  // equal magnitude: larger x wins
  CHECK(same(maxmag_combine(c, a), a));
  CHECK(same(maxmag_combine(a, d), a));
  CHECK(same(maxmag_combine(d, c), c));  // x: -1 < 0
  CHECK(same(maxmag_combine(Float3{0, 0, 0}, d), d));  // the identity loses to any non-zero point

  // The reduction is independent of the order (a total order): shuffled and tree orders agree.
  auto a_ = adapter();
  const Workload w = Workload::parse("float3/maxmag");
  const ProblemKey p = problem(5001);
  HostBuffers in = a_->make_inputs(w, p, 17);
  std::vector<Float3> pts(5001);
  std::memcpy(pts.data(), in.at("in").data(), 5001 * sizeof(Float3));
  pts[4000] = Float3{0.0f, 0.0f, 2.0f};  // two largest points of equal magnitude
  pts[123] = Float3{0.0f, 2.0f, 0.0f};
  std::memcpy(in.at("in").data(), pts.data(), 5001 * sizeof(Float3));
  HostBuffers expected = *a_->reference(in, w, p);
  CHECK(same(load_element<Float3>(expected.at("out"), 0), Float3{0.0f, 2.0f, 0.0f}));  // y breaks the tie
  std::mt19937_64 rng(5);
  std::shuffle(pts.begin(), pts.end(), rng);
  Float3 acc{0, 0, 0};
  for (const Float3& q : pts) acc = maxmag_combine(q, acc);
  CHECK(a_->verify(one_value(to_bytes(acc)), expected, w, p).empty());
  CHECK_THAT(a_->verify(one_value(to_bytes(Float3{0.0f, 0.0f, 2.0f})), expected, w, p),
             Catch::Contains("result (0, 0, 2) but expected (0, 2, 0)"));
}

TEST_CASE("reduction: float sums are checked with an n-scaled tolerance", "[cpu][reduction]") {
  using kernels::reduction::dtype_epsilon;
  using kernels::reduction::sum_tolerance;
  const double eps32 = dtype_epsilon("float32");
  CHECK(eps32 == std::ldexp(1.0, -23));
  CHECK(dtype_epsilon("float64") == std::ldexp(1.0, -52));
  CHECK(sum_tolerance(4, eps32, 1 << 20, 1.0) == Approx(4 * eps32 * 1024));
  CHECK(sum_tolerance(4, eps32, 4 << 20, 1.0) == Approx(2 * sum_tolerance(4, eps32, 1 << 20, 1.0)));
  // At n = 2^28 the bound still lies far below the smallest input magnitude (0.5): a dropped or
  // duplicated element cannot hide in it.
  CHECK(sum_tolerance(4, eps32, std::int64_t{1} << 28, 1.0) < 0.01);

  auto a = adapter();
  const Workload w = Workload::parse("float32/sum");
  const std::int64_t n = (std::int64_t{1} << 22) + 3;
  const ProblemKey p = problem(n);
  const HostBuffers in = a->make_inputs(w, p, 2024);
  const HostBuffers expected = *a->reference(in, w, p);
  const double ref = load_element<double>(expected.at("reference"), 0);
  const double tol = load_element<double>(expected.at("tolerance"), 0);
  CHECK(tol == Approx(sum_tolerance(4, eps32, n, 63.0 / 64.0)));
  const std::vector<float> x = as_floats(in.at("in"));
  double exact = 0;
  for (float v : x) exact += v;  // exact: multiples of 2^-6 far below 2^47
  CHECK(ref == exact);

  // Orders a GPU may use are all accepted.
  auto check_value = [&](float got) { return a->verify(one_value(to_bytes(got)), expected, w, p); };
  CHECK(check_value(static_cast<float>(ref)).empty());
  CHECK(check_value(simulate_sequential(x)).empty());
  CHECK(check_value(simulate_pairwise(x, 0, x.size())).empty());
  CHECK(check_value(simulate_grid_stride(x, 4 * 132, 256)).empty());
  CHECK(check_value(simulate_grid_stride(x, 132, 64)).empty());
  CHECK(check_value(simulate_grid_stride(x, (x.size() + 63) / 64, 64)).empty());  // one element per thread

  // Real errors are caught: one dropped element, an element counted twice, a block counted twice.
  std::vector<float> dropped(x.begin() + 1, x.end());
  CHECK_THAT(check_value(simulate_grid_stride(dropped, 4 * 132, 256)), Catch::Contains("tolerance"));
  std::vector<float> doubled = x;
  doubled.push_back(x[n / 2]);
  CHECK_FALSE(check_value(simulate_grid_stride(doubled, 4 * 132, 256)).empty());
  double block_sum = 0;
  std::size_t block = 0;
  for (; block_sum == 0; ++block) {
    block_sum = 0;
    for (std::size_t i = block * 256; i < (block + 1) * 256; ++i) block_sum += x[i];
  }
  CHECK_FALSE(check_value(static_cast<float>(ref + block_sum)).empty());
  CHECK_FALSE(check_value(std::numeric_limits<float>::quiet_NaN()).empty());
  CHECK_FALSE(check_value(std::numeric_limits<float>::infinity()).empty());

  // float64: the same, with a much smaller bound.
  const Workload wd = Workload::parse("float64/sum");
  const HostBuffers ind = a->make_inputs(wd, p, 7);
  const HostBuffers expd = *a->reference(ind, wd, p);
  const double refd = load_element<double>(expd.at("reference"), 0);
  CHECK(a->verify(one_value(to_bytes(refd)), expd, wd, p).empty());
  CHECK_FALSE(a->verify(one_value(to_bytes(refd + 0.5)), expd, wd, p).empty());
  CHECK(load_element<double>(expd.at("tolerance"), 0) < 1e-9);
}

TEST_CASE("reduction: custom operators from family_options", "[cpu][reduction]") {
  const nlohmann::json bitor_op = {{"name", "bitor"},
                                   {"dtype", "int32"},
                                   {"combine", "(a | b)"},
                                   {"identity", "0"}};
  TuningSpec s = spec_with_options(nlohmann::json::array({bitor_op}), {"int32/bitor"});
  auto a = kernels::make_reduction_adapter(s);
  const Workload w = Workload::parse("int32/bitor");
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const ProblemKey p = problem(100000);
  using V = std::vector<std::string>;
  CHECK(a->compile_options(w) ==
        V{"-DDTYPE_ID=0", "-DOP_ID=3", "-DCUSTOM_COMBINE(a,b)=(a | b)", "-DCUSTOM_IDENTITY=0"});
  // No CPU implementation: the reference kernels of the same source provide the expected value.
  CHECK_FALSE(a->reference(a->make_inputs(w, p, 1), w, p).has_value());
  auto ref = a->reference_plan(w, p, d);
  REQUIRE(ref);
  REQUIRE(ref->steps.size() == 2);
  CHECK(ref->steps[0].kernel == "reduce_reference_chunks");
  CHECK(ref->steps[0].grid[0] * ref->steps[0].block[0] == 8192);
  CHECK(ref->steps[0].args[2].i == 100000);
  CHECK(ref->steps[0].args[3].i == 13);  // ceil(100000 / 8192)
  CHECK(ref->steps[1].kernel == "reduce_reference_final");
  CHECK(ref->steps[1].args[2].i == 8192);
  CHECK(ref->find("out")->role == BufferRole::output);
  CHECK(ref->find("ref_partials")->bytes == 8192 * 4);
  CHECK_THAT(a->reference_source(), Catch::StartsWith("#define AUTOTUNE_REFERENCE_ONLY 1\n"));
  // Exact comparison of the bytes, FINAL=1 allowed (4 bytes: compare-and-swap) with reduce_init.
  const HostBuffers expected = one_value(to_bytes<std::int32_t>(0x7fff));
  CHECK(a->verify(expected, expected, w, p).empty());
  CHECK_FALSE(a->verify(one_value(to_bytes<std::int32_t>(0x7ffe)), expected, w, p).empty());
  LaunchPlan plan = a->plan(config(7, 256, 2, 4, 4, 1), w, p, d);
  REQUIRE(plan.steps.size() == 2);
  CHECK(plan.steps[0].kernel == "reduce_init");
  CHECK(s.space(p, d, w).size() == 1248);
  // Built-in workloads have no reference plan.
  CHECK_FALSE(adapter()->reference_plan(Workload::parse("float32/sum"), p, d).has_value());
  CHECK_FALSE(adapter()->reference_plan(Workload::parse("float3/maxmag"), p, d).has_value());
}

TEST_CASE("reduction: bad family_options name the field", "[cpu][reduction]") {
  using nlohmann::json;
  auto make = [](const json& ops, const std::vector<std::string>& wl = {}, const json& extra = json::object()) {
    return kernels::make_reduction_adapter(spec_with_options(ops, wl, extra));
  };
  auto pointer_of = [&](const json& ops, const std::vector<std::string>& wl = {},
                        const json& extra = json::object()) -> std::string {
    try {
      make(ops, wl, extra);
    } catch (const SpecError& e) {
      return e.pointer();
    }
    return "no error";
  };
  const json ok = {{"name", "absmax"}, {"dtype", "float32"}, {"combine", "a"}, {"identity", "0.0f"}};
  CHECK_NOTHROW(make(json::array({ok}), {"float32/absmax"}));
  CHECK(pointer_of(json::array({ok}), {}, {{"colour", 1}}) == "/family_options/colour");
  CHECK(pointer_of(5) == "/family_options/custom_ops");
  nlohmann::json bad = ok;
  bad.erase("combine");
  CHECK(pointer_of(json::array({bad})) == "/family_options/custom_ops/1");
  bad = ok;
  bad["dtype"] = "int8";
  CHECK(pointer_of(json::array({bad})) == "/family_options/custom_ops/1/dtype");
  bad = ok;
  bad["name"] = "sum";
  CHECK(pointer_of(json::array({bad})) == "/family_options/custom_ops/1/name");
  bad = ok;
  bad["combine"] = "a +\n b";
  CHECK(pointer_of(json::array({bad})) == "/family_options/custom_ops/1/combine");
  bad = ok;
  bad["cpu_reference"] = "maxmag";  // needs float3
  CHECK(pointer_of(json::array({bad})) == "/family_options/custom_ops/1/cpu_reference");
  bad = ok;
  bad["shape"] = "round";
  CHECK(pointer_of(json::array({bad})) == "/family_options/custom_ops/1/shape");
  CHECK(pointer_of(json::array({ok, ok})) == "/family_options/custom_ops/2/name");
  // A workload whose custom operator is defined for another dtype, or not at all.
  CHECK(pointer_of(json::array({ok}), {"float64/absmax"}) == "/workloads/10");
  CHECK(pointer_of(json::array(), {"float32/nothing"}) == "/workloads/10");
}

// Hidden (run with: test_cpu "[.slow]"): the worst device orders of a float32 sum at n = 2^28 stay within
// the tolerance. Needs about 1 GiB of memory and several seconds.
TEST_CASE("reduction: float32 sums at n = 2^28 respect the tolerance in any order", "[cpu][reduction][.slow]") {
  auto a = adapter();
  const Workload w = Workload::parse("float32/sum");
  const std::int64_t n = std::int64_t{1} << 28;
  const ProblemKey p = problem(n);
  const HostBuffers in = a->make_inputs(w, p, 1);
  const HostBuffers expected = *a->reference(in, w, p);
  const std::vector<float> x = as_floats(in.at("in"));
  auto check_value = [&](float got) { return a->verify(one_value(to_bytes(got)), expected, w, p); };
  CHECK(check_value(simulate_sequential(x)).empty());
  CHECK(check_value(simulate_grid_stride(x, 132, 64)).empty());
  CHECK(check_value(simulate_grid_stride(x, x.size() / 64, 64)).empty());  // 2^22 atomics of block sums
  std::vector<float> dropped(x.begin() + 1, x.end());
  CHECK_FALSE(check_value(simulate_sequential(dropped)).empty());
}
