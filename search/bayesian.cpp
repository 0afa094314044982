// bayesian_optimization: a Gaussian process over the normalised parameter-index encoding.
//
// Model: inputs are per-parameter value indices scaled to [0, 1]; outputs are log(time) (raw values
// if any is <= 0), standardised; failures get the worst successful output plus a margin, so the model
// learns to avoid failing regions. Kernel: Matern 5/2 with one length scale, chosen from a grid by
// marginal likelihood whenever the training set has grown by a fifth, plus a small fixed noise.
// Acquisition: expected improvement, maximised over unevaluated valid configs (all of them, or a random
// subset plus the unevaluated neighbours of the best configs when the space is large).
// Cost per proposal: O(n^3) for n = min(observations, max_points) at refits, O(m n^2) for m candidates.
#include <algorithm>
#include <cmath>

#include "search/base.hpp"

namespace autotune::search::detail {

namespace {

/// In-place Cholesky of a symmetric positive definite n x n row-major matrix (lower triangle kept).
bool cholesky(std::vector<double>& a, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0)) return false;
    d = std::sqrt(d);
    a[j * n + j] = d;
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      const double* ri = &a[i * n];
      const double* rj = &a[j * n];
      for (std::size_t k = 0; k < j; ++k) s -= ri[k] * rj[k];
      a[i * n + j] = s / d;
    }
  }
  return true;
}

/// Solves L x = b (L lower, row-major), in place.
void forward(const std::vector<double>& l, std::size_t n, std::vector<double>& b) {
  for (std::size_t i = 0; i < n; ++i) {
    double s = b[i];
    const double* ri = &l[i * n];
    for (std::size_t k = 0; k < i; ++k) s -= ri[k] * b[k];
    b[i] = s / ri[i];
  }
}

/// Solves L^T x = b, in place.
void backward(const std::vector<double>& l, std::size_t n, std::vector<double>& b) {
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= l[k * n + i] * b[k];
    b[i] = s / l[i * n + i];
  }
}

double matern52(double r, double length) {
  const double s = std::sqrt(5.0) * r / length;
  return (1.0 + s + s * s / 3.0) * std::exp(-s);
}

class BayesianOptimization final : public StrategyBase {
 public:
  BayesianOptimization(const ParameterSpace& space, std::uint64_t seed, const OptionReader& o)
      : StrategyBase("bayesian_optimization", space, seed),
        initial_(static_cast<std::size_t>(o.integer("initial_samples"))),
        max_candidates_(static_cast<std::size_t>(o.integer("candidates"))),
        max_points_(static_cast<std::size_t>(o.integer("max_points"))),
        xi_(o.real("exploration")) {
    for (const Param& p : space.params()) span_.push_back(p.values.size() > 1 ? double(p.values.size() - 1) : 0.0);
  }

 protected:
  std::vector<std::size_t> step(std::size_t hint) override {
    const std::vector<std::size_t>& seen = observed();
    bool any_finite = false;
    for (std::size_t i : seen)
      if (std::isfinite(value(i))) any_finite = true;
    if (seen.size() < initial_ || !any_finite) {
      const std::size_t want = seen.size() < initial_ ? std::min(hint, initial_ - seen.size()) : 1;
      return random_unknowns(std::max<std::size_t>(1, want));
    }
    return choose(seen, hint);
  }

 private:
  std::vector<double> encode(std::size_t i) const {
    const auto& idx = space_.indices(i);
    std::vector<double> x(idx.size());
    for (std::size_t j = 0; j < idx.size(); ++j) x[j] = span_[j] > 0 ? idx[j] / span_[j] : 0.0;
    return x;
  }

  static double distance(const std::vector<double>& a, const double* b) {
    double s = 0;
    for (std::size_t j = 0; j < a.size(); ++j) s += (a[j] - b[j]) * (a[j] - b[j]);
    return std::sqrt(s);
  }

  /// Training set: everything observed, or the best half of the cap plus a random rest.
  std::vector<std::size_t> training_set(const std::vector<std::size_t>& seen) {
    if (seen.size() <= max_points_) return seen;
    std::vector<std::size_t> sorted = seen;
    std::stable_sort(sorted.begin(), sorted.end(), [&](std::size_t a, std::size_t b) { return value(a) < value(b); });
    const std::size_t best = max_points_ / 2;
    std::vector<std::size_t> out(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(best));
    std::vector<std::size_t> rest(sorted.begin() + static_cast<std::ptrdiff_t>(best), sorted.end());
    for (std::size_t k = 0; k < max_points_ - best; ++k) {
      const std::size_t j = k + rng_.below(rest.size() - k);
      std::swap(rest[k], rest[j]);
      out.push_back(rest[k]);
    }
    return out;
  }

  std::vector<std::size_t> candidates() {
    std::vector<std::size_t> out;
    if (unknown_count() <= max_candidates_) {
      for (std::size_t i : unknown_pool())
        if (!pending(i)) out.push_back(i);
      std::sort(out.begin(), out.end());
      return out;
    }
    // Local refinement: unevaluated neighbours of the best few configs, plus a random sample.
    std::vector<std::size_t> seen = observed();
    std::stable_sort(seen.begin(), seen.end(), [&](std::size_t a, std::size_t b) { return value(a) < value(b); });
    for (std::size_t k = 0; k < seen.size() && k < 3; ++k) {
      for (std::size_t c : space_.neighbours(seen[k]))
        if (!known(c) && !pending(c)) out.push_back(c);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (out.size() > max_candidates_ / 2) {
      rng_.shuffle(out);
      out.resize(max_candidates_ / 2);
    }
    for (std::size_t c : random_unknowns(max_candidates_ - out.size())) out.push_back(c);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  /// Up to `count` configs: the largest expected improvement first, then (for batches) the largest
  /// expected improvement damped by (1 - correlation) with every config already picked.
  std::vector<std::size_t> choose(const std::vector<std::size_t>& seen, std::size_t count) {
    const std::vector<std::size_t> train = training_set(seen);
    const std::size_t n = train.size();
    const std::size_t d = span_.size();

    // Outputs: log for positive data, standardised; failures at the worst success plus a margin.
    bool positive = true;
    double lo = kInf, hi = -kInf;
    for (std::size_t i : train)
      if (std::isfinite(value(i)) && value(i) <= 0) positive = false;
    std::vector<double> y(n);
    for (std::size_t k = 0; k < n; ++k) {
      const double v = value(train[k]);
      y[k] = std::isfinite(v) ? (positive ? std::log(v) : v) : kInf;
      if (std::isfinite(y[k])) {
        lo = std::min(lo, y[k]);
        hi = std::max(hi, y[k]);
      }
    }
    const double fail = hi + 0.25 * std::max(hi - lo, 1e-3);
    double mean = 0;
    for (double& v : y) {
      if (!std::isfinite(v)) v = fail;
      mean += v;
    }
    mean /= static_cast<double>(n);
    double var = 0;
    for (double v : y) var += (v - mean) * (v - mean);
    const double sd = n > 1 && var > 0 ? std::sqrt(var / static_cast<double>(n - 1)) : 1.0;
    for (double& v : y) v = (v - mean) / sd;

    std::vector<double> x(n * d);
    for (std::size_t k = 0; k < n; ++k) {
      const std::vector<double> e = encode(train[k]);
      std::copy(e.begin(), e.end(), x.begin() + static_cast<std::ptrdiff_t>(k * d));
    }
    std::vector<double> dist(n * n, 0.0);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < a; ++b) {
        double s = 0;
        for (std::size_t j = 0; j < d; ++j) s += (x[a * d + j] - x[b * d + j]) * (x[a * d + j] - x[b * d + j]);
        dist[a * n + b] = dist[b * n + a] = std::sqrt(s);
      }

    if (length_ <= 0 || n * 5 >= fitted_n_ * 6 + 5) {
      fit_length(dist, y, n);
      fitted_n_ = n;
    }
    std::vector<double> l, alpha;
    if (!factor(dist, n, length_, l)) return random_unknowns(1);
    alpha = y;
    forward(l, n, alpha);
    backward(l, n, alpha);

    double y_best = kInf;
    for (double v : y) y_best = std::min(y_best, v);

    const std::vector<std::size_t> cands = candidates();
    std::vector<double> score(cands.size()), mean_of(cands.size());
    std::vector<double> kstar(n);
    for (std::size_t ci = 0; ci < cands.size(); ++ci) {
      const std::vector<double> e = encode(cands[ci]);
      double mu = 0;
      for (std::size_t k = 0; k < n; ++k) {
        kstar[k] = matern52(distance(e, &x[k * d]), length_);
        mu += kstar[k] * alpha[k];
      }
      forward(l, n, kstar);
      double s2 = 1.0;
      for (double v : kstar) s2 -= v * v;
      const double s = std::sqrt(std::max(s2, 1e-12));
      const double imp = y_best - mu - xi_;
      const double z = imp / s;
      score[ci] = imp * 0.5 * std::erfc(-z / std::sqrt(2.0)) + s * std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
      mean_of[ci] = mu;
    }
    std::vector<std::size_t> picks;
    std::vector<std::uint8_t> taken(cands.size(), 0);
    while (picks.size() < count && picks.size() < cands.size()) {
      std::size_t pick = kNone;
      for (std::size_t ci = 0; ci < cands.size(); ++ci) {
        if (taken[ci]) continue;
        if (pick == kNone || score[ci] > score[pick] || (score[ci] == score[pick] && mean_of[ci] < mean_of[pick]))
          pick = ci;
      }
      taken[pick] = 1;
      picks.push_back(cands[pick]);
      if (picks.size() == count) break;
      const std::vector<double> e = encode(cands[pick]);
      for (std::size_t ci = 0; ci < cands.size(); ++ci) {
        if (taken[ci]) continue;
        const std::vector<double> f = encode(cands[ci]);
        score[ci] *= 1.0 - matern52(distance(e, f.data()), length_);
      }
    }
    return picks;
  }

  bool factor(const std::vector<double>& dist, std::size_t n, double length, std::vector<double>& l) const {
    for (double jitter = kNoise; jitter < 1.0; jitter *= 10) {
      l.assign(n * n, 0.0);
      for (std::size_t a = 0; a < n; ++a) {
        for (std::size_t b = 0; b < a; ++b) l[a * n + b] = matern52(dist[a * n + b], length);
        l[a * n + a] = 1.0 + jitter;
      }
      if (cholesky(l, n)) return true;
    }
    return false;
  }

  void fit_length(const std::vector<double>& dist, const std::vector<double>& y, std::size_t n) {
    static const double grid[] = {0.05, 0.1, 0.2, 0.35, 0.6, 1.0, 1.7, 3.0};
    double best_ll = -kInf;
    double best_len = length_ > 0 ? length_ : 0.35;
    std::vector<double> l;
    for (double len : grid) {
      if (!factor(dist, n, len, l)) continue;
      std::vector<double> a = y;
      forward(l, n, a);
      double ll = 0;
      for (std::size_t k = 0; k < n; ++k) ll -= 0.5 * a[k] * a[k] + std::log(l[k * n + k]);
      if (ll > best_ll) {
        best_ll = ll;
        best_len = len;
      }
    }
    length_ = best_len;
  }

  static constexpr double kNoise = 1e-4;
  const std::size_t initial_, max_candidates_, max_points_;
  const double xi_;
  std::vector<double> span_;
  double length_ = 0;
  std::size_t fitted_n_ = 0;
};

}  // namespace

std::vector<OptionSpec> bayesian_optimization_options() {
  return {
      {"initial_samples", "10", "random configs evaluated before the model is used", OptionKind::integer, 1,
       100000, {}},
      {"candidates", "500",
       "most unevaluated configs scored per proposal (all of them when fewer; otherwise the best configs' "
       "neighbours plus a random sample)",
       OptionKind::integer, 1, 10000000, {}},
      {"max_points", "150",
       "most observations in the Gaussian process (the best half plus a random rest); bounds the O(n^3) cost",
       OptionKind::integer, 2, 5000, {}},
      {"exploration", "0.01", "xi of expected improvement, in standard deviations of the standardised log time",
       OptionKind::real, 0, 10, {}},
  };
}

std::unique_ptr<Strategy> make_bayesian_optimization(const ParameterSpace& s, std::uint64_t seed,
                                                     const OptionReader& o) {
  return std::make_unique<BayesianOptimization>(s, seed, o);
}

}  // namespace autotune::search::detail
