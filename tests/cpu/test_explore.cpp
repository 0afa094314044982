// tuner/explore/explore.cpp: sweeps run through the session loop (trials in the database, resumable),
// per-point figures, occupancy sources, the text report and the chart; and the session's explicit-list path.
#include <catch2/catch.hpp>

#include <algorithm>

#include "tests/test_support.hpp"
#include "tests/xml_check.hpp"
#include "tuner/core/error.hpp"
#include "tuner/explore/explore.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/sim/replay.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;
using namespace autotune::explore;

namespace {

constexpr double kBytes = 1e6;  // bytes per run: GB/s = 1e6 / ns

/// Peak once 1024 threads per SM are resident: t = 250 ns + 750 ns x 1024 / min(threads, 1024).
double synthetic_time(const Config& c) {
  double threads = static_cast<double>(c.at("BLOCK_SIZE") * c.at("BLOCKS_PER_SM"));
  return 250 + 750 * 1024 / std::min(threads, 1024.0);
}

const PointResult& at(const ExploreResult& r, Value bs, Value g) {
  for (const auto& p : r.points)
    if (p.point.block_size == bs && p.point.blocks_per_sm == g) return p;
  FAIL("no point " << bs << " x " << g);
  throw 0;
}

struct Setup {
  TuningSpec spec = specs::builtin_spec("reduction");
  std::shared_ptr<const KernelAdapter> adapter = kernels::make_adapter(spec);
  Workload w = Workload::parse("float32/sum");
  ProblemKey p = ProblemKey::parse("n=67108864");
  SweepPlan plan(const DeviceInfo& d, const std::optional<Config>& best = std::nullopt, SweepRequest req = {}) const {
    auto a = adapter;
    Workload ww = w;
    ProblemKey pp = p;
    return plan_sweep(spec, p, d, w, req, best, [a, ww, pp, d](const Config& c) { return a->plan(c, ww, pp, d); });
  }
};

}  // namespace

TEST_CASE("session: an explicit list of configurations is evaluated once, in order", "[cpu][explore][session]") {
  Setup s;
  auto db = db::Database::open(":memory:");
  sim::SyntheticBackend be(sim::SyntheticBackend::fake_device(), synthetic_time);
  Config a = s.spec.default_config();
  Config b = a;
  b.set("BLOCK_SIZE", 512);
  session::Options opt;
  opt.strategy = "explore";
  opt.configs = {a, b, a};
  session::Result r = session::run(s.spec, be, *db, s.w, s.p, opt);
  CHECK(r.evaluated == 2);
  CHECK(be.evaluations() == 2);
  auto sess = db->session(r.session_id);
  REQUIRE(sess);
  CHECK(sess->strategy == "explore");
  Config bad = a;
  bad.set("BLOCKS_PER_SM", 32);  // 256 x 32 > 2048
  opt.configs = {a, bad};
  CHECK_THROWS_WITH(session::run(s.spec, be, *db, s.w, s.p, opt),
                    Catch::Contains("not valid") && Catch::Contains("BLOCKS_PER_SM=32"));
}

TEST_CASE("explore: a sweep on the synthetic backend stores its trials and resumes", "[cpu][explore]") {
  Setup s;
  auto db = db::Database::open(":memory:");
  sim::SyntheticBackend be(sim::SyntheticBackend::fake_device(), synthetic_time);
  Config broken = s.spec.default_config();
  broken.set("BLOCK_SIZE", 128);
  broken.set("BLOCKS_PER_SM", 16);
  be.inject_failure(broken, TrialStatus::wrong_result, "out[0] = 3, expected 4");
  SweepPlan plan = s.plan(be.device());
  ExploreOptions opt;
  opt.bytes_moved = kBytes;
  std::size_t progress_calls = 0;
  opt.on_progress = [&](const session::Progress&) { ++progress_calls; };
  ExploreResult r = run_explore(s.spec, be, *db, s.w, s.p, plan, opt);
  CHECK(progress_calls > 0);
  CHECK(r.backend == "synthetic");
  CHECK(r.session_id > 0);
  CHECK(r.evaluated == 27);
  CHECK(r.copy_gbps == 1000.0);
  REQUIRE(r.points.size() == 40);

  db::TrialFilter f;
  f.session_id = r.session_id;
  CHECK(db->trials(f).size() == 27);  // excluded points are never run
  CHECK(db->session(r.session_id)->strategy == "explore");

  const PointResult& ok = at(r, 256, 4);
  CHECK(ok.state == "ok");
  CHECK(ok.gbps == Approx(kBytes / 1000.0));
  CHECK(ok.pct_copy == Approx(100.0 * ok.gbps / 1000.0));
  CHECK(ok.occupancy.source == Occupancy::Source::theoretical);
  CHECK(ok.occupancy.blocks_per_sm == 8);
  CHECK(ok.geo.waves == Approx(0.5));
  CHECK_FALSE(ok.geo.whole_waves);
  CHECK(ok.geo.resident_threads_per_sm == Approx(1024));
  CHECK(at(r, 512, 4).geo.whole_waves);
  CHECK(at(r, 128, 16).state == "wrong_result");
  CHECK(at(r, 128, 16).gbps == 0);
  CHECK(at(r, 1024, 4).state == "excluded");

  CHECK(r.verdict.measured == 26);
  CHECK(r.verdict.rule.kind == Rule::Kind::threads_per_sm);
  CHECK(r.verdict.rule.threshold == 1024);
  CHECK(r.verdict.rule.exceptions.empty());

  // A second run answers everything from the database.
  ExploreResult again = run_explore(s.spec, be, *db, s.w, s.p, plan, opt);
  CHECK(again.evaluated == 0);
  CHECK(again.reused == 27);
  CHECK(again.verdict.rule.threshold == 1024);

  std::string text = format_report(r);
  CHECK_THAT(text, Catch::Contains("explore reduction float32/sum n=67108864 on Synthetic GPU"));
  CHECK_THAT(text, Catch::Contains("excluded by constraint `BLOCKS_PER_SM * BLOCK_SIZE <= 2048`"));
  CHECK_THAT(text, Catch::Contains("wrong_result: out[0] = 3, expected 4"));
  CHECK_THAT(text, Catch::Contains("VARIANT=warp_shuffle (spec default)"));
  CHECK_THAT(text, Catch::Contains("t = theoretical"));
  CHECK_THAT(text, Catch::Contains("rule: peak (within 3%"));
}

TEST_CASE("explore: driver occupancy is used when given, failures fall back and are said", "[cpu][explore]") {
  Setup s;
  auto db = db::Database::open(":memory:");
  sim::SyntheticBackend be(sim::SyntheticBackend::fake_device(), synthetic_time);
  SweepRequest req;
  req.block_sizes = {256, 1024};
  req.blocks_per_sm = {1, 2};
  SweepPlan plan = s.plan(be.device(), std::nullopt, req);
  ExploreOptions opt;
  opt.bytes_moved = kBytes;
  opt.driver_occupancy = [](const SweepPoint& pt) -> std::optional<int> {
    if (pt.block_size == 256 && pt.blocks_per_sm == 1) throw EnvironmentError("no driver here");
    if (pt.block_size == 256) return std::nullopt;
    CHECK(pt.kernel == "reduce_pass");
    return 1;  // as if registers allowed one 1024-thread block per SM
  };
  ExploreResult r = run_explore(s.spec, be, *db, s.w, s.p, plan, opt);
  const PointResult& big = at(r, 1024, 2);
  CHECK(big.occupancy.source == Occupancy::Source::driver);
  CHECK(big.occupancy.blocks_per_sm == 1);
  CHECK(big.geo.waves == Approx(2));
  CHECK(big.geo.whole_waves);
  CHECK(big.geo.resident_threads_per_sm == Approx(1024));
  CHECK(at(r, 256, 2).occupancy.source == Occupancy::Source::theoretical);
  CHECK(at(r, 256, 1).occupancy.source == Occupancy::Source::theoretical);
  CHECK_THAT(at(r, 256, 1).occupancy.note, Catch::Contains("driver occupancy failed (no driver here)"));
  CHECK_THAT(format_report(r), Catch::Contains("1 d") && Catch::Contains("8 t"));
}

TEST_CASE("explore: simulation from the recorded H200 trials reproduces the recording", "[cpu][explore]") {
  Setup s;
  auto rec = db::Database::open(autotune_test::data_dir() + "/recorded_h200.db", db::Database::Mode::read_only);
  sim::ReplayBackend replay(*rec, "reduction");
  const DeviceInfo dev = replay.device();
  std::optional<Config> best = best_known_config(*rec, s.spec, dev, s.w, s.p);
  REQUIRE(best);
  CHECK(best->at("VARIANT") == 6);
  CHECK(best->at("BLOCK_SIZE") == 512);
  CHECK(best->at("BLOCKS_PER_SM") == 4);
  SweepPlan plan = s.plan(dev, best);
  CHECK(plan.origin.at("ITEMS_PER_THREAD") == "best known");

  auto out = db::Database::open(":memory:");
  ExploreOptions opt;
  opt.bytes_moved = s.adapter->bytes_moved(s.w, s.p);
  std::int64_t rec_dev = rec->devices().front().id;
  const std::string hash = s.spec.source_hash();
  opt.available = [&](const Config& c) {
    return rec->find_trial("reduction", hash, rec_dev, s.w.key(), s.p.key(), c.hash()).has_value();
  };
  ExploreResult r = run_explore(s.spec, replay, *out, s.w, s.p, plan, opt);
  CHECK(r.backend == "simulation");
  CHECK(r.evaluated == 27);
  CHECK(r.copy_gbps == Approx(4227.6).epsilon(1e-4));
  CHECK(at(r, 512, 4).gbps == Approx(3693.8).epsilon(1e-4));
  CHECK(at(r, 512, 4).pct_copy == Approx(87.4).margin(0.1));
  CHECK(r.verdict.rule.threshold == 768);
  CHECK(r.verdict.best_blocks_per_sm == 4);

  // The chart: one line per block size, the copy line, 2 x SMs ringed at every block size.
  std::string svg = explore_chart_svg(r);
  auto doc = autotune_test::parse_xml(svg);
  INFO(doc.error);
  REQUIRE(doc.ok);
  CHECK(doc.count_with("g", "class", "series") == 5);
  CHECK(doc.count_with("circle", "class", "highlight") == 5);
  CHECK(doc.count_with("g", "class", "hline") == 2);  // copy bandwidth, best - 3%
  CHECK(doc.count_with("g", "class", "vline") == 1);
  CHECK(svg.find("device copy 4228 GB/s") != std::string::npos);
  CHECK(svg.find("blocks per SM (grid = blocks per SM x 132 SMs), log scale") != std::string::npos);

  // Points that the recording lacks (here: pretend the 64-thread ones) are reported, not run.
  std::size_t refused = 0;
  opt.available = [&](const Config& c) {
    bool ok = c.at("BLOCK_SIZE") != 64;
    refused += ok ? 0 : 1;
    return ok && rec->find_trial("reduction", hash, rec_dev, s.w.key(), s.p.key(), c.hash()).has_value();
  };
  auto out2 = db::Database::open(":memory:");
  ExploreResult r2 = run_explore(s.spec, replay, *out2, s.w, s.p, plan, opt);
  CHECK(r2.evaluated == 27 - 8);
  CHECK(refused > 0);
  CHECK(at(r2, 64, 2).state == "not recorded");
  CHECK_FALSE(at(r2, 64, 2).m);
}

TEST_CASE("explore: nothing to run still reports the plan", "[cpu][explore]") {
  Setup s;
  auto db = db::Database::open(":memory:");
  sim::SyntheticBackend be(sim::SyntheticBackend::fake_device(), synthetic_time);
  SweepRequest req;
  req.block_sizes = {1024};
  req.blocks_per_sm = {4, 8};
  ExploreOptions opt;
  ExploreResult r = run_explore(s.spec, be, *db, s.w, s.p, s.plan(be.device(), std::nullopt, req), opt);
  CHECK(r.session_id == 0);
  CHECK(be.evaluations() == 0);
  CHECK(r.verdict.measured == 0);
  CHECK_THAT(format_report(r), Catch::Contains("excluded by") && Catch::Contains("no point was measured"));
  auto doc = autotune_test::parse_xml(explore_chart_svg(r));
  CHECK(doc.ok);
}
