// tuner/explore/sweep.cpp: the sweep planner (points, exclusions with reasons, base configuration and its
// origins, launch geometry), static occupancy limits and derived geometry.
#include <catch2/catch.hpp>

#include "tuner/core/error.hpp"
#include "tuner/explore/sweep.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;
using namespace autotune::explore;

namespace {

struct Reduction {
  TuningSpec spec = specs::builtin_spec("reduction");
  std::shared_ptr<const KernelAdapter> adapter = kernels::make_adapter(spec);
  DeviceInfo dev = sim::SyntheticBackend::fake_device();  // 132 SMs, sm_90
  Workload w = Workload::parse("float32/sum");
  ProblemKey p = ProblemKey::parse("n=67108864");
  PlanFn plan_fn() const {
    return [a = adapter, w = w, p = p, d = dev](const Config& c) { return a->plan(c, w, p, d); };
  }
};

const SweepPoint& at(const SweepPlan& plan, Value bs, Value g) {
  for (const auto& pt : plan.points)
    if (pt.block_size == bs && pt.blocks_per_sm == g) return pt;
  FAIL("no point " << bs << " x " << g);
  throw 0;
}

}  // namespace

TEST_CASE("sweep: value lists and --fix parse with clear errors", "[cpu][explore]") {
  CHECK(parse_value_list("64,128, 256 ,1024", "--block-sizes") == std::vector<Value>{64, 128, 256, 1024});
  CHECK_THROWS_WITH(parse_value_list("64,abc", "--block-sizes"), Catch::Contains("--block-sizes") && Catch::Contains("integers"));
  CHECK_THROWS_WITH(parse_value_list("0,2", "--blocks-per-sm"), Catch::Contains("at least 1"));
  CHECK_THROWS_WITH(parse_value_list("2,2", "--blocks-per-sm"), Catch::Contains("twice"));
  CHECK_THROWS_AS(parse_value_list("", "--blocks-per-sm"), UsageError);

  TuningSpec s = specs::builtin_spec("reduction");
  CHECK(parse_fix("VARIANT=6", s) == std::make_pair(std::string("VARIANT"), Value{6}));
  CHECK(parse_fix("VARIANT=warp_shuffle", s) == std::make_pair(std::string("VARIANT"), Value{7}));
  CHECK(parse_fix("FINAL=atomic", s).second == 1);
  CHECK_THROWS_WITH(parse_fix("NOPE=1", s), Catch::Contains("no such parameter") && Catch::Contains("VARIANT"));
  CHECK_THROWS_WITH(parse_fix("BLOCK_SIZE=64", s), Catch::Contains("--block-sizes"));
  CHECK_THROWS_WITH(parse_fix("BLOCKS_PER_SM=2", s), Catch::Contains("--blocks-per-sm"));
  CHECK_THROWS_WITH(parse_fix("VARIANT=fastest", s), Catch::Contains("label"));
  CHECK_THROWS_AS(parse_fix("VARIANT", s), UsageError);
}

TEST_CASE("sweep: reduction over the spec's block sizes x grids, excluded points named", "[cpu][explore]") {
  Reduction r;
  SweepPlan plan = plan_sweep(r.spec, r.p, r.dev, r.w, {}, std::nullopt, r.plan_fn());
  CHECK(plan.has_grid_param);
  CHECK(plan.block_sizes == std::vector<Value>{64, 128, 256, 512, 1024});
  CHECK(plan.blocks_per_sm == std::vector<Value>{1, 2, 3, 4, 6, 8, 16, 32});
  REQUIRE(plan.points.size() == 40);
  // BLOCKS_PER_SM * BLOCK_SIZE <= 2048 leaves 8 + 7 + 6 + 4 + 2 points.
  CHECK(plan.valid_count() == 27);
  CHECK(plan.valid_configs().size() == 27);
  // Other parameters: the spec default (variant 7, 2 items of 4, second pass, no Kahan).
  CHECK(plan.base.at("VARIANT") == 7);
  CHECK(plan.base.at("ITEMS_PER_THREAD") == 2);
  CHECK_FALSE(plan.base.has("BLOCK_SIZE"));
  CHECK_FALSE(plan.base.has("BLOCKS_PER_SM"));
  CHECK(plan.origin.at("VARIANT") == "spec default");

  const SweepPoint& bad = at(plan, 1024, 4);
  CHECK_FALSE(bad.valid);
  CHECK(bad.excluded_by == "constraint `BLOCKS_PER_SM * BLOCK_SIZE <= 2048`");
  CHECK(bad.grid_blocks == 0);
  const SweepPoint& good = at(plan, 256, 2);
  CHECK(good.valid);
  CHECK(good.excluded_by.empty());
  CHECK(good.config.at("BLOCK_SIZE") == 256);
  CHECK(good.config.at("BLOCKS_PER_SM") == 2);
  CHECK(good.kernel == "reduce_pass");
  CHECK(good.grid_blocks == 2 * 132);
  CHECK(good.block_threads == 256);
  CHECK(good.shared_bytes == 4 * 256 / 32);  // variant 7: one float per warp
  CHECK(good.plan_error.empty());
  bool noted = false;
  for (const auto& n : plan.notes) noted = noted || n.find("13 of 40 points are excluded") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("sweep: base from the best known config, overridden by --fix, requested lists", "[cpu][explore]") {
  Reduction r;
  Config best({{"VARIANT", 6}, {"BLOCK_SIZE", 512}, {"ITEMS_PER_THREAD", 8}, {"VEC", 2}, {"BLOCKS_PER_SM", 4},
               {"FINAL", 1}, {"KAHAN", 0}});
  SweepRequest req;
  req.block_sizes = {128, 2048};
  req.blocks_per_sm = {2, 40};
  req.fixed["VEC"] = 4;
  SweepPlan plan = plan_sweep(r.spec, r.p, r.dev, r.w, req, best, r.plan_fn());
  CHECK(plan.base.at("VARIANT") == 6);
  CHECK(plan.base.at("ITEMS_PER_THREAD") == 8);
  CHECK(plan.base.at("VEC") == 4);
  CHECK(plan.origin.at("VARIANT") == "best known");
  CHECK(plan.origin.at("VEC") == "--fix");
  REQUIRE(plan.points.size() == 4);
  // 8 items of 4 elements exceed ITEMS_PER_THREAD * VEC <= 16: every point names that constraint.
  for (const auto& pt : plan.points) {
    CHECK_FALSE(pt.valid);
    CHECK_THAT(pt.excluded_by, Catch::Contains("ITEMS_PER_THREAD * VEC <= 16"));
  }
  // Values outside the spec's lists are named as such (and a block of 2048 breaks the device limit).
  CHECK_THAT(at(plan, 2048, 2).excluded_by,
             Catch::Contains("BLOCK_SIZE=2048 is not one of the spec's values") &&
                 Catch::Contains("BLOCK_SIZE <= max_threads_per_block"));
  CHECK_THAT(at(plan, 128, 40).excluded_by, Catch::Contains("BLOCKS_PER_SM=40 is not one of the spec's values"));

  req.fixed["VEC"] = 2;
  SweepPlan ok = plan_sweep(r.spec, r.p, r.dev, r.w, req, best, r.plan_fn());
  CHECK(at(ok, 128, 2).valid);
  CHECK(at(ok, 128, 2).grid_blocks == 264);
  CHECK(at(ok, 128, 2).shared_bytes == 4 * 128);  // variant 6: one float per thread

  req.fixed["NOPE"] = 1;
  CHECK_THROWS_AS(plan_sweep(r.spec, r.p, r.dev, r.w, req, best, r.plan_fn()), UsageError);
}

TEST_CASE("sweep: small problems cap the grid, plan errors are kept per point", "[cpu][explore]") {
  Reduction r;
  ProblemKey small = ProblemKey::parse("n=65536");
  PlanFn fn = [&](const Config& c) { return r.adapter->plan(c, r.w, small, r.dev); };
  SweepPlan plan = plan_sweep(r.spec, small, r.dev, r.w, {}, std::nullopt, fn);
  // 1024 threads x 2 items x 4 elements = 8192 elements per block: at most 8 blocks have work.
  CHECK(at(plan, 1024, 2).grid_blocks == 8);
  PlanFn broken = [](const Config&) -> LaunchPlan { throw UsageError("cannot plan"); };
  SweepPlan p2 = plan_sweep(r.spec, r.p, r.dev, r.w, {}, std::nullopt, broken);
  CHECK(at(p2, 256, 2).valid);
  CHECK(at(p2, 256, 2).plan_error == "cannot plan");
  CHECK(at(p2, 256, 2).grid_blocks == 0);
  // Without a plan function there is no geometry but the points are still planned.
  SweepPlan p3 = plan_sweep(r.spec, r.p, r.dev, r.w, {}, std::nullopt, nullptr);
  CHECK(p3.valid_count() == 27);
  CHECK(at(p3, 256, 2).grid_blocks == 0);
}

TEST_CASE("sweep: a kernel without a grid parameter sweeps the block size only", "[cpu][explore]") {
  TuningSpec scan = specs::builtin_spec("scan");
  auto adapter = kernels::make_adapter(scan);
  DeviceInfo dev = sim::SyntheticBackend::fake_device();
  Workload w = scan.workloads.front();
  ProblemKey p = ProblemKey::parse("n=67108864");
  PlanFn fn = [&](const Config& c) { return adapter->plan(c, w, p, dev); };
  SweepPlan plan = plan_sweep(scan, p, dev, w, {}, std::nullopt, fn);
  CHECK_FALSE(plan.has_grid_param);
  CHECK(plan.blocks_per_sm.empty());
  REQUIRE(plan.points.size() == 5);
  // Around the spec default (single_pass_warp, 16 items, a register cap of 2048 threads per SM): the cap needs
  // 256 threads or more, and 1024 x 16 elements do not fit 48 KiB of shared memory; 256 and 512 remain.
  std::size_t valid = 0;
  for (const auto& pt : plan.points) {
    CHECK(pt.blocks_per_sm == 0);
    if (!pt.valid) continue;
    ++valid;
    CHECK(pt.grid_blocks > 0);
  }
  CHECK(valid == 2);
  CHECK_FALSE(plan.notes.empty());
  SweepRequest req;
  req.blocks_per_sm = {1, 2};
  CHECK_THROWS_WITH(plan_sweep(scan, p, dev, w, req, std::nullopt, fn), Catch::Contains("--blocks-per-sm does not apply"));
  TuningSpec tr = specs::builtin_spec("transpose");
  CHECK_THROWS_WITH(plan_sweep(tr, tr.problem_sizes.front(), dev, tr.workloads.front(), {}, std::nullopt, nullptr),
                    Catch::Contains("no BLOCK_SIZE parameter"));
}

TEST_CASE("sweep: static occupancy limits and derived geometry", "[cpu][explore]") {
  DeviceInfo dev = sim::SyntheticBackend::fake_device();
  REQUIRE(sm_limits(90));
  CHECK(sm_limits(90)->max_threads_per_sm == 2048);
  CHECK(sm_limits(86)->max_threads_per_sm == 1536);
  CHECK_FALSE(sm_limits(11));

  Occupancy o = theoretical_occupancy(dev, 256, 32);
  CHECK(o.source == Occupancy::Source::theoretical);
  CHECK(o.blocks_per_sm == 8);  // 2048 / 256
  CHECK_THAT(o.note, Catch::Contains("registers"));
  CHECK(theoretical_occupancy(dev, 64, 0).blocks_per_sm == 32);     // the 32-block limit
  CHECK(theoretical_occupancy(dev, 100, 0).blocks_per_sm == 16);    // 100 threads occupy 4 warps: 2048 / 128
  CHECK(theoretical_occupancy(dev, 256, 100 * 1024).blocks_per_sm == 2);  // 228 KB / (100 KB + 1 KB)
  DeviceInfo old = dev;
  old.cc = 11;
  CHECK(theoretical_occupancy(old, 256, 0).source == Occupancy::Source::unknown);

  SweepPoint pt;
  pt.grid_blocks = 528;  // 4 x 132
  pt.block_threads = 512;
  Occupancy four{4, Occupancy::Source::driver, ""};
  Geometry g = geometry(pt, four, 132);
  CHECK(g.grid_in_sms == Approx(4));
  CHECK(g.waves == Approx(1));
  CHECK(g.whole_waves);
  CHECK(g.resident_threads_per_sm == Approx(2048));
  Occupancy three{3, Occupancy::Source::driver, ""};  // e.g. registers limit the SM to 3 blocks
  g = geometry(pt, three, 132);
  CHECK(g.waves == Approx(4.0 / 3));
  CHECK_FALSE(g.whole_waves);
  CHECK(g.resident_threads_per_sm == Approx(1536));
  g = geometry(pt, Occupancy{}, 132);  // unknown occupancy: grid / SMs x block
  CHECK(g.waves == 0);
  CHECK(g.resident_threads_per_sm == Approx(2048));
}
