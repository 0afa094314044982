// A full tuning session on the GPU: the shipped user-kernel example (SAXPY, checked against its reference
// kernel) and a small reduction space, through CudaBackend into a database; the workflow's smaller sizes of the
// scan, served exactly by the lookup.
#include <catch2/catch.hpp>

#include "cuda_session_support.hpp"
#include "test_support.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/session/session.hpp"
#include "tuner/session/tune.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

TEST_CASE("a brute-force session of the SAXPY example verifies and records every configuration", "[gpu][session]") {
  TuningSpec spec = specs::load_spec(autotune_test::data_dir() + "/../../examples/saxpy/saxpy.tune.json");
  cuda::TimingOptions to;
  to.samples = 9;
  autotune_test::CudaSession cs(spec, to);
  Workload w = spec.workloads.front();
  ProblemKey p = ProblemKey::parse("n=1000003");
  session::Options opt;
  opt.bytes_moved = cs.adapter->bytes_moved(w, p);
  session::Result r = session::run(spec, cs.backend, *cs.db, w, p, opt);
  CHECK(r.space_size == 20);
  CHECK(r.evaluated == 20);
  CHECK(r.failed == 0);
  CHECK(r.copy_gbps > 100);
  db::TrialFilter f;
  f.session_id = r.session_id;
  auto rows = cs.db->trials(f);
  REQUIRE(rows.size() == 20);
  for (const auto& t : rows) {
    INFO(t.config_json << " " << to_string(t.m.status) << " " << t.m.log);
    CHECK(t.m.ok());
    CHECK(t.m.samples >= 7);
    CHECK(t.m.median_ns > 0);
    CHECK(t.gbps > 0);
  }
  // A rerun measures nothing.
  session::Result again = session::run(spec, cs.backend, *cs.db, w, p, opt);
  CHECK(again.evaluated == 0);
  CHECK(again.reused == 20);
}

TEST_CASE("a restricted reduction tune writes one verified row per configuration", "[gpu][session]") {
  TuningSpec spec = specs::builtin_spec("reduction");
  spec.constraints.push_back(Expr::parse("VARIANT == 7 && BLOCK_SIZE == 256 && KAHAN == 0 && ITEMS_PER_THREAD == 4"));
  autotune_test::CudaSession cs(spec, cuda::TimingOptions{});
  Workload w = Workload::parse("int32/max");
  ProblemKey p = ProblemKey::parse("n=3000017");
  session::Result r = session::run(spec, cs.backend, *cs.db, w, p, {});
  CHECK(r.evaluated == r.space_size);
  CHECK(r.space_size > 10);
  CHECK(r.failed == 0);
  CHECK_FALSE(r.top.empty());
}

TEST_CASE(
    "racing: clearly slower configurations stop at the warm-up probe or after three samples, the best is "
    "fully sampled",
    "[gpu][session][racing]") {
  // tests/data/specs/spin: REPEAT = 1, 2, 8 costs about 1x, 2x and 8x (the same output). Brute force one at a
  // time, so REPEAT = 1 sets the best before the slower ones come.
  TuningSpec spec = specs::load_spec(autotune_test::data_dir() + "/specs/spin.tune.json");
  cuda::TimingOptions to;
  to.race_margin = 0.25;
  autotune_test::CudaSession cs(spec, to);
  const Workload w = spec.workloads.front();
  const ProblemKey p = spec.problem_sizes.front();
  session::Options opt;
  opt.strategy = "brute_force";
  opt.batch = 1;
  session::Result r = session::run(spec, cs.backend, *cs.db, w, p, opt);
  REQUIRE(r.evaluated == 6);
  CHECK(r.failed == 0);
  db::TrialFilter f;
  f.session_id = r.session_id;
  const std::vector<db::TrialRow> rows = cs.db->trials(f);
  REQUIRE(rows.size() == 6);
  double best = 0;
  for (const auto& t : rows)
    if (t.config_json.find("\"REPEAT\":1") != std::string::npos && (best == 0 || t.m.median_ns < best))
      best = t.m.median_ns;
  REQUIRE(best > 0);
  for (const auto& t : rows) {
    INFO(t.config_json << " " << t.m.protocol << " samples " << t.m.samples << " median " << t.m.median_ns);
    CHECK(t.m.ok());
    if (t.config_json.find("\"REPEAT\":1") != std::string::npos) {  // within reach of the best: every sample
      CHECK(t.m.protocol.find("raced") == std::string::npos);
      CHECK(t.m.samples >= 7);
    } else if (t.config_json.find("\"REPEAT\":2") != std::string::npos) {  // about 2x: three samples, no probe
      CHECK(t.m.protocol.find(";raced>") != std::string::npos);
      CHECK(t.m.protocol.find("@probe") == std::string::npos);
      CHECK(t.m.samples == 3);
      CHECK(t.m.median_ns > 1.25 * best);
    } else {  // about 8x: stopped by the warm-up probe, one run recorded
      CHECK(t.m.protocol.find("@probe") != std::string::npos);
      CHECK(t.m.samples == 1);
      CHECK(t.m.median_ns > 2.5 * best);
    }
  }
  REQUIRE_FALSE(r.top.empty());
  CHECK(r.top.front().config_json.find("\"REPEAT\":1") != std::string::npos);
}

TEST_CASE("the scan's tune measures its front at smaller sizes and the lookup serves them exactly",
          "[gpu][session][smaller_sizes]") {
  TuningSpec spec = specs::builtin_spec("scan");
  cuda::TimingOptions to;
  to.samples = 7;
  autotune_test::CudaSession cs(spec, to);
  session::TuneRequest q;
  q.workload = Workload::parse("float32/inclusive_sum");
  q.problem = ProblemKey::parse("n=4194311");  // odd: the smaller sizes are odd too
  q.strategy = "random_sample";
  q.budget = 24;
  q.smaller_sizes = 2;
  q.bytes_moved = [&cs](const Workload& w, const ProblemKey& p) { return cs.adapter->bytes_moved(w, p); };
  const session::TuneOutcome o = session::tune(spec, cs.backend, *cs.db, q);
  REQUIRE_FALSE(o.result.top.empty());
  INFO(o.smaller_note);
  REQUIRE(o.smaller.size() == 2);
  CHECK(o.smaller[0].problem == "n=1048577");
  CHECK(o.smaller[1].problem == "n=262144");
  for (const session::SmallerSize& s : o.smaller) {
    INFO(s.problem);
    CHECK(s.configs >= 4);
    CHECK(s.measured == s.configs);  // every configuration verified at the smaller size
    db::TrialFilter f;
    f.session_id = s.session_id;
    for (const db::TrialRow& t : cs.db->trials(f)) {
      INFO(t.config_json << " " << to_string(t.m.status) << " " << t.m.log);
      CHECK(t.m.ok());
    }
    const lookup::Answer a = lookup::best(*cs.db, spec, q.workload, cs.backend.device(), ProblemKey::parse(s.problem));
    CHECK(a.match == lookup::Match::exact);
    CHECK(a.config == Config::from_json(s.best));
  }
}
