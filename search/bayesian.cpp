// bayesian_optimization: a Gaussian process over the normalised parameter-index encoding.
//
// Model: inputs are per-parameter value indices scaled to [0, 1]; outputs are log(time) (raw values
// if any is <= 0), standardised; failures get the worst successful output plus a margin, so the model
// learns to avoid failing regions. Kernel: Matern 5/2 with one length scale, chosen from a grid by
// marginal likelihood whenever the training set has grown by a fifth, plus a small fixed noise.
// Acquisition: expected improvement, maximised over unevaluated valid configs (all of them, or a random
// subset plus the unevaluated neighbours of the best configs when the space is large).
// Cost per proposal: O(n^3) for n = min(observations, max_points) at refits, O(m n) for the means of m
// candidates, and O(n^2) for the variance of each candidate whose score bound can still win (see choose()).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "search/base.hpp"

namespace autotune::search::detail {

namespace {

/// In-place Cholesky of a symmetric positive definite n x n row-major matrix (lower triangle kept). Four rows
/// of a column at a time (independent sums, so the additions of one row do not wait for each other's results;
/// each element still sums in the same order as one row at a time).
bool cholesky(std::vector<double>& a, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0)) return false;
    d = std::sqrt(d);
    a[j * n + j] = d;
    const double* rj = &a[j * n];
    std::size_t i = j + 1;
    for (; i + 4 <= n; i += 4) {
      double* r0 = &a[i * n];
      double* r1 = r0 + n;
      double* r2 = r1 + n;
      double* r3 = r2 + n;
      double s0 = r0[j], s1 = r1[j], s2 = r2[j], s3 = r3[j];
      for (std::size_t k = 0; k < j; ++k) {
        const double v = rj[k];
        s0 -= r0[k] * v;
        s1 -= r1[k] * v;
        s2 -= r2[k] * v;
        s3 -= r3[k] * v;
      }
      r0[j] = s0 / d;
      r1[j] = s1 / d;
      r2[j] = s2 / d;
      r3[j] = s3 / d;
    }
    for (; i < n; ++i) {
      double s = a[i * n + j];
      const double* ri = &a[i * n];
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

/// Expected improvement for an improvement `imp` of the mean over the target and a standard deviation s > 0.
/// With `upper`, a little more than that, so that the value stays above the computed expected improvement of any
/// smaller s despite rounding (the two terms nearly cancel when imp / s is very negative).
double expected_improvement(double imp, double s, bool upper = false) {
  const double z = imp / s;
  const double a = imp * 0.5 * std::erfc(-z / std::sqrt(2.0)), b = s * std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  return upper ? a + b + 1e-12 * (std::fabs(a) + b) + 1e-300 : a + b;
}

double matern52(double r, double length) {
  const double s = std::sqrt(5.0) * r / length;
  return (1.0 + s + s * s / 3.0) * std::exp(-s);
}

/// Pairwise distances of n points: code[a * n + b] (b < a) indexes their distinct values.
struct Distances {
  std::vector<double> values;
  std::vector<std::uint32_t> code;
};

class BayesianOptimization final : public StrategyBase {
 public:
  BayesianOptimization(const ParameterSpace& space, std::uint64_t seed, const OptionReader& o)
      : StrategyBase("bayesian_optimization", space, seed),
        initial_(static_cast<std::size_t>(o.integer("initial_samples"))),
        max_candidates_(static_cast<std::size_t>(o.integer("candidates"))),
        max_points_(static_cast<std::size_t>(o.integer("max_points"))),
        xi_(o.real("exploration")) {
    for (const Param& p : space.params()) span_.push_back(p.values.size() > 1 ? double(p.values.size() - 1) : 0.0);
    // Kernel values depend only on the per-parameter index differences: cached in a table over them when it is
    // small (the built-in specs: at most a few ten thousand entries).
    std::size_t cells = 1;
    for (const Param& p : space.params()) {
      stride_.push_back(cells);
      cells = cells <= kMaxTable ? cells * std::max<std::size_t>(1, p.values.size()) : kMaxTable + 1;
    }
    if (cells <= kMaxTable) {
      table_.resize(cells);
      slot_.assign(cells, kNoSlot);
    }
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
  /// Matern kernel between two configs given by their value indices (from the index differences, so every pair
  /// with the same differences gets the same value; cached per length scale, see reset_table()).
  double kernel(const std::uint16_t* a, const std::uint16_t* b) {
    const std::size_t key = key_of(a, b);
    if (!table_.empty()) {
      const double t = table_[key];
      if (!std::isnan(t)) return t;
    }
    const double v = matern52(std::sqrt(squared_distance(a, b)), length_);
    if (!table_.empty()) table_[key] = v;
    return v;
  }

  /// Position of the index differences of a and b in table_ (meaningful when the table is used).
  std::size_t key_of(const std::uint16_t* a, const std::uint16_t* b) const {
    std::size_t key = 0;
    for (std::size_t j = 0; j < stride_.size(); ++j)
      key += static_cast<std::size_t>(std::abs(static_cast<int>(a[j]) - static_cast<int>(b[j]))) * stride_[j];
    return key;
  }

  /// Squared distance of two configs in the normalised encoding (each parameter's indices scaled to [0, 1]).
  double squared_distance(const std::uint16_t* a, const std::uint16_t* b) const {
    double r2 = 0;
    for (std::size_t j = 0; j < span_.size(); ++j) {
      if (!(span_[j] > 0)) continue;
      const double q = (static_cast<double>(a[j]) - static_cast<double>(b[j])) / span_[j];
      r2 += q * q;
    }
    return r2;
  }

  /// Forgets the cached kernel values when the length scale has changed.
  void reset_table() {
    if (table_length_ == length_) return;
    std::fill(table_.begin(), table_.end(), std::numeric_limits<double>::quiet_NaN());
    table_length_ = length_;
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
    const std::vector<double> y = standardised_outputs(train);
    const std::vector<std::uint16_t> tx = index_rows(train);
    const Distances dist = training_distances(tx, n);
    if (length_ <= 0 || n * 5 >= fitted_n_ * 6 + 5) {
      fit_length(dist, y, n);
      fitted_n_ = n;
    }
    Scoring sc;
    if (!factor(dist, n, length_, sc.l, &jitter_)) return random_unknowns(1);
    std::vector<double> alpha = y;
    forward(sc.l, n, alpha);
    backward(sc.l, n, alpha);
    sc.n = n;
    sc.y_best = kInf;
    for (double v : y) sc.y_best = std::min(sc.y_best, v);
    bound_scores(sc, tx, alpha);
    return pick(sc, count);
  }

  /// Outputs of the training set: log for positive data, standardised; failures at the worst success plus a margin.
  std::vector<double> standardised_outputs(const std::vector<std::size_t>& train) const {
    const std::size_t n = train.size();
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
    return y;
  }

  /// The value indices of configs, one row of span_.size() per config.
  std::vector<std::uint16_t> index_rows(const std::vector<std::size_t>& configs) const {
    const std::size_t d = span_.size();
    std::vector<std::uint16_t> rows(configs.size() * d);
    for (std::size_t k = 0; k < configs.size(); ++k) {
      const std::vector<std::uint16_t> v = space_.indices(configs[k]);
      std::copy(v.begin(), v.end(), rows.begin() + static_cast<std::ptrdiff_t>(k * d));
    }
    return rows;
  }

  /// Pairwise distances of the training set, as codes into their distinct values (few: pairs with the same index
  /// differences share one), so that a factorisation evaluates the kernel once per distinct distance.
  Distances training_distances(const std::vector<std::uint16_t>& tx, std::size_t n) {
    const std::size_t d = span_.size();
    Distances dist;
    dist.code.assign(n * n, 0);
    std::vector<std::size_t> touched;
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < a; ++b) {
        const std::size_t key = key_of(&tx[a * d], &tx[b * d]);
        std::uint32_t slot = slot_.empty() ? kNoSlot : slot_[key];
        if (slot == kNoSlot) {
          slot = static_cast<std::uint32_t>(dist.values.size());
          dist.values.push_back(std::sqrt(squared_distance(&tx[a * d], &tx[b * d])));
          if (!slot_.empty()) {
            slot_[key] = slot;
            touched.push_back(key);
          }
        }
        dist.code[a * n + b] = slot;
      }
    for (std::size_t key : touched) slot_[key] = kNoSlot;
    return dist;
  }

  /// The state of one choice: the factor, the candidates, their kernel rows against the training set, posterior
  /// means, scores (bounds until exact), and what has been picked.
  struct Scoring {
    std::vector<double> l;  // Cholesky factor of the training kernel matrix
    std::size_t n = 0;      // training points
    double y_best = 0;
    std::vector<std::size_t> cands;
    std::vector<std::uint16_t> cx;  // index rows of cands
    std::vector<double> kall, mean_of, score;
    std::vector<std::uint8_t> exact, taken;
    std::vector<std::size_t> picked;  // candidate positions, in order
    std::vector<double> ks;           // scratch of exact_scores
  };

  // Expected improvement of the candidates. The posterior mean costs O(n) per candidate, the variance
  // O(n^2) (L^-1 k*), so the variance is computed only where it can matter: the variance is at most
  // 1 - k_j^2 / K_jj for every training point j (the quadratic form k*^T K^-1 k* is at least its value on
  // one coordinate), and expected improvement grows with the variance, so that bound gives an upper bound of
  // each candidate's score. Exact scores are computed (kChunk candidates side by side, each summed in the
  // order of a single solve) in the order of decreasing bounds until no bound reaches the best exact score:
  // the picks are the same as with every score computed, at a fraction of the cost late in a run.

  /// The candidates, their posterior means and the upper bounds of their scores.
  void bound_scores(Scoring& sc, const std::vector<std::uint16_t>& tx, const std::vector<double>& alpha) {
    const std::size_t n = sc.n, d = span_.size();
    sc.cands = candidates();
    const std::size_t m = sc.cands.size();
    reset_table();
    sc.cx = index_rows(sc.cands);
    sc.kall.assign(m * n, 0.0);
    sc.mean_of.assign(m, 0.0);
    sc.score.assign(m, 0.0);
    for (std::size_t ci = 0; ci < m; ++ci) {
      const std::uint16_t* e = &sc.cx[ci * d];
      double* kr = &sc.kall[ci * n];
      double mu = 0, top = 0;
      for (std::size_t k = 0; k < n; ++k) {
        kr[k] = kernel(e, &tx[k * d]);
        mu += kr[k] * alpha[k];
        top = std::max(top, kr[k] * kr[k]);
      }
      sc.mean_of[ci] = mu;
      const double s_up = std::sqrt(std::max(1.0 - top / (1.0 + jitter_), 1e-12)) * (1 + 1e-6) + 1e-7;
      sc.score[ci] = expected_improvement(sc.y_best - mu - xi_, s_up, true);
    }
    sc.exact.assign(m, 0);
    sc.taken.assign(m, 0);
    sc.ks.assign(n * kChunk, 0.0);
  }

  /// Exact scores of at most kChunk candidates (positions `which`): L V = K* with kChunk right-hand sides, then
  /// the variance, the expected improvement and its damping by the picks so far.
  void exact_scores(Scoring& sc, const std::vector<std::size_t>& which) {
    const std::size_t n = sc.n, d = span_.size();
    std::vector<double>& ks = sc.ks;
    std::fill(ks.begin(), ks.end(), 0.0);
    for (std::size_t c = 0; c < which.size(); ++c)
      for (std::size_t k = 0; k < n; ++k) ks[k * kChunk + c] = sc.kall[which[c] * n + k];
    for (std::size_t i = 0; i < n; ++i) {
      double acc[kChunk];
      for (std::size_t c = 0; c < kChunk; ++c) acc[c] = ks[i * kChunk + c];
      const double* ri = &sc.l[i * n];
      for (std::size_t k = 0; k < i; ++k) {
        const double lik = ri[k];
        const double* vk = &ks[k * kChunk];
        for (std::size_t c = 0; c < kChunk; ++c) acc[c] -= lik * vk[c];
      }
      for (std::size_t c = 0; c < kChunk; ++c) ks[i * kChunk + c] = acc[c] / ri[i];
    }
    for (std::size_t c = 0; c < which.size(); ++c) {
      const std::size_t ci = which[c];
      double s2 = 1.0;
      for (std::size_t k = 0; k < n; ++k) s2 -= ks[k * kChunk + c] * ks[k * kChunk + c];
      double v = expected_improvement(sc.y_best - sc.mean_of[ci] - xi_, std::sqrt(std::max(s2, 1e-12)));
      for (std::size_t p : sc.picked) v *= 1.0 - kernel(&sc.cx[p * d], &sc.cx[ci * d]);
      sc.score[ci] = v;
      sc.exact[ci] = 1;
    }
  }

  /// Picks up to count candidates: the best exact score once no bound of an unscored candidate reaches it
  /// (ties: the lower mean, then the earlier candidate); each pick damps the others by (1 - correlation).
  std::vector<std::size_t> pick(Scoring& sc, std::size_t count) {
    const std::size_t m = sc.cands.size(), d = span_.size();
    std::vector<std::size_t> picks, which;
    const std::vector<double>& score = sc.score;
    while (picks.size() < count && picks.size() < m) {
      std::size_t best = kNone;
      for (std::size_t ci = 0; ci < m; ++ci) {
        if (sc.taken[ci] || !sc.exact[ci]) continue;
        if (best == kNone || score[ci] > score[best] ||
            (score[ci] == score[best] && sc.mean_of[ci] < sc.mean_of[best]))
          best = ci;
      }
      which.clear();
      for (std::size_t ci = 0; ci < m; ++ci)
        if (!sc.taken[ci] && !sc.exact[ci] && (best == kNone || score[ci] >= score[best])) which.push_back(ci);
      if (!which.empty()) {
        if (which.size() > kChunk) {
          std::partial_sort(which.begin(), which.begin() + kChunk, which.end(), [&](std::size_t a, std::size_t b) {
            return score[a] > score[b] || (score[a] == score[b] && a < b);
          });
          which.resize(kChunk);
        }
        exact_scores(sc, which);
        continue;
      }
      sc.taken[best] = 1;
      picks.push_back(sc.cands[best]);
      sc.picked.push_back(best);
      if (picks.size() == count) break;
      const std::uint16_t* e = &sc.cx[best * d];
      for (std::size_t ci = 0; ci < m; ++ci) {
        if (sc.taken[ci]) continue;
        sc.score[ci] *= 1.0 - kernel(e, &sc.cx[ci * d]);  // exact scores and bounds alike
      }
    }
    return picks;
  }

  /// Cholesky factor of the kernel matrix plus jitter on the diagonal (kNoise, more if needed; the one used goes
  /// to *used when given).
  bool factor(const Distances& dist, std::size_t n, double length, std::vector<double>& l,
              double* used = nullptr) const {
    std::vector<double> kv(dist.values.size());
    for (std::size_t u = 0; u < kv.size(); ++u) kv[u] = matern52(dist.values[u], length);
    for (double jitter = kNoise; jitter < 1.0; jitter *= 10) {
      l.assign(n * n, 0.0);
      for (std::size_t a = 0; a < n; ++a) {
        for (std::size_t b = 0; b < a; ++b) l[a * n + b] = kv[dist.code[a * n + b]];
        l[a * n + a] = 1.0 + jitter;
      }
      if (cholesky(l, n)) {
        if (used) *used = jitter;
        return true;
      }
    }
    return false;
  }

  void fit_length(const Distances& dist, const std::vector<double>& y, std::size_t n) {
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
  static constexpr std::size_t kChunk = 8;          // candidates solved side by side
  static constexpr std::size_t kMaxTable = 1 << 20;  // most cached kernel values (8 MiB)
  static constexpr std::uint32_t kNoSlot = 0xffffffffu;
  const std::size_t initial_, max_candidates_, max_points_;
  const double xi_;
  std::vector<double> span_;
  double length_ = 0;
  double jitter_ = kNoise;  // of the current factor
  std::vector<std::size_t> stride_;  // of each parameter's index difference in table_
  std::vector<double> table_;       // kernel value per index-difference vector (NaN: not yet), or empty
  double table_length_ = -1;        // length scale of the values in table_
  std::vector<std::uint32_t> slot_;  // scratch of choose(), kNoSlot between calls (same size as table_)
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
