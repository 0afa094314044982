// The tuning workflow of `autotune tune`, on any Backend: the default strategy under a limit, warm starts from
// the database's trials at other sizes, the optional screening at a smaller size (multi-fidelity), then the
// session at the target size, then (specs with "blocks") its front measured at smaller sizes; with the
// best-so-far trace. The command line (single process and MPI) only
// prints what this returns.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "search/strategy.hpp"
#include "tuner/core/backend.hpp"
#include "tuner/core/objective.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/session/final_pick.hpp"
#include "tuner/session/session.hpp"
#include "tuner/session/warm_start.hpp"

namespace autotune::session {

/// The strategy when none is asked for: under a limit one that covers the space broadly first and then refines
/// locally (docs/strategies.md says why); without a limit every configuration is measured anyway.
std::string default_strategy(bool limited);

/// A smaller problem of the same shape for screening: every dimension above 1024 (sizes, unlike ratios such as
/// select_pct) divided so that the element count shrinks by about `factor`. Throws UsageError when no dimension
/// can shrink or the result is not a problem of the spec.
ProblemKey screening_problem(const TuningSpec& spec, const ProblemKey& p, double factor);

/// The smaller sizes measured after a search at p (TuneRequest::smaller_sizes): p with the dimension that "blocks"
/// reads divided by 4, 16, ... (`count` of them), down to kSmallestSmallerSize. Empty for a spec without "blocks".
inline constexpr std::int64_t kSmallestSmallerSize = 4096;
std::vector<ProblemKey> smaller_sizes(const TuningSpec& spec, const ProblemKey& p, std::size_t count);

/// What is measured at a smaller size `small` after the search, from the search's verified trials `ranked` (best
/// first): the first 4, and the first configuration of each distinct block count at `small` among those that fill
/// `sm_count` SMs there (all of them where none does), for the first 8 such counts; best first, each once, each
/// valid at `small` (`valid`). A tile's best size depends on the problem (docs/lookup.md, "Smaller sizes").
std::vector<Config> smaller_size_picks(const TuningSpec& spec, const std::vector<Config>& ranked,
                                       const ProblemKey& small, const DeviceInfo& dev, const Workload& w,
                                       const std::function<bool(const Config&)>& valid);

struct TuneRequest {
  Workload workload;
  ProblemKey problem;
  std::string strategy;  // "" = default_strategy(budget or time limit given)
  search::Options strategy_options;
  std::uint64_t seed = 1;
  std::size_t budget = 0;    // new evaluations; 0 = none
  double time_limit_s = 0;   // 0 = none
  Objective objective = Objective::time;
  std::size_t warm_start = 5;  // configurations suggested by other sizes (warm_start.hpp); 0 = off
  double screen = 0;           // > 1: screen at a problem this many times smaller first (needs time_limit_s)
  double screen_share = 0.3;   // the screening's share of the time limit
  /// Specs with "blocks": after the search, a few of its configurations are measured at this many smaller sizes,
  /// each 4x smaller than the last (smaller_sizes()), so that the lookup serves them from measurements; 0 = off.
  std::size_t smaller_sizes = 4;
  /// The final pick after the search (final_pick.hpp): the leaders within noise re-timed interleaved, the winner and
  /// its tie set stored; k <= 1 = off. Under a time limit its max_seconds is at most 5% of the limit (1 s at least).
  /// Only for the time objective.
  FinalPickOptions final_pick;
  /// Bytes one run moves (for GB/s); empty = unknown.
  std::function<double(const Workload&, const ProblemKey&)> bytes_moved;
  /// When the command started: the trace's elapsed seconds and the screening's share count from here.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  /// Lines for the user as they happen ("warm start (n=...): ...", "screening at ..."); may be empty.
  std::function<void(const std::string&)> note;
  /// After each batch of either phase; may be empty.
  std::function<void(const Progress&)> on_progress;
};

/// Best-so-far after a batch (elapsed seconds since TuneRequest::started).
struct TracePoint {
  double elapsed_s = 0;
  std::size_t done = 0;
  double best_ns = 0;
  std::string phase;  // "screen" or "target"
};

struct ScreenSummary {
  std::string problem;     // the screening problem's key ("" = no screening)
  std::size_t configs = 0; // configurations covered there
  double wall_s = 0;
  std::size_t confirmed = 0;  // its best, measured first at the target size
};

/// One smaller size measured after the search (TuneRequest::smaller_sizes).
struct SmallerSize {
  std::string problem;       // its key
  std::size_t configs = 0;   // configurations chosen for it
  std::size_t measured = 0;  // measured now or found from earlier sessions, verified
  std::int64_t session_id = 0;
  double best_ns = 0;  // the fastest verified there (0 = none)
  std::string best;    // its configuration (JSON)
  double wall_s = 0;
};

struct TuneOutcome {
  Result result;            // the session at the target size
  Options options;          // what it ran with (strategy, limits, the warm start handed to it)
  std::string strategy;     // the strategy used
  bool default_strategy = false;
  WarmStart warm;           // what the database suggested for the target problem
  ScreenSummary screen;
  FinalPickOutcome final_pick;       // the final pick at the target size (ran false, with the reason, where not)
  std::vector<SmallerSize> smaller;  // in order, largest first
  std::string smaller_note;          // why the smaller sizes stopped early or were not measured ("" = not asked)
  std::vector<TracePoint> trace;
};

/// Runs the workflow. Throws UsageError (bad strategy, --screen without a time limit, an objective that needs
/// power on a backend without it), EnvironmentError, DbError; everything measured is committed as it comes.
TuneOutcome tune(const TuningSpec& spec, Backend& backend, db::Database& db, const TuneRequest& request);

}  // namespace autotune::session
