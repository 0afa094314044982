// `autotune merge` and db::merge_database: databases recorded on other machines combine into one that `best`
// serves for every device; nothing is duplicated, provenance is kept, bad inputs are refused untouched.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "db/database.hpp"
#include "db/merge.hpp"
#include "tests/cpu/db_support.hpp"
#include "tests/cli_support.hpp"

namespace {

using autotune::db::Database;
using autotune_test::Run;
using autotune_test::run_cli;
using autotune_test::slurp;

const std::string kData = AUTOTUNE_TEST_DATA_DIR;

struct TempDir {
  std::string path = "/tmp/autotune_merge_test_" + std::to_string(::getpid());
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

std::size_t trial_count(const std::string& path) {
  return Database::open(path, Database::Mode::read_only)->trials({}).size();
}

autotune::DeviceInfo device(const std::string& name, const std::string& uuid) {
  autotune::DeviceInfo d;
  d.name = name;
  d.cc = 90;
  d.sm_count = 132;
  d.uuid = uuid;
  return d;
}

autotune::db::TrialRow trial(std::int64_t device_id, const std::string& config_hash, double median_ns) {
  autotune::db::TrialRow t;
  t.device_id = device_id;
  t.kernel = "reduction";
  t.source_hash = "src";
  t.workload = "float32/sum";
  t.problem = "n=1024";
  t.config_json = "{\"BLOCK_SIZE\":" + config_hash + "}";
  t.config_hash = config_hash;
  t.m.median_ns = t.m.min_ns = median_ns;
  t.m.samples = 7;
  return t;
}

/// Takes a database of the current schema back to schema 2: what migrations 5 (identities), 4 (observers) and 3 (kept
/// timings, spec stubs) added is removed; the caller sets user_version.
void undo_migrations_3_and_4(Database& db) {
  autotune_test::undo_migration_5(db);
  for (const char* c : {"sm_clock_mhz", "sm_clock_min_mhz", "mem_clock_mhz", "mem_clock_min_mhz", "power_w",
                        "energy_j", "temperature_c", "power_limit_w", "throttle_reasons", "throttled", "observer",
                        "sample_ns"})
    db.exec(std::string("ALTER TABLE trials DROP COLUMN ") + c);
  db.exec("DROP TABLE kernel_specs");
}

/// Writes at `path` a database of schema `version` (1 or 2) holding one trial (config "64", 50 ns) on one device:
/// made at the current schema, then taken back.
void write_old_database(const std::string& path, int version) {
  auto db = Database::open(path);
  auto d = db->upsert_device(device("NVIDIA H100 80GB HBM3", "GPU-1"));
  auto t = trial(d, "64", 50.0);
  db->insert_trial(t);
  undo_migrations_3_and_4(*db);
  if (version == 1) {  // migration 2 added the measuring observer and the sessions' origin
    db->exec("ALTER TABLE trials DROP COLUMN measured_by");
    db->exec("ALTER TABLE sessions DROP COLUMN origin");
  }
  db->exec("PRAGMA user_version = " + std::to_string(version));
}

}  // namespace

TEST_CASE("merge: databases tuned on two simulated devices serve both through best, merging again adds nothing",
          "[cpu][merge][cli]") {
  TempDir dir;
  const std::string a = dir / "h200.db", b = dir / "h100.db", out = dir / "all.db";
  Run ta = run_cli("--db " + a + " tune reduction --n 67108864 --simulate --from " + kData +
                   "/recorded_h200.db --budget 50");
  INFO(ta.out);
  REQUIRE(ta.code == 0);
  Run tb = run_cli("--db " + b + " tune reduction --n 16777216 --simulate --from " + kData +
                   "/recorded_h100.db --budget 50");
  INFO(tb.out);
  REQUIRE(tb.code == 0);
  const std::size_t na = trial_count(a), nb = trial_count(b);
  REQUIRE(na == 50);
  REQUIRE(nb == 50);
  const std::string a_bytes = slurp(a);

  Run m = run_cli("merge " + out + " " + a + " " + b);
  INFO(m.out);
  REQUIRE(m.code == 0);
  CHECK_THAT(m.out, Catch::Contains("100 trials added from 2 databases") && Catch::Contains("2 devices"));
  CHECK(trial_count(out) == na + nb);
  CHECK(slurp(a) == a_bytes);  // inputs are never written
  {
    auto db = Database::open(out, Database::Mode::read_only);
    const auto sessions = db->sessions();
    REQUIRE(sessions.size() == 2);
    CHECK_THAT(sessions[0].origin, Catch::StartsWith("merged from " + a + " session "));
    CHECK_THAT(sessions[1].origin, Catch::StartsWith("merged from " + b + " session "));
    for (const auto& t : db->trials({})) CHECK(t.session_id != 0);
  }

  for (const auto& [dev, n] : {std::pair<std::string, std::string>{"NVIDIA H200", "67108864"},
                               {"NVIDIA H100 80GB HBM3", "16777216"}}) {
    Run best = run_cli("--db " + out + " best reduction --n " + n + " --device '" + dev + "' --json");
    INFO(best.out);
    REQUIRE(best.code == 0);
    const auto j = nlohmann::json::parse(best.out);
    CHECK(j["match"] == "exact");
    CHECK(j["measured_on"]["device"] == dev);
  }

  Run again = run_cli("merge " + out + " " + a + " " + b);
  INFO(again.out);
  REQUIRE(again.code == 0);
  CHECK_THAT(again.out, Catch::Contains("0 trials added from 2 databases"));
  CHECK_THAT(again.out, Catch::Contains("sessions 0 added (1 present), trials 0 added (50 present)"));
  CHECK(trial_count(out) == na + nb);
  CHECK(Database::open(out, Database::Mode::read_only)->sessions().size() == 2);
}

TEST_CASE("merge: a foreign SQLite file, a newer schema or a missing input is refused and no file is touched",
          "[cpu][merge][cli][reliability]") {
  TempDir dir;
  const std::string good = dir / "good.db", foreign = dir / "foreign.db", newer = dir / "newer.db";
  REQUIRE(run_cli("--db " + good + " tune reduction --n 67108864 --simulate --from " + kData +
                  "/recorded_h200.db --budget 10").code == 0);
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(foreign.c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw, "CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES ('mine');", nullptr, nullptr,
                       nullptr) == SQLITE_OK);
  sqlite3_close(raw);
  std::filesystem::copy_file(good, newer);
  Database::open(newer)->exec("PRAGMA user_version = 999");
  const std::string good_bytes = slurp(good), foreign_bytes = slurp(foreign), newer_bytes = slurp(newer);

  SECTION("into a new file: nothing is created") {
    const std::string out = dir / "new.db";
    Run r = run_cli("merge " + out + " " + good + " " + foreign);
    INFO(r.out);
    CHECK(r.code == 4);
    CHECK_THAT(r.out, Catch::Contains(foreign + " is not an autotune database") &&
                          Catch::Contains("nothing was merged"));
    CHECK_FALSE(std::filesystem::exists(out));
    Run n = run_cli("merge " + out + " " + newer);
    INFO(n.out);
    CHECK(n.code == 4);
    CHECK_THAT(n.out, Catch::Contains("newer than this build"));
    CHECK_FALSE(std::filesystem::exists(out));
    Run missing = run_cli("merge " + out + " " + dir / "nowhere.db");
    CHECK(missing.code == 2);
    CHECK_THAT(missing.out, Catch::Contains("does not exist"));
    CHECK_FALSE(std::filesystem::exists(out));
  }
  SECTION("into an existing database: it keeps every byte") {
    const std::string out = dir / "existing.db";
    std::filesystem::copy_file(good, out);
    const std::string before = slurp(out);
    CHECK(run_cli("merge " + out + " " + foreign).code == 4);
    CHECK(run_cli("merge " + out + " " + newer).code == 4);
    CHECK(run_cli("merge " + out + " " + out).code == 2);  // itself
    CHECK(slurp(out) == before);
    Run r = run_cli("merge " + foreign + " " + good);  // a foreign output is refused too
    CHECK(r.code == 4);
  }
  CHECK(slurp(good) == good_bytes);
  CHECK(slurp(foreign) == foreign_bytes);
  CHECK(slurp(newer) == newer_bytes);
}

TEST_CASE("merge_database: same key with other values keeps the output's row, binaries and bandwidth carried",
          "[cpu][merge][database]") {
  auto out = Database::open(":memory:");
  auto in = Database::open(":memory:");
  const auto d_out = out->upsert_device(device("NVIDIA H100 80GB HBM3", "GPU-1"));
  const auto d_in = in->upsert_device(device("NVIDIA H100 80GB HBM3", "GPU-1"));
  const auto d_other = in->upsert_device(device("NVIDIA H200", "GPU-2"));
  in->set_copy_bandwidth(d_other, 4100);
  auto t1 = trial(d_out, "128", 100.0);
  out->insert_trial(t1);
  auto same = trial(d_in, "128", 100.0);
  auto other = trial(d_in, "256", 90.0);
  other.m.measured_by = "host=node2 rank=1 gpu=0";
  auto conflict_src = trial(d_other, "128", 80.0);
  in->insert_trial(same);
  in->insert_trial(other);
  in->insert_trial(conflict_src);
  in->put_binary({"key1", true, "", {1, 2, 3}});

  autotune::db::MergeReport r = autotune::db::merge_database(*out, *in);
  CHECK(r.devices == 2);
  CHECK(r.trials_added == 2);
  CHECK(r.trials_present == 1);
  CHECK(r.trials_conflicting == 0);
  CHECK(r.binaries_added == 1);
  CHECK(out->devices().size() == 2);
  CHECK(out->binary("key1")->image == std::vector<unsigned char>{1, 2, 3});
  bool carried = false;
  for (const auto& d : out->devices()) carried = carried || (d.info.name == "NVIDIA H200" && d.copy_gbps == 4100);
  CHECK(carried);
  bool provenance = false;
  for (const auto& t : out->trials({})) provenance = provenance || t.m.measured_by == "host=node2 rank=1 gpu=0";
  CHECK(provenance);

  // The same key measured differently elsewhere: the output keeps its own row and says so.
  auto in2 = Database::open(":memory:");
  const auto d2 = in2->upsert_device(device("NVIDIA H100 80GB HBM3", "GPU-1"));
  auto changed = trial(d2, "128", 130.0);
  in2->insert_trial(changed);
  r = autotune::db::merge_database(*out, *in2);
  CHECK(r.trials_conflicting == 1);
  CHECK(r.trials_added == 0);
  auto kept = out->find_trial("reduction", "src", d_out, "float32/sum", "n=1024", "128");
  REQUIRE(kept);
  CHECK(kept->m.median_ns == 100.0);
}

TEST_CASE("database: an older file opened read-only is read through a migrated copy and stays unchanged",
          "[cpu][database][merge]") {
  TempDir dir;
  const std::string path = dir / "v1.db";
  write_old_database(path, 1);
  const std::string before = slurp(path);
  {
    auto ro = Database::open(path, Database::Mode::read_only);
    CHECK(ro->schema_version() == autotune::db::current_schema_version());
    REQUIRE(ro->trials({}).size() == 1);
    CHECK(ro->trials({})[0].m.measured_by.empty());
    CHECK_THROWS_WITH(ro->upsert_device(device("X", "GPU-9")), Catch::Contains("read-only"));
  }
  CHECK(slurp(path) == before);
  auto rw = Database::open(path);  // a read-write open migrates the file itself
  CHECK(rw->schema_version() == autotune::db::current_schema_version());
  CHECK(rw->trials({}).size() == 1);
}

TEST_CASE("database: migration 3 adds the kept timings and the spec stubs to a file of schema 2",
          "[cpu][database][merge]") {
  TempDir dir;
  const std::string path = dir / "v2.db";
  write_old_database(path, 2);
  auto db = Database::open(path);
  CHECK(db->schema_version() == autotune::db::current_schema_version());
  REQUIRE(db->trials({}).size() == 1);
  CHECK(db->trials({})[0].m.sample_ns.empty());
  auto d = db->devices().front().id;
  auto t = trial(d, "128", 60.0);
  t.m.sample_ns = {60.5, 59.25, 61};
  db->insert_trial(t);
  CHECK(db->find_trial(t.kernel, t.source_hash, d, t.workload, t.problem, t.config_hash)->m.sample_ns ==
        std::vector<double>{60.5, 59.25, 61});
  db->put_kernel_spec("k", "{}", "kt-cache x.json");
  db->put_kernel_spec("k", "{\"a\": 1}", "kt-cache y.json");
  CHECK(db->kernel_spec_names() == std::vector<std::string>{"k"});
  CHECK(db->kernel_spec("k")->spec_json == "{\"a\": 1}");
  CHECK_FALSE(db->kernel_spec("nope"));
  // merge carries the stubs the output lacks
  auto out = Database::open(":memory:");
  autotune::db::merge_database(*out, *db);
  CHECK(out->kernel_spec("k")->origin == "kt-cache y.json");
}
