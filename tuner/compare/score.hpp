// The methodology score: strategies replayed over simulated tuning time on fully recorded spaces, their best-so-far
// curves normalised per space so that 0 is random search's expected curve and 1 the optimum, and averaged over the
// time range (Willemsen, van Nieuwpoort, van Werkhoven, "A methodology for comparing optimization algorithms for
// auto-tuning", Future Generation Computer Systems, 2024; the autotuning_methodology package). Pure computation over
// recorded times and costs; docs/strategies.md "Methodology score".
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tuner/compare/compare.hpp"

namespace autotune::compare {

/// The time range of a space: the methodology's cutoff percentiles and curve resolution.
struct ScoreSettings {
  double cutoff = 0.95;          // the range ends when random search expects to reach this share of the way
                                 // from the median to the optimum (autotuning_methodology: cutoff_percentile)
  double cutoff_start = 0.01;    // and starts where it expects to reach this share (cutoff_percentile_start)
  std::size_t resolution = 500;  // time points of the curve, evenly spaced over the range
  bool strategy_time = true;     // the strategy's own measured decision time counts towards tuning time
};

/// A space's random-search baseline and time range, from its recorded values and costs.
struct TimeBaseline {
  std::vector<double> sorted;                // values (ns) of the configs that ran, ascending
  double optimum = 0, median = 0, mean = 0;  // of `sorted`
  double eval_s = 0;         // mean time per evaluation of random search (s): mean cost of a config that ran
                             // plus the share of failures times their mean cost
  double median_cost_s = 0;  // median cost over every config (s)
  std::size_t evals_start = 0, evals_end = 0;  // evaluations random search expects to need to reach each cutoff
  double start_s = 0, end_s = 0;               // evals_start and evals_end x median_cost_s
};

/// Expected best (smallest) of k values drawn uniformly without replacement from `sorted` (ascending, finite):
/// sum_i v_i C(N - i, k - 1) / C(N, k) with i from 1. k is clamped to [1, N]. Throws Error when `sorted` is empty.
double expected_random_best(const std::vector<double>& sorted, std::size_t k);

/// The baseline of a recorded space (its cost_s filled). Throws UsageError when no config ran or nothing was timed.
TimeBaseline time_baseline(const RecordedSpace& rec, const ScoreSettings& settings = {});

/// Random search's expected best-so-far (ns) at time t_s: expected_random_best after max(1, floor(t_s / eval_s))
/// evaluations, those that have ended by t_s at the mean cost (the autotuning_methodology package rounds instead).
double random_curve_at(const TimeBaseline& base, double t_s);

/// (v - R) / (optimum - R) for a best-so-far v against random search's R: 0 = as good as random search, 1 = the
/// optimum, negative = worse. An unknown v (+infinity: no evaluation has ended yet) counts as the mean of the values,
/// random search's expected first draw. Where R is the optimum already, 1 when v is too, else 0.
double normalised(const TimeBaseline& base, double v, double random_best);

/// A strategy's curve on one space over its time range.
struct StrategyScore {
  std::string strategy;
  std::vector<double> curve;       // mean normalised best-so-far at each time point
  std::vector<double> best_ns;     // mean best-so-far (ns) at each time point (a run with nothing yet: the mean value)
  double score = 0, score_se = 0;  // mean of the curve; standard error over the runs (sd of run scores / sqrt)
  double evaluations = 0;          // mean new evaluations per run within the range
  std::size_t runs = 0;
};

struct SpaceScore {
  std::string label;  // e.g. "reduction float32/sum n=16777216 H100"
  TimeBaseline base;
  std::vector<double> times_s;            // the time points
  std::vector<double> random_ns;          // random search's expected best-so-far at each
  std::vector<StrategyScore> strategies;  // in the order of compare_strategies (random_sample first)
};

/// Replays every strategy of opt (strategies, strategy_options, repeats, seed, batch, warm_start as for
/// compare_strategies) over simulated time on one space. Each run is told the budget random search expects to
/// spend in the range (evals_end, at most the space) and runs until its clock passes the range's end. Throws as
/// compare_strategies and time_baseline.
SpaceScore score_space(const ParameterSpace& space, const RecordedSpace& rec, const CompareOptions& opt,
                       const ScoreSettings& settings, const std::string& label);

/// An externally recorded run replayed on the recording over simulated time: `order` is the sequence of space indices
/// the run evaluated (e.g. another tuner's strategy in its simulation mode); a repeat costs nothing and adds no
/// evaluation (as a revisit of our strategies); every new evaluation advances the clock by its recorded cost
/// (rec.cost_s), no decision time is charged; the replay stops at the first evaluation that ends past
/// timed.limit_s. Returns the best-so-far after each new evaluation and fills timed.end_s. Throws Error for an index
/// out of range.
std::vector<double> replay_order(const RecordedSpace& rec, const std::vector<std::size_t>& order, TimedReplay& timed);

/// Appends to `out` (made by score_space for the same recording) the score of a strategy given by its runs'
/// evaluation orders, each replayed by replay_order over out's time range and scored exactly as score_space scores
/// our strategies (compare them with ScoreSettings::strategy_time off, which charges no decision time either). A run
/// that ends before the range does keeps its last best. Throws UsageError when `orders` is empty.
void score_orders(SpaceScore& out, const RecordedSpace& rec, const std::string& name,
                  const std::vector<std::vector<std::size_t>>& orders);

/// The score of one strategy over several spaces: the mean of its per-space scores, and of its curves point by point
/// (each space's range mapped onto [0, 1]); the standard error from the per-space ones (sqrt(sum se^2) / n).
struct AggregateScore {
  std::string strategy;
  double score = 0, score_se = 0;
  std::vector<double> curve;
  std::size_t spaces = 0;
};
/// Strategies in the order they first appear over the spaces; a strategy missing from a space is left out of its mean
/// (AggregateScore::spaces says over how many it is taken).
std::vector<AggregateScore> aggregate_scores(const std::vector<SpaceScore>& spaces);

/// CSV of the scores (one line per space and strategy, then the aggregate as space "all") and, when curves is set,
/// of the curves instead (space, strategy, point, time_s, fraction, best_ns, random_ns, normalised). Code:
/// score_report.cpp.
std::string score_csv(const std::vector<SpaceScore>& spaces, const std::vector<AggregateScore>& all, bool curves);
/// A table of the scores: a column per space and the aggregate (Markdown when markdown is set).
std::string score_table(const std::vector<SpaceScore>& spaces, const std::vector<AggregateScore>& all, bool markdown);
/// An SVG line chart of the aggregate curves over the fraction of the time range (0 = random search, 1 = optimum).
std::string score_svg(const std::vector<SpaceScore>& spaces, const std::vector<AggregateScore>& all);

}  // namespace autotune::compare
