// kill -9 robustness: a tuning session (tests/tools/crash_session.cpp, synthetic backend with an artificial
// delay per evaluation) is killed with SIGKILL at random moments, from before the database exists to the
// last commit. After every kill the database must pass integrity_check, hold no duplicate and no foreign
// trial, and keep every batch the session reported as committed; a final rerun must measure exactly what
// is missing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "tests/tools/child_process.hpp"
#include "tests/tools/reliability_support.hpp"

using namespace autotune_test;

namespace {

constexpr const char* kKernel = "crash_kernel";
constexpr const char* kProblem = "n=1024";

std::vector<std::string> helper_args(const std::string& db) {
  return {CRASH_SESSION_BIN, "--db", db, "--delay-us", "300", "--batch", "8"};
}

}  // namespace

TEST_CASE("kill -9 at random moments loses no committed trial, and a rerun measures only what is missing",
          "[cpu][reliability][kill]") {
  const std::set<std::string> valid = crash_session_valid();
  REQUIRE(valid.size() > 300);

  // Calibration: an uninterrupted run, and a rerun with nothing left to do (start-up, opening the
  // database, reading what is stored), give the time spans over which kills are spread.
  double full_s = 0, startup_s = 0;
  {
    TempDb db("calibrate.db");
    auto t0 = std::chrono::steady_clock::now();
    Finished f = run_child(helper_args(db.path));
    full_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(f.err);
    REQUIRE(f.exit_code == 0);
    auto done = last_line_fields(f.out, "done");
    CHECK(done["evaluated"] == static_cast<long long>(valid.size()));
    CHECK(done["valid"] == static_cast<long long>(valid.size()));
    CHECK(census(db.path).exactly(kKernel, kProblem, valid));
    t0 = std::chrono::steady_clock::now();
    Finished again = run_child(helper_args(db.path));
    startup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(last_line_fields(again.out, "done")["evaluated"] == 0);
  }
  const double work_s = std::max(full_s - startup_s, 0.01);

  constexpr int kTargetKills = 50;      // SIGKILLs that landed while the helper was running
  constexpr int kMaxKillsPerRound = 6;  // then the round's database is finished by a clean rerun
  std::mt19937 rng(20261122);
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  int kills = 0, rounds = 0, completed_before_kill = 0;
  int kills_before_first_commit = 0, kills_mid_session = 0;
  std::size_t final_reruns_evaluated = 0;
  while (kills < kTargetKills) {
    ++rounds;
    TempDb db("killed.db");
    TempDb snapshot("snapshot.db");
    std::size_t stored = 0;  // trials stored according to the last check
    for (int k = 0; k < kMaxKillsPerRound && kills < kTargetKills; ++k) {
      // A quarter of the kills land during start-up (creating or opening the database), the rest while
      // the missing configurations are measured and committed (or just after the run ends).
      const double remaining = static_cast<double>(valid.size() - stored) / static_cast<double>(valid.size());
      const double delay = unit(rng) < 0.25 ? unit(rng) * startup_s : startup_s + unit(rng) * 1.1 * work_s * remaining;
      Child c = spawn(helper_args(db.path));
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      ::kill(c.pid, SIGKILL);
      Finished f = finish(c);
      if (f.signal != SIGKILL) {
        // It finished before the kill: then it must have completed cleanly.
        INFO(f.err);
        REQUIRE(f.exit_code == 0);
        ++completed_before_kill;
        stored = valid.size();
        break;
      }
      ++kills;
      // Check a copy, so that the next run starts from exactly what the killed process left.
      copy_database(db.path, snapshot.path);
      const Census after = census(snapshot.path);
      snapshot.remove_all();
      const auto progress = last_line_fields(f.out, "progress");
      const auto committed = static_cast<std::size_t>(progress.count("evaluated") ? progress.at("evaluated") : 0);
      INFO("round " << rounds << ", kill " << k << ": stored before " << stored << ", reported committed "
                    << committed << ", stored after " << after.count(kKernel, kProblem));
      REQUIRE(after.integrity_ok);
      REQUIRE(after.duplicates() == 0);
      REQUIRE(after.subset_of(kKernel, kProblem, valid));
      // Every batch the killed session reported as committed is there.
      REQUIRE(after.count(kKernel, kProblem) >= stored + committed);
      const std::size_t now = after.count(kKernel, kProblem);
      if (committed == 0) ++kills_before_first_commit;  // during start-up or the first batch
      else ++kills_mid_session;
      stored = now;
    }
    // A clean rerun completes the space and measures only what is missing.
    Finished f = run_child(helper_args(db.path));
    INFO(f.err);
    REQUIRE(f.exit_code == 0);
    auto done = last_line_fields(f.out, "done");
    CHECK(static_cast<std::size_t>(done["reused"]) == stored);
    CHECK(static_cast<std::size_t>(done["evaluated"]) == valid.size() - stored);
    final_reruns_evaluated += static_cast<std::size_t>(done["evaluated"]);
    const Census end = census(db.path);
    CHECK(end.integrity_ok);
    CHECK(end.exactly(kKernel, kProblem, valid));
    CHECK(end.rows == valid.size());
    CHECK(end.devices <= 1);
    CHECK(end.finished_sessions >= 1);
    // One more run has nothing left to measure.
    Finished again = run_child(helper_args(db.path));
    CHECK(last_line_fields(again.out, "done")["evaluated"] == 0);
  }
  std::printf("kill -9 test: %d SIGKILLs in %d rounds (%d before the run's first commit, %d after it), %d runs "
              "finished before their kill; full run %.3f s, start-up %.3f s; final reruns measured %zu missing "
              "trials\n",
              kills, rounds, kills_before_first_commit, kills_mid_session, completed_before_kill, full_s, startup_s,
              final_reruns_evaluated);
  CHECK(kills >= kTargetKills);
  CHECK(kills_mid_session > kTargetKills / 4);
}
