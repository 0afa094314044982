// The tuning workflow (tuner/session/tune.*): the default strategy under a limit, warm starts from other sizes in
// the database, screening at a smaller size; on the synthetic backend, without the command line.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/cpu/synthetic_session.hpp"
#include "tuner/core/error.hpp"
#include "tuner/session/tune.hpp"

using namespace autotune;
using autotune_test::SessionFixture;

TEST_CASE("session::tune picks the default strategy by whether a limit is given", "[cpu][tune]") {
  SessionFixture f;
  sim::SyntheticBackend be;
  session::TuneRequest q;
  q.workload = f.w;
  q.problem = f.p;
  std::vector<std::string> notes;
  q.note = [&](const std::string& line) { notes.push_back(line); };
  const session::TuneOutcome all = session::tune(f.spec, be, *f.db, q);
  CHECK(all.strategy == "brute_force");
  CHECK(all.default_strategy);
  CHECK(all.result.evaluated == f.valid());
  CHECK(notes.empty());  // nothing to warm-start from: one problem only
  CHECK_FALSE(all.trace.empty());
  CHECK(all.trace.back().phase == "target");

  q.problem = ProblemKey::parse("n=4194304");
  q.budget = 5;
  const session::TuneOutcome limited = session::tune(f.spec, be, *f.db, q);
  CHECK(limited.strategy == search::kLimitedDefaultStrategy);
  CHECK(limited.result.evaluated == 5);
  // The database holds n=1048576: its best configurations are suggested and measured first.
  REQUIRE_FALSE(limited.warm.empty());
  CHECK(limited.options.warm_start.size() == limited.warm.configs.size());
  CHECK(limited.result.warm_started > 0);
  REQUIRE(notes.size() == 1);
  CHECK(notes.front().find("warm start (n=4194304)") == 0);

  q.strategy = "random_sample";
  q.warm_start = 0;
  q.problem = ProblemKey::parse("n=2097152");
  const session::TuneOutcome named = session::tune(f.spec, be, *f.db, q);
  CHECK(named.strategy == "random_sample");
  CHECK_FALSE(named.default_strategy);
  CHECK(named.warm.empty());
}

TEST_CASE("session::tune screens at a smaller size first under a time limit", "[cpu][tune]") {
  SessionFixture f;
  sim::SyntheticBackend be;
  session::TuneRequest q;
  q.workload = f.w;
  q.problem = f.p;
  q.screen = 16;
  CHECK_THROWS_WITH(session::tune(f.spec, be, *f.db, q), Catch::Contains("--screen needs --time-limit"));
  q.time_limit_s = 2;
  const session::TuneOutcome o = session::tune(f.spec, be, *f.db, q);
  CHECK(o.screen.problem == "n=65536");
  CHECK(o.screen.configs == f.valid());  // the small space is covered within the share of the limit
  CHECK(o.screen.confirmed >= 5);
  bool screened = false, targeted = false;
  for (const session::TracePoint& t : o.trace) {
    screened = screened || t.phase == "screen";
    targeted = targeted || t.phase == "target";
  }
  CHECK(screened);
  CHECK(targeted);
  CHECK(session::screening_problem(f.spec, f.p, 4).key() == "n=262144");
  CHECK_THROWS_AS(session::screening_problem(f.spec, ProblemKey::parse("n=1000"), 4), UsageError);
}
