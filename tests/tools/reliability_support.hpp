// Shared by the reliability tests (kill -9, concurrent writers, full disk): temp files, copying a
// database with its WAL, and a census of the stored trials.
#pragma once
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "db/database.hpp"
#include "tests/tools/child_process.hpp"
#include "tests/tools/temp_db_file.hpp"

namespace autotune_test {

namespace fs = std::filesystem;

/// A unique database path in the temp directory, removed with its WAL/SHM companions on destruction.
struct TempDb : TempDbFile {
  explicit TempDb(const std::string& tag) : TempDbFile("autotune_rel_", tag) {}
};

/// Copies a database file with its -wal and -shm companions (those that exist) to `to`, so the copy can
/// be opened and checked while the original stays exactly as a crashed process left it.
inline void copy_database(const std::string& from, const std::string& to) {
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ec;
    fs::remove(to + suffix, ec);
    if (fs::exists(from + suffix)) fs::copy_file(from + suffix, to + suffix);
  }
}

/// What a database holds, per (kernel, problem): how many rows each config hash has.
struct Census {
  bool integrity_ok = false;
  std::size_t rows = 0;
  std::size_t sessions = 0;
  std::size_t finished_sessions = 0;
  std::size_t devices = 0;
  std::map<std::pair<std::string, std::string>, std::map<std::string, int>> by_problem;

  /// Number of (kernel, problem, config) keys stored more than once.
  std::size_t duplicates() const {
    std::size_t d = 0;
    for (const auto& [k, hashes] : by_problem)
      for (const auto& [h, n] : hashes) d += n > 1 ? 1 : 0;
    return d;
  }
  std::size_t count(const std::string& kernel, const std::string& problem) const {
    auto it = by_problem.find({kernel, problem});
    return it == by_problem.end() ? 0 : it->second.size();
  }
  /// True when (kernel, problem) holds exactly the hashes of `valid`, each once.
  bool exactly(const std::string& kernel, const std::string& problem, const std::set<std::string>& valid) const {
    auto it = by_problem.find({kernel, problem});
    if (it == by_problem.end()) return valid.empty();
    if (it->second.size() != valid.size()) return false;
    for (const auto& [h, n] : it->second)
      if (n != 1 || !valid.count(h)) return false;
    return true;
  }
  /// True when every stored hash of (kernel, problem) is in `valid`.
  bool subset_of(const std::string& kernel, const std::string& problem, const std::set<std::string>& valid) const {
    auto it = by_problem.find({kernel, problem});
    if (it == by_problem.end()) return true;
    for (const auto& [h, n] : it->second)
      if (!valid.count(h)) return false;
    return true;
  }
};

/// Opens the database read-write (a crashed file is recovered as the next tuner would) and counts.
inline Census census(const std::string& path) {
  Census c;
  auto db = autotune::db::Database::open(path);
  c.integrity_ok = db->integrity_ok();
  for (const auto& t : db->trials({})) {
    ++c.rows;
    ++c.by_problem[{t.kernel, t.problem}][t.config_hash];
  }
  for (const auto& s : db->sessions()) {
    ++c.sessions;
    if (s.status == "finished") ++c.finished_sessions;
  }
  c.devices = db->devices().size();
  return c;
}

/// The config hashes of every valid configuration of crash_session's space for problem size n.
inline std::set<std::string> crash_session_valid(long long n = 1024) {
  Finished f = run_child({CRASH_SESSION_BIN, "--print-valid", "--n", std::to_string(n)});
  std::set<std::string> out;
  std::istringstream lines(f.out);
  std::string w, h;
  while (lines >> w >> h)
    if (w == "valid") out.insert(h);
  return out;
}

}  // namespace autotune_test
