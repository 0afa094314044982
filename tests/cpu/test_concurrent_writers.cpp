// Concurrent writers: four tuner processes (tests/tools/crash_session.cpp) write one database at once,
// two on the same kernel and problem, one on another problem, one on another kernel. Every process
// must finish without a "database is locked" failure and every trial must be stored exactly once. The
// other kernel's name is full of quotes and SQL, which must be stored verbatim.
#include <catch2/catch.hpp>

#include <cstdio>

#include "tests/tools/child_process.hpp"
#include "tests/tools/reliability_support.hpp"

using namespace autotune_test;

namespace {

struct Writer {
  std::string kernel;
  long long n;
};

}  // namespace

TEST_CASE("four processes writing one database store every trial exactly once", "[cpu][reliability][concurrency]") {
  const std::string other = "other'kernel\"); DROP TABLE trials; --";
  const std::vector<Writer> writers = {
      {"shared_kernel", 1024}, {"shared_kernel", 1024}, {"shared_kernel", 4096}, {other, 1024}};
  const std::set<std::string> valid_1024 = crash_session_valid(1024);
  const std::set<std::string> valid_4096 = crash_session_valid(4096);
  REQUIRE(valid_1024.size() > 300);

  struct Round {
    const char* what;
    const char* delay_us;
    const char* batch;
    bool fresh_file;
  };
  // Round 1 races on creating and migrating the file; the others start from an existing database.
  // Batch 1 without delay is the worst case: every process commits as fast as it can.
  const Round rounds[] = {{"new file, 50 us per evaluation, batch 4", "50", "4", true},
                          {"existing file, no delay, batch 1", "0", "1", false},
                          {"existing file, 20 us per evaluation, batch 8", "20", "8", false}};
  std::size_t processes = 0, commits_reported = 0, evaluations = 0, lock_failures = 0;
  for (const Round& round : rounds) {
    TempDb db("concurrent.db");
    if (!round.fresh_file) autotune::db::Database::open(db.path);  // create and migrate first
    std::vector<Child> children;
    for (const Writer& w : writers)
      children.push_back(spawn({CRASH_SESSION_BIN, "--db", db.path, "--kernel", w.kernel, "--n", std::to_string(w.n),
                                "--delay-us", round.delay_us, "--batch", round.batch}));
    std::vector<Finished> results;
    for (Child& c : children) results.push_back(finish(c));

    INFO(round.what);
    std::size_t shared_evaluated = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Finished& f = results[i];
      INFO("writer " << i << " (" << writers[i].kernel << ", n=" << writers[i].n << ") stderr: " << f.err);
      CHECK(f.exit_code == 0);
      if (f.err.find("locked") != std::string::npos) ++lock_failures;
      CHECK(f.err.find("locked") == std::string::npos);
      CHECK(f.err.empty());
      auto done = last_line_fields(f.out, "done");
      REQUIRE(done.count("evaluated"));
      // Each process answered the whole space: what it did not measure it found stored by another.
      CHECK(done["evaluated"] + done["reused"] == static_cast<long long>(i == 2 ? valid_4096.size() : valid_1024.size()));
      if (i < 2) shared_evaluated += static_cast<std::size_t>(done["evaluated"]);
      evaluations += static_cast<std::size_t>(done["evaluated"]);
      for (std::size_t pos = f.out.find("progress "); pos != std::string::npos; pos = f.out.find("progress ", pos + 1))
        ++commits_reported;
      ++processes;
    }
    // The two writers of the same space may both measure a config they proposed at the same moment,
    // but the uniqueness key stores it once.
    CHECK(shared_evaluated >= valid_1024.size());

    const Census c = census(db.path);
    CHECK(c.integrity_ok);
    CHECK(c.duplicates() == 0);
    CHECK(c.exactly("shared_kernel", "n=1024", valid_1024));
    CHECK(c.exactly("shared_kernel", "n=4096", valid_4096));
    CHECK(c.exactly(other, "n=1024", valid_1024));
    CHECK(c.rows == 2 * valid_1024.size() + valid_4096.size());
    CHECK(c.devices == 1);
    CHECK(c.sessions == writers.size());
    CHECK(c.finished_sessions == writers.size());
  }
  std::printf("concurrent writers test: %zu rounds x %zu processes (%zu process runs), %zu batches committed, "
              "%zu evaluations, %zu lock failures\n",
              sizeof(rounds) / sizeof(rounds[0]), writers.size(), processes, commits_reported, evaluations, lock_failures);
}
