// The tuning loop: spec -> space -> strategy -> backend (compile, verify, time) -> database.
// Talks only to the Backend interface, so the same loop drives the GPU, a replay and the synthetic backend.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "db/database.hpp"
#include "search/strategy.hpp"
#include "tuner/core/backend.hpp"
#include "tuner/core/objective.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::session {

struct Progress {
  std::size_t done = 0;       // configurations answered (new + from the database)
  std::size_t total = 0;      // planned: min(budget, valid space size)
  std::size_t evaluated = 0;  // new evaluations (count against the budget)
  std::size_t reused = 0;     // answered from earlier trials
  std::size_t failed = 0;     // new evaluations that did not verify or run
  double best_ns = 0;         // median time of the best configuration so far; 0 = none yet
  double best_value = 0;      // its objective_value (ns for the time objective)
  std::string best_config;    // Config::str()
  double elapsed_s = 0;
  double eta_s = -1;          // -1 = unknown
};

struct Options {
  std::string strategy = "brute_force";
  search::Options strategy_options;
  std::uint64_t seed = 1;
  std::size_t budget = 0;       // new evaluations; 0 = unlimited (whole space for brute force)
  double time_limit_s = 0;      // 0 = none
  std::size_t batch = 32;       // configurations handed to the backend at once
  double bytes_moved = 0;       // per run, for GB/s (0 = unknown)
  /// What the strategy minimises and Result::top ranks by (objective.hpp). An objective other than time
  /// needs power observed: a measured trial without it throws UsageError (with the backend's observer_note);
  /// recorded trials without it count as failed for the strategy.
  Objective objective = Objective::time;
  std::function<void(const Progress&)> on_progress;  // called after each batch
  /// Explicit list (e.g. the points of `autotune explore`): when non-empty, exactly these configurations are
  /// evaluated, in this order, instead of asking a strategy (strategy then only names the session row, e.g.
  /// "explore"). Each must be valid in the spec's space for this problem/device/workload (UsageError naming
  /// the first that is not); duplicates are evaluated once.
  std::vector<Config> configs;
  /// Warm start (warm_start.hpp): configurations to evaluate first, best first, handed to the strategy
  /// through Strategy::warm_start(); those not valid in this problem's space are skipped (Result says how
  /// many were used). Ignored with `configs`.
  std::vector<Config> warm_start;
  /// What the warm start's source measured (median ns per configuration; those not valid here are skipped), its
  /// distance and name (search::WarmStartHint; session::WarmStart::values, distance, problem): with values the
  /// strategy tests the warm start instead of following it (Result::warm_trust). Ignored without warm_start.
  std::vector<std::pair<Config, double>> warm_values;
  double warm_distance = 0;
  std::string warm_source;
};

/// Where a session's wall time went, in seconds. setup + idle_gpu + verify + benchmark + database + other =
/// wall; compile is the compile threads' time added up, which overlaps the rest.
struct TimeSplit {
  double wall_s = 0;
  double setup_s = 0;      // Backend::prepare (inputs, reference, upload) and the copy-bandwidth measurement
  std::map<std::string, double> setup_parts_s;  // BackendStats::setup_ms in s ("start" precedes the session)
  double compile_s = 0;    // compilations, summed over the compile threads
  double idle_gpu_s = 0;   // the evaluating thread (and so the GPU) waited for a compilation
  double verify_s = 0;     // verification runs and comparisons with the reference
  double benchmark_s = 0;  // warm-up and timed samples
  double database_s = 0;   // trial lookups, inserts and session rows, and the binary cache
  double other_s = 0;      // the rest: strategy, launch plans, messages to the GPU worker
  int compile_jobs = 0;    // compile threads (0: the backend has no compile stage)
  std::size_t compile_threads_used = 0;  // of those, put to work (CompileStats::active_threads)
  std::size_t compile_threads_stopped = 0;  // put to work, then stopped: they did not raise compilations/s
  std::size_t compiled = 0;          // compilations run (speculative ones included)
  std::size_t cache_hits = 0;        // binaries taken from the cache instead of compiling
  std::size_t compile_failures = 0;  // configurations whose compilation failed (fresh or cached)
  std::size_t unused_compiles = 0;   // speculative compilations never used
  /// Sums over the compilations (CompileStats): the compiler's wall time, its CPU time, context switches
  /// (voluntary: it waited; involuntary: preempted) and minor page faults of the compiling threads.
  double compiler_s = 0, compile_cpu_s = 0;
  long long compile_voluntary_switches = 0, compile_involuntary_switches = 0, compile_minor_faults = 0;
};

struct Result {
  std::int64_t session_id = 0;
  std::int64_t device_id = 0;
  std::size_t space_size = 0;
  double cartesian_size = 0;
  std::size_t evaluated = 0;
  std::size_t reused = 0;
  std::size_t failed = 0;
  double copy_gbps = 0;
  std::string verification;  // Backend::verification() after prepare
  std::size_t warm_started = 0;  // Options::warm_start configurations valid here and given to the strategy
  search::WarmTrust warm_trust;  // how far the strategy trusted the warm start, and why (given == 0 without one)
  std::vector<db::TrialRow> top;  // best ok trials of this kernel/device/workload/problem, best first by the
                                  // objective (then unthrottled first, then by time)
  TimeSplit timing;
};

/// Runs a session. Throws UsageError (empty space, unknown strategy), EnvironmentError, DbError; each
/// trial is committed as soon as it is measured, so an interrupted session loses nothing and a rerun
/// measures only what is missing. The session row ends "finished", or "failed" when an exception escapes.
/// Before each batch the backend gets a prefetch() of the batch and of what the strategy expects to propose
/// next (Strategy::upcoming), minus what the database already answers, so that compilation runs ahead.
Result run(const TuningSpec& spec, Backend& backend, db::Database& db, const Workload& w, const ProblemKey& p,
           const Options& opt);

}  // namespace autotune::session
