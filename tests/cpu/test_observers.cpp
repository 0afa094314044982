// The observer interface seen from the record (docs/observers.md): the named values an observer adds to a trial
// (Observation::metrics; here a fake one, the SyntheticBackend's simulate_metrics) reach the trials table, the
// session's result, `best --json`, `summary` and the T4 export; their JSON and text forms.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <cstdio>
#include <stdexcept>

#include "cli_support.hpp"
#include "db/database.hpp"
#include "synthetic_session.hpp"
#include "test_support.hpp"
#include "tuner/core/trial.hpp"
#include "tuner/interop/interop.hpp"
#include "tuner/session/session.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

/// What the fake observer reports for a configuration: bytes that grow with BLOCK_SIZE, an occupancy, a value it
/// could not evaluate (NaN), and the replay's cost.
std::vector<Metric> fake_counters(const Config& c) {
  const double block = static_cast<double>(c.at("BLOCK_SIZE"));
  return {{"dram_bytes_read", 4000.0 + block, "byte"},
          {"achieved_occupancy", block / 10.24, "percent"},
          {"l2_hit_rate", std::numeric_limits<double>::quiet_NaN(), "percent"},
          {"counter_replay_ms", 1.5, "ms"}};
}

}  // namespace

TEST_CASE("observers: metrics as JSON and as the trials column's text", "[cpu][observer]") {
  const std::vector<Metric> ms = {{"dram_bytes_read", 1.0737e9, "byte"},
                                  {"l2_hit_rate", std::numeric_limits<double>::quiet_NaN(), "percent"}};
  const std::string text = metrics_text(ms);
  CHECK(text == R"([{"name":"dram_bytes_read","unit":"byte","value":1073700000.0},)"
                R"({"name":"l2_hit_rate","unit":"percent","value":null}])");
  CHECK(parse_metrics(text) == ms);
  CHECK(metrics_text({}).empty());
  CHECK(parse_metrics("").empty());
  CHECK_THROWS_AS(parse_metrics("[{\"value\": 3}]"), std::invalid_argument);
  CHECK_THROWS_AS(parse_metrics("not json"), std::invalid_argument);
  CHECK(metric_value(ms, "dram_bytes_read") == 1.0737e9);
  CHECK(std::isnan(metric_value(ms, "absent")));
  CHECK(find_metric(ms, "l2_hit_rate")->unit == "percent");
}

TEST_CASE("observers: a fake observer's metrics reach the database, best --json, summary and the T4 export",
          "[cpu][observer][cli]") {
  const std::string spec_path = autotune_test::data_dir() + "/specs/tiny.tune.json";
  const TuningSpec spec = specs::load_spec(spec_path);
  const std::string path = autotune_test::tmp_path("observers", "metrics.db");
  autotune_test::remove_db(path);
  {
    auto db = db::Database::open(path);
    sim::SyntheticBackend be;
    be.simulate_metrics(fake_counters);
    session::Options opt;
    opt.bytes_moved = 8008;
    const session::Result r = session::run(spec, be, *db, spec.workloads.front(), spec.problem_sizes.front(), opt);
    REQUIRE(r.evaluated == 4);
    // The database: every trial with its metrics, read back as written (NaN included).
    const auto rows = db->trials({});
    REQUIRE(rows.size() == 4);
    for (const auto& t : rows) {
      INFO(t.config_json);
      CHECK(t.m.observed.metrics == fake_counters(Config::from_json(t.config_json)));
      CHECK(t.m.observed.method == "synthetic-counters");
    }
  }
  // best --json: the metrics keyed by name, each with its value (null where not evaluated) and unit.
  autotune_test::Run b = autotune_test::run_cli("--db " + path + " best " + spec_path + " --n 1001 --json");
  INFO(b.out);
  REQUIRE(b.code == 0);
  const auto j = nlohmann::json::parse(b.out);
  const auto& metrics = j["observed"]["metrics"];
  const double block = j["config_values"]["BLOCK_SIZE"].get<double>();
  CHECK(metrics["dram_bytes_read"]["value"].get<double>() == 4000 + block);
  CHECK(metrics["dram_bytes_read"]["unit"] == "byte");
  CHECK(metrics["l2_hit_rate"]["value"].is_null());
  CHECK(metrics["counter_replay_ms"]["unit"] == "ms");

  // summary: the counters of the best configurations, and what the replays cost.
  autotune_test::Run s = autotune_test::run_cli("--db " + path + " summary " + spec_path + " --n 1001");
  INFO(s.out);
  REQUIRE(s.code == 0);
  CHECK_THAT(s.out, Catch::Contains("hardware counters") && Catch::Contains("DRAM B/elem") &&
                        Catch::Contains("counter replays: 1.5 ms each"));

  // report --html: the counters table of the best configurations.
  const std::string html = autotune_test::tmp_path("observers", "report.html");
  autotune_test::Run h = autotune_test::run_cli("--db " + path + " report 1 --html " + html);
  INFO(h.out);
  REQUIRE(h.code == 0);
  const std::string page = autotune_test::slurp(html);
  CHECK_THAT(page, Catch::Contains("id=\"counters-table\"") && Catch::Contains("Counter replays: 1.5 ms each"));
  std::remove(html.c_str());

  // T4: each metric a measurement under its own name and unit; NaN ones left out.
  {
    auto db = db::Database::open(path, db::Database::Mode::read_only);
    const auto t4 = nlohmann::json::parse(interop::export_t4(*db, {}));
    REQUIRE(t4["results"].size() == 4);
    for (const auto& r : t4["results"]) {
      std::map<std::string, nlohmann::json> m;
      for (const auto& x : r["measurements"]) m[x["name"].get<std::string>()] = x;
      const double bs = r["configuration"]["BLOCK_SIZE"].get<double>();
      REQUIRE(m.count("dram_bytes_read"));
      CHECK(m["dram_bytes_read"]["value"].get<double>() == 4000 + bs);
      CHECK(m["dram_bytes_read"]["unit"] == "byte");
      CHECK(m["achieved_occupancy"]["unit"] == "percent");
      CHECK(m.count("l2_hit_rate") == 0);
    }
  }
  autotune_test::remove_db(path);
}
