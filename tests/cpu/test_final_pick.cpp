// The noise-aware final pick (tuner/session/final_pick.*): the rule on synthetic noisy times, the whole pick
// through session::tune on the synthetic backend, its storage, and the lookup's preference among a tie set.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "db/ranking.hpp"
#include "test_support.hpp"
#include "tests/cli_support.hpp"
#include "tests/cpu/db_support.hpp"
#include "tests/cpu/synthetic_session.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/session/final_pick.hpp"
#include "tuner/session/tune.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using autotune_test::SessionFixture;

namespace {

/// Interleaved samples of configurations with true times `truth` (ns): each round x (1 + drift N(0,1)) for all,
/// each sample x (1 + sigma N(0,1)).
std::vector<std::vector<double>> noisy_rounds(const std::vector<double>& truth, int rounds, double sigma, double drift,
                                              std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::vector<std::vector<double>> s(truth.size());
  for (int r = 0; r < rounds; ++r) {
    const double f = 1 + drift * normal(rng);
    for (std::size_t c = 0; c < truth.size(); ++c) s[c].push_back(truth[c] * f * (1 + sigma * normal(rng)));
  }
  return s;
}

bool in_tie(const session::Pick& p, std::size_t index) {
  for (const session::PickEntry& e : p.entries)
    if (e.index == index) return e.in_tie_set;
  return false;
}

/// Synthetic times where the three best configurations of small_spec lie within 0.3% of each other and the rest
/// at least 5% behind: BLOCK_SIZE 128, 256 and 512 with ITEMS 1, VEC 1.
double close_leaders_ns(const Config& c) {
  const std::int64_t bs = c.get("BLOCK_SIZE").value_or(0);
  const bool plain = c.get("ITEMS") == 1 && c.get("VEC") == 1;
  if (plain && bs == 256) return 10000;
  if (plain && bs == 128) return 10015;
  if (plain && bs == 512) return 10030;
  return 10500 + 10 * static_cast<double>(bs % 7);
}

}  // namespace

TEST_CASE("final pick: the candidates are the leaders within the noise of the best, at most k", "[cpu][final_pick]") {
  const std::vector<session::Leader> ranked = {{1000, 0.01},  {1004, 0.002}, {1008, 0.002},
                                               {1030, 0.002}, {1030, 0.05},  {1009, 0.0}};
  // 1004 and 1008 are within the best's spread (1%); 1030 only within its own 5% spread; 1009 within 1%.
  CHECK(session::candidates(ranked, 10) == std::vector<std::size_t>{0, 1, 2, 4, 5});
  CHECK(session::candidates(ranked, 3) == std::vector<std::size_t>{0, 1, 2});
  CHECK(session::candidates(ranked, 1) == std::vector<std::size_t>{0});
  CHECK(session::candidates(ranked, 0).empty());
  CHECK(session::candidates({}, 5).empty());
  // Without a spread the floor decides: 0.5%.
  CHECK(session::candidates({{1000, 0}, {1004, 0}, {1006, 0}}, 5) == std::vector<std::size_t>{0, 1});
}

TEST_CASE("final pick: exact times give the fastest and the configurations within the floor", "[cpu][final_pick]") {
  const session::Pick p = session::pick({{1003, 1003, 1003}, {1000, 1000, 1000}, {1100, 1100, 1100}, {}});
  CHECK(p.winner == 1);
  CHECK(p.rounds == 3);
  REQUIRE(p.entries.size() == 3);  // the candidate without samples is left out
  CHECK(p.entries[0].index == 1);
  CHECK(p.entries[1].index == 0);
  CHECK(p.entries[1].ratio == Approx(1.003));
  CHECK(in_tie(p, 1));
  CHECK(in_tie(p, 0));  // 0.3% < the 0.5% floor
  CHECK_FALSE(in_tie(p, 2));
  CHECK(p.tie_size() == 2);
  CHECK(p.noise == Approx(session::kNoiseFloor));
  CHECK_THROWS_AS(session::pick({{}, {}}), std::invalid_argument);
}

TEST_CASE("final pick: pairing the rounds divides out a drift that is common to a round", "[cpu][final_pick]") {
  std::mt19937_64 rng(7);
  // 20% round-to-round drift, no other noise: the unpaired medians could order these either way.
  for (int trial = 0; trial < 50; ++trial) {
    const session::Pick p = session::pick(noisy_rounds({1010, 1000, 1020}, 15, 0.0, 0.2, rng));
    CHECK(p.winner == 1);
    REQUIRE(p.entries.size() == 3);
    CHECK(p.entries[1].ratio == Approx(1.01));
    CHECK(p.tie_size() == 1);  // exact ratios: 1% and 2% are real differences
  }
}

TEST_CASE("final pick: the rule on synthetic noisy times never picks outside the tie set", "[cpu][final_pick]") {
  // True times: three within 0.4% of each other (the true tie set at the 0.5% floor), then 3% and 6% slower.
  const std::vector<double> truth = {100000, 100200, 100400, 103000, 106000};
  std::mt19937_64 rng(2026);
  int best_in_tie = 0, slow_in_tie = 0;
  const int kTrials = 500;
  for (int trial = 0; trial < kTrials; ++trial) {
    const session::Pick p = session::pick(noisy_rounds(truth, 15, 0.01, 0.05, rng));
    // The winner is one of the true tie set, and in its own tie set.
    CHECK(p.winner <= 2);
    CHECK(in_tie(p, p.winner));
    CHECK(p.entries.front().index == p.winner);
    best_in_tie += in_tie(p, 0) ? 1 : 0;
    slow_in_tie += in_tie(p, 4) ? 1 : 0;
    CHECK_FALSE(in_tie(p, 3));
  }
  // The true fastest is found within noise of the winner nearly always, the 6% slower one never.
  CHECK(best_in_tie >= kTrials * 97 / 100);
  CHECK(slow_in_tie == 0);
}

TEST_CASE("final pick: session::tune re-times the leaders interleaved and stores the tie set", "[cpu][final_pick]") {
  SessionFixture f;
  sim::SyntheticBackend be(sim::SyntheticBackend::fake_device(), close_leaders_ns);
  be.simulate_noise(0.004, 0.03, 11);
  session::TuneRequest q;
  q.workload = f.w;
  q.problem = f.p;
  const session::TuneOutcome o = session::tune(f.spec, be, *f.db, q);
  const session::FinalPickOutcome& fp = o.final_pick;
  REQUIRE(fp.ran);
  CHECK(fp.candidates == 3);  // the three close leaders; the rest are 5% behind
  CHECK(fp.rounds == 15);
  CHECK(be.interleaved_rounds() == 15);
  CHECK(fp.tie >= 1);
  CHECK(fp.tie <= 3);
  REQUIRE(fp.rows.size() == 3);
  CHECK(fp.rows.front().rank == 0);
  CHECK(fp.rows.front().in_tie_set);
  CHECK(fp.rows.front().config_json == fp.winner_json);
  CHECK(close_leaders_ns(Config::from_json(fp.winner_json)) <= 10030);
  for (const db::FinalPickRow& r : fp.rows) CHECK(r.samples_ns.size() == 15);

  const std::vector<db::FinalPickRow> stored = f.db->final_picks(f.spec.name, f.w.key(), f.p.key());
  REQUIRE(stored.size() == 3);
  CHECK(stored.front().session_id == o.result.session_id);
  CHECK(stored.front().config_json == fp.winner_json);
  CHECK(stored.front().samples_ns == fp.rows.front().samples_ns);
  CHECK(stored[1].in_tie_set == fp.rows[1].in_tie_set);
  CHECK(stored[1].ratio == Approx(fp.rows[1].ratio));
  CHECK(f.db->final_picks(f.spec.name, f.w.key(), "n=1").empty());

  // The lookup serves the winner (no neighbouring sizes recorded), with its tie set.
  const lookup::Answer a = lookup::best(*f.db, f.spec, f.w, sim::SyntheticBackend::fake_device(), f.p);
  CHECK(a.config.to_json() == fp.winner_json);
  CHECK(a.tie_set.size() == fp.tie);
  CHECK(a.tie_session == o.result.session_id);
  CHECK(a.tie_noise == Approx(fp.noise));
}

TEST_CASE("final pick: two tunes from empty databases agree on the winner or its tie set", "[cpu][final_pick]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<session::FinalPickOutcome> runs;
    for (std::uint64_t run = 0; run < 2; ++run) {
      SessionFixture f;
      sim::SyntheticBackend be(sim::SyntheticBackend::fake_device(), close_leaders_ns);
      be.simulate_noise(0.004, 0.03, seed * 100 + run);
      session::TuneRequest q;
      q.workload = f.w;
      q.problem = f.p;
      runs.push_back(session::tune(f.spec, be, *f.db, q).final_pick);
      REQUIRE(runs.back().ran);
    }
    auto tied = [](const session::FinalPickOutcome& o, const std::string& json) {
      for (const db::FinalPickRow& r : o.rows)
        if (r.config_json == json && r.in_tie_set) return true;
      return false;
    };
    INFO("seed " << seed);
    CHECK((tied(runs[0], runs[1].winner_json) || tied(runs[1], runs[0].winner_json)));
  }
}

TEST_CASE("final pick: off, nothing within noise, and a backend that cannot re-time", "[cpu][final_pick]") {
  SessionFixture f;
  session::TuneRequest q;
  q.workload = f.w;
  q.problem = f.p;
  {
    sim::SyntheticBackend be(sim::SyntheticBackend::fake_device(), close_leaders_ns);
    q.final_pick.k = 0;
    const session::TuneOutcome o = session::tune(f.spec, be, *f.db, q);
    CHECK_FALSE(o.final_pick.ran);
    CHECK(o.final_pick.note == "off (--final-k 0)");
    CHECK(be.interleaved_rounds() == 0);
  }
  {
    sim::SyntheticBackend be;  // the default times: the best is 3% ahead of the next
    q.final_pick.k = 5;
    q.problem = ProblemKey::parse("n=2097152");
    const session::TuneOutcome o = session::tune(f.spec, be, *f.db, q);
    CHECK_FALSE(o.final_pick.ran);
    CHECK(o.final_pick.note == "no other configuration within noise of the best");
    CHECK(o.final_pick.candidates == 1);
  }
  {
    struct NoRetime : ForwardingBackend {
      using ForwardingBackend::ForwardingBackend;
      std::string kind() const override { return "simulation"; }
      std::optional<std::vector<std::vector<double>>> time_interleaved(const std::vector<Config>&, int,
                                                                       double) override {
        return std::nullopt;
      }
    };
    sim::SyntheticBackend inner(sim::SyntheticBackend::fake_device(), close_leaders_ns);
    NoRetime be(inner);
    q.problem = ProblemKey::parse("n=4194304");
    const session::TuneOutcome o = session::tune(f.spec, be, *f.db, q);
    CHECK_FALSE(o.final_pick.ran);
    CHECK(o.final_pick.note == "skipped: the simulation backend cannot re-time configurations");
    CHECK(o.final_pick.candidates == 3);
    CHECK(f.db->final_picks(f.spec.name, f.w.key(), "n=4194304").empty());
  }
  {
    sim::SyntheticBackend be(sim::SyntheticBackend::fake_device(), close_leaders_ns);
    q.problem = ProblemKey::parse("n=8388608");
    q.objective = Objective::energy;
    be.simulate_power([](const Config&) { return 100.0; });
    const session::TuneOutcome o = session::tune(f.spec, be, *f.db, q);
    CHECK_FALSE(o.final_pick.ran);
    CHECK(o.final_pick.note.find("objective energy is not time") != std::string::npos);
  }
}

namespace {

/// A cell recorded directly: trials of `configs` with times, and optionally a final pick over them.
struct LookupFixture {
  TuningSpec spec = autotune_test::small_spec();
  std::unique_ptr<db::Database> db = db::Database::open(":memory:");
  Workload w = Workload::parse("float32/sum");
  DeviceInfo dev = sim::SyntheticBackend::fake_device();
  std::int64_t device_id = db->upsert_device(dev);

  static Config cfg(std::int64_t bs) { return Config({{"BLOCK_SIZE", bs}, {"ITEMS", 1}, {"VEC", 1}}); }

  std::int64_t cell(std::int64_t n, const std::vector<std::pair<std::int64_t, double>>& times) {
    db::SessionRow s;
    s.kernel = spec.name;
    s.source_hash = spec.source_hash();
    s.spec_hash = spec.spec_hash();
    s.strategy = "fixture";
    s.workload = w.key();
    s.problem = "n=" + std::to_string(n);
    s.device_id = device_id;
    s.backend = "synthetic";
    const std::int64_t sid = db->begin_session(s);
    for (const auto& [bs, ns] : times) {
      db::TrialRow t;
      t.session_id = sid;
      t.device_id = device_id;
      t.kernel = spec.name;
      t.source_hash = spec.source_hash();
      t.workload = w.key();
      t.problem = s.problem;
      t.problem_elements = static_cast<double>(n);
      t.config_json = cfg(bs).to_json();
      t.config_hash = cfg(bs).hash();
      t.m.median_ns = ns;
      t.m.min_ns = ns;
      t.m.samples = 7;
      REQUIRE(db->insert_trial(t));
    }
    return sid;
  }

  /// A final pick of cell n in session sid: (block size, in tie set), the winner first.
  void pick(std::int64_t sid, std::int64_t n, const std::vector<std::pair<std::int64_t, bool>>& ranked) {
    std::vector<db::FinalPickRow> rows;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      db::FinalPickRow r;
      r.session_id = sid;
      r.device_id = device_id;
      r.kernel = spec.name;
      r.source_hash = spec.source_hash();
      r.workload = w.key();
      r.problem = "n=" + std::to_string(n);
      r.config_json = cfg(ranked[i].first).to_json();
      r.config_hash = cfg(ranked[i].first).hash();
      r.rank = static_cast<int>(i);
      r.median_ns = 1000;
      r.ratio = 1 + 0.001 * static_cast<double>(i);
      r.in_tie_set = ranked[i].second;
      r.noise = 0.006;
      r.samples_ns = {1000, 1001};
      rows.push_back(r);
    }
    db->insert_final_pick(rows);
  }

  lookup::Answer best(std::int64_t n) const {
    return lookup::best(*db, spec, w, dev, ProblemKey::parse("n=" + std::to_string(n)));
  }
};

}  // namespace

TEST_CASE("final pick: the lookup serves the pick's winner over a faster recorded median", "[cpu][final_pick]") {
  LookupFixture f;
  const std::int64_t s = f.cell(1 << 20, {{128, 1000}, {256, 1002}, {512, 1100}});
  CHECK(f.best(1 << 20).config == LookupFixture::cfg(128));
  CHECK(f.best(1 << 20).tie_set.empty());
  f.pick(s, 1 << 20, {{256, true}, {128, true}, {512, false}});
  const lookup::Answer a = f.best(1 << 20);
  CHECK(a.config == LookupFixture::cfg(256));
  REQUIRE(a.tie_set.size() == 2);
  CHECK(a.tie_set[0] == LookupFixture::cfg(256));
  CHECK(a.tie_set[1] == LookupFixture::cfg(128));
  CHECK(a.tie_noise == Approx(0.006));
  CHECK(a.tie_session == s);
  CHECK(a.median_ns == 1002);  // the served configuration's own recorded median
}

TEST_CASE("final pick: among a tie set the lookup prefers the one that also leads at the neighbouring sizes",
          "[cpu][final_pick]") {
  LookupFixture f;
  const std::int64_t s = f.cell(1 << 20, {{128, 1000}, {256, 1002}, {512, 1003}});
  f.pick(s, 1 << 20, {{128, true}, {256, true}, {512, true}});
  CHECK(f.best(1 << 20).config == LookupFixture::cfg(128));  // no neighbours: the winner
  // 512 leads at both neighbouring sizes, 256 at one: 512 is served, the winner stays in the tie set.
  f.cell(1 << 18, {{512, 300}, {128, 320}, {256, 330}});
  f.cell(1 << 22, {{512, 4000}, {256, 4010}, {128, 4200}});
  const lookup::Answer a = f.best(1 << 20);
  CHECK(a.config == LookupFixture::cfg(512));
  REQUIRE(a.tie_set.size() == 3);
  CHECK(a.tie_set[1] == LookupFixture::cfg(128));
  // The neighbours themselves have no pick: their fastest.
  CHECK(f.best(1 << 18).config == LookupFixture::cfg(512));
  CHECK(f.best(1 << 18).tie_set.empty());
}

TEST_CASE("final pick: a later faster measurement outside the pick ends its say", "[cpu][final_pick]") {
  LookupFixture f;
  const std::int64_t s = f.cell(1 << 20, {{128, 1000}, {256, 1002}});
  f.pick(s, 1 << 20, {{256, true}, {128, true}});
  CHECK(f.best(1 << 20).config == LookupFixture::cfg(256));
  f.cell(1 << 20, {{64, 900}});  // a later session measured a clearly faster configuration
  const lookup::Answer a = f.best(1 << 20);
  CHECK(a.config == LookupFixture::cfg(64));
  CHECK(a.tie_set.empty());
}

TEST_CASE("final pick: a file of schema 6 is migrated to the final picks table (migration 7)",
          "[cpu][final_pick][db]") {
  autotune_test::TempPath tmp("v6.db");
  {
    auto db = db::Database::open(tmp.path);
    const auto dev = db->upsert_device(autotune_test::sample_device());
    auto old = autotune_test::sample_trial(dev, "old");
    REQUIRE(db->insert_trial(old));
    autotune_test::undo_migration_7(*db);
    db->exec("PRAGMA user_version = 6");
  }
  const auto before = autotune_test::read_bytes(tmp.path);
  {
    auto ro = db::Database::open(tmp.path, db::Database::Mode::read_only);  // read through a migrated copy
    CHECK(ro->final_picks("k", "float32/sum").empty());
    CHECK(ro->trials({}).size() == 1);
  }
  CHECK(autotune_test::read_bytes(tmp.path) == before);
  auto db = db::Database::open(tmp.path);
  CHECK(db->schema_version() == db::current_schema_version());
  CHECK(db::current_schema_version() == 8);
  db::FinalPickRow r;
  r.session_id = 3;
  r.device_id = db->devices().front().id;
  r.kernel = "k";
  r.workload = "float32/sum";
  r.problem = "n=1024";
  r.config_json = R"({"A":1})";
  r.config_hash = "h";
  r.median_ns = 12.5;
  r.ratio = 1.002;
  r.in_tie_set = true;
  r.noise = 0.007;
  r.samples_ns = {12.5, 13.25, 12.0625};
  db->insert_final_pick({r});
  const std::vector<db::FinalPickRow> back = db->final_picks("k", "float32/sum");
  REQUIRE(back.size() == 1);
  CHECK(back[0].samples_ns == r.samples_ns);
  CHECK(back[0].ratio == r.ratio);
  CHECK(back[0].in_tie_set);
  CHECK(back[0].noise == r.noise);
  CHECK_FALSE(back[0].created_at.empty());
}

TEST_CASE("final pick: best names the tie set and serves the pick's winner, in text and JSON",
          "[cpu][final_pick][cli]") {
  const std::string path = autotune_test::tmp_path("final_pick", "best.db");
  autotune_test::remove_db(path);
  std::filesystem::copy_file(autotune_test::data_dir() + "/recorded_h200.db", path);
  const TuningSpec spec = specs::builtin_spec("reduction");
  const Workload w = Workload::parse("float32/sum");
  const ProblemKey p = ProblemKey::parse("n=67108864");
  std::string served, winner;
  {
    auto db = db::Database::open(path);
    const DeviceInfo h200 = db->devices().front().info;
    served = lookup::best(*db, spec, w, h200, p).config.to_json();
    db::TrialFilter f;
    f.kernel = spec.name;
    f.workload = w.key();
    f.problem = p.key();
    f.ok_only = true;
    const std::vector<db::TrialRow> ranked = db::rank_trials(db->trials(f), Objective::time, true);
    const db::TrialRow* first = nullptr;
    const db::TrialRow* other = nullptr;
    for (const db::TrialRow& t : ranked) {
      if (Config::from_json(t.config_json).to_json() == served)
        first = first ? first : &t;
      else if (other == nullptr && t.source_hash == ranked.front().source_hash)
        other = &t;
    }
    REQUIRE(first != nullptr);
    REQUIRE(other != nullptr);
    winner = Config::from_json(other->config_json).to_json();
    std::vector<db::FinalPickRow> rows;
    int rank = 0;
    for (const db::TrialRow* t : {other, first}) {
      db::FinalPickRow r;
      r.session_id = t->session_id;
      r.device_id = t->device_id;
      r.kernel = t->kernel;
      r.source_hash = t->source_hash;
      r.workload = t->workload;
      r.problem = t->problem;
      r.config_json = t->config_json;
      r.config_hash = t->config_hash;
      r.rank = rank++;
      r.median_ns = t->m.median_ns;
      r.ratio = rank == 1 ? 1.0 : 1.002;
      r.in_tie_set = true;
      r.noise = 0.006;
      rows.push_back(r);
    }
    db->insert_final_pick(rows);
  }
  const std::string args = "best reduction --n 67108864 --dtype float32 --op sum --device 'NVIDIA H200' --db " + path;
  const autotune_test::Run text = autotune_test::run_cli(args);
  INFO(text.out);
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("2 configurations within noise (0.6%)"));
  const autotune_test::Run js = autotune_test::run_cli(args + " --json");
  INFO(js.out);
  REQUIRE(js.code == 0);
  const nlohmann::json j = nlohmann::json::parse(js.out);
  CHECK(Config::from_json(j["config_values"].dump()).to_json() == winner);
  CHECK(j["match"] == "exact");
  CHECK(j["final_pick"]["within_noise"] == 2);
  CHECK(j["final_pick"]["noise"] == Approx(0.006));
  CHECK(j["final_pick"]["tie_set"].size() == 2);
  autotune_test::remove_db(path);
}
