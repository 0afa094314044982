#include <catch2/catch.hpp>

#include "tuner/core/error.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/session/session.hpp"
#include "tuner/sim/replay.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;

namespace {
TuningSpec spec() {
  return TuningSpec::from_json_text(R"J({
    "name": "k", "family": "synthetic", "source": "none.cu", "kernels": ["k"],
    "parameters": [{"name": "A", "values": [1, 2, 4, 8, 16], "default": 2},
                   {"name": "B", "values": [1, 2, 4, 8], "default": 1}],
    "problem": {"dims": ["n"]}, "workloads": ["float32"]})J", ".", false);
}
}  // namespace

TEST_CASE("replay answers from recorded trials and names missing configurations", "[cpu][replay]") {
  auto rec = db::Database::open(":memory:");
  TuningSpec s = spec();
  Workload w = s.workloads.front();
  ProblemKey p = ProblemKey::parse("n=4096");
  sim::SyntheticBackend be;
  be.inject_failure_when("A", 16, TrialStatus::wrong_result);
  session::Result r0 = session::run(s, be, *rec, w, p, {});
  REQUIRE(r0.evaluated == 20);

  sim::ReplayBackend replay(*rec, "k");
  CHECK(replay.device().name == "Synthetic GPU");
  CHECK(replay.kind() == "simulation");
  replay.prepare(w, p, 1);
  auto out = replay.evaluate({Config({{"A", 8}, {"B", 8}}), Config({{"A", 16}, {"B", 1}})});
  CHECK(out[0].ok());
  CHECK(out[1].status == TrialStatus::wrong_result);
  CHECK_THROWS_WITH(replay.evaluate({Config({{"A", 3}, {"B", 1}})}), Catch::Contains("{\"A\":3,\"B\":1}"));
  CHECK_THROWS_WITH(replay.prepare(w, ProblemKey::parse("n=5"), 1), Catch::Contains("no recorded trials"));
  CHECK_THROWS_AS(sim::ReplayBackend(*rec, "other"), UsageError);

  // A simulated session into another database reproduces the recorded optimum.
  auto out_db = db::Database::open(":memory:");
  session::Options opt;
  opt.strategy = "random_sample";
  opt.seed = 3;
  session::Result r = session::run(s, replay, *out_db, w, p, opt);
  CHECK(r.evaluated == 20);
  REQUIRE_FALSE(r.top.empty());
  CHECK(r.top.front().config_hash == r0.top.front().config_hash);
}

// The lookup cases moved to tests/cpu/test_lookup.cpp.

TEST_CASE("the shipped H200 recording replays: simulation finds the recorded optimum", "[cpu][replay]") {
  auto rec = db::Database::open(std::string(AUTOTUNE_TEST_DATA_DIR) + "/recorded_h200.db", db::Database::Mode::read_only);
  TuningSpec s = specs::builtin_spec("reduction");
  Workload w = Workload::parse("float32/sum");
  ProblemKey p = ProblemKey::parse("n=67108864");
  sim::ReplayBackend replay(*rec, "reduction");
  CHECK(replay.device().name == "NVIDIA H200");
  CHECK(replay.copy_bandwidth_gbps() > 1000);
  auto out = db::Database::open(":memory:");
  session::Result r = session::run(s, replay, *out, w, p, {});
  CHECK(r.evaluated == r.space_size);
  CHECK(r.failed == 0);
  db::TrialFilter f;
  f.kernel = "reduction";
  f.ok_only = true;
  f.by_time = true;
  f.limit = 1;
  f.problem = p.key();
  auto recorded_best = rec->trials(f);
  REQUIRE(recorded_best.size() == 1);
  REQUIRE_FALSE(r.top.empty());
  CHECK(r.top.front().config_hash == recorded_best.front().config_hash);
  // The modern grid-stride variants beat every lecture variant on this GPU.
  CHECK(Config::from_json(r.top.front().config_json).at("VARIANT") >= 6);
}
