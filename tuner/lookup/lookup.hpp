// Application lookup: the best recorded configuration for a kernel, workload, device and problem size,
// with how well the answer matches the question and where it was measured. A miss never throws: it
// degrades level by level down to the spec's default configuration. Documented in docs/lookup.md.
//
// This header is part of the installed lookup library (CMake target autotune::lookup): it includes core
// vocabulary only, never NVRTC, CUDA, SQLite or search headers (tests/cpu/test_lookup.cpp checks that).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/objective.hpp"
#include "tuner/core/spec.hpp"

namespace autotune {

namespace db {
class Database;
}

namespace lookup {

/// How far the answer is from the question, best first.
enum class Match {
  exact,         // same device (name and cc), same problem
  nearest_size,  // same device, nearest recorded problem (log2 distance)
  same_cc,       // another board of the same compute capability, nearest recorded problem (group default)
  same_arch,     // boards of the same major architecture (group default over all their problems)
  borrowed,      // nothing of this workload usable: the best configuration of the most similar workload of the
                 // kernel measured on this device, at its nearest recorded problem (docs/lookup.md, "Borrowing")
  spec_default,  // nothing usable recorded: the spec's default configuration
};
/// "exact", "nearest_size", "same_cc", "same_arch", "borrowed", "spec_default".
const char* to_string(Match m);
/// 0 (exact) ... 4 (borrowed), 5 (spec_default).
int level(Match m);

struct Answer {
  Config config;
  Match match = Match::spec_default;

  // Provenance: where the configuration was measured ("" / 0 for spec_default).
  std::string device;            // board name as recorded; group defaults: every board that measured it, ", "
  int device_cc = 0;             // cc of the board of `problem` / `session_id`
  std::string problem;           // ProblemKey::key() of the measurement (nearest to the question for groups)
  std::int64_t session_id = 0;   // session of that measurement
  double median_ns = 0;          // its median time
  double gbps = 0;               // its bandwidth (0 if unknown)
  Objective objective = Objective::time;  // what "best" meant (Lookup::Options::objective)
  /// Clocks, power, energy and throttle reasons of that measurement (NaN/empty where not observed). A
  /// throttled measurement is served only when no unthrottled one is usable (note says so).
  Observation observed;
  /// "" for a measured trial; else where `autotune revalidate` carried it forward from (TrialRow::carried_from).
  std::string carried_from;
  /// Level borrowed: the workload whose measurement this is (Workload::key(), e.g. "float32/inclusive_sum"); ""
  /// at the other levels, whose measurements are of the workload asked for.
  std::string borrowed_from;
  /// Level exact: measured online by an application's own launches (docs/lookup.md "Online tuning"), served only
  /// where the cell has no usable offline trial; `autotune tune` of the problem supersedes it.
  bool online = false;

  // Group defaults (same_cc, same_arch): mean over the cells (board, problem) that measured the config of
  // its objective cost / the best cost of the cell (for time: median / best median); 1.0 = best everywhere.
  // 0 for the other levels.
  double relative_time = 0;
  int cells_covered = 0;         // cells that measured this configuration
  int cells_total = 0;           // cells of the group

  // The final pick of the cell served from (levels exact and nearest_size; docs/lookup.md "Ties"): the
  // configurations within noise of its winner, the served one among them. Empty where that cell has none.
  std::vector<Config> tie_set;   // the served configuration first, then the others by the pick's rank
  double tie_noise = 0;          // the pick's noise (relative): every member within this of its winner
  std::int64_t tie_session = 0;  // the session whose final pick it is

  std::size_t stale_rows = 0;    // rows never served: another source hash, or config invalid in the spec
  std::string note;              // why levels were skipped, rows rejected, or the database is unavailable
};

/// One-shot lookup on an open database (no cache). Same levels and rules as Lookup::best(); validity of
/// recorded configurations is checked against `device`'s properties. Thread-compatible (the Database is
/// used by the calling thread only). Throws DbError if a query fails, UsageError for a workload or problem
/// the spec does not have.
Answer best(const db::Database& db, const TuningSpec& spec, const Workload& w, const DeviceInfo& device,
            const ProblemKey& problem, Objective o = Objective::time);

}  // namespace lookup

/// Application-facing lookup over a tuning database, with an in-process cache.
///
///     autotune::Lookup lk("tune.db");
///     auto a = lk.best("reduction", autotune::Workload{"float32", "sum"}, {"NVIDIA H200", 90},
///                      autotune::ProblemKey::parse("n=100000000"));
///     use(a->config, a->match);
///
/// The database is opened read-only in the constructor and never written. A missing or unreadable
/// database is no error: every answer is the spec default (with a note), and one warning goes to the
/// warning sink (stderr by default, at most once per path and process for the default sink).
/// Rows are read once per (kernel, workload) and answers are cached per question, so repeated lookups
/// cost a hash-map probe (docs/lookup.md has measured figures). Rows tuned after the first lookup are seen
/// after reload(). Thread-safe: every method may be called from any thread concurrently.
class Lookup {
 public:
  struct Options {
    /// Receives warnings (one line, no trailing newline). Empty: "autotune: warning: ..." on stderr.
    std::function<void(const std::string&)> warn;
    /// What "best" means (objective.hpp): time (default), energy, edp or gbps_per_watt. Rows lacking what
    /// the objective needs (recorded without NVML) are not candidates. Fixed for the Lookup's lifetime.
    Objective objective = Objective::time;
  };
  using AnswerPtr = std::shared_ptr<const lookup::Answer>;

  explicit Lookup(std::string db_path);
  Lookup(std::string db_path, Options options);
  ~Lookup();
  Lookup(const Lookup&) = delete;
  Lookup& operator=(const Lookup&) = delete;

  /// A Lookup per path shared by everyone in the process that asks for it (the runtime classes use this).
  static std::shared_ptr<Lookup> shared(const std::string& db_path);

  /// Best configuration of a built-in kernel (or a spec given to add_spec) by name. Throws UsageError for
  /// an unknown kernel, a workload the spec does not support or a problem with other dimensions; a
  /// missing answer is never an error. The fast path: a cached answer is returned without allocation.
  AnswerPtr best(const std::string& kernel, const Workload& w, const DeviceKey& device,
                 const ProblemKey& problem) const;
  /// As best(), for the device DeviceKey::of(device), and recorded configurations must also be valid with
  /// these device properties (shared memory, threads per block, SMs) at this problem; otherwise the next
  /// candidate is served. (A separate name: a braced {name, cc} would otherwise match both overloads.)
  AnswerPtr best_on(const std::string& kernel, const Workload& w, const DeviceInfo& device,
                    const ProblemKey& problem) const;
  /// For a spec object (e.g. a user spec file). Identity is name + source hash + spec hash, computed on
  /// every call (hashes the source): prefer add_spec() + the by-name overloads in hot paths.
  AnswerPtr best(const TuningSpec& spec, const Workload& w, const DeviceKey& device,
                 const ProblemKey& problem) const;
  AnswerPtr best_on(const TuningSpec& spec, const Workload& w, const DeviceInfo& device,
                    const ProblemKey& problem) const;

  /// Makes a spec known by its name (replacing a built-in or earlier spec of that name; cached answers are
  /// dropped).
  void add_spec(TuningSpec spec);

  /// Devices recorded in the database (empty when it is unavailable).
  std::vector<DeviceInfo> devices() const;
  /// True if the database was opened.
  bool available() const;
  /// Why the database is unavailable ("" if it is available).
  std::string error() const;
  const std::string& path() const;
  /// Drops cached rows and answers and reopens the database (to see rows tuned since).
  void reload();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace autotune
