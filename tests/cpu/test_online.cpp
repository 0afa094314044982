// Online tuning without a GPU: the search state machine of tuner/online/ driven by a synthetic device (its launches
// time configurations by a formula, some configurations compute wrong results or fail to compile), its settings, and
// its record in the database as the lookup serves it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <set>

// strategy_support.hpp first: its helpers name search::Observation unqualified, before trial.hpp's Observation.
#include "strategy_support.hpp"
// clang-format off
#include "db_support.hpp"
// clang-format on
#include "tuner/lookup/lookup.hpp"
#include "tuner/online/record.hpp"
#include "tuner/online/search.hpp"
#include "tuner/online/start.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using autotune_test::strategies::bowl;
using autotune_test::strategies::bowl_space;
using autotune_test::strategies::make_param;
using autotune_test::strategies::make_space;
using autotune_test::strategies::range;

namespace {

using autotune::online::Budget;
using autotune::online::Search;
using autotune::online::Stage;
using autotune::online::Step;

/// A device that runs the steps of a search: each launch's results come back `delay` launches later, compilation
/// takes `compile_delay` launches; `time` gives a configuration's time, `wrong` the ones that compute wrong
/// results, `broken` the ones that do not compile.
struct FakeDevice {
  std::function<double(std::size_t)> time;
  std::set<std::size_t> wrong, broken;
  std::size_t delay = 1, compile_delay = 2;

  struct Event {
    std::size_t due;
    std::function<void(Search&)> apply;
  };
  std::deque<Event> events;
  std::size_t launch = 0;
  std::vector<std::size_t> outputs_from;  // the configuration whose outputs each launch gave the application
  std::set<std::size_t> verified_ok;

  void run(Search& s, std::size_t launches) {
    for (std::size_t l = 0; l < launches; ++l, ++launch) {
      for (auto it = events.begin(); it != events.end();) {
        if (it->due <= launch) {
          it->apply(s);
          it = events.erase(it);
        } else {
          ++it;
        }
      }
      for (std::size_t i : s.to_prepare()) {
        const bool ok = broken.count(i) == 0;
        events.push_back({launch + compile_delay, [i, ok](Search& x) {
                            if (ok)
                              x.prepared(i);
                            else
                              x.failed(i, TrialStatus::compile_error, "error: planted");
                          }});
      }
      const Step st = s.next(static_cast<double>(launch) * 1e-3);
      outputs_from.push_back(st.run);
      if (st.run != s.reference()) REQUIRE(verified_ok.count(st.run) == 1);  // outputs only from verified ones
      if (st.sample) {
        const double ms = time(st.run);
        events.push_back({launch + delay, [r = st.run, ms](Search& x) { x.sampled(r, ms); }});
      }
      if (st.verify) {
        const std::size_t v = *st.verify;
        const bool ok = wrong.count(v) == 0;
        if (ok) verified_ok.insert(v);
        events.push_back({launch + delay, [v, ok](Search& x) { x.verified(v, ok, ok ? "" : "planted mismatch"); }});
      }
    }
  }
};

std::unique_ptr<search::Strategy> strategy_for(const ParameterSpace& space,
                                               const std::string& name = "broad_then_local") {
  return search::make_strategy(name, space, 1, search::limited_options(name, {}));
}

}  // namespace

TEST_CASE(
    "online search: settles within its launch budget on the fastest judged configuration, outputs only from "
    "verified ones",
    "[cpu][online]") {
  const ParameterSpace& space = bowl_space();
  const std::size_t reference = 0;
  Budget b;
  b.launches = 150;
  b.seconds = 0;
  Search s(space, reference, strategy_for(space), b);
  FakeDevice dev;
  dev.time = [&](std::size_t i) { return bowl(space, i); };
  dev.run(s, 1000);
  REQUIRE(s.settled());
  CHECK(s.settle_reason() == "budget of 150 launches spent");
  CHECK(s.launches_used() == 150);
  const std::size_t best = s.best();
  CHECK(bowl(space, best) < bowl(space, reference));
  // The best is the fastest of the judged ones, each judged on all its samples.
  double fastest = bowl(space, reference);
  std::size_t judged = 0;
  for (const auto& e : s.entries()) {
    if (e.reference || e.stage != Stage::done) continue;
    ++judged;
    CHECK(e.samples_ms.size() == b.samples);
    fastest = std::min(fastest, e.median_ms());
  }
  CHECK(judged >= 20);
  CHECK(bowl(space, best) == fastest);
  // After settling every launch runs the best.
  CHECK(dev.outputs_from.back() == best);
  CHECK(std::all_of(dev.outputs_from.end() - 100, dev.outputs_from.end(), [&](std::size_t r) { return r == best; }));
}

TEST_CASE(
    "online search: a configuration with wrong results or one that does not compile is never run for the "
    "application, and never chosen",
    "[cpu][online]") {
  const ParameterSpace space = make_space({make_param("X", range(8)), make_param("Y", range(8))}, {});
  const std::size_t reference = 0;
  auto time = [&](std::size_t i) {
    const auto idx = space.indices(i);
    return 1.0 + std::abs(idx[0] - 6) + std::abs(idx[1] - 5);
  };
  std::size_t optimum = 0;
  for (std::size_t i = 0; i < space.size(); ++i)
    if (time(i) < time(optimum)) optimum = i;
  Budget b;
  b.launches = 100000;
  b.seconds = 0;
  Search s(space, reference, strategy_for(space, "brute_force"), b);
  FakeDevice dev;
  dev.time = time;
  dev.wrong = {optimum};
  dev.broken = {optimum + 1};
  dev.run(s, 2000);
  REQUIRE(s.settled());
  CHECK(s.settle_reason() == "the strategy has nothing more to propose");
  CHECK(s.best() != optimum);
  CHECK(time(s.best()) == 2.0);  // the next fastest
  CHECK(std::count(dev.outputs_from.begin(), dev.outputs_from.end(), optimum) == 0);
  const auto* w = s.entry(optimum);
  REQUIRE(w != nullptr);
  CHECK(w->stage == Stage::failed);
  CHECK(w->status == TrialStatus::wrong_result);
  const auto* c = s.entry(optimum + 1);
  REQUIRE(c != nullptr);
  CHECK(c->status == TrialStatus::compile_error);
  // Every configuration was tried once (brute force), none twice.
  CHECK(s.entries().size() == space.size());
}

TEST_CASE("online search: the time budget, a zero budget, and the reference's samples first", "[cpu][online]") {
  const ParameterSpace space = make_space({make_param("X", range(16))}, {});
  Budget b;
  b.launches = 1000;
  b.seconds = 0.05;  // FakeDevice: 1 ms per launch
  Search s(space, 3, strategy_for(space), b);
  FakeDevice dev;
  dev.time = [](std::size_t i) { return 10.0 - static_cast<double>(i % 7); };
  dev.run(s, 200);
  REQUIRE(s.settled());
  CHECK(s.settle_reason() == "time budget of 0.05 s spent");
  CHECK(s.launches_used() < 50);

  Budget none;
  none.launches = 0;
  Search z(space, 3, strategy_for(space), none);
  CHECK(z.settled());
  CHECK(z.to_prepare().empty());
  const Step st = z.next(0);
  CHECK(st.run == 3);
  CHECK(!st.verify);

  Search r(space, 3, strategy_for(space), b);
  const Step first = r.next(0);  // nothing prepared yet: the reference, timed
  CHECK(first.run == 3);
  CHECK(first.sample);
  CHECK(!first.searching);
  CHECK_THROWS_AS(r.failed(3, TrialStatus::launch_error, "x"), UsageError);
  CHECK_THROWS_AS(Search(space, 99, strategy_for(space), b), UsageError);
}

TEST_CASE("online settings: AUTOTUNE_ONLINE's items", "[cpu][online]") {
  using autotune::online::parse_settings;
  CHECK(!parse_settings(""));
  CHECK(!parse_settings("off"));
  CHECK(!parse_settings("0"));
  const auto on = parse_settings("on");
  REQUIRE(on);
  CHECK(on->budget.launches == Budget().launches);
  const auto s = parse_settings("300, 20s, samples=5, strategy=random_sample, record=0");
  REQUIRE(s);
  CHECK(s->budget.launches == 300);
  CHECK(s->budget.seconds == 20);
  CHECK(s->budget.samples == 5);
  CHECK(s->strategy == "random_sample");
  CHECK(!s->record);
  CHECK_THROWS_WITH(parse_settings("300,colour=blue"), Catch::Contains("unknown item 'colour=blue'"));
  CHECK_THROWS_WITH(parse_settings("-3"), Catch::Contains("'-3' is not a whole number"));
  CHECK_THROWS_WITH(parse_settings("xs"), Catch::Contains("'xs' is not a number of seconds"));
}

TEST_CASE(
    "online record: the settled search is an online session the lookup serves at level exact where no offline "
    "trial exists, and never at other levels or over an offline trial",
    "[cpu][online][db]") {
  const TuningSpec spec = specs::builtin_spec("transpose");
  const Workload w = spec.workloads.front();
  const DeviceInfo dev = autotune_test::sample_device();
  const ProblemKey problem = ProblemKey::parse("cols=3000,rows=1000");
  const ParameterSpace space = spec.space(problem, dev, w);
  const std::ptrdiff_t ref = space.default_index();
  REQUIRE(ref >= 0);
  Budget b;
  b.launches = 60;
  b.seconds = 0;
  Search s(space, static_cast<std::size_t>(ref), strategy_for(space), b);
  FakeDevice fake;
  fake.time = [&](std::size_t i) { return 1.0 + static_cast<double>((i * 7919) % 101) / 10.0; };
  fake.run(s, 400);
  REQUIRE(s.settled());
  REQUIRE(s.best() != static_cast<std::size_t>(ref));

  autotune_test::TempPath tmp("online.db");
  std::int64_t session = 0;
  {
    auto db = db::Database::open(tmp.path);
    autotune::online::RecordRequest r{spec, w, problem, dev, space, s, "broad_then_local", 1, 0};
    session = autotune::online::record(*db, r);
    const auto row = db->session(session);
    REQUIRE(row);
    CHECK(row->backend == "online");
    CHECK(row->status == "finished");
    db::TrialFilter f;
    f.online = true;
    const auto rows = db->trials(f);
    std::size_t judged = 0;
    for (const auto& e : s.entries())
      if (e.stage == Stage::done || e.stage == Stage::failed || e.reference) ++judged;
    CHECK(rows.size() == judged);
    CHECK(db->trials({}).empty());  // nothing in the offline trials
    for (const auto& t : rows)
      if (t.m.ok()) {
        CHECK(t.m.sample_ns.size() >= 1);
        CHECK(t.m.protocol.rfind("online", 0) == 0);
      }
  }
  auto db = db::Database::open(tmp.path, db::Database::Mode::read_only);
  const lookup::Answer a = lookup::best(*db, spec, w, dev, problem);
  CHECK(a.match == lookup::Match::exact);
  CHECK(a.online);
  CHECK(a.config == space.config(s.best()));
  CHECK(a.session_id == session);
  CHECK_THAT(a.note, Catch::Contains("measured online"));
  // Another size: the online rows are no nearest_size answer.
  const lookup::Answer other = lookup::best(*db, spec, w, dev, ProblemKey::parse("cols=4000,rows=1000"));
  CHECK(other.match != lookup::Match::nearest_size);
  CHECK(!other.online);
  // An offline trial of the problem wins over them, even a slower one.
  {
    auto rw = db::Database::open(tmp.path);
    db::TrialRow t;
    t.device_id = rw->upsert_device(dev);
    t.kernel = spec.name;
    t.source_hash = spec.source_hash();
    t.workload = w.key();
    t.problem = problem.key();
    const Config c = space.config(static_cast<std::size_t>(ref));
    t.config_json = c.to_json();
    t.config_hash = c.hash();
    t.m.median_ns = 1e9;
    t.m.samples = 10;
    REQUIRE(rw->insert_trial(t));
  }
  auto db2 = db::Database::open(tmp.path, db::Database::Mode::read_only);
  const lookup::Answer offline = lookup::best(*db2, spec, w, dev, problem);
  CHECK(offline.match == lookup::Match::exact);
  CHECK(!offline.online);
  CHECK(offline.config == space.config(static_cast<std::size_t>(ref)));
}

TEST_CASE("online record: a file of schema 7 is migrated to the online trials table (migration 8)",
          "[cpu][online][db]") {
  autotune_test::TempPath tmp("v7.db");
  {
    auto db = db::Database::open(tmp.path);
    const auto dev = db->upsert_device(autotune_test::sample_device());
    auto old = autotune_test::sample_trial(dev, "old");
    REQUIRE(db->insert_trial(old));
    db->exec("DROP TABLE online_trials");
    db->exec("PRAGMA user_version = 7");
  }
  {
    auto ro = db::Database::open(tmp.path, db::Database::Mode::read_only);  // read through a migrated copy
    db::TrialFilter f;
    f.online = true;
    CHECK(ro->trials(f).empty());
    CHECK(ro->trials({}).size() == 1);
  }
  auto db = db::Database::open(tmp.path);
  CHECK(db->schema_version() == 8);
  db::TrialRow t = autotune_test::sample_trial(db->devices().front().id, "online");
  db->insert_online_trial(t);
  db->insert_online_trial(t);  // no uniqueness key: every online session keeps its rows
  db::TrialFilter f;
  f.online = true;
  CHECK(db->trials(f).size() == 2);
  CHECK(db->trials({}).size() == 1);
}
