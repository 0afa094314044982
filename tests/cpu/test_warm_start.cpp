// Warm starts (tuner/session/warm_start.*): which configurations earlier trials suggest for a new problem, and a
// session that measures them first.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "search/base.hpp"
#include "synthetic_session.hpp"
#include "tuner/session/session.hpp"
#include "tuner/session/warm_start.hpp"

using namespace autotune;
using Fixture = autotune_test::SessionFixture;

namespace {

/// A landscape whose optimum depends on the problem: BLOCK_SIZE best at 128, ITEMS best at 2 below 2^18, at 4
/// up to 2^20 and at 8 above.
double landscape(const Config& c, std::int64_t n) {
  const double b = std::log2(static_cast<double>(c.at("BLOCK_SIZE"))) - 7;
  const double i = std::log2(static_cast<double>(c.at("ITEMS"))) - (n < (1 << 18) ? 1 : n <= (1 << 20) ? 2 : 3);
  return 1000 + 100 * b * b + 50 * i * i + 10 * static_cast<double>(c.at("VEC"));
}

session::Result brute_force(Fixture& f, sim::SyntheticBackend& be, const ProblemKey& p) {
  session::Options opt;
  return session::run(f.spec, be, *f.db, f.w, p, opt);
}

DeviceInfo other_device(int cc, const std::string& name) {
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  d.cc = cc;
  d.name = name;
  return d;
}

}  // namespace

TEST_CASE("a warm start takes the best configurations of the nearest other sizes on the same device", "[cpu][warm]") {
  Fixture f;
  const ProblemKey small = ProblemKey::parse("n=65536"), mid = ProblemKey::parse("n=1048576"),
                   target = ProblemKey::parse("n=4194304");
  sim::SyntheticBackend be_small(sim::SyntheticBackend::fake_device(), [](const Config& c) { return landscape(c, 65536); });
  sim::SyntheticBackend be_mid(sim::SyntheticBackend::fake_device(), [](const Config& c) { return landscape(c, 1 << 20); });
  be_small.inject_failure_when("VEC", 4, TrialStatus::wrong_result);
  be_mid.inject_failure_when("VEC", 4, TrialStatus::compile_error);
  brute_force(f, be_small, small);
  const session::Result mid_run = brute_force(f, be_mid, mid);

  // Nothing is known about the target yet: the best of n=2^20 (nearest) and n=2^16 come in turn.
  const DeviceInfo dev = sim::SyntheticBackend::fake_device();
  const session::WarmStart ws = session::find_warm_start(*f.db, f.spec, dev, f.w, target, 4);
  REQUIRE(ws.configs.size() == 4);
  CHECK(ws.configs[0].to_json() == mid_run.top[0].config_json);  // rank 1 of the nearest size first
  CHECK(ws.configs[0].at("ITEMS") == 4);
  CHECK(ws.configs[0].at("BLOCK_SIZE") == 128);
  for (const Config& c : ws.configs) CHECK(c.at("VEC") != 4);  // failures are never suggested
  CHECK(ws.source.find("n=1048576") != std::string::npos);
  CHECK(ws.source.find("n=65536") != std::string::npos);
  CHECK(ws.source.find("on this device") != std::string::npos);
  // What the nearest size predicts, for the strategy to test: the time of every configuration that ran at n=2^20
  // (VEC=4 failed there), two octaves away.
  CHECK(ws.problem == "n=1048576");
  CHECK(ws.distance == Approx(2.0));
  CHECK(ws.values.size() == mid_run.evaluated - mid_run.failed);
  CHECK(ws.values.front().first == ws.configs[0]);
  CHECK(ws.values.front().second == Approx(landscape(ws.configs[0], 1 << 20)));
  for (const auto& [c, ns] : ws.values) CHECK(c.at("VEC") != 4);
  // No duplicates, even though both sizes share their best configuration.
  for (std::size_t i = 0; i < ws.configs.size(); ++i)
    for (std::size_t j = i + 1; j < ws.configs.size(); ++j) CHECK_FALSE(ws.configs[i] == ws.configs[j]);

  // The target problem's own trials are never suggested for it: only the other size.
  const session::WarmStart for_mid = session::find_warm_start(*f.db, f.spec, dev, f.w, mid, 3);
  REQUIRE(for_mid.configs.size() == 3);
  CHECK(for_mid.source.find("n=1048576") == std::string::npos);
  CHECK(for_mid.source.find("n=65536") != std::string::npos);

  CHECK(session::find_warm_start(*f.db, f.spec, dev, f.w, target, 0).empty());
  CHECK(session::find_warm_start(*f.db, f.spec, dev, Workload::parse("float32/max"), target).empty());

  // best_of_problem: exactly that problem, fastest first.
  const session::WarmStart top = session::best_of_problem(*f.db, f.spec, dev, f.w, mid, 2);
  REQUIRE(top.configs.size() == 2);
  CHECK(top.configs[0].to_json() == mid_run.top[0].config_json);
  CHECK(top.configs[1].to_json() == mid_run.top[1].config_json);
}

TEST_CASE("without trials on the device, a warm start comes from devices of the same architecture", "[cpu][warm]") {
  Fixture f;
  const ProblemKey p = ProblemKey::parse("n=1048576");
  sim::SyntheticBackend sibling(other_device(90, "Synthetic GPU sibling"),
                                [](const Config& c) { return landscape(c, 1 << 20); });
  sim::SyntheticBackend older(other_device(80, "Synthetic GPU older"), [](const Config& c) { return -landscape(c, 1) + 1e5; });
  brute_force(f, sibling, p);
  brute_force(f, older, p);
  const DeviceInfo dev = sim::SyntheticBackend::fake_device();  // sm_90, nothing recorded on it
  const session::WarmStart ws = session::find_warm_start(*f.db, f.spec, dev, f.w, p, 2);
  REQUIRE(ws.configs.size() == 2);
  CHECK(ws.configs[0].at("BLOCK_SIZE") == 128);  // the sibling's optimum, not the sm_80 device's
  CHECK(ws.configs[0].at("ITEMS") == 4);
  CHECK(ws.source.find("Synthetic GPU sibling") != std::string::npos);
  CHECK(ws.source.find("same architecture") != std::string::npos);
  // The values of the same problem on the sibling, as far away as a size 4x off.
  CHECK(ws.problem == "n=1048576 on Synthetic GPU sibling");
  CHECK(ws.distance == Approx(search::WarmStartHint::kOtherDeviceDistance));
  REQUIRE_FALSE(ws.values.empty());
  CHECK(ws.values.front().first == ws.configs[0]);
  // A device of another architecture gets nothing.
  CHECK(session::find_warm_start(*f.db, f.spec, other_device(100, "Synthetic GPU next"), f.w, p).empty());
}

TEST_CASE("a session measures the warm-start configurations first and reports how many were valid", "[cpu][warm]") {
  Fixture f;
  sim::SyntheticBackend be;
  session::Options opt;
  opt.strategy = "random_sample";
  opt.budget = 10;
  opt.batch = 4;
  const Config a({{"BLOCK_SIZE", 1024}, {"ITEMS", 1}, {"VEC", 1}});
  const Config b({{"BLOCK_SIZE", 32}, {"ITEMS", 2}, {"VEC", 2}});
  const Config invalid({{"BLOCK_SIZE", 1024}, {"ITEMS", 8}, {"VEC", 4}});  // violates the constraint
  opt.warm_start = {a, invalid, b, a};
  const session::Result r = session::run(f.spec, be, *f.db, f.w, f.p, opt);
  CHECK(r.warm_started == 2);
  CHECK(r.evaluated == 10);
  auto rows = f.trials(r.session_id);
  REQUIRE(rows.size() == 10);
  std::sort(rows.begin(), rows.end(), [](const db::TrialRow& x, const db::TrialRow& y) { return x.id < y.id; });
  CHECK(rows[0].config_json == a.to_json());
  CHECK(rows[1].config_json == b.to_json());
}

TEST_CASE("a session tests a warm start with source values and says how far it trusted it", "[cpu][warm]") {
  Fixture f;
  const ProblemKey source = ProblemKey::parse("n=1048576"), target = ProblemKey::parse("n=4194304");
  sim::SyntheticBackend be_source(sim::SyntheticBackend::fake_device(),
                                  [](const Config& c) { return landscape(c, 1 << 20); });
  brute_force(f, be_source, source);
  const session::WarmStart ws =
      session::find_warm_start(*f.db, f.spec, sim::SyntheticBackend::fake_device(), f.w, target, 5);
  REQUIRE_FALSE(ws.values.empty());
  sim::SyntheticBackend be(sim::SyntheticBackend::fake_device(), [](const Config& c) { return landscape(c, 1 << 22); });
  session::Options opt;
  opt.strategy = "broad_then_local";
  opt.budget = 20;
  opt.warm_start = ws.configs;
  opt.warm_values = ws.values;
  opt.warm_distance = ws.distance;
  opt.warm_source = ws.problem;
  const session::Result r = session::run(f.spec, be, *f.db, f.w, target, opt);
  INFO(r.warm_trust.reason);
  CHECK(r.warm_started == 5);
  CHECK(r.warm_trust.given == 5);
  CHECK_THAT(r.warm_trust.reason, Catch::Contains("none measured first"));  // 0.03 x 20 / 2^(2 / 2) rounds to 0
  CHECK(r.warm_trust.overlap >= search::detail::kMinTrustOverlap);
  CHECK(r.warm_trust.correlation > 0.5);  // the optimum moved in ITEMS only
  CHECK(r.warm_trust.trust == Approx(r.warm_trust.correlation));
  CHECK_THAT(r.warm_trust.reason, Catch::Contains("rank correlation") && Catch::Contains("measured at both"));

  // Without values the configurations are measured first, as given, and the trust says so.
  session::Options given = opt;
  given.warm_values.clear();
  const session::Result g = session::run(f.spec, be, *f.db, f.w, ProblemKey::parse("n=8388608"), given);
  CHECK(g.warm_trust.given == 5);
  CHECK(g.warm_trust.measured == 5);
  CHECK(g.warm_trust.trust == 1.0);
}
