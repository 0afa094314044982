// Scan family host adapter (tuner/kernels/scan.cpp): spec and space, compile options, launch plans (also
// executed by a CPU emulation of the three kernels, on poisoned buffers with bounds checks, to test the
// plan wiring end to end), inputs, reference, verification against perturbed outputs, bytes moved.
// No GPU, no NVRTC.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "plan_emulation.hpp"
#include "scan_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using autotune::kernels::load_element;
using autotune::kernels::store_element;
using autotune_test::scan_config;
using autotune_test::size_n;
using autotune_test::View;

namespace {

const char* const kWorkloads[] = {"float32/inclusive_sum", "float32/exclusive_sum", "float32/inclusive_max",
                                  "int32/inclusive_sum",   "int32/exclusive_sum",   "int32/inclusive_max",
                                  "int32/exclusive_max",   "float64/inclusive_sum", "float64/exclusive_sum"};

std::shared_ptr<const KernelAdapter> adapter() { return kernels::make_scan_adapter(specs::builtin_spec("scan")); }

// ---- CPU emulation of a scan launch plan -------------------------------------------------------------------

template <typename V>
struct ScanOps {
  bool max = false;
  V identity() const {
    if (!max) return V(0);
    if constexpr (std::is_integral<V>::value) return std::numeric_limits<V>::min();
    else return -std::numeric_limits<V>::infinity();
  }
  V combine(V a, V b) const {
    if (max) return a > b ? a : b;
    if constexpr (std::is_integral<V>::value)
      return static_cast<V>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
    else
      return a + b;
  }
};

/// The tag bits of launch generation g (scan.cu's generation_tag).
std::uint32_t generation_tag(std::uint32_t g) { return (g % 0x3fffffffu + 1u) << 2; }

/// Runs the plan's steps `runs` times with the semantics of scan.cu's kernels (tile = BLOCK_SIZE *
/// ITEMS_PER_THREAD), as CudaBackend does: kernel state (BufferRole::state) zeroed once, outputs and scratch
/// poisoned with 0xFF before every run. Returns the output buffers of the last run.
template <typename V>
HostBuffers emulate(const LaunchPlan& plan, const HostBuffers& inputs, std::int64_t tile, bool max, int runs = 2) {
  const ScanOps<V> ops{max};
  HostBuffers bufs = autotune_test::initial_buffers(plan, inputs);
  const bool cleared = autotune_test::clears_state(plan);  // a memset step clears the state before each run
  for (int run = 0; run < runs; ++run) {
    autotune_test::poison_for_run(plan, bufs);
    auto view = [&](const KernelArg& a) {
      REQUIRE(a.kind == KernelArg::Kind::buffer);
      REQUIRE(bufs.count(a.buffer));
      REQUIRE(a.offset_bytes % 256 == 0);  // regions stay aligned for vector accesses
      return View<V>{&bufs[a.buffer], a.offset_bytes};
    };
    for (const auto& s : plan.steps) {
      if (s.kind == LaunchStep::Kind::memset32) {
        autotune_test::run_memset(s, bufs);
        continue;
      }
      const std::int64_t grid = s.grid[0];
      CHECK(s.grid[1] == 1);
      CHECK(s.grid[2] == 1);
      CHECK(s.block[0] * static_cast<std::int64_t>(s.block[1]) * s.block[2] <= 1024);
      if (s.kernel == "scan_tiles") {
        REQUIRE(s.args.size() == 5);
        const View<V> in = view(s.args[0]), out = view(s.args[1]), sums = view(s.args[3]);
        const std::int64_t n = s.args[2].i;
        const bool exclusive = s.args[4].i != 0;
        REQUIRE(grid == (n + tile - 1) / tile);
        for (std::int64_t b = 0; b < grid; ++b) {
          V acc = ops.identity();
          for (std::int64_t i = b * tile; i < std::min(n, (b + 1) * tile); ++i) {
            const V x = in.at(i);
            if (!exclusive) acc = ops.combine(acc, x);
            out.set(i, acc);
            if (exclusive) acc = ops.combine(acc, x);
          }
          sums.set(b, acc);
        }
      } else if (s.kernel == "scan_add") {
        REQUIRE(s.args.size() == 3);
        const View<V> data = view(s.args[0]), offsets = view(s.args[2]);
        const std::int64_t n = s.args[1].i;
        REQUIRE(grid == (n + tile - 1) / tile - 1);
        for (std::int64_t t = 1; t <= grid; ++t)
          for (std::int64_t i = t * tile; i < std::min(n, (t + 1) * tile); ++i)
            data.set(i, ops.combine(offsets.at(t), data.at(i)));
      } else if (s.kernel == "scan_single_pass") {
        REQUIRE(s.args.size() == 5);
        const View<V> in = view(s.args[0]), out = view(s.args[1]);
        const std::int64_t n = s.args[2].i;
        const bool exclusive = s.args[3].i != 0;
        const std::int64_t tiles = (n + tile - 1) / tile;
        REQUIRE(grid >= 1);
        REQUIRE(grid <= tiles);  // one block per tile, or fewer persistent ones (VARIANT 7, 8, 9)
        // The state the launch finds: ticket 0 of some generation g, and no tile word with g's tag (it would be
        // taken for published). It leaves every tile's inclusive prefix tagged with g and generation g + 1.
        const View<std::uint32_t> state{&bufs.at(s.args[4].buffer), s.args[4].offset_bytes};
        REQUIRE(plan.find(s.args[4].buffer)->role == BufferRole::state);
        CHECK(state.at(0) == 0u);
        const std::uint32_t gen = state.at(1);
        CHECK(gen == (cleared ? 0u : static_cast<std::uint32_t>(run)));  // CLEAR_STATE: a memset each run
        const std::uint32_t tag = generation_tag(gen);
        const std::size_t flags_at = sizeof(V) == 4 ? 0 : (4 * static_cast<std::size_t>(tiles) + 7) / 8 * 8;
        if (sizeof(V) == 4) {
          REQUIRE(bufs.at(s.args[4].buffer).size() >= 8 + 8 * static_cast<std::size_t>(tiles));
          for (std::int64_t t = 0; t < tiles; ++t) CHECK((state.at(2 + 2 * t + 1) & ~3u) != tag);
        } else {
          REQUIRE(bufs.at(s.args[4].buffer).size() >= 8 + flags_at + 16 * static_cast<std::size_t>(tiles));
          for (std::int64_t t = 0; t < tiles; ++t) CHECK((state.at(2 + t) & ~3u) != tag);
        }
        V acc = ops.identity();
        for (std::int64_t i = 0; i < n; ++i) {
          const V x = in.at(i);
          if (!exclusive) acc = ops.combine(acc, x);
          out.set(i, acc);
          if (exclusive) acc = ops.combine(acc, x);
          if (i % tile == tile - 1 || i == n - 1) {  // the tile's inclusive prefix, published
            const std::int64_t t = i / tile;
            const V prefix = exclusive ? acc : out.at(i);
            if constexpr (sizeof(V) == 4) {
              std::uint32_t bits;
              std::memcpy(&bits, &prefix, 4);
              state.set(2 + 2 * t, bits);
              state.set(2 + 2 * t + 1, tag | 2u);
            } else {
              state.set(2 + t, tag | 2u);
              const View<V> prefixes{&bufs.at(s.args[4].buffer), s.args[4].offset_bytes + 8 + flags_at + 8 * tiles};
              prefixes.set(t, prefix);
            }
          }
        }
        state.set(0, 0u);
        state.set(1, gen + 1);
      } else {
        FAIL("unknown kernel " << s.kernel);
      }
    }
  }
  return autotune_test::outputs_of(plan, bufs);
}

/// Plans, emulates and verifies one configuration; returns verify()'s message.
std::string run_emulated(const KernelAdapter& a, const Config& c, const Workload& w, std::int64_t n) {
  const ProblemKey p = size_n(n);
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const LaunchPlan plan = a.plan(c, w, p, d);
  const HostBuffers in = a.make_inputs(w, p, 42);
  const auto ref = a.reference(in, w, p);
  REQUIRE(ref);
  const std::int64_t tile = c.at("BLOCK_SIZE") * c.at("ITEMS_PER_THREAD");
  const bool max = w.op.find("max") != std::string::npos;
  HostBuffers out;
  if (w.dtype == "int32") out = emulate<std::int32_t>(plan, in, tile, max);
  else if (w.dtype == "float32") out = emulate<float>(plan, in, tile, max);
  else out = emulate<double>(plan, in, tile, max);
  return a.verify(out, *ref, w, p);
}

}  // namespace

TEST_CASE("scan spec is embedded and its spaces have a few hundred configurations", "[cpu][scan]") {
  const TuningSpec s = specs::builtin_spec("scan");
  CHECK(s.family == "scan");
  CHECK_FALSE(s.source_text.empty());
  REQUIRE(s.workloads.size() == std::size(kWorkloads));
  CHECK(s.workloads.front().key() == "float32/inclusive_sum");
  for (std::size_t i = 0; i < s.workloads.size(); ++i) CHECK(s.workloads[i].key() == kWorkloads[i]);
  CHECK(s.problem_sizes.front() == size_n(67108864));
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  for (const Workload& w : s.workloads) {
    INFO(w.key());
    const ParameterSpace space = s.space(s.problem_sizes.front(), d, w);
    CHECK(space.size() >= 100);
    // Brute force at 2^28 stays within a minute or two on the GPU machine (69 s on an H100): 2,661 for the 4-byte
    // types (2,251 before single_pass_bulk's REG_ROWS and 60 items, 2,138 before its tiles in dynamic shared memory,
    // 2,062 before single_pass_bulk, 1,964 before single_pass_async), 1,282 for float64 (1,056, 984, 948, 920).
    CHECK(space.size() <= (w.dtype == "float64" ? 1282u : 2661u));
    CHECK(space.default_index() >= 0);  // the default is valid for every element type
    // Every variant has configurations.
    for (Value v = 0; v <= 10; ++v) {
      bool found = false;
      for (std::size_t i = 0; i < space.size() && !found; ++i) found = space.config(i).at("VARIANT") == v;
      CHECK(found);
    }
    // STAGES: every value for single_pass_async (VARIANT 9), 1 for every other variant.
    std::set<Value> async_stages;
    for (std::size_t i = 0; i < space.size(); ++i) {
      const Config c = space.config(i);
      if (c.at("VARIANT") == 9)
        async_stages.insert(c.at("STAGES"));
      else
        CHECK(c.at("STAGES") == 1);
    }
    CHECK(async_stages == std::set<Value>{1, 2, 3});
  }
}

TEST_CASE("scan compile options name the element type and operator", "[cpu][scan]") {
  auto a = adapter();
  using V = std::vector<std::string>;
  CHECK(a->compile_options(Workload::parse("float32/inclusive_sum")) == V{"-DDTYPE_ID=1", "-DOP_ID=0"});
  CHECK(a->compile_options(Workload::parse("float32/exclusive_sum")) == V{"-DDTYPE_ID=1", "-DOP_ID=0"});
  CHECK(a->compile_options(Workload::parse("int32/inclusive_max")) == V{"-DDTYPE_ID=0", "-DOP_ID=2"});
  CHECK(a->compile_options(Workload::parse("float64/exclusive_sum")) == V{"-DDTYPE_ID=2", "-DOP_ID=0"});
  CHECK_THROWS_AS(a->compile_options(Workload::parse("float32/sum")), UsageError);
  CHECK_THROWS_AS(a->compile_options(Workload::parse("int64/inclusive_sum")), UsageError);
}

TEST_CASE("scan rejects specs and problems it cannot run", "[cpu][scan]") {
  auto a = adapter();
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const Workload w = Workload::parse("float32/inclusive_sum");
  CHECK_THROWS_AS(a->plan(scan_config(3, 256, 4), w, size_n(0), d), UsageError);
  CHECK_THROWS_AS(a->make_inputs(w, size_n(0), 1), UsageError);
  ProblemKey wrong;
  wrong.dims = {{"rows", 10}};
  CHECK_THROWS_AS(a->plan(scan_config(3, 256, 4), w, wrong, d), UsageError);
  TuningSpec s = specs::builtin_spec("scan");
  s.params.erase(std::find_if(s.params.begin(), s.params.end(), [](const Param& p) { return p.name == "VEC"; }));
  CHECK_THROWS_AS(kernels::make_scan_adapter(s), SpecError);
}

TEST_CASE("scan plans: one step for a single tile, levels for large n", "[cpu][scan]") {
  auto a = adapter();
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const Workload w = Workload::parse("float32/inclusive_sum");

  SECTION("n = 1 and n = tile: one scan_tiles launch") {
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{1024}}) {
      const LaunchPlan plan = a->plan(scan_config(3, 256, 4), w, size_n(n), d);
      REQUIRE(plan.steps.size() == 1);
      CHECK(plan.steps[0].kernel == "scan_tiles");
      CHECK(plan.steps[0].grid[0] == 1u);
      CHECK(plan.steps[0].block[0] == 256u);
      CHECK(plan.find("in")->bytes == static_cast<std::size_t>(n) * 4);
      CHECK(plan.find("out")->role == BufferRole::output);
    }
  }
  SECTION("tile + 1: two tiles, one level of tile totals") {
    const LaunchPlan plan = a->plan(scan_config(0, 256, 4), w, size_n(1025), d);
    REQUIRE(plan.steps.size() == 3);
    CHECK(plan.steps[0].kernel == "scan_tiles");
    CHECK(plan.steps[0].grid[0] == 2u);
    CHECK(plan.steps[1].kernel == "scan_tiles");
    CHECK(plan.steps[1].grid[0] == 1u);
    CHECK(plan.steps[2].kernel == "scan_add");
    CHECK(plan.steps[2].grid[0] == 1u);
  }
  SECTION("2^28 + 3 elements in tiles of 64: five levels") {
    // 2^28+3 -> 2^22+1 -> 65537 -> 1025 -> 17 -> 1 tiles
    const LaunchPlan plan = a->plan(scan_config(2, 64, 1), w, size_n((std::int64_t{1} << 28) + 3), d);
    CHECK(autotune_test::steps_of(plan, "scan_tiles") == 5);
    CHECK(autotune_test::steps_of(plan, "scan_add") == 4);
    REQUIRE(plan.steps.size() == 9);
    const std::uint32_t grids[] = {4194305, 65537, 1025, 17, 1, 16, 1024, 65536, 4194304};
    for (std::size_t i = 0; i < 9; ++i) CHECK(plan.steps[i].grid[0] == grids[i]);
    // scan_tiles are all first, then the adds from the top level down to the output.
    CHECK(plan.steps[8].args[0].buffer == "out");
    CHECK(plan.find("out")->bytes == ((std::size_t{1} << 28) + 3) * 4);
    CHECK(plan.find("partials")->role == BufferRole::scratch);
  }
  SECTION("single pass: one kernel, its tile state kept between launches (no memset step)") {
    const std::int64_t n = 1000003;  // 489 tiles of 2048
    const LaunchPlan p32 = a->plan(scan_config(4, 256, 8), w, size_n(n), d);
    REQUIRE(p32.steps.size() == 1);
    CHECK(p32.steps[0].kernel == "scan_single_pass");
    CHECK(p32.steps[0].grid[0] == 489u);
    CHECK(p32.steps[0].args[4].buffer == "tile_state");
    CHECK(p32.find("tile_state")->bytes == 8 + 8 * 489);
    CHECK(p32.find("tile_state")->role == BufferRole::state);
    // float64: 32-bit tags (1956 bytes, rounded up to 1960), then the two value arrays.
    const LaunchPlan p64 = a->plan(scan_config(4, 256, 8), Workload::parse("float64/inclusive_sum"), size_n(n), d);
    REQUIRE(p64.steps.size() == 1);
    CHECK(p64.find("tile_state")->bytes == 8 + 1960 + 16 * 489);
    CHECK(p64.find("tile_state")->role == BufferRole::state);
    // Prefetch: the same state, but persistent blocks: as many as 2048 threads per SM allow, at most one per tile.
    const LaunchPlan pf = a->plan(scan_config(7, 256, 8, 2, 1), w, size_n(n), d);
    REQUIRE(pf.steps.size() == 1);
    CHECK(pf.steps[0].kernel == "scan_single_pass");
    CHECK(pf.steps[0].grid[0] == 489u);  // fewer tiles than 132 SMs x 8 blocks
    const LaunchPlan big = a->plan(scan_config(7, 256, 8, 2, 1), w, size_n(std::int64_t{1} << 26), d);
    CHECK(big.steps[0].grid[0] == static_cast<unsigned>(d.sm_count * 8));
    CHECK(big.find("tile_state")->bytes == 8 + 8 * ((std::size_t{1} << 26) / 2048));
    // Asynchronous copies (VARIANT 9): persistent blocks as well; STAGES changes shared memory only.
    Config async = scan_config(9, 128, 8, 4, 1);
    async.set("STAGES", 3);
    const LaunchPlan pa = a->plan(async, w, size_n(std::int64_t{1} << 26), d);
    REQUIRE(pa.steps.size() == 1);
    CHECK(pa.steps[0].kernel == "scan_single_pass");
    CHECK(pa.steps[0].grid[0] == static_cast<unsigned>(d.sm_count * 16));
    CHECK(pa.steps[0].block[0] == 128u);
    CHECK(pa.find("tile_state")->bytes == 8 + 8 * ((std::size_t{1} << 26) / 1024));
    CHECK(a->plan(async, w, size_n(5000), d).steps[0].grid[0] == 5u);  // at most one block per tile
    // Bulk copies (VARIANT 10): one block per tile, as VARIANT 4, not persistent.
    const LaunchPlan pb = a->plan(scan_config(10, 256, 32, 4, 0, 1024, 1), w, size_n(std::int64_t{1} << 26), d);
    REQUIRE(pb.steps.size() == 1);
    CHECK(pb.steps[0].kernel == "scan_single_pass");
    CHECK(pb.steps[0].grid[0] == (1u << 26) / 8192);
    CHECK(pb.steps[0].block[0] == 256u);
    CHECK(pb.find("tile_state")->bytes == 8 + 8 * ((std::size_t{1} << 26) / 8192));
    // Its tile is dynamic shared memory (the kernel's kSharedBytes), also beyond 48 KiB; the other variants use none.
    CHECK(pb.steps[0].shared_bytes == 8192u * 4);
    const LaunchPlan huge = a->plan(scan_config(10, 1024, 56, 4, 0, 1024, 1), w, size_n(std::int64_t{1} << 26), d);
    CHECK(huge.steps[0].shared_bytes == 1024u * 56 * 4);
    CHECK(huge.steps[0].grid[0] == ((1u << 26) + 57343) / 57344);
    // REG_ROWS: the lanes' rows in registers are not in shared memory (two rows of 4 floats per thread here; float64
    // two rows of 2 doubles).
    const Config regs = scan_config(10, 1024, 64, 4, 0, 1024, 1, 1, 2);
    const LaunchPlan pr = a->plan(regs, w, size_n(std::int64_t{1} << 26), d);
    CHECK(pr.steps[0].shared_bytes == 1024u * 56 * 4);
    CHECK(pr.steps[0].grid[0] == (1u << 26) / 65536);
    const Config regs64 = scan_config(10, 256, 32, 2, 0, 1024, 1, 1, 2);
    CHECK(a->plan(regs64, Workload::parse("float64/inclusive_sum"), size_n(4096), d).steps[0].shared_bytes ==
          256u * 28 * 8);
    CHECK(p32.steps[0].shared_bytes == 0u);
    // CLEAR_STATE = 1: a memset of the launch word and the tags first (not the float64 value arrays).
    Config clear = scan_config(4, 256, 8);
    clear.set("CLEAR_STATE", 1);
    const LaunchPlan c32 = a->plan(clear, w, size_n(n), d);
    REQUIRE(c32.steps.size() == 2);
    CHECK(c32.steps[0].kind == LaunchStep::Kind::memset32);
    CHECK(c32.steps[0].buffer == "tile_state");
    CHECK(c32.steps[0].value == 0u);
    CHECK(c32.steps[0].count == (8 + 8 * 489) / 4);
    CHECK(c32.steps[1].kernel == "scan_single_pass");
    const LaunchPlan c64 = a->plan(clear, Workload::parse("float64/inclusive_sum"), size_n(n), d);
    REQUIRE(c64.steps.size() == 2);
    CHECK(c64.steps[0].count == (8 + 1960) / 4);
  }
  SECTION("exclusive is an argument of the first level only") {
    const LaunchPlan plan =
        a->plan(scan_config(3, 64, 1), Workload::parse("int32/exclusive_sum"), size_n(64 * 64 + 1), d);
    REQUIRE(autotune_test::steps_of(plan, "scan_tiles") == 3);
    CHECK(plan.steps[0].args[4].i == 1);
    CHECK(plan.steps[1].args[4].i == 1);  // tile totals are always scanned exclusively
    const LaunchPlan incl =
        a->plan(scan_config(3, 64, 1), Workload::parse("int32/inclusive_sum"), size_n(64 * 64 + 1), d);
    CHECK(incl.steps[0].args[4].i == 0);
    CHECK(incl.steps[1].args[4].i == 1);
  }
}

TEST_CASE("scan plans executed by a CPU emulation of the kernels verify for every workload", "[cpu][scan]") {
  auto a = adapter();
  std::vector<Config> configs = {scan_config(0, 64, 1),         scan_config(1, 128, 2, 2, 1),
                                 scan_config(2, 64, 2),         scan_config(3, 64, 1),
                                 scan_config(3, 256, 12, 4, 1), scan_config(4, 64, 1),
                                 scan_config(4, 256, 8, 2, 1),  scan_config(7, 128, 8, 4, 1),
                                 scan_config(8, 256, 8, 4, 1),  scan_config(9, 128, 8, 4, 1)};
  Config cleared = scan_config(4, 256, 8, 2, 1);  // CLEAR_STATE: the same kernel after a memset step
  cleared.set("CLEAR_STATE", 1);
  configs.push_back(cleared);
  // 1, a partial tile, several levels for tiles of 64 (64^2 + 1 and 64^3 + 5 elements), odd sizes.
  const std::int64_t sizes[] = {1, 3, 1000, 4097, 262149};
  for (const char* wk : kWorkloads) {
    const Workload w = Workload::parse(wk);
    for (const Config& c : configs) {
      for (std::int64_t n : sizes) {
        INFO(wk << " " << c.to_json() << " n=" << n);
        CHECK(run_emulated(*a, c, w, n) == "");
      }
    }
  }
}

TEST_CASE("scan inputs are seeded, non-zero and small for integer sums", "[cpu][scan]") {
  auto a = adapter();
  const ProblemKey p = size_n(10000);
  const Workload wi = Workload::parse("int32/inclusive_sum");
  const HostBuffers x = a->make_inputs(wi, p, 7);
  CHECK(x == a->make_inputs(wi, p, 7));
  CHECK(x != a->make_inputs(wi, p, 8));
  REQUIRE(x.at("in").size() == 40000);
  bool negative = false, positive = false;
  for (std::size_t i = 0; i < 10000; ++i) {
    const auto v = load_element<std::int32_t>(x.at("in"), i);
    CHECK(v != 0);
    CHECK(std::abs(v) <= 100);
    negative = negative || v < 0;
    positive = positive || v > 0;
  }
  CHECK(negative);
  CHECK(positive);
  const HostBuffers f = a->make_inputs(Workload::parse("float32/inclusive_sum"), p, 7);
  for (std::size_t i = 0; i < 10000; ++i) {
    const float v = load_element<float>(f.at("in"), i);
    CHECK(std::fabs(v) >= 0.5f);
    CHECK(std::fabs(v) < 1.0f);
    CHECK(v * 64 == std::round(v * 64));  // multiples of 2^-6: sums are exact
  }
}

TEST_CASE("scan reference for n = 1 and known inputs", "[cpu][scan]") {
  auto a = adapter();
  const ProblemKey one = size_n(1);
  HostBuffers in;
  in["in"] = std::vector<unsigned char>(4);
  store_element<std::int32_t>(in["in"], 0, -7);
  auto r = a->reference(in, Workload::parse("int32/inclusive_sum"), one);
  CHECK(load_element<std::int32_t>(r->at("out"), 0) == -7);
  r = a->reference(in, Workload::parse("int32/exclusive_sum"), one);
  CHECK(load_element<std::int32_t>(r->at("out"), 0) == 0);
  r = a->reference(in, Workload::parse("int32/exclusive_max"), one);
  CHECK(load_element<std::int32_t>(r->at("out"), 0) == std::numeric_limits<std::int32_t>::min());
  r = a->reference(in, Workload::parse("int32/inclusive_max"), one);
  CHECK(load_element<std::int32_t>(r->at("out"), 0) == -7);

  // Integer sums wrap modulo 2^32 like the kernels' unsigned arithmetic.
  const ProblemKey two = size_n(2);
  in["in"] = std::vector<unsigned char>(8);
  store_element<std::int32_t>(in["in"], 0, std::numeric_limits<std::int32_t>::max());
  store_element<std::int32_t>(in["in"], 1, 1);
  r = a->reference(in, Workload::parse("int32/inclusive_sum"), two);
  CHECK(load_element<std::int32_t>(r->at("out"), 1) == std::numeric_limits<std::int32_t>::min());

  // Float sums: reference and a tolerance of 2 * eps * (ceil(log2 n) + 32) * prefix of |x|, as floats for
  // float32 (the tolerance widened by the reference's rounding and rounded up), as doubles for float64.
  in["in"] = std::vector<unsigned char>(8);
  store_element<float>(in["in"], 0, 1.5f);
  store_element<float>(in["in"], 1, -0.5f);
  r = a->reference(in, Workload::parse("float32/inclusive_sum"), two);
  REQUIRE(r->at("reference").size() == 2 * sizeof(float));
  REQUIRE(r->at("tolerance").size() == 2 * sizeof(float));
  CHECK(load_element<float>(r->at("reference"), 0) == 1.5f);
  CHECK(load_element<float>(r->at("reference"), 1) == 1.0f);
  const double eps = std::numeric_limits<float>::epsilon();
  CHECK(load_element<float>(r->at("tolerance"), 1) == Approx(2 * eps * 33 * 2.0));
  CHECK(static_cast<double>(load_element<float>(r->at("tolerance"), 1)) >= 2 * eps * 33 * 2.0);  // rounded up
  r = a->reference(in, Workload::parse("float32/exclusive_sum"), two);
  CHECK(load_element<float>(r->at("reference"), 0) == 0.0f);
  CHECK(load_element<float>(r->at("tolerance"), 0) == 0.0f);
  CHECK(load_element<float>(r->at("reference"), 1) == 1.5f);
  // A prefix that float cannot hold: the tolerance covers the rounding of the reference.
  in["in"] = std::vector<unsigned char>(8);
  store_element<float>(in["in"], 0, 16777216.0f);
  store_element<float>(in["in"], 1, 1.0f);
  r = a->reference(in, Workload::parse("float32/inclusive_sum"), two);
  const double rounding = std::fabs(16777217.0 - static_cast<double>(load_element<float>(r->at("reference"), 1)));
  CHECK(rounding == 1.0);
  CHECK(static_cast<double>(load_element<float>(r->at("tolerance"), 1)) >= 2 * eps * 33 * 16777217.0 + rounding);
  in["in"] = std::vector<unsigned char>(16);
  store_element<double>(in["in"], 0, 1.5);
  store_element<double>(in["in"], 1, -0.5);
  r = a->reference(in, Workload::parse("float64/inclusive_sum"), two);
  CHECK(load_element<double>(r->at("reference"), 1) == 1.0);
  CHECK(r->at("tolerance").size() == 2 * sizeof(double));
}

TEST_CASE(
    "scan: the recipes of inputs drawn on the GPU and of expected values made there match make_inputs, reference() "
    "and checks()",
    "[cpu][scan]") {
  auto a = adapter();
  // Three whole chunks and a part of one: the chunks' seeds and the carries between them both matter.
  const std::int64_t n = 3 * static_cast<std::int64_t>(kernels::kChunkElements) + 17;
  const ProblemKey p = size_n(n);
  for (const char* key : kWorkloads) {
    INFO(key);
    const Workload w = Workload::parse(key);
    const HostBuffers in = a->make_inputs(w, p, 77);
    const std::vector<DrawRecipe> draws = a->device_draws(w, p, 77);
    REQUIRE(draws.size() == 1);
    const DrawRecipe& r = draws.front();
    CHECK(r.name == "in");
    CHECK(r.seed == 77);
    CHECK(r.count == static_cast<std::uint64_t>(n));
    CHECK(r.chunk == kernels::kChunkElements);
    REQUIRE(r.bytes() == in.at("in").size());
    // The range of the integers: every made value lies in the recipe's range, and both ends are near.
    if (r.kind == DrawRecipe::Kind::int32_nonzero) {
      const std::vector<DrawChunk> chunks = summarize_draw(r, in.at("in"));
      for (const DrawChunk& c : chunks) {
        CHECK(c.min >= static_cast<double>(r.lo));
        CHECK(c.max <= static_cast<double>(r.hi));
      }
      CHECK(chunks.front().min < 0.9 * static_cast<double>(r.lo));
      CHECK(chunks.front().max > 0.9 * static_cast<double>(r.hi));
    }
    const std::optional<PrefixRecipe> made = a->device_reference(w, p);
    REQUIRE(made);
    CHECK(made->input == "in");
    CHECK(made->count == r.count);
    CHECK(made->chunk == r.chunk);
    CHECK(made->element_bytes() == r.element_bytes());
    // The buffers it makes are the ones reference() makes and the checks read, of the same sizes.
    const HostBuffers expected = *a->reference(in, w, p);
    const OutputCheck c = a->checks(expected, w, p).front();
    CHECK(made->values == c.expected);
    CHECK(made->tolerance == (c.kind == OutputCheck::Kind::abs_tolerance ? c.tolerance : std::string()));
    std::size_t bytes = 0;
    for (const auto& [name, data] : expected) {
      CHECK((name == made->values || name == made->tolerance));
      bytes += data.size();
    }
    CHECK(made->expected_bytes() == bytes);
    CHECK(made->float_sum() == (made->scale > 0));
  }
}

TEST_CASE("scan: the float sums' reference stays within a few units in the last place of a long double sum",
          "[cpu][scan]") {
  auto a = adapter();
  const std::int64_t n = 3 * static_cast<std::int64_t>(kernels::kChunkElements) + 17;
  const ProblemKey p = size_n(n);
  for (const bool exclusive : {false, true}) {
    const Workload w = Workload::parse(exclusive ? "float64/exclusive_sum" : "float64/inclusive_sum");
    const HostBuffers in = a->make_inputs(w, p, 5);
    const HostBuffers e = *a->reference(in, w, p);
    const double scale = a->device_reference(w, p)->scale;
    REQUIRE(scale > 0);
    long double acc = 0, abs_acc = 0;
    std::size_t worst = 0, bad_tolerances = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double x = load_element<double>(in.at("in"), static_cast<std::size_t>(i));
      if (!exclusive) {
        acc += x;
        abs_acc += std::fabs(x);
      }
      const double ref = load_element<double>(e.at("reference"), static_cast<std::size_t>(i));
      const double tol = load_element<double>(e.at("tolerance"), static_cast<std::size_t>(i));
      const long double ulp = std::numeric_limits<double>::epsilon() * std::max(std::fabs(acc), 1e-300L);
      const auto off = static_cast<std::size_t>(std::fabs(static_cast<long double>(ref) - acc) / ulp);
      worst = std::max(worst, off);
      // The tolerance is the documented bound: scale times the prefix of |x| (float64: no rounding to add).
      const long double want = static_cast<long double>(scale) * abs_acc;
      if (std::fabs(static_cast<long double>(tol) - want) > want * 1e-12L) ++bad_tolerances;
      if (exclusive) {
        acc += x;
        abs_acc += std::fabs(x);
      }
    }
    INFO("exclusive " << exclusive << ": worst " << worst << " ulp");
    CHECK(worst <= 2);
    CHECK(bad_tolerances == 0);
  }
}

TEST_CASE("scan verify accepts rounding and rejects real errors", "[cpu][scan]") {
  auto a = adapter();
  const std::int64_t n = 10000;
  const ProblemKey p = size_n(n);

  SECTION("float32 inclusive sum") {
    const Workload w = Workload::parse("float32/inclusive_sum");
    const HostBuffers in = a->make_inputs(w, p, 42);
    const auto ref = a->reference(in, w, p);
    std::vector<float> x(n), prefix(n);
    double acc = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      x[i] = load_element<float>(in.at("in"), i);
      acc += x[i];
      prefix[i] = static_cast<float>(acc);
    }
    auto output = [&](const std::function<float(std::int64_t)>& f) {
      HostBuffers out;
      out["out"] = std::vector<unsigned char>(n * 4);
      for (std::int64_t i = 0; i < n; ++i) store_element<float>(out["out"], i, f(i));
      return out;
    };
    CHECK(a->verify(output([&](std::int64_t i) { return prefix[i]; }), *ref, w, p) == "");
    // Rounding noise: a few ulps of every prefix are accepted.
    CHECK(a->verify(output([&](std::int64_t i) { return prefix[i] * (1 + 4e-7f); }), *ref, w, p) == "");
    // One element dropped from every prefix from index 5000 on.
    const std::string dropped = a->verify(output([&](std::int64_t i) { return i >= 5000 ? prefix[i] - x[5000] : prefix[i]; }), *ref, w, p);
    CHECK(dropped.find("out[5000]") != std::string::npos);
    // A tile (elements 2048..4095) without the offset of the tiles before it.
    const std::string offset = a->verify(
        output([&](std::int64_t i) { return i >= 2048 && i < 4096 ? prefix[i] - prefix[2047] : prefix[i]; }), *ref, w, p);
    CHECK(offset.find("out[2048]") != std::string::npos);
    // The inclusive result shifted by one (an exclusive scan).
    CHECK(a->verify(output([&](std::int64_t i) { return i == 0 ? 0.0f : prefix[i - 1]; }), *ref, w, p) != "");
    // One element not written (still poisoned: NaN).
    const std::string poisoned = a->verify(output([&](std::int64_t i) {
      return i == 9999 ? std::numeric_limits<float>::quiet_NaN() : prefix[i];
    }), *ref, w, p);
    CHECK(poisoned.find("out[9999] = nan") != std::string::npos);
    CHECK(poisoned.find("1 of 10000") != std::string::npos);
    // Wrong size.
    HostBuffers short_out;
    short_out["out"] = std::vector<unsigned char>(4 * n - 4);
    CHECK(a->verify(short_out, *ref, w, p) != "");
    CHECK(a->verify(HostBuffers{}, *ref, w, p) != "");
  }

  SECTION("float64 exclusive sum") {
    const Workload w = Workload::parse("float64/exclusive_sum");
    const HostBuffers in = a->make_inputs(w, p, 42);
    const auto ref = a->reference(in, w, p);
    HostBuffers out;
    out["out"] = std::vector<unsigned char>(n * 8);
    double acc = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      store_element<double>(out["out"], i, acc);
      acc += load_element<double>(in.at("in"), i);
    }
    CHECK(a->verify(out, *ref, w, p) == "");
    // A dropped element is caught even at the end of a float64 scan.
    store_element<double>(out["out"], n - 1,
                          load_element<double>(out["out"], n - 1) - load_element<double>(in.at("in"), 10));
    CHECK(a->verify(out, *ref, w, p).find("out[9999]") != std::string::npos);
  }

  SECTION("integer sums and maxima are exact") {
    for (const char* wk : {"int32/inclusive_sum", "int32/exclusive_max", "float32/inclusive_max"}) {
      INFO(wk);
      const Workload w = Workload::parse(wk);
      const HostBuffers in = a->make_inputs(w, p, 3);
      const auto ref = a->reference(in, w, p);
      HostBuffers out;
      out["out"] = ref->at("out");
      CHECK(a->verify(out, *ref, w, p) == "");
      auto bad = out;
      if (w.dtype == "int32")
        store_element<std::int32_t>(bad["out"], 777, load_element<std::int32_t>(bad["out"], 777) + 1);
      else
        store_element<float>(bad["out"], 777, std::nextafter(load_element<float>(bad["out"], 777), 2.0f));
      CHECK(a->verify(bad, *ref, w, p).find("out[777]") != std::string::npos);
    }
  }
}

TEST_CASE("scan bytes moved: read and write every element once", "[cpu][scan]") {
  auto a = adapter();
  CHECK(a->bytes_moved(Workload::parse("float32/inclusive_sum"), size_n(1000)) == 8000.0);
  CHECK(a->bytes_moved(Workload::parse("float64/exclusive_sum"), size_n(1000)) == 16000.0);
  CHECK(a->bytes_moved(Workload::parse("int32/inclusive_max"), size_n(1)) == 8.0);
}
