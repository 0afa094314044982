// A full disk during a session: the session fails with a clear DbError, the batch being written is rolled
// back as a whole, everything committed before stays intact, and a rerun once there is space measures
// only what is missing. Two ways to run out of space without root: SQLite's own limit (PRAGMA
// max_page_count -> SQLITE_FULL) in process, and the kernel's file size limit (RLIMIT_FSIZE -> EFBIG on
// write, as on a full file system) for the tuner processes crash_session and autotune.
#include <catch2/catch.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/child_process.hpp"
#include "tests/tools/reliability_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/session/session.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;
using namespace autotune_test;

namespace {

TuningSpec spec() {
  return TuningSpec::from_json_text(R"J({
    "name": "full_disk_kernel", "family": "synthetic", "source": "none.cu", "kernels": ["k"],
    "parameters": [
      {"name": "A", "range": [1, 32]},
      {"name": "B", "values": [1, 2, 4, 8, 16, 32, 64, 128]},
      {"name": "C", "values": [1, 2, 3]}
    ],
    "problem": {"dims": ["n"]},
    "workloads": ["float32/sum"]
  })J",
                                    ".", false);
}

}  // namespace

TEST_CASE("disk full (SQLITE_FULL): clear DbError, failed batch rolled back, committed trials intact",
          "[cpu][reliability][disk_full]") {
  const TuningSpec s = spec();
  const Workload w = Workload::parse("float32/sum");
  const ProblemKey p = ProblemKey::parse("n=4096");
  const std::size_t valid = s.space(p, sim::SyntheticBackend::fake_device(), w).size();
  REQUIRE(valid == 32 * 8 * 3);
  TempDb tmp("full.db");
  session::Options opt;
  opt.batch = 8;

  {
    auto db = db::Database::open(tmp.path);
    sim::SyntheticBackend be;
    opt.budget = 40;
    session::run(s, be, *db, w, p, opt);
    opt.budget = 0;
    // From now on the file may not grow: the next page SQLite needs is "disk full".
    db->exec("PRAGMA max_page_count = 1");  // clamps to the current size
    sim::SyntheticBackend be2;
    try {
      session::run(s, be2, *db, w, p, opt);
      FAIL("expected a DbError for the full database");
    } catch (const DbError& e) {
      INFO(e.what());
      CHECK_THAT(e.what(), Catch::Contains(tmp.path) && Catch::Contains("disk full"));
    }
    CHECK(be2.evaluations() > 0);
    CHECK(db->integrity_ok());
  }
  // A new connection (no page limit) sees whole batches only.
  const Census c = census(tmp.path);
  CHECK(c.integrity_ok);
  CHECK(c.duplicates() == 0);
  const std::size_t stored = c.count("full_disk_kernel", "n=4096");
  CHECK(stored >= 40);
  CHECK(stored < valid);
  CHECK((stored - 40) % opt.batch == 0);
  CHECK(c.finished_sessions == 1);

  auto db = db::Database::open(tmp.path);
  sim::SyntheticBackend be3;
  const session::Result r = session::run(s, be3, *db, w, p, opt);
  CHECK(r.reused == stored);
  CHECK(r.evaluated == valid - stored);
  CHECK(db->integrity_ok());
}

TEST_CASE("disk full (file size limit): the tuner process exits with a clear error and a rerun completes",
          "[cpu][reliability][disk_full]") {
  const std::set<std::string> valid = crash_session_valid();
  TempDb db("fsize.db");
  const std::vector<std::string> args = {CRASH_SESSION_BIN, "--db", db.path, "--delay-us", "0", "--batch", "8"};
  SpawnOptions limited;
  limited.max_file_bytes = 96 * 1024;  // the WAL outgrows this after a few dozen batches
  Finished f = run_child(args, limited);
  INFO("stdout: " << f.out << "\nstderr: " << f.err);
  CHECK(f.exit_code == 4);
  CHECK_THAT(f.err, Catch::StartsWith("error: database " + db.path));
  CHECK_THAT(f.err, Catch::Contains("File too large") || Catch::Contains("disk full"));

  const auto progress = last_line_fields(f.out, "progress");
  const auto committed = static_cast<std::size_t>(progress.count("evaluated") ? progress.at("evaluated") : 0);
  const Census c = census(db.path);
  CHECK(c.integrity_ok);
  CHECK(c.duplicates() == 0);
  CHECK(c.subset_of("crash_kernel", "n=1024", valid));
  const std::size_t stored = c.count("crash_kernel", "n=1024");
  CHECK(stored == committed);  // exactly the batches reported as committed
  CHECK(stored < valid.size());

  Finished again = run_child(args);
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  auto done = last_line_fields(again.out, "done");
  CHECK(static_cast<std::size_t>(done["reused"]) == stored);
  CHECK(static_cast<std::size_t>(done["evaluated"]) == valid.size() - stored);
  CHECK(census(db.path).exactly("crash_kernel", "n=1024", valid));
}

TEST_CASE("cli: a full disk during tune --simulate is a one-line DbError, exit code 4", "[cpu][reliability][disk_full][cli]") {
  TempDb db("cli_full.db");
  const std::string recorded = data_dir() + "/recorded_h200.db";
  const std::vector<std::string> args = {AUTOTUNE_BIN, "--db", db.path, "tune", "reduction", "--n", "67108864",
                                         "--simulate", "--from", recorded};
  SpawnOptions limited;
  limited.max_file_bytes = 192 * 1024;  // the schema and a few batches fit, the 2436 trials do not
  Finished f = run_child(args, limited);
  INFO("stdout: " << f.out << "\nstderr: " << f.err);
  CHECK(f.exit_code == 4);
  CHECK_THAT(f.err, Catch::Contains(db.path));
  CHECK_THAT(f.err, Catch::Contains("File too large") || Catch::Contains("disk full"));
  const Census c = census(db.path);
  CHECK(c.integrity_ok);
  CHECK(c.duplicates() == 0);
  CHECK(c.rows > 0);

  Finished again = run_child(args);
  INFO("rerun stderr: " << again.err);
  CHECK(again.exit_code == 0);
  const Census done = census(db.path);
  CHECK(done.integrity_ok);
  CHECK(done.duplicates() == 0);
  CHECK(done.rows > c.rows);
}
