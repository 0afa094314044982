// Tests of db/trials.cpp beyond the round trips of test_database.cpp: the observer columns (migration 4), opening
// older files that lack them, and the columns driven by TrialRow::for_each_field.
#include <sqlite3.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "db/database.hpp"
#include "db_support.hpp"
#include "measurement_support.hpp"
#include "test_support.hpp"

using namespace autotune;
using namespace autotune::db;
using autotune_test::read_bytes;
using autotune_test::sample_device;
using autotune_test::sample_trial;
using autotune_test::TempPath;
using autotune_test::undo_migration_5;
namespace fs = std::filesystem;

TEST_CASE("database: observations round trip, NaN as NULL, throttled as a column", "[cpu][db][observer]") {
  auto db = Database::open(":memory:");
  const auto dev = db->upsert_device(sample_device());
  auto t = sample_trial(dev, "obs");
  Observation& o = t.m.observed;
  o.sm_clock_mhz = 1980;
  o.sm_clock_min_mhz = 1755;
  o.mem_clock_mhz = o.mem_clock_min_mhz = 2619;
  o.power_w = 412.5;
  o.energy_j = 0.0375;
  o.temperature_c = 51;
  o.power_limit_w = 700;
  o.throttle_reasons = kThrottleSwPowerCap | kThrottleGpuIdle;
  o.method = "nvml;energy=counter;runs=1200;window=101.3ms;samples=57";
  REQUIRE(db->insert_trial(t));
  auto plain = sample_trial(dev, "plain");  // nothing observed
  REQUIRE(db->insert_trial(plain));

  auto got = db->find_trial(t.kernel, t.source_hash, dev, t.workload, t.problem, "obs");
  REQUIRE(got);
  const Observation& g = got->m.observed;
  CHECK(g.sm_clock_mhz == 1980);
  CHECK(g.sm_clock_min_mhz == 1755);
  CHECK(g.mem_clock_mhz == 2619);
  CHECK(g.mem_clock_min_mhz == 2619);
  CHECK(g.power_w == 412.5);
  CHECK(g.energy_j == 0.0375);
  CHECK(g.temperature_c == 51);
  CHECK(g.power_limit_w == 700);
  CHECK(g.throttle_reasons == (kThrottleSwPowerCap | kThrottleGpuIdle));
  CHECK(g.throttled());
  CHECK(g.method == o.method);

  auto none = db->find_trial(t.kernel, t.source_hash, dev, t.workload, t.problem, "plain");
  REQUIRE(none);
  CHECK_FALSE(none->m.observed.observed());
  CHECK(std::isnan(none->m.observed.power_w));
  CHECK(std::isnan(none->m.observed.energy_j));
  CHECK_FALSE(none->m.observed.throttled());

  // The throttled column is there for SQL users.
  db->exec("CREATE TEMP TABLE flagged AS SELECT config_hash FROM trials WHERE throttled = 1");
  std::size_t n = 0;
  for (const auto& row : db->trials({})) n += row.m.observed.throttled() ? 1 : 0;
  CHECK(n == 1);
}

TEST_CASE("database: a file of schema 3 is migrated to the observer columns (migration 4)", "[cpu][db][observer]") {
  TempPath tmp("v2.db");
  {
    auto db = Database::open(tmp.path);
    const auto dev = db->upsert_device(sample_device());
    auto t = sample_trial(dev, "old");
    REQUIRE(db->insert_trial(t));
    // Back to schema 3: what migrations 5 and 4 added removed, the version set back.
    undo_migration_5(*db);
    for (const char* c : {"sm_clock_mhz", "sm_clock_min_mhz", "mem_clock_mhz", "mem_clock_min_mhz", "power_w",
                          "energy_j", "temperature_c", "power_limit_w", "throttle_reasons", "throttled", "observer"})
      db->exec(std::string("ALTER TABLE trials DROP COLUMN ") + c);
    db->exec("PRAGMA user_version = 3");
  }
  const auto before = read_bytes(tmp.path);
  {
    auto ro = Database::open(tmp.path, Database::Mode::read_only);  // read through a migrated copy
    REQUIRE(ro->trials({}).size() == 1);
    CHECK_FALSE(ro->trials({})[0].m.observed.observed());
  }
  CHECK(read_bytes(tmp.path) == before);
  auto db = Database::open(tmp.path);
  CHECK(db->schema_version() == current_schema_version());
  const auto rows = db->trials({});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].m.median_ns == 1000);
  CHECK(std::isnan(rows[0].m.observed.energy_j));
  CHECK(rows[0].m.observed.throttle_reasons == 0);
  auto t = sample_trial(db->devices().front().id, "new");
  t.m.observed.power_w = 300;
  t.m.observed.method = "nvml";
  REQUIRE(db->insert_trial(t));
  CHECK(db->find_trial(t.kernel, t.source_hash, t.device_id, t.workload, t.problem, "new")->m.observed.power_w == 300);
}

TEST_CASE("database: a file of schema 5 is migrated to the observers' named values (migration 6)",
          "[cpu][db][observer]") {
  TempPath tmp("v5.db");
  {
    auto db = Database::open(tmp.path);
    const auto dev = db->upsert_device(sample_device());
    auto old = sample_trial(dev, "old");
    REQUIRE(db->insert_trial(old));
    autotune_test::undo_migration_6(*db);
    db->exec("PRAGMA user_version = 5");
  }
  const auto before = read_bytes(tmp.path);
  {
    auto ro = Database::open(tmp.path, Database::Mode::read_only);  // read through a migrated copy
    REQUIRE(ro->trials({}).size() == 1);
    CHECK(ro->trials({})[0].m.observed.metrics.empty());
  }
  CHECK(read_bytes(tmp.path) == before);
  auto db = Database::open(tmp.path);
  CHECK(db->schema_version() == current_schema_version());
  auto t = sample_trial(db->devices().front().id, "new");
  t.m.observed.metrics = {{"dram_bytes_read", 4096, "byte"}, {"achieved_occupancy", 87.5, "percent"}};
  t.m.observed.method = "cupti;passes=1;replay=2.0ms";
  REQUIRE(db->insert_trial(t));
  const auto back = db->find_trial(t.kernel, t.source_hash, t.device_id, t.workload, t.problem, "new");
  REQUIRE(back);
  CHECK(back->m.observed.metrics == t.m.observed.metrics);
}

TEST_CASE("database: a file of schema 4 is migrated to the kernel identities (migration 5)", "[cpu][db][identity]") {
  TempPath tmp("v4.db");
  {
    auto db = Database::open(tmp.path);
    const auto dev = db->upsert_device(sample_device());
    auto t = sample_trial(dev, "old");
    REQUIRE(db->insert_trial(t));
    undo_migration_5(*db);
    db->exec("PRAGMA user_version = 4");
  }
  const auto before = read_bytes(tmp.path);
  {
    auto ro = Database::open(tmp.path, Database::Mode::read_only);  // read through a migrated copy
    REQUIRE(ro->trials({}).size() == 1);
    CHECK(ro->trials({})[0].carried_from.empty());
    CHECK(ro->source_identities().empty());
  }
  CHECK(read_bytes(tmp.path) == before);
  auto db = Database::open(tmp.path);
  CHECK(db->schema_version() == current_schema_version());
  REQUIRE(db->trials({}).size() == 1);
  db->put_source_identity("k", "h1", "c1:aaaa");
  db->put_source_identity("k", "h2", "c1:aaaa");
  db->put_source_identity("k", "h3", "c1:bbbb");
  db->put_source_identity("k", "h1", "c1:zzzz");  // a text's identity is kept once recorded
  CHECK(db->sources_of_identity("k", "c1:aaaa") == std::vector<std::string>{"h1", "h2"});
  CHECK(db->identity_of_source("h1") == "c1:aaaa");
  CHECK_FALSE(db->identity_of_source("h9"));
  auto t = sample_trial(db->devices().front().id, "carried");
  t.carried_from = "revalidated from source h0 in session 1";
  REQUIRE(db->insert_trial(t));
  CHECK(db->find_trial(t.kernel, t.source_hash, t.device_id, t.workload, t.problem, "carried")->carried_from ==
        t.carried_from);
}

TEST_CASE("database: trials of several sources keep one row per configuration, the earliest listed source's",
          "[cpu][db][identity]") {
  auto db = Database::open(":memory:");
  const auto dev = db->upsert_device(sample_device());
  for (const char* src : {"old", "new"})
    for (const char* cfg : {"a", "b"}) {
      auto t = sample_trial(dev, cfg);
      t.source_hash = src;
      t.m.median_ns = std::string(src) == "new" ? 10 : 20;
      if (std::string(src) == "new" && std::string(cfg) == "b") continue;  // b only under "old"
      REQUIRE(db->insert_trial(t));
    }
  autotune::db::TrialFilter f;
  f.source_hashes = {"new", "old"};
  const auto rows = db->trials(f);
  REQUIRE(rows.size() == 2);
  for (const auto& r : rows) CHECK(r.source_hash == (r.config_hash == "a" ? "new" : "old"));
  CHECK(db->find_trial(rows[0].kernel, std::vector<std::string>{"new", "old"}, dev, rows[0].workload, rows[0].problem,
                       "a")->source_hash == "new");
  CHECK(db->find_trial(rows[0].kernel, std::vector<std::string>{"x", "old"}, dev, rows[0].workload, rows[0].problem,
                       "a")->source_hash == "old");
}

TEST_CASE("database: the shipped H100 recording (recorded with schema 1) opens with its trials' observer columns empty",
          "[cpu][db][observer]") {
  TempPath tmp("h100_copy.db");
  fs::copy_file(autotune_test::data_dir() + "/recorded_h100.db", tmp.path);
  auto db = Database::open(tmp.path);
  CHECK(db->schema_version() == current_schema_version());
  const auto rows = db->trials({});
  REQUIRE_FALSE(rows.empty());
  std::size_t recorded = 0, rerecorded_scan = 0, rerecorded_compaction = 0;
  for (const auto& t : rows) {
    // The recording was not observed by NVML, except the scan and compaction cells, recorded again (brute force,
    // NVML observing) when their kernels or spaces changed (compaction last when its bulk variant's flags moved into
    // registers, the scan last when its bulk variant's rows could go into registers); the revalidations of earlier
    // compaction sources went with them.
    const auto s = db->session(t.session_id);
    REQUIRE(s);
    CHECK(s->strategy == "brute_force");
    CHECK(t.carried_from.empty());
    if (t.kernel == "scan" || t.kernel == "compaction") {
      ++(t.kernel == "scan" ? rerecorded_scan : rerecorded_compaction);
      CHECK(t.m.observed.observed());
      continue;
    }
    ++recorded;
    CHECK_FALSE(t.m.observed.observed());
  }
  CHECK(recorded == std::size_t{2} * (2436 + 90));        // reduction and transpose at two sizes each
  CHECK(rerecorded_scan == std::size_t{2} * 2661);        // scan at two sizes, every configuration
  CHECK(rerecorded_compaction == std::size_t{2} * 1613);  // compaction at two sizes, every configuration
}

TEST_CASE("database: a trial with every field set round-trips, and the field visitor names every trials column",
          "[cpu][db][trials]") {
  TempPath tmp("fields.db");
  std::int64_t id = 0;
  Measurement m = autotune_test::distinct_measurement();
  {
    auto db = Database::open(tmp.path);
    const auto dev = db->upsert_device(sample_device());
    SessionRow s;
    s.kernel = "reduction";
    db->begin_session(s);
    // Every column of TrialRow::for_each_field set to a value of its own, then the ids and created_at made real.
    TrialRow t;
    TrialRow::for_each_field(t, autotune_test::DistinctFields{7});
    t.m = m;
    t.session_id = s.id;
    t.device_id = dev;
    t.created_at = "2021-02-03T04:05:06.789Z";
    REQUIRE(db->insert_trial(t));
    id = t.id;

    auto got = db->find_trial(t.kernel, t.source_hash, dev, t.workload, t.problem, t.config_hash);
    REQUIRE(got);
    CHECK(autotune_test::differing_fields(got->m, m) == std::vector<std::string>{});
    // The row's own columns, through the same visitor (id, created_at set by the insert or given).
    std::vector<std::string> differ;
    std::vector<std::string> names;
    const TrialRow& g = *got;
    TrialRow::for_each_field(g, [&](const char* name, const auto& v) {
      names.push_back(name);
      TrialRow::for_each_field(t, [&](const char* other, const auto& w) {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::decay_t<decltype(w)>>)
          if (std::string(name) == other && !(v == w)) differ.push_back(name);
      });
    });
    INFO("differing columns: " << ::Catch::Detail::stringify(differ));
    CHECK(differ.empty());
    CHECK(got->m.observed.throttled() == t.m.observed.throttled());

    // The visitor's names are the trials columns, each once, the derived throttled being the only other column.
    std::set<std::string> visited(names.begin(), names.end());
    CHECK(visited.size() == names.size());
    CHECK(visited.count("observer") == 1);
    visited.insert("throttled");
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open_v2(tmp.path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    REQUIRE(sqlite3_prepare_v2(raw, "SELECT name FROM pragma_table_info('trials')", -1, &q, nullptr) == SQLITE_OK);
    std::set<std::string> columns;
    while (sqlite3_step(q) == SQLITE_ROW) columns.insert(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)));
    sqlite3_finalize(q);
    sqlite3_close(raw);
    CHECK(columns == visited);
  }
  // And read back by a new connection, through trials().
  auto db = Database::open(tmp.path, Database::Mode::read_only);
  const auto rows = db->trials({});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].id == id);
  CHECK(autotune_test::differing_fields(rows[0].m, m) == std::vector<std::string>{});
}
