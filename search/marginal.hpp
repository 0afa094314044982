// A per-parameter marginal model of a tuning landscape: log(time) as a sum of one effect per (parameter,
// value), plus, for a numeric parameter of at least three values, a linear and a quadratic trend over its value
// positions scaled to [0, 1] (value lists are ascending and mostly powers of two, so positions are a log scale;
// the trend carries what was learned to values not yet seen), and for every two such parameters the product of
// their centred positions (one feature per pair: "a larger tile wants a smaller block"). Parameters with named
// values (VARIANT, FINAL) are categorical: effects only. Learned from the observations by ridge regression (a
// Bayesian linear model with a Gaussian prior on the effects), so it also says how uncertain a prediction is. It
// captures "VARIANT=2 tends to be fast, larger ITEMS_PER_THREAD tends to be faster" and a linear-by-linear
// interaction of two numeric parameters, which is what a few dozen observations of a GPU space can support, and
// it predicts a config in O(parameters^2).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tuner/core/space.hpp"

namespace autotune::search::detail {

class MarginalModel {
 public:
  /// `ridge`: penalty on each effect (log-time units squared); larger values pull rarely seen values towards the
  /// mean. Must be > 0.
  explicit MarginalModel(const ParameterSpace& space, double ridge = 1.0);

  /// Adds an observation: a time (> 0) or a failure (+infinity, NaN or <= 0). Failures are modelled as slower
  /// than the slowest success by half the observed range of log times (at least 0.5), so the model steers away.
  void add(std::size_t index, double value);
  std::size_t observations() const { return index_.size(); }

  /// Refits the effects to every observation so far: O(d^3 + n f) for n observations, f features per config
  /// (at most 3 per parameter and one per pair of numeric parameters) and d features in all (value counts, two per
  /// numeric parameter, one per pair of them); add() keeps
  /// the sums of the normal equations (O(f^2) each). Without successful observations every prediction is 0.
  void fit();
  /// Predicted log time of config i (after fit()); lower is better. O(features of a config).
  double predict(std::size_t i) const;
  /// Standard deviation of that prediction under the model (residual variance times x^T A^-1 x): large for
  /// values seen rarely. O(d^2).
  double spread(std::size_t i) const;

 private:
  /// The non-zero features of config i: their positions and values; returns how many (<= 3 x parameters + pairs).
  std::size_t features(std::size_t i, std::size_t* cols, double* x) const;

  /// Value position of parameter p in config i, scaled to [-0.5, 0.5].
  double position(std::size_t i, std::size_t p) const;

  struct Pair {
    std::size_t p, q, col;  // two numeric parameters and the feature of their product
  };
  const ParameterSpace& space_;
  double ridge_;
  std::vector<std::size_t> offset_;  // first effect of each parameter
  std::vector<std::size_t> trend_;   // per parameter: first of its two trend features, or kNoTrend
  std::vector<Pair> pairs_;          // every two parameters with trends
  std::size_t dims_ = 0;
  std::vector<std::size_t> index_;   // observed configs
  std::vector<double> log_;          // log time, NaN for failures
  double intercept_ = 0;
  double residual_ = 0;              // mean squared residual of the fit
  std::vector<double> effect_;
  std::vector<double> chol_;         // lower Cholesky factor of X^T X + ridge I (dims_ x dims_)
  std::vector<double> gram_;         // X^T X
  std::vector<double> xy_;           // X^T y over the successes
  std::vector<double> x_sum_;        // X^T 1
  std::vector<double> x_failed_;     // X^T 1 over the failures
  mutable std::vector<std::size_t> cols_;  // scratch (not thread-safe, like the strategies)
  mutable std::vector<double> x_, z_;
};

}  // namespace autotune::search::detail
