// The final pick on the GPU (tuner/session/final_pick.*): CudaBackend::time_interleaved on configurations of known
// cost ratios (tests/data/specs/spin: REPEAT 1, 2, 8), and the whole pick through session::tune.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cuda_session_support.hpp"
#include "test_support.hpp"
#include "tuner/core/stats.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/session/final_pick.hpp"
#include "tuner/session/session.hpp"
#include "tuner/session/tune.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

Config spin(std::int64_t repeat, std::int64_t block) { return Config({{"REPEAT", repeat}, {"BLOCK_SIZE", block}}); }

}  // namespace

TEST_CASE("final pick: the CUDA backend times configurations interleaved, one sample per round each",
          "[gpu][final_pick]") {
  TuningSpec spec = specs::load_spec(autotune_test::data_dir() + "/specs/spin.tune.json");
  autotune_test::CudaSession cs(spec, cuda::TimingOptions{});
  const Workload w = spec.workloads.front();
  const ProblemKey p = spec.problem_sizes.front();
  session::Options opt;
  opt.strategy = "brute_force";
  const session::Result r = session::run(spec, cs.backend, *cs.db, w, p, opt);
  REQUIRE(r.failed == 0);
  const std::vector<Config> configs = {spin(1, 128), spin(2, 128), spin(8, 128), spin(1, 256)};
  const auto samples = cs.backend.time_interleaved(configs, 6, 30);
  REQUIRE(samples);
  REQUIRE(samples->size() == 4);
  for (const auto& s : *samples) CHECK(s.size() == 6);
  const double one = stats::median((*samples)[0]), two = stats::median((*samples)[1]);
  const double eight = stats::median((*samples)[2]);
  CHECK(two > 1.5 * one);
  CHECK(eight > 4 * one);
  // The same protocol as the session's samples (L2 flushed before each): within 15% of the recorded median.
  for (const db::TrialRow& t : r.top) {
    for (std::size_t i = 0; i < configs.size(); ++i) {
      if (t.config_json != configs[i].to_json()) continue;
      INFO(t.config_json);
      CHECK(stats::median((*samples)[i]) == Approx(t.m.median_ns).epsilon(0.15));
    }
  }
  const session::Pick pick = session::pick(*samples);
  CHECK((pick.winner == 0 || pick.winner == 3));  // REPEAT 1, either block size
  CHECK_FALSE(pick.entries.back().in_tie_set);    // REPEAT 8 is clearly slower
  for (const session::PickEntry& e : pick.entries)
    if (e.index == 1 || e.index == 2) CHECK_FALSE(e.in_tie_set);
  // Stopped by the time: 3 rounds at least, then the round that passes max_seconds.
  const auto quick = cs.backend.time_interleaved(configs, 1000, 0);
  REQUIRE(quick);
  CHECK((*quick)[0].size() == 3);
}

TEST_CASE("final pick: a tune on the GPU re-times its leaders and the lookup serves the winner", "[gpu][final_pick]") {
  TuningSpec spec = specs::builtin_spec("scan");
  autotune_test::CudaSession cs(spec, cuda::TimingOptions{});
  session::TuneRequest q;
  q.workload = Workload::parse("float32/inclusive_sum");
  q.problem = ProblemKey::parse("n=16777216");
  q.strategy = "random_sample";
  q.budget = 40;
  q.smaller_sizes = 0;
  const session::TuneOutcome o = session::tune(spec, cs.backend, *cs.db, q);
  const session::FinalPickOutcome& f = o.final_pick;
  INFO(f.note);
  if (!f.ran) {
    // Only when no other configuration was within noise of the best.
    CHECK(f.note == "no other configuration within noise of the best");
    return;
  }
  CHECK(f.candidates >= 2);
  CHECK(f.candidates <= 5);
  CHECK(f.rounds >= 3);
  CHECK(f.tie >= 1);
  REQUIRE(f.rows.size() <= f.candidates);
  CHECK(f.rows.front().in_tie_set);
  const lookup::Answer a = lookup::best(*cs.db, spec, q.workload, cs.backend.device(), q.problem);
  CHECK(a.match == lookup::Match::exact);
  CHECK(a.tie_set.size() == f.tie);
  CHECK(a.config == Config::from_json(f.winner_json));  // no neighbouring sizes recorded: the winner
}
