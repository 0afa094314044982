// Strategy benchmark on recorded spaces: every strategy replays a fully recorded (brute-forced) space many
// times with different seeds, and its best-found time after a budget of evaluations is compared with the
// true optimum. Pure computation over recorded times: no backend, no database writes. See docs/strategies.md.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "search/strategy.hpp"
#include "tuner/core/space.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::compare {

/// An evaluation budget as given on the command line: an absolute count ("50") or a share of the valid
/// space ("5%").
struct BudgetSpec {
  double value = 0;      // evaluations, or percent when percent == true
  bool percent = false;
  /// The budget for a space of `space_size` valid configs: percentages round to the nearest count
  /// (at least 1); every budget is capped at space_size.
  std::size_t resolve(std::size_t space_size) const;
  /// "50" or "5%".
  std::string str() const;
};

/// Parses "10,20,5%,2.5%". Throws UsageError for an empty list, a non-positive or non-numeric entry, or a
/// fractional absolute count.
std::vector<BudgetSpec> parse_budgets(const std::string& text);

/// The time of every valid config of a space, answered from a recording.
struct RecordedSpace {
  std::vector<double> values;  // per ParameterSpace index: median ns, +infinity for a failed config
  double optimum = 0;          // smallest finite value (ns); +infinity when every config failed
  std::size_t optimum_index = 0;
  std::size_t failures = 0;    // configs whose recorded status is not ok
  std::size_t ignored = 0;     // recorded rows with status "invalid" whose config is not in the space
  /// per ParameterSpace index: what evaluating the config cost when it was recorded (s): compile + verification +
  /// benchmark (the recorded samples, or samples x median); a failed config costs its compile and verification.
  /// Filled by map_recording; 0 where nothing was recorded (a binary from the cache has no compile time).
  std::vector<double> cost_s;
};

/// Maps recorded trial rows onto the valid space. Rows of status "invalid" (never run) whose config is not
/// in the space are ignored. Throws UsageError naming up to 5 offending configs (and the total count) when
/// a recorded config is not in the valid space, or when a valid config has no recorded row: a strategy
/// could propose it and there would be nothing to answer with.
RecordedSpace map_recording(const ParameterSpace& space, const std::vector<db::TrialRow>& rows);

/// A recording loaded from a database for one kernel, workload and problem.
struct Recording {
  db::DeviceRow device;
  std::string problem;                // ProblemKey::key() of the recorded problem
  std::string source_hash;            // of the rows used
  std::string note;                   // e.g. rows recorded with another source hash; "" = none
  /// "space: the N recorded configurations (...)" when the valid space is the recorded configurations (a spec
  /// stub without constraints: ParameterSpace::restricted_to); "" = the spec's space.
  std::string space_note;
  std::unique_ptr<ParameterSpace> space;  // built for the recorded device
  RecordedSpace recorded;
};

/// Loads the rows of spec.name / w / p from `from` (read only). device_name selects the device (exact or
/// normalised name); empty = the only device with trials of this kernel. When the rows carry several source
/// hashes, the spec's current one is used if present, else UsageError listing them; a single other hash is
/// used with a note. For a spec stub without constraints the valid space is the recorded configurations
/// (Recording::space_note says so). Throws UsageError when nothing is recorded or map_recording fails.
Recording load_recording(const db::Database& from, const TuningSpec& spec, const Workload& w, const ProblemKey& p,
                         const std::string& device_name = "");

/// Warm-start points for a recorded space: the fastest configurations recorded for another problem of the same
/// kernel, workload and device, as indices of the target space, and the hint a session builds from the same trials
/// (search::WarmStartHint: those indices, the source's median of every recorded configuration valid here, the
/// |log2 size ratio|).
struct RecordedWarmStart {
  std::string problem;               // ProblemKey::key() of the problem they come from
  std::vector<std::size_t> indices;  // in the target space, fastest (on `problem`) first
  std::vector<double> source_ns;     // their median times on `problem` (ns)
  std::size_t skipped = 0;           // of the fastest configurations, those not valid in the target space
  search::WarmStartHint hint;        // indices, source values, distance and source as a session gives them
};

/// The `count` fastest distinct configurations among the ok trials of spec.name / w / `source` on the device
/// of `target` in `from` (read only; trials of target.source_hash when there are any, else of any source),
/// mapped into target.space; those not valid there are skipped (counted); and the hint with the medians of every
/// ok configuration of `source` valid in target.space (as session::find_warm_start gives a session). Throws
/// UsageError when `source` is the target's own problem or has no ok trial there.
RecordedWarmStart load_warm_start(const db::Database& from, const Recording& target, const TuningSpec& spec,
                                  const Workload& w, const ProblemKey& source, std::size_t count = 5);

struct CompareOptions {
  /// Strategies to compare; empty = every strategy of search::list_strategies(). random_sample (the
  /// baseline) is always included and reported first.
  std::vector<std::string> strategies;
  /// Options per strategy name (unknown names are a UsageError).
  std::map<std::string, search::Options> strategy_options;
  std::vector<BudgetSpec> budgets;
  std::size_t repeats = 50;   // runs per strategy and budget, seeds seed, seed + 1, ...
  std::uint64_t seed = 1;
  std::size_t batch = 1;      // configs asked from the strategy per step (the session uses 32)
  /// "within x of the optimum": best <= (1 + within) * optimum. The headline share of every row and the one
  /// the comparison with random_sample uses; rows also report the shares within 1%, 2% and 5%. Must be >= 0.
  double within = 0.05;
  /// Given to every run's strategy through Strategy::warm_start() (space indices best first, and source values
  /// when known); nothing when its indices and values are empty. Their evaluations count against the budget like
  /// any other.
  search::WarmStartHint warm_start;
  /// Keep one CompareRun per strategy, budget and seed in CompareResult::runs.
  bool keep_runs = false;
  /// Called after each strategy's runs with its name and the wall time they took (s); may be empty.
  std::function<void(const std::string&, double)> on_strategy_done;
};

/// Statistics of one strategy at one budget over `repeats` runs. The score of a run is optimum / best found
/// (1.0 = the optimum was found, 0 = no config that ran was found). Standard errors (`_se`) are those of a mean
/// over independent runs: sd / sqrt(repeats) for the score, sqrt(p (1 - p) / repeats) for a share p.
struct CompareRow {
  std::string strategy;
  std::size_t budget = 0;       // evaluations
  double budget_percent = 0;    // of the valid space
  std::size_t repeats = 0;
  double median = 0, p10 = 0, p90 = 0, mean = 0;  // of the score; percentiles by linear interpolation
  double mean_se = 0;
  double within = 0;            // fraction of runs with best <= (1 + CompareOptions::within) * optimum
  double within_se = 0;
  std::vector<double> within_at;  // fraction of runs within each of CompareResult::thresholds
  double found = 0;             // fraction of runs that found the optimum itself (best == optimum)
  double found_se = 0;
  double mean_evaluations = 0;  // new evaluations actually spent (less than budget if the strategy ran dry)
  /// Against random_sample at the same budget, on `within`: +1 when the share is higher by at least two standard
  /// errors of the difference (sqrt(se^2 + se_random^2)), -1 when lower by as much, 0 otherwise (and for
  /// random_sample itself).
  int vs_random = 0;
  /// With a warm start: the mean over the runs of the trust the strategy placed in it at the end
  /// (search::WarmTrust::trust), and the share of runs with any trust.
  double warm_trust = 0, warm_trusted = 0;
};

/// One run of one strategy at one budget (CompareOptions::keep_runs).
struct CompareRun {
  std::string strategy;
  std::size_t budget = 0;
  std::uint64_t seed = 0;
  double best_ns = 0;           // +infinity when nothing ran
  double score = 0;
  std::size_t evaluations = 0;  // new evaluations spent
};

/// Time a strategy spends deciding: one step = one propose() plus the observe() of its answers, measured by the
/// simulation around those calls only (the strategy's own work; no kernel runs). Over every step of every run.
struct DecisionTime {
  std::string strategy;
  std::size_t steps = 0;
  double mean_us = 0, p99_us = 0, max_us = 0;
  double total_s = 0;           // sum over all steps of all runs
  double wall_s = 0;            // wall time of all of the strategy's simulated runs (including the replay)
};

struct CompareResult {
  std::size_t space_size = 0;
  double optimum_ns = 0;
  std::size_t failures = 0;
  double within = 0.05;               // CompareOptions::within
  std::vector<double> thresholds;     // of CompareRow::within_at: 0.01, 0.02, 0.05 and `within`, ascending
  std::vector<std::size_t> budgets;   // resolved, in the order given (duplicates removed)
  std::vector<CompareRow> rows;       // strategy-major (random_sample first), budgets in order
  std::vector<CompareRun> runs;       // with keep_runs: strategy-major, then seed, then budget
  std::vector<DecisionTime> decisions;  // one per strategy, in the order of the rows
};

/// A replay over simulated tuning time (score.hpp): each new evaluation advances a clock by its recorded cost
/// (RecordedSpace::cost_s) plus, when strategy_time is set, the strategy's measured decision time since the previous
/// evaluation; the run stops at the first evaluation that ends past limit_s.
struct TimedReplay {
  double limit_s = 0;
  bool strategy_time = true;
  std::vector<double> end_s;  // out: the clock (s) at the end of each new evaluation, as the trace
};

/// The best value (ns, +infinity if none ran) found by one seeded run after each new evaluation: element k
/// is the best after k + 1 evaluations; the vector is shorter than max_evaluations when the strategy stops
/// proposing. Mirrors session::run: a proposal that was already evaluated (a revisit) is answered from
/// memory and never counts against the budget; failures are +infinity. `warm_start` (when its indices or values are
/// not empty) is handed to the strategy before its first proposal, and max_evaluations as its budget
/// (Strategy::set_budget, as `tune --budget` does). Deterministic for a seed. When `step_ns` is given, the duration of
/// every step (propose() plus observe(), ns; see DecisionTime) is appended to it. Throws UsageError for an unknown
/// strategy or option.
std::vector<double> simulate_run(const ParameterSpace& space, const RecordedSpace& rec, const std::string& strategy,
                                 const search::Options& options, std::uint64_t seed, std::size_t max_evaluations,
                                 std::size_t batch = 1, const search::WarmStartHint& warm_start = {},
                                 std::vector<double>* step_ns = nullptr);
/// The same with a strategy object (which must be fresh and built over `space`); with `timed`, over simulated time.
std::vector<double> simulate_run(const ParameterSpace& space, const RecordedSpace& rec, search::Strategy& strategy,
                                 std::size_t max_evaluations, std::size_t batch = 1,
                                 const search::WarmStartHint& warm_start = {}, std::vector<double>* step_ns = nullptr,
                                 TimedReplay* timed = nullptr);

/// The strategies of a benchmark with their options: random_sample first, then opt.strategies in order (or the
/// registry's), without duplicates, each with search::limited_options. Throws UsageError for an unknown strategy or
/// option, or options for a strategy not compared.
std::vector<std::pair<std::string, search::Options>> compared_strategies(const ParameterSpace& space,
                                                                         const CompareOptions& opt);

/// Runs the benchmark. Every strategy runs with search::limited_options() (each run is cut short by a budget),
/// so brute_force walks the covering order unless its options say order=enumeration. Cost: repeats x strategies x
/// budgets runs, one per budget (each strategy is told its budget, as `tune --budget` tells it). Throws
/// UsageError for an empty space, no budgets, repeats == 0, a negative `within`, an unknown strategy or option.
/// Not thread-safe (no shared state; one call per thread).
CompareResult compare_strategies(const ParameterSpace& space, const RecordedSpace& rec, const CompareOptions& opt);

/// CSV with a header line; one line per row (with standard errors, the shares within each threshold as
/// within_<x>pct columns, the comparison with random_sample, the strategy's decision times and warm-start trust);
/// `context` columns (e.g. kernel, device) are prepended. Code: compare_report.cpp.
std::string compare_csv(const CompareResult& r, const std::vector<std::pair<std::string, std::string>>& context = {});

/// CSV of the per-run rows (CompareResult::runs): strategy, budget, seed, best_ns, score, evaluations.
std::string compare_runs_csv(const CompareResult& r,
                             const std::vector<std::pair<std::string, std::string>>& context = {});

/// Human-readable table (one block per budget), or a Markdown table when markdown is true, followed by the
/// strategies' decision times. A share that beats random_sample by two standard errors is marked "*" (one that
/// loses by as much "-").
std::string compare_table(const CompareResult& r, bool markdown = false);

}  // namespace autotune::compare
