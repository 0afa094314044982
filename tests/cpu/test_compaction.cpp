// Compaction family host adapter (tuner/kernels/compaction.cpp): spec and space, compile options, launch
// plans (also executed by a CPU emulation of the kernels on poisoned, bounds-checked buffers), inputs with
// an exact selection ratio, reference, verification, bytes moved. No GPU, no NVRTC.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "plan_emulation.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using autotune::kernels::load_element;
using autotune::kernels::store_element;
using autotune_test::View;

namespace {

const char* const kWorkloads[] = {"float32/flagged", "float32/if", "int32/flagged", "int32/if"};

ProblemKey problem(std::int64_t n, std::int64_t pct) {
  ProblemKey p;
  p.dims = {{"n", n}, {"select_pct", pct}};
  return p;
}

Config config(Value variant, Value block, Value items, Value stage = 0) {
  return Config({{"VARIANT", variant}, {"BLOCK_SIZE", block}, {"ITEMS_PER_THREAD", items}, {"STAGE_OUTPUT", stage},
                 {"LOOKBACK_DELAY", 0}, {"MIN_THREADS_PER_SM", 0}, {"STREAMING", 0}, {"CLEAR_STATE", 0}});
}

std::shared_ptr<const KernelAdapter> adapter() {
  return kernels::make_compaction_adapter(specs::builtin_spec("compaction"));
}

/// Runs the plan `runs` times with the semantics of compaction.cu's kernels (tile = BLOCK_SIZE *
/// ITEMS_PER_THREAD) on buffers prepared like CudaBackend's: kernel state zeroed once, outputs and scratch
/// poisoned before every run. Returns the output buffers of the last run.
template <typename V>
HostBuffers emulate(const LaunchPlan& plan, const HostBuffers& inputs, std::int64_t tile, bool select_if, int runs = 2) {
  HostBuffers bufs = autotune_test::initial_buffers(plan, inputs);
  const bool cleared = autotune_test::clears_state(plan);  // a memset step clears the state before each run
  for (int run = 0; run < runs; ++run) {
    autotune_test::poison_for_run(plan, bufs);
    auto view = [&](const KernelArg& a, auto tag) {
      using W = decltype(tag);
      if (a.kind == KernelArg::Kind::u64 && a.i == 0) return View<W>{};
      REQUIRE(a.kind == KernelArg::Kind::buffer);
      REQUIRE(bufs.count(a.buffer));
      REQUIRE(a.offset_bytes % 256 == 0);
      return View<W>{&bufs[a.buffer], a.offset_bytes};
    };
    auto selected = [&](const View<V>& in, const View<unsigned char>& flags, std::int64_t i) {
      return select_if ? in.at(i) > V(0) : flags.at(i) != 0;
    };
    for (const auto& s : plan.steps) {
      if (s.kind == LaunchStep::Kind::memset32) {
        autotune_test::run_memset(s, bufs);
        continue;
      }
      const std::int64_t grid = s.grid[0];
      const bool data_kernel = s.kernel == "compact_count" || s.kernel == "compact_scatter" ||
                               s.kernel == "compact_single_pass";
      View<V> in;
      View<unsigned char> flags;
      std::int64_t n = 0;
      if (data_kernel) {
        REQUIRE(s.args.size() >= 4);
        in = view(s.args[0], V{});
        flags = view(s.args[1], static_cast<unsigned char>(0));
        CHECK(s.args[2].i == 0);  // threshold
        CHECK(s.args[2].f == 0.0);
        n = s.args[3].i;
        REQUIRE(grid == (n + tile - 1) / tile);
        if (select_if) CHECK(flags.bytes == nullptr);
      }
      if (s.kernel == "compact_count") {
        REQUIRE(s.args.size() == 5);
        const View<std::uint32_t> counts = view(s.args[4], std::uint32_t{});
        for (std::int64_t b = 0; b < grid; ++b) {
          std::uint32_t c = 0;
          for (std::int64_t i = b * tile; i < std::min(n, (b + 1) * tile); ++i) c += selected(in, flags, i) ? 1 : 0;
          counts.set(b, c);
        }
      } else if (s.kernel == "compact_scan_tiles") {
        REQUIRE(s.args.size() == 4);
        const View<std::uint32_t> src = view(s.args[0], std::uint32_t{}), dst = view(s.args[1], std::uint32_t{}),
                                  sums = view(s.args[3], std::uint32_t{});
        const std::int64_t m = s.args[2].i;
        REQUIRE(grid == (m + tile - 1) / tile);
        for (std::int64_t b = 0; b < grid; ++b) {
          std::uint32_t acc = 0;
          for (std::int64_t i = b * tile; i < std::min(m, (b + 1) * tile); ++i) {
            const std::uint32_t v = src.at(i);
            dst.set(i, acc);
            acc += v;
          }
          sums.set(b, acc);
        }
      } else if (s.kernel == "compact_scan_add") {
        REQUIRE(s.args.size() == 3);
        const View<std::uint32_t> data = view(s.args[0], std::uint32_t{}), offsets = view(s.args[2], std::uint32_t{});
        const std::int64_t m = s.args[1].i;
        REQUIRE(grid == (m + tile - 1) / tile - 1);
        for (std::int64_t t = 1; t <= grid; ++t)
          for (std::int64_t i = t * tile; i < std::min(m, (t + 1) * tile); ++i) data.set(i, data.at(i) + offsets.at(t));
      } else if (s.kernel == "compact_scatter") {
        REQUIRE(s.args.size() == 7);
        const View<std::uint32_t> offsets = view(s.args[4], std::uint32_t{});
        const View<V> out = view(s.args[5], V{});
        const View<std::uint32_t> count = view(s.args[6], std::uint32_t{});
        for (std::int64_t b = 0; b < grid; ++b) {
          std::uint32_t pos = offsets.at(b);
          for (std::int64_t i = b * tile; i < std::min(n, (b + 1) * tile); ++i)
            if (selected(in, flags, i)) out.set(pos++, in.at(i));
          if (b == grid - 1) count.set(0, pos);
        }
      } else if (s.kernel == "compact_single_pass") {
        REQUIRE(s.args.size() == 7);
        const View<V> out = view(s.args[4], V{});
        const View<std::uint32_t> count = view(s.args[5], std::uint32_t{});
        const View<std::uint32_t> state = view(s.args[6], std::uint32_t{});
        REQUIRE(plan.find(s.args[6].buffer)->role == BufferRole::state);
        // The state the launch finds: ticket 0 of generation g (the number of earlier runs), no tile word with
        // g's tag. It leaves every tile's inclusive count tagged with g and generation g + 1.
        CHECK(state.at(0) == 0u);
        const std::uint32_t gen = state.at(1);
        CHECK(gen == (cleared ? 0u : static_cast<std::uint32_t>(run)));  // CLEAR_STATE: a memset each run
        const std::uint32_t tag = (gen % 0x3fffffffu + 1u) << 2;
        for (std::int64_t t = 0; t < grid; ++t) CHECK((state.at(2 + 2 * t + 1) & ~3u) != tag);
        std::uint32_t pos = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          if (selected(in, flags, i)) out.set(pos++, in.at(i));
          if (i % tile == tile - 1 || i == n - 1) {
            state.set(2 + 2 * (i / tile), pos);
            state.set(2 + 2 * (i / tile) + 1, tag | 2u);
          }
        }
        count.set(0, pos);
        state.set(0, 0u);
        state.set(1, gen + 1);
      } else {
        FAIL("unknown kernel " << s.kernel);
      }
    }
  }
  return autotune_test::outputs_of(plan, bufs);
}

std::string run_emulated(const KernelAdapter& a, const Config& c, const Workload& w, const ProblemKey& p) {
  const LaunchPlan plan = a.plan(c, w, p, sim::SyntheticBackend::fake_device());
  const HostBuffers in = a.make_inputs(w, p, 42);
  const auto ref = a.reference(in, w, p);
  REQUIRE(ref);
  const std::int64_t tile = c.at("BLOCK_SIZE") * c.at("ITEMS_PER_THREAD");
  const bool select_if = w.op == "if";
  const HostBuffers out = w.dtype == "int32" ? emulate<std::int32_t>(plan, in, tile, select_if)
                                             : emulate<float>(plan, in, tile, select_if);
  return a.verify(out, *ref, w, p);
}

}  // namespace

TEST_CASE("compaction spec is embedded and its spaces have a few hundred configurations", "[cpu][compaction]") {
  const TuningSpec s = specs::builtin_spec("compaction");
  CHECK(s.family == "compaction");
  CHECK_FALSE(s.source_text.empty());
  CHECK(s.problem_dims == std::vector<std::string>{"n", "select_pct"});
  CHECK(s.problem_sizes.front() == problem(67108864, 50));
  REQUIRE(s.workloads.size() == std::size(kWorkloads));
  for (std::size_t i = 0; i < s.workloads.size(); ++i) CHECK(s.workloads[i].key() == kWorkloads[i]);
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  for (const Workload& w : s.workloads) {
    INFO(w.key());
    const ParameterSpace space = s.space(s.problem_sizes.front(), d, w);
    // three_phase and single_pass: 8 block sizes x 8 items x 2 output modes, less 3 staged tiles over 48 KiB
    // each (125); single_pass_blocked: 8 block sizes x 4 items (multiples of 4) x 2 output modes, less 3 (61);
    // the single-pass variants twice (LOOKBACK_DELAY 0 and 64); plus, for each single-pass variant, 55 with
    // MIN_THREADS_PER_SM 1024, 1536 or 2048 (BLOCK_SIZE >= 256 dividing it: 10 (block, value) pairs,
    // ITEMS_PER_THREAD 8/12/16 x 2 output modes = 60, LOOKBACK_DELAY 0, less the staged tiles over 48 KiB:
    // 1024 x 12 and 1024 x 16 with two values, 768 x 16 with one: 5).
    // STREAMING 1: single_pass_blocked with MIN_THREADS_PER_SM 1536 or 2048 only: 7 (block, value) pairs x 6,
    // less the same 3 staged tiles over 48 KiB (39).
    // CLEAR_STATE 1: the single-pass variants with MIN_THREADS_PER_SM 1536 or 2048: the same 39 for single_pass,
    // twice that for single_pass_blocked (STREAMING 0 and 1).
    // single_pass_bulk (LOOKBACK_DELAY 0 only; its tile's values, 4 bytes per element, in dynamic shared memory
    // within the device's opt-in limit, 227 KiB here, in both output modes, the flags in registers; the only
    // variant with 24 to 64 items): 8 block sizes x 12 items (multiples of 4) less 1024 x 60 and 64, x 2 output
    // modes (188); with a cap, the 10 (block, value) pairs x 11 items (8 and more) less the 4 beyond the limit
    // (1024 x 60 and 64 with two values), x 2 modes (212); STREAMING 1: 7 pairs x 11 items less 2, x 2 (150);
    // CLEAR_STATE 1: twice that (STREAMING 0 and 1: 300). 1613 in all.
    CHECK(space.size() == 125 + 2 * 125 + 2 * 61 + 2 * 55 + 39 + 3 * 39 + 188 + 212 + 150 + 300);
    CHECK(space.size() == 1613);
    CHECK(space.default_index() >= 0);
  }
}

TEST_CASE("compaction compile options and problem checks", "[cpu][compaction]") {
  auto a = adapter();
  using V = std::vector<std::string>;
  CHECK(a->compile_options(Workload::parse("float32/flagged")) == V{"-DDTYPE_ID=1", "-DSELECT_IF=0"});
  CHECK(a->compile_options(Workload::parse("int32/if")) == V{"-DDTYPE_ID=0", "-DSELECT_IF=1"});
  CHECK_THROWS_AS(a->compile_options(Workload::parse("float32/sum")), UsageError);
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const Workload w = Workload::parse("int32/if");
  CHECK_THROWS_AS(a->plan(config(1, 256, 4), w, problem(0, 50), d), UsageError);
  CHECK_THROWS_AS(a->make_inputs(w, problem(10, 101), 1), UsageError);
  CHECK_THROWS_AS(a->make_inputs(w, problem(10, -1), 1), UsageError);
  ProblemKey only_n;
  only_n.dims = {{"n", 10}};
  CHECK_THROWS_AS(a->plan(config(1, 256, 4), w, only_n, d), UsageError);
}

TEST_CASE("compaction plans", "[cpu][compaction]") {
  auto a = adapter();
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  SECTION("flagged inputs carry a flags buffer, 'if' passes a null pointer") {
    const LaunchPlan f = a->plan(config(1, 256, 4), Workload::parse("float32/flagged"), problem(5000, 50), d);
    REQUIRE(f.find("flags") != nullptr);
    CHECK(f.find("flags")->bytes == 5000);
    CHECK(f.find("flags")->role == BufferRole::input);
    CHECK(f.find("count")->bytes == 4);
    CHECK(f.find("count")->role == BufferRole::output);
    CHECK(f.find("out")->bytes == 20000);
    CHECK(f.steps[0].args[1].buffer == "flags");
    const LaunchPlan i = a->plan(config(1, 256, 4), Workload::parse("float32/if"), problem(5000, 50), d);
    CHECK(i.find("flags") == nullptr);
    CHECK(i.steps[0].args[1].kind == KernelArg::Kind::u64);
    CHECK(i.steps[0].args[1].i == 0);
    CHECK(i.steps[0].args[2].kind == KernelArg::Kind::f32);
    const LaunchPlan k = a->plan(config(1, 256, 4), Workload::parse("int32/if"), problem(5000, 50), d);
    CHECK(k.steps[0].args[2].kind == KernelArg::Kind::i32);
  }
  SECTION("single pass: one kernel, its tile state kept between launches (no memset step)") {
    const LaunchPlan p = a->plan(config(1, 256, 4), Workload::parse("int32/flagged"), problem(1000003, 50), d);
    REQUIRE(p.steps.size() == 1);
    CHECK(p.steps[0].kernel == "compact_single_pass");
    CHECK(p.steps[0].grid[0] == 977u);
    CHECK(p.steps[0].args[6].buffer == "tile_state");
    CHECK(p.find("tile_state")->bytes == 8 + 8 * 977);
    CHECK(p.find("tile_state")->role == BufferRole::state);
    Config clear = config(1, 256, 4);
    clear.set("CLEAR_STATE", 1);
    const LaunchPlan c = a->plan(clear, Workload::parse("int32/flagged"), problem(1000003, 50), d);
    REQUIRE(c.steps.size() == 2);
    CHECK(c.steps[0].kind == LaunchStep::Kind::memset32);
    CHECK(c.steps[0].buffer == "tile_state");
    CHECK(c.steps[0].count == (8 + 8 * 977) / 4);
    CHECK(c.steps[1].kernel == "compact_single_pass");
    CHECK(p.steps[0].shared_bytes == 0u);
    // single_pass_bulk: its tile's values in dynamic shared memory (the kernel's kSharedBytes), also beyond 48 KiB;
    // the flags travel in registers, so flagged and if take the same.
    const LaunchPlan bf = a->plan(config(3, 1024, 40, 1), Workload::parse("int32/flagged"), problem(1000003, 50), d);
    REQUIRE(bf.steps.size() == 1);
    CHECK(bf.steps[0].grid[0] == 25u);
    CHECK(bf.steps[0].shared_bytes == 1024u * 40 * 4);
    const LaunchPlan bi = a->plan(config(3, 1024, 40, 1), Workload::parse("float32/if"), problem(1000003, 50), d);
    CHECK(bi.steps[0].shared_bytes == 1024u * 40 * 4);
  }
  SECTION("three phase: count, the scan levels of the tile counts, scatter") {
    const LaunchPlan one = a->plan(config(0, 64, 1), Workload::parse("int32/flagged"), problem(64, 50), d);
    REQUIRE(one.steps.size() == 3);
    CHECK(one.steps[0].kernel == "compact_count");
    CHECK(one.steps[1].kernel == "compact_scan_tiles");
    CHECK(one.steps[2].kernel == "compact_scatter");
    // 2^28 + 3 elements in tiles of 64: 4194305 tile counts -> 65537 -> 1025 -> 17 -> 1.
    const LaunchPlan big =
        a->plan(config(0, 64, 1), Workload::parse("int32/flagged"), problem((std::int64_t{1} << 28) + 3, 50), d);
    CHECK(autotune_test::steps_of(big, "compact_count") == 1);
    CHECK(autotune_test::steps_of(big, "compact_scan_tiles") == 4);
    CHECK(autotune_test::steps_of(big, "compact_scan_add") == 3);
    CHECK(autotune_test::steps_of(big, "compact_scatter") == 1);
    REQUIRE(big.steps.size() == 9);
    CHECK(big.steps[0].grid[0] == 4194305u);
    CHECK(big.steps.back().grid[0] == 4194305u);
  }
}

TEST_CASE("compaction plans executed by a CPU emulation of the kernels verify", "[cpu][compaction]") {
  auto a = adapter();
  std::vector<Config> configs = {config(0, 64, 1), config(0, 192, 3, 1), config(0, 1024, 16),
                                 config(1, 64, 1), config(1, 384, 6, 1), config(1, 1024, 8, 1)};
  Config cleared = config(1, 256, 8, 1);  // CLEAR_STATE: the same kernel after a memset step
  cleared.set("CLEAR_STATE", 1);
  configs.push_back(cleared);
  const std::int64_t sizes[] = {1, 1000, 4097, 262149};
  for (const char* wk : kWorkloads) {
    const Workload w = Workload::parse(wk);
    for (const Config& c : configs)
      for (std::int64_t n : sizes)
        for (std::int64_t pct : {0, 1, 50, 99, 100}) {
          INFO(wk << " " << c.to_json() << " n=" << n << " pct=" << pct);
          CHECK(run_emulated(*a, c, w, problem(n, pct)) == "");
        }
  }
}

TEST_CASE("compaction inputs select exactly the requested fraction", "[cpu][compaction]") {
  auto a = adapter();
  for (const char* wk : kWorkloads) {
    const Workload w = Workload::parse(wk);
    for (std::int64_t pct : {0, 1, 50, 99, 100}) {
      INFO(wk << " pct=" << pct);
      const ProblemKey p = problem(10001, pct);
      const HostBuffers in = a->make_inputs(w, p, 9);
      CHECK(in == a->make_inputs(w, p, 9));
      CHECK(in.count("flags") == (w.op == "flagged" ? 1u : 0u));
      const auto ref = a->reference(in, w, p);
      REQUIRE(ref);
      const std::uint32_t want = static_cast<std::uint32_t>((10001 * pct + 50) / 100);
      CHECK(load_element<std::uint32_t>(ref->at("count"), 0) == want);
      CHECK(ref->at("out").size() == want * 4);
      for (std::size_t i = 0; i < 10001; ++i) {
        if (w.dtype == "int32")
          CHECK(load_element<std::int32_t>(in.at("in"), i) != 0);
        else
          CHECK(load_element<float>(in.at("in"), i) != 0.0f);
      }
    }
  }
  // The selection is spread over the array, not a prefix.
  const HostBuffers in = a->make_inputs(Workload::parse("int32/flagged"), problem(10000, 50), 1);
  std::size_t first_half = 0;
  for (std::size_t i = 0; i < 5000; ++i) first_half += in.at("flags")[i] != 0 ? 1 : 0;
  CHECK(first_half > 2300);
  CHECK(first_half < 2700);
}

TEST_CASE("compaction verify checks the count and every selected element", "[cpu][compaction]") {
  auto a = adapter();
  const Workload w = Workload::parse("float32/if");
  const ProblemKey p = problem(1000, 30);
  const HostBuffers in = a->make_inputs(w, p, 5);
  const auto ref = a->reference(in, w, p);
  const std::uint32_t k = load_element<std::uint32_t>(ref->at("count"), 0);
  REQUIRE(k == 300);
  HostBuffers out;
  out["out"] = std::vector<unsigned char>(4000, 0xFF);  // poisoned beyond the count: not checked
  std::memcpy(out["out"].data(), ref->at("out").data(), k * 4);
  out["count"] = ref->at("count");
  CHECK(a->verify(out, *ref, w, p) == "");

  auto wrong_count = out;
  store_element<std::uint32_t>(wrong_count["count"], 0, k - 1);
  CHECK(a->verify(wrong_count, *ref, w, p).find("count = 299") != std::string::npos);
  auto poisoned_count = out;
  store_element<std::uint32_t>(poisoned_count["count"], 0, 0xffffffffu);
  CHECK(a->verify(poisoned_count, *ref, w, p) != "");
  auto swapped = out;  // order matters: the compaction is stable
  std::swap_ranges(swapped["out"].begin() + 40, swapped["out"].begin() + 44, swapped["out"].begin() + 44);
  CHECK(a->verify(swapped, *ref, w, p).find("out[10]") != std::string::npos);
  auto missing_last = out;
  store_element<std::uint32_t>(missing_last["out"], k - 1, 0xffffffffu);
  CHECK(a->verify(missing_last, *ref, w, p).find("out[299]") != std::string::npos);
  auto no_count = out;
  no_count.erase("count");
  CHECK(a->verify(no_count, *ref, w, p) != "");

  // Nothing selected: only the count matters.
  const ProblemKey none = problem(1000, 0);
  const auto ref0 = a->reference(a->make_inputs(w, none, 5), w, none);
  HostBuffers out0;
  out0["out"] = std::vector<unsigned char>(4000, 0xFF);
  out0["count"] = std::vector<unsigned char>(4, 0);
  CHECK(a->verify(out0, *ref0, w, none) == "");
}

TEST_CASE("compaction bytes moved: values and flags read, selected values written", "[cpu][compaction]") {
  auto a = adapter();
  CHECK(a->bytes_moved(Workload::parse("float32/flagged"), problem(1000, 50)) == 4000.0 + 1000.0 + 2000.0);
  CHECK(a->bytes_moved(Workload::parse("int32/if"), problem(1000, 50)) == 4000.0 + 2000.0);
  CHECK(a->bytes_moved(Workload::parse("int32/if"), problem(1000, 0)) == 4000.0);
  CHECK(a->bytes_moved(Workload::parse("int32/flagged"), problem(1, 100)) == 4.0 + 1.0 + 4.0);
}
