#include <catch2/catch.hpp>

#include "tuner/core/error.hpp"
#include "tuner/session/session.hpp"
#include "tuner/sim/synthetic.hpp"
#include "synthetic_session.hpp"

using namespace autotune;

namespace {

using Fixture = autotune_test::SessionFixture;

}  // namespace

TEST_CASE("a brute-force session records every valid configuration once", "[cpu][session]") {
  Fixture f;
  sim::SyntheticBackend be;
  session::Options opt;
  opt.bytes_moved = 4.0 * 1048576;
  std::size_t progress_calls = 0;
  opt.on_progress = [&](const session::Progress& pr) {
    ++progress_calls;
    CHECK(pr.done <= pr.total);
  };
  session::Result r = session::run(f.spec, be, *f.db, f.w, f.p, opt);
  CHECK(r.space_size == f.valid());
  CHECK(r.evaluated == f.valid());
  CHECK(r.reused == 0);
  CHECK(progress_calls > 0);
  db::TrialFilter tf;
  tf.session_id = r.session_id;
  auto rows = f.db->trials(tf);
  CHECK(rows.size() == f.valid());
  REQUIRE_FALSE(r.top.empty());
  // The synthetic optimum: every parameter as close to 2^3 - 1 = 7 as possible -> 8, 8, 4
  Config best = Config::from_json(r.top.front().config_json);
  CHECK(best.at("ITEMS") == 8);
  CHECK(best.at("VEC") == 4);
  CHECK(r.top.front().gbps == Approx(opt.bytes_moved / r.top.front().m.median_ns));
  CHECK(f.db->session(r.session_id)->status == "finished");
}

TEST_CASE("a rerun measures only what is missing", "[cpu][session]") {
  Fixture f;
  sim::SyntheticBackend be1;
  session::Options opt;
  opt.budget = 10;
  session::Result r1 = session::run(f.spec, be1, *f.db, f.w, f.p, opt);
  CHECK(r1.evaluated == 10);
  CHECK(be1.evaluations() == 10);
  sim::SyntheticBackend be2;
  opt.budget = 0;
  session::Result r2 = session::run(f.spec, be2, *f.db, f.w, f.p, opt);
  CHECK(r2.reused == 10);
  CHECK(r2.evaluated == f.valid() - 10);
  CHECK(be2.evaluations() == f.valid() - 10);
  sim::SyntheticBackend be3;
  session::Result r3 = session::run(f.spec, be3, *f.db, f.w, f.p, opt);
  CHECK(be3.evaluations() == 0);
  CHECK(r3.reused == f.valid());
}

TEST_CASE("injected configuration failures are recorded and never become best", "[cpu][session]") {
  Fixture f;
  sim::SyntheticBackend be;
  be.inject_failure_when("VEC", 4, TrialStatus::wrong_result);
  be.inject_failure(Config({{"BLOCK_SIZE", 32}, {"ITEMS", 1}, {"VEC", 1}}), TrialStatus::compile_error, "error: boom");
  be.inject_failure_when("BLOCK_SIZE", 1024, TrialStatus::launch_error);
  session::Result r = session::run(f.spec, be, *f.db, f.w, f.p, {});
  CHECK(r.evaluated == f.valid());
  CHECK(r.failed > 0);
  for (const auto& t : r.top) {
    Config c = Config::from_json(t.config_json);
    CHECK(c.at("VEC") != 4);
    CHECK(c.at("BLOCK_SIZE") != 1024);
  }
  db::TrialFilter tf;
  tf.session_id = r.session_id;
  std::size_t wrong = 0, compile = 0, launch = 0;
  for (const auto& t : f.db->trials(tf)) {
    if (t.m.status == TrialStatus::wrong_result) ++wrong;
    if (t.m.status == TrialStatus::compile_error) {
      ++compile;
      CHECK(t.m.log == "error: boom");
    }
    if (t.m.status == TrialStatus::launch_error) ++launch;
  }
  CHECK(wrong > 0);
  CHECK(compile == 1);
  CHECK(launch > 0);
  CHECK(r.failed == wrong + compile + launch);
}

TEST_CASE("an environment failure ends the session as failed and keeps what was measured", "[cpu][session]") {
  Fixture f;
  sim::SyntheticBackend be;
  // Brute force's first two rounds hold the batch asked for (later ones grow to about a second of measuring):
  // the failure comes at the end of the second round, and both rounds are kept.
  be.fail_environment_after(16);
  session::Options opt;
  opt.batch = 8;
  CHECK_THROWS_AS(session::run(f.spec, be, *f.db, f.w, f.p, opt), EnvironmentError);
  auto sessions = f.db->sessions();
  REQUIRE(sessions.size() == 1);
  CHECK(sessions.front().status == "failed");
  db::TrialFilter tf;
  CHECK(f.db->trials(tf).size() == 16);
  sim::SyntheticBackend be2;
  session::Result r = session::run(f.spec, be2, *f.db, f.w, f.p, opt);
  CHECK(r.reused == 16);
  CHECK(be2.evaluations() == f.valid() - 16);
}

TEST_CASE("an empty space and unknown strategies are usage errors", "[cpu][session]") {
  Fixture f;
  sim::SyntheticBackend be;
  session::Options opt;
  CHECK_THROWS_WITH(session::run(f.spec, be, *f.db, f.w, ProblemKey::parse("m=3"), opt), Catch::Contains("'n'"));
  opt.strategy = "no_such_strategy";
  CHECK_THROWS_AS(session::run(f.spec, be, *f.db, f.w, f.p, opt), UsageError);
  TuningSpec empty = TuningSpec::from_json_text(R"J({
    "name": "e", "family": "synthetic", "source": "none.cu", "kernels": ["k"],
    "parameters": [{"name": "B", "values": [1, 2]}], "constraints": ["B > n"],
    "problem": {"dims": ["n"]}, "workloads": ["float32"]})J", ".", false);
  opt.strategy = "brute_force";
  CHECK_THROWS_WITH(session::run(empty, be, *f.db, Workload::parse("float32"), ProblemKey::parse("n=5"), opt),
                    Catch::Contains("no valid configuration"));
}

TEST_CASE("random sampling with a budget stays within it and is reproducible", "[cpu][session]") {
  Fixture f1, f2;
  sim::SyntheticBackend b1, b2;
  session::Options opt;
  opt.strategy = "random_sample";
  opt.budget = 12;
  opt.seed = 7;
  auto r1 = session::run(f1.spec, b1, *f1.db, f1.w, f1.p, opt);
  auto r2 = session::run(f2.spec, b2, *f2.db, f2.w, f2.p, opt);
  CHECK(r1.evaluated == 12);
  db::TrialFilter tf;
  auto t1 = f1.db->trials(tf), t2 = f2.db->trials(tf);
  REQUIRE(t1.size() == t2.size());
  for (std::size_t i = 0; i < t1.size(); ++i) CHECK(t1[i].config_hash == t2[i].config_hash);
}

TEST_CASE("a session tells the strategy its budget: a small one climbs from the spec default", "[cpu][session]") {
  Fixture f;
  sim::SyntheticBackend be;
  session::Options opt;
  opt.strategy = "broad_then_local";
  opt.budget = 5;  // under two covering rounds of this space (its first round holds at least the 6 block sizes)
  session::Result r = session::run(f.spec, be, *f.db, f.w, f.p, opt);
  REQUIRE(r.evaluated == 5);
  const std::vector<db::TrialRow> rows = f.trials(r.session_id);
  REQUIRE(rows.size() == 5);
  const ParameterSpace space = f.spec.space(f.p, sim::SyntheticBackend::fake_device(), f.w);
  std::vector<std::size_t> ran;
  for (const db::TrialRow& t : rows) {  // in the order they were recorded
    const std::ptrdiff_t i = space.find(Config::from_json(t.config_json));
    REQUIRE(i >= 0);
    const auto c = static_cast<std::size_t>(i);
    if (ran.empty()) {
      CHECK(c == static_cast<std::size_t>(space.default_index()));
    } else {  // each a move of one parameter from a configuration measured before it
      bool neighbour = false;
      for (std::size_t b : ran) {
        const std::vector<std::size_t> nb = space.neighbours(b);
        neighbour = neighbour || std::find(nb.begin(), nb.end(), c) != nb.end();
      }
      CHECK(neighbour);
    }
    ran.push_back(c);
  }
}
