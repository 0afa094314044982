#include "tuner/compare/score.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tuner/core/error.hpp"

namespace autotune::compare {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

/// Evaluations random search expects to need to reach `cutoff` of the way from the median to the optimum: with i
/// configs worse than the target among N, i / (N + 1 - i) draws are expected to miss it (rounded up, as the
/// autotuning_methodology package's cutoff_point).
std::size_t cutoff_evals(const TimeBaseline& b, double cutoff) {
  const double target = b.optimum + (b.median - b.optimum) * (1 - cutoff);
  const std::size_t n = b.sorted.size();
  std::size_t worse = 0;
  for (double v : b.sorted) worse += v > target ? 1 : 0;
  return static_cast<std::size_t>(std::ceil(static_cast<double>(worse) / static_cast<double>(n + 1 - worse)));
}

/// The best-so-far of a run at time t_s: the last trace value whose evaluation ended by t_s (+infinity before).
double best_at(const std::vector<double>& trace, const std::vector<double>& end_s, double t_s) {
  const auto it = std::upper_bound(end_s.begin(), end_s.end(), t_s);
  if (it == end_s.begin()) return kInf;
  return trace[static_cast<std::size_t>(it - end_s.begin()) - 1];
}

/// A strategy's score with its curves zeroed, to be filled by add_run over `runs` runs of `points` time points.
StrategyScore empty_score(const std::string& name, std::size_t runs, std::size_t points) {
  StrategyScore st;
  st.strategy = name;
  st.runs = runs;
  st.curve.assign(points, 0.0);
  st.best_ns.assign(points, 0.0);
  return st;
}

/// Adds one run (its best-so-far trace and the clock at the end of each evaluation, s) to st's mean curves and
/// evaluations (each run weighs 1 / st.runs); returns the run's score, the mean of its normalised curve.
double add_run(const SpaceScore& sp, const std::vector<double>& trace, const std::vector<double>& end_s,
               StrategyScore& st) {
  const TimeBaseline& b = sp.base;
  const auto runs = static_cast<double>(st.runs);
  double sum = 0;
  for (std::size_t j = 0; j < sp.times_s.size(); ++j) {
    double v = best_at(trace, end_s, sp.times_s[j]);
    if (!std::isfinite(v)) v = b.mean;
    const double x = normalised(b, v, sp.random_ns[j]);
    st.curve[j] += x / runs;
    st.best_ns[j] += v / runs;
    sum += x;
  }
  st.evaluations += static_cast<double>(std::upper_bound(end_s.begin(), end_s.end(), b.end_s) - end_s.begin()) / runs;
  return sum / static_cast<double>(sp.times_s.size());
}

/// st's score: the mean of the run scores and its standard error.
void finish_score(const std::vector<double>& run_scores, StrategyScore& st) {
  st.score = mean_of(run_scores);
  double ss = 0;
  for (double x : run_scores) ss += (x - st.score) * (x - st.score);
  const double n = static_cast<double>(run_scores.size());
  st.score_se = n > 1 ? std::sqrt(ss / (n - 1) / n) : 0.0;
}

}  // namespace

double expected_random_best(const std::vector<double>& sorted, std::size_t k) {
  const std::size_t n = sorted.size();
  if (n == 0) throw Error("expected_random_best: no values");
  k = std::clamp<std::size_t>(k, 1, n);
  // P(the best of k is the i-th smallest) = C(n - i, k - 1) / C(n, k); p_1 = k / n and
  // p_{i+1} / p_i = (n - i - k + 1) / (n - i).
  double p = static_cast<double>(k) / static_cast<double>(n), sum = 0;
  for (std::size_t i = 1; i <= n - k + 1; ++i) {
    sum += p * sorted[i - 1];
    if (i < n) p *= static_cast<double>(n - i - k + 1) / static_cast<double>(n - i);
  }
  return sum;
}

TimeBaseline time_baseline(const RecordedSpace& rec, const ScoreSettings& settings) {
  TimeBaseline b;
  std::vector<double> ok_cost, failed_cost;
  for (std::size_t i = 0; i < rec.values.size(); ++i) {
    const double c = i < rec.cost_s.size() ? rec.cost_s[i] : 0.0;
    if (std::isfinite(rec.values[i])) {
      b.sorted.push_back(rec.values[i]);
      ok_cost.push_back(c);
    } else {
      failed_cost.push_back(c);
    }
  }
  if (b.sorted.empty()) throw UsageError("every recorded configuration failed: there is no optimum to score against");
  std::sort(b.sorted.begin(), b.sorted.end());
  b.optimum = b.sorted.front();
  b.median = median_of(b.sorted);
  b.mean = mean_of(b.sorted);
  const double failed_share = static_cast<double>(failed_cost.size()) / static_cast<double>(rec.values.size());
  b.eval_s = mean_of(ok_cost) + failed_share * mean_of(failed_cost);
  std::vector<double> all = ok_cost;
  all.insert(all.end(), failed_cost.begin(), failed_cost.end());
  b.median_cost_s = median_of(all);
  if (!(b.eval_s > 0) || !(b.median_cost_s > 0))
    throw UsageError("the recording holds no compile, verification or benchmark times: no tuning time to score over");
  if (!(settings.cutoff_start >= 0 && settings.cutoff_start < settings.cutoff && settings.cutoff < 1))
    throw UsageError("the score's cutoffs must satisfy 0 <= start < end < 1");
  b.evals_start = std::max<std::size_t>(1, cutoff_evals(b, settings.cutoff_start));
  b.evals_end = std::max(b.evals_start + 1, cutoff_evals(b, settings.cutoff));
  b.start_s = static_cast<double>(b.evals_start) * b.median_cost_s;
  b.end_s = static_cast<double>(b.evals_end) * b.median_cost_s;
  return b;
}

double random_curve_at(const TimeBaseline& base, double t_s) {
  const double k = std::max(1.0, std::floor(t_s / base.eval_s + 1e-9));
  const double n = static_cast<double>(base.sorted.size());
  return expected_random_best(base.sorted, static_cast<std::size_t>(std::min(k, n)));
}

double normalised(const TimeBaseline& base, double v, double random_best) {
  if (!std::isfinite(v)) v = base.mean;
  const double span = base.optimum - random_best;
  if (!(std::fabs(span) > 1e-12 * std::fabs(base.optimum))) return v <= base.optimum ? 1.0 : 0.0;
  return (v - random_best) / span;
}

SpaceScore score_space(const ParameterSpace& space, const RecordedSpace& rec, const CompareOptions& opt,
                       const ScoreSettings& settings, const std::string& label) {
  if (space.empty()) throw UsageError("the space is empty: nothing to score");
  if (opt.repeats == 0) throw UsageError("--repeats must be at least 1");
  if (settings.resolution < 2) throw UsageError("the score's curve needs at least 2 time points");
  SpaceScore out;
  out.label = label;
  out.base = time_baseline(rec, settings);
  const TimeBaseline& b = out.base;
  const std::size_t points = settings.resolution;
  for (std::size_t j = 0; j < points; ++j) {
    const double t = b.start_s + (b.end_s - b.start_s) * static_cast<double>(j) / static_cast<double>(points - 1);
    out.times_s.push_back(t);
    out.random_ns.push_back(random_curve_at(b, t));
  }
  const std::size_t told = std::min(space.size(), b.evals_end);
  for (const auto& [name, so] : compared_strategies(space, opt)) {
    StrategyScore st = empty_score(name, opt.repeats, points);
    std::vector<double> run_scores;
    for (std::size_t r = 0; r < opt.repeats; ++r) {
      auto strategy = search::make_strategy(name, space, opt.seed + r, so);
      strategy->set_budget(told);
      TimedReplay timed;
      timed.limit_s = b.end_s;
      timed.strategy_time = settings.strategy_time;
      const std::vector<double> trace =
          simulate_run(space, rec, *strategy, space.size(), opt.batch, opt.warm_start, nullptr, &timed);
      run_scores.push_back(add_run(out, trace, timed.end_s, st));
    }
    finish_score(run_scores, st);
    out.strategies.push_back(std::move(st));
  }
  return out;
}

std::vector<double> replay_order(const RecordedSpace& rec, const std::vector<std::size_t>& order, TimedReplay& timed) {
  std::vector<double> trace;
  std::vector<char> seen(rec.values.size(), 0);
  double best = kInf, clock_s = 0;
  for (std::size_t idx : order) {
    if (idx >= rec.values.size()) throw Error("replay_order: an index out of range of the recording");
    if (seen[idx]) continue;  // a revisit: known, no cost
    seen[idx] = 1;
    best = std::min(best, rec.values[idx]);
    trace.push_back(best);
    clock_s += idx < rec.cost_s.size() ? rec.cost_s[idx] : 0.0;
    timed.end_s.push_back(clock_s);
    if (clock_s > timed.limit_s) break;
  }
  return trace;
}

void score_orders(SpaceScore& out, const RecordedSpace& rec, const std::string& name,
                  const std::vector<std::vector<std::size_t>>& orders) {
  if (orders.empty()) throw UsageError("no runs of " + name + " to score on " + out.label);
  StrategyScore st = empty_score(name, orders.size(), out.times_s.size());
  std::vector<double> run_scores;
  for (const auto& order : orders) {
    TimedReplay timed;
    timed.limit_s = out.base.end_s;
    const std::vector<double> trace = replay_order(rec, order, timed);
    run_scores.push_back(add_run(out, trace, timed.end_s, st));
  }
  finish_score(run_scores, st);
  out.strategies.push_back(std::move(st));
}

std::vector<AggregateScore> aggregate_scores(const std::vector<SpaceScore>& spaces) {
  std::vector<AggregateScore> out;
  std::vector<std::string> names;  // in the order they first appear
  for (const auto& sp : spaces)
    for (const auto& st : sp.strategies)
      if (std::find(names.begin(), names.end(), st.strategy) == names.end()) names.push_back(st.strategy);
  for (const std::string& name : names) {
    AggregateScore a;
    a.strategy = name;
    double var = 0;
    for (const auto& sp : spaces) {
      for (const auto& st : sp.strategies) {
        if (st.strategy != a.strategy) continue;
        a.score += st.score;
        var += st.score_se * st.score_se;
        if (a.curve.empty()) a.curve.assign(st.curve.size(), 0.0);
        for (std::size_t j = 0; j < a.curve.size() && j < st.curve.size(); ++j) a.curve[j] += st.curve[j];
        ++a.spaces;
      }
    }
    if (a.spaces) {
      const double n = static_cast<double>(a.spaces);
      a.score /= n;
      a.score_se = std::sqrt(var) / n;
      for (double& x : a.curve) x /= n;
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace autotune::compare
