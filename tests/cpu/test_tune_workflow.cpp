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

namespace {

/// A request for the fixture's workload and problem, the rest left at its defaults.
session::TuneRequest fixture_request(const SessionFixture& f) {
  session::TuneRequest q;
  q.workload = f.w;
  q.problem = f.p;
  return q;
}

}  // namespace

TEST_CASE("session::tune picks the default strategy by whether a limit is given", "[cpu][tune]") {
  SessionFixture f;
  sim::SyntheticBackend be;
  session::TuneRequest q = fixture_request(f);
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
  session::TuneRequest q = fixture_request(f);
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

namespace {

/// small_spec() with "blocks": one block per BLOCK_SIZE * ITEMS * VEC elements.
TuningSpec blocks_spec() {
  return autotune_test::small_spec(
      R"J(, "blocks": "(n + BLOCK_SIZE * ITEMS * VEC - 1) / (BLOCK_SIZE * ITEMS * VEC)")J");
}

/// A request for the fixture's workload and problem on blocks_spec() (set into the fixture).
session::TuneRequest blocks_request(SessionFixture& f) {
  f.spec = blocks_spec();
  return fixture_request(f);
}

Config tile(std::int64_t block, std::int64_t items, std::int64_t vec) {
  Config c;
  c.set("BLOCK_SIZE", block);
  c.set("ITEMS", items);
  c.set("VEC", vec);
  return c;
}

}  // namespace

TEST_CASE("smaller sizes: the dimension blocks reads, 4x smaller each, down to 4096", "[cpu][tune]") {
  const TuningSpec spec = blocks_spec();
  const ProblemKey p = ProblemKey::parse("n=1048576");
  std::vector<std::string> keys;
  for (const ProblemKey& s : session::smaller_sizes(spec, p, 10)) keys.push_back(s.key());
  CHECK(keys == std::vector<std::string>{"n=262144", "n=65536", "n=16384", "n=4096"});
  CHECK(session::smaller_sizes(spec, p, 2).size() == 2);
  CHECK(session::smaller_sizes(spec, p, 0).empty());
  CHECK(session::smaller_sizes(autotune_test::small_spec(), p, 4).empty());  // no "blocks"
  ProblemKey from_files = p;
  from_files.data = "abc123";
  CHECK(session::smaller_sizes(spec, from_files, 4).empty());                    // inputs from files have one size
  CHECK(session::smaller_sizes(spec, ProblemKey::parse("n=16000"), 4).empty());  // 4000 < 4096
}

TEST_CASE("smaller sizes: the fastest four, then the fastest of each block count that fills the SMs", "[cpu][tune]") {
  const TuningSpec spec = blocks_spec();
  const DeviceInfo dev = sim::SyntheticBackend::fake_device();  // 132 SMs
  const Workload w = Workload::parse("float32/sum");
  const ProblemKey small = ProblemKey::parse("n=1048576");
  // Best first at the search's size, with their blocks at 2^20 (the 8192-element tile is beyond the spec's
  // constraint, but blocks_at() reads only the expression).
  const std::vector<Config> ranked = {
      tile(1024, 4, 1),  // 256 blocks
      tile(512, 8, 1),   // 256
      tile(1024, 2, 2),  // 256
      tile(256, 4, 4),   // 256
      tile(1024, 8, 1),  // 128: fewer than the 132 SMs, left out
      tile(512, 2, 2),   // 512: new count
      tile(32, 1, 1),    // 32768: invalid below
      tile(256, 4, 1),   // 1024: new count
      tile(128, 2, 4),   // 1024: same count
  };
  auto valid = [](const Config& c) { return !(c == tile(32, 1, 1)); };
  const std::vector<Config> picks = session::smaller_size_picks(spec, ranked, small, dev, w, valid);
  REQUIRE(picks.size() == 6);
  CHECK(picks[0] == ranked[0]);
  CHECK(picks[3] == ranked[3]);
  CHECK(picks[4] == ranked[5]);
  CHECK(picks[5] == ranked[7]);

  // At 2^16 no tile fills the SMs (at most 64 blocks): the block counts are taken over all of them, the
  // 8192-element tile (8 blocks) included.
  const std::vector<Config> tiny =
      session::smaller_size_picks(spec, ranked, ProblemKey::parse("n=65536"), dev, w, valid);
  REQUIRE(tiny.size() == 7);
  CHECK(tiny[4] == ranked[4]);
  CHECK(tiny[5] == ranked[5]);
  CHECK(tiny[6] == ranked[7]);
}

TEST_CASE("session::tune measures the search's front at smaller sizes for a spec with blocks", "[cpu][tune]") {
  SessionFixture f;
  sim::SyntheticBackend be;
  session::TuneRequest q = blocks_request(f);
  q.smaller_sizes = 2;
  std::vector<std::string> notes;
  q.note = [&](const std::string& line) { notes.push_back(line); };
  const session::TuneOutcome o = session::tune(f.spec, be, *f.db, q);
  REQUIRE(o.smaller.size() == 2);
  CHECK(o.smaller_note.empty());
  CHECK(o.smaller[0].problem == "n=262144");
  CHECK(o.smaller[1].problem == "n=65536");
  for (const session::SmallerSize& s : o.smaller) {
    CHECK(s.configs >= 4);
    CHECK(s.configs <= 12);
    CHECK(s.measured == s.configs);
    CHECK(s.best_ns > 0);
    CHECK_FALSE(s.best.empty());
    const std::vector<db::TrialRow> rows = f.trials(s.session_id);
    CHECK(rows.size() == s.configs);
    for (const db::TrialRow& t : rows) CHECK(t.problem == s.problem);
  }
  // The fastest at the search's size is measured first at each smaller size.
  CHECK(f.trials(o.smaller[0].session_id).front().config_hash == o.result.top.front().config_hash);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0].find("smaller size n=262144: measuring") == 0);
  bool smaller_phase = false;
  for (const session::TracePoint& t : o.trace) smaller_phase = smaller_phase || t.phase == "smaller";
  CHECK(smaller_phase);

  // Off, and a spec without "blocks": nothing after the search.
  SessionFixture g;
  g.spec = blocks_spec();
  q.smaller_sizes = 0;
  CHECK(session::tune(g.spec, be, *g.db, q).smaller.empty());
  SessionFixture h;
  q.smaller_sizes = 4;
  CHECK(session::tune(h.spec, be, *h.db, q).smaller.empty());
}

TEST_CASE("smaller sizes keep a share of the time limit and stop where it ends", "[cpu][tune]") {
  SessionFixture f;
  sim::SyntheticBackend be;
  session::TuneRequest q = blocks_request(f);
  q.time_limit_s = 20;
  const session::TuneOutcome o = session::tune(f.spec, be, *f.db, q);
  CHECK(o.options.time_limit_s == Approx(19.0).epsilon(0.01));  // 5% of 20 s kept for the smaller sizes
  CHECK(o.smaller.size() == 4);
  q.time_limit_s = 100;
  q.problem = ProblemKey::parse("n=4194304");
  q.started = std::chrono::steady_clock::now();
  CHECK(session::tune(f.spec, be, *f.db, q).options.time_limit_s == Approx(97.0).epsilon(0.01));  // at most 3 s

  // A limit already spent when the search ends: the phase says so and measures nothing.
  SessionFixture g;
  g.spec = blocks_spec();
  q.problem = g.p;
  q.time_limit_s = 0.5;
  q.started = std::chrono::steady_clock::now() - std::chrono::seconds(5);
  const session::TuneOutcome late = session::tune(g.spec, be, *g.db, q);
  CHECK(late.smaller.empty());
  CHECK(late.smaller_note.find("the time limit ended before n=262144") == 0);
}
