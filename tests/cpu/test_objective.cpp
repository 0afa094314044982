// Tests of tuner/core/objective.cpp and db/ranking.cpp, and of the objective through the session (strategies
// minimise it) and the lookup (best by it, unthrottled measurements first), on the synthetic backend with
// simulated power.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "db/ranking.hpp"
#include "synthetic_session.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/objective.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/session/session.hpp"

using namespace autotune;

namespace {

using Fixture = autotune_test::SessionFixture;

/// Power that grows steeply with the vector width: the fastest configurations (VEC = 4, see test_session.cpp)
/// draw 10x the power of VEC = 1 ones, which take less than 2x as long: the energy-best is not the fastest.
double power_of(const Config& c) {
  const Value vec = c.at("VEC");
  return vec == 4 ? 1000.0 : vec == 2 ? 400.0 : 100.0;
}

Measurement observed(double median_ns, double power_w, std::uint64_t reasons = 0) {
  Measurement m;
  m.median_ns = median_ns;
  m.observed.power_w = power_w;
  m.observed.energy_j = power_w * median_ns * 1e-9;
  m.observed.throttle_reasons = reasons;
  m.observed.method = "test";
  return m;
}

/// The configuration of all rows of a cell with the lowest cost of objective o (ties: the first).
std::string argmin(const std::vector<db::TrialRow>& rows, Objective o) {
  const db::TrialRow* best = nullptr;
  for (const auto& t : rows)
    if (t.m.ok() && (best == nullptr || objective_cost(o, t.m, t.gbps) < objective_cost(o, best->m, best->gbps)))
      best = &t;
  REQUIRE(best != nullptr);
  return best->config_json;
}

}  // namespace

TEST_CASE("objective: names, values and costs", "[cpu][objective]") {
  CHECK(objective_names() == std::vector<std::string>{"time", "energy", "edp", "gbps_per_watt"});
  for (const auto& n : objective_names()) CHECK(to_string(objective_from_string(n)) == n);
  CHECK_THROWS_AS(objective_from_string("power"), UsageError);
  CHECK_FALSE(needs_power(Objective::time));
  CHECK(needs_power(Objective::energy));

  const Measurement m = observed(2e6, 400);  // 2 ms at 400 W: 0.8 J per run
  const double gbps = 500;
  CHECK(objective_value(Objective::time, m, gbps) == 2e6);
  CHECK(objective_value(Objective::energy, m, gbps) == Approx(0.8));
  CHECK(objective_value(Objective::edp, m, gbps) == Approx(0.8 * 2e-3));
  CHECK(objective_value(Objective::gbps_per_watt, m, gbps) == Approx(1.25));
  CHECK(objective_cost(Objective::gbps_per_watt, m, gbps) == Approx(0.8));  // W per GB/s: lower is better
  CHECK(format_objective(Objective::energy, 0.0123) == "12.3 mJ");
  CHECK(format_objective(Objective::gbps_per_watt, 1.25) == "1.25 GB/s/W");
  CHECK(format_objective(Objective::energy, std::nan("")) == "-");

  Measurement unobserved;
  unobserved.median_ns = 1000;
  CHECK(std::isnan(objective_value(Objective::energy, unobserved, gbps)));
  CHECK(objective_cost(Objective::energy, unobserved, gbps) == std::numeric_limits<double>::infinity());
  CHECK(std::isnan(objective_value(Objective::gbps_per_watt, m, 0)));  // bytes moved unknown
  Measurement failed = m;
  failed.status = TrialStatus::wrong_result;
  CHECK(objective_cost(Objective::time, failed, gbps) == std::numeric_limits<double>::infinity());
}

TEST_CASE("ranking: unthrottled first when asked, then the objective, then time", "[cpu][objective]") {
  std::vector<db::TrialRow> rows(4);
  rows[0].id = 1, rows[0].m = observed(100, 500);                       // fastest, most power
  rows[1].id = 2, rows[1].m = observed(150, 200);                       // least energy
  rows[2].id = 3, rows[2].m = observed(90, 400, kThrottleSwPowerCap);   // faster still, but throttled
  rows[3].id = 4, rows[3].m = observed(80, 100);
  rows[3].m.status = TrialStatus::wrong_result;
  auto ids = [](const std::vector<db::TrialRow>& r) {
    std::vector<std::int64_t> out;
    for (const auto& t : r) out.push_back(t.id);
    return out;
  };
  CHECK(ids(db::rank_trials(rows, Objective::time, false)) == std::vector<std::int64_t>{3, 1, 2, 4});
  CHECK(ids(db::rank_trials(rows, Objective::time, true)) == std::vector<std::int64_t>{1, 2, 3, 4});
  CHECK(ids(db::rank_trials(rows, Objective::energy, true)) == std::vector<std::int64_t>{2, 1, 3, 4});
}

TEST_CASE("session: the strategy minimises the objective, and the same trials answer every objective",
          "[cpu][objective][session]") {
  Fixture f;
  session::Options opt;
  opt.bytes_moved = 4.0 * 1048576;
  sim::SyntheticBackend timed;
  timed.simulate_power(power_of);
  const session::Result by_time = session::run(f.spec, timed, *f.db, f.w, f.p, opt);
  const auto rows = f.trials(by_time.session_id);
  REQUIRE(rows.size() == f.valid());
  for (const auto& t : rows) CHECK(t.m.observed.has_energy());
  CHECK(by_time.top.front().config_json == argmin(rows, Objective::time));

  for (Objective o : {Objective::energy, Objective::edp, Objective::gbps_per_watt}) {
    INFO(to_string(o));
    sim::SyntheticBackend again;
    again.simulate_power(power_of);
    opt.objective = o;
    const session::Result r = session::run(f.spec, again, *f.db, f.w, f.p, opt);
    CHECK(r.evaluated == 0);  // no re-measuring: every metric is in the database
    CHECK(r.reused == f.valid());
    CHECK(r.top.front().config_json == argmin(rows, o));
  }
  CHECK(argmin(rows, Objective::energy) != argmin(rows, Objective::time));
}

TEST_CASE("session: an energy objective without power measurements is a usage error", "[cpu][objective][session]") {
  Fixture f;
  sim::SyntheticBackend be;  // no simulated power: like a machine without NVML
  session::Options opt;
  opt.objective = Objective::energy;
  CHECK_THROWS_WITH(session::run(f.spec, be, *f.db, f.w, f.p, opt), Catch::Contains("needs the power or energy"));
}

TEST_CASE("lookup: best by objective, unthrottled measurements preferred, and says when it could not",
          "[cpu][objective][lookup]") {
  Fixture f;
  session::Options opt;
  opt.bytes_moved = 4.0 * 1048576;
  sim::SyntheticBackend be;
  std::string throttled_config;
  be.simulate_power(power_of, [&](const Config& c) { return c.to_json() == throttled_config; });
  // The fastest configuration of the synthetic space (see test_session.cpp) is measured throttled.
  {
    Fixture probe;
    sim::SyntheticBackend plain;
    throttled_config = session::run(probe.spec, plain, *probe.db, probe.w, probe.p, opt).top.front().config_json;
  }
  session::run(f.spec, be, *f.db, f.w, f.p, opt);
  const DeviceInfo dev = sim::SyntheticBackend::fake_device();

  const lookup::Answer t = lookup::best(*f.db, f.spec, f.w, dev, f.p, Objective::time);
  CHECK(t.match == lookup::Match::exact);
  CHECK(t.config.to_json() != throttled_config);
  CHECK_FALSE(t.observed.throttled());
  CHECK(t.observed.has_energy());

  const lookup::Answer e = lookup::best(*f.db, f.spec, f.w, dev, f.p, Objective::energy);
  CHECK(e.objective == Objective::energy);
  CHECK(e.config.to_json() == argmin(f.db->trials({}), Objective::energy));
  CHECK(e.config.to_json() != t.config.to_json());

  // Every measurement throttled: the best of them is served, with a note.
  Fixture all;
  sim::SyntheticBackend hot;
  hot.simulate_power(power_of, [](const Config&) { return true; });
  session::run(all.spec, hot, *all.db, all.w, all.p, opt);
  const lookup::Answer h = lookup::best(*all.db, all.spec, all.w, dev, all.p, Objective::time);
  CHECK(h.match == lookup::Match::exact);
  CHECK(h.observed.throttled());
  CHECK_THAT(h.note, Catch::Contains("throttled"));
}

TEST_CASE("lookup: rows without power are no candidates for an energy objective", "[cpu][objective][lookup]") {
  Fixture f;
  sim::SyntheticBackend be;
  session::run(f.spec, be, *f.db, f.w, f.p, session::Options{});
  const DeviceInfo dev = sim::SyntheticBackend::fake_device();
  CHECK(lookup::best(*f.db, f.spec, f.w, dev, f.p, Objective::time).match == lookup::Match::exact);
  const lookup::Answer e = lookup::best(*f.db, f.spec, f.w, dev, f.p, Objective::energy);
  CHECK(e.match == lookup::Match::spec_default);
  CHECK_THAT(e.note, Catch::Contains("lack the power or energy"));
}
