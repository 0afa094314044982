#include "search/marginal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace autotune::search::detail {

namespace {
constexpr std::size_t kNoTrend = static_cast<std::size_t>(-1);
}

MarginalModel::MarginalModel(const ParameterSpace& space, double ridge) : space_(space), ridge_(ridge) {
  offset_.push_back(0);
  for (const Param& p : space.params()) offset_.push_back(offset_.back() + p.values.size());
  dims_ = offset_.back();
  for (const Param& p : space.params()) {
    const bool numeric = p.labels.empty() && p.values.size() >= 3;
    trend_.push_back(numeric ? dims_ : kNoTrend);
    if (numeric) dims_ += 2;
  }
  for (std::size_t p = 0; p < trend_.size(); ++p)
    for (std::size_t q = p + 1; q < trend_.size(); ++q)
      if (trend_[p] != kNoTrend && trend_[q] != kNoTrend) pairs_.push_back({p, q, dims_++});
  effect_.assign(dims_, 0.0);
  cols_.resize(3 * trend_.size() + pairs_.size());
  x_.resize(3 * trend_.size() + pairs_.size());
  gram_.assign(dims_ * dims_, 0.0);
  xy_.assign(dims_, 0.0);
  x_sum_.assign(dims_, 0.0);
  x_failed_.assign(dims_, 0.0);
}

double MarginalModel::position(std::size_t i, std::size_t p) const {
  return static_cast<double>(space_.value_at(i, p)) / static_cast<double>(offset_[p + 1] - offset_[p] - 1) - 0.5;
}

std::size_t MarginalModel::features(std::size_t i, std::size_t* cols, double* x) const {
  std::size_t n = 0;
  for (std::size_t p = 0; p < trend_.size(); ++p) {
    const std::uint16_t v = space_.value_at(i, p);
    cols[n] = offset_[p] + v;
    x[n++] = 1.0;
    if (trend_[p] == kNoTrend) continue;
    const double t = position(i, p);
    cols[n] = trend_[p];
    x[n++] = t;
    cols[n] = trend_[p] + 1;
    x[n++] = t * t - 1.0 / 12;
  }
  for (const Pair& pr : pairs_) {
    cols[n] = pr.col;
    x[n++] = position(i, pr.p) * position(i, pr.q);
  }
  return n;
}

void MarginalModel::add(std::size_t index, double value) {
  const bool ok = std::isfinite(value) && value > 0;
  index_.push_back(index);
  log_.push_back(ok ? std::log(value) : std::numeric_limits<double>::quiet_NaN());
  // Running sums of the normal equations, so that a refit costs O(d^3) rather than O(n f^2).
  const std::size_t n = features(index, cols_.data(), x_.data());
  for (std::size_t p = 0; p < n; ++p) {
    x_sum_[cols_[p]] += x_[p];
    if (ok) xy_[cols_[p]] += x_[p] * log_.back();
    else x_failed_[cols_[p]] += x_[p];
    for (std::size_t q = 0; q < n; ++q) gram_[cols_[p] * dims_ + cols_[q]] += x_[p] * x_[q];
  }
}

void MarginalModel::fit() {
  const std::size_t d = dims_;
  std::fill(effect_.begin(), effect_.end(), 0.0);
  intercept_ = 0;
  residual_ = 0;
  chol_.clear();
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double y : log_)
    if (!std::isnan(y)) {
      lo = std::min(lo, y);
      hi = std::max(hi, y);
    }
  if (!(lo <= hi)) return;  // no success yet
  const double failure = hi + std::max(0.5, 0.5 * (hi - lo));
  std::vector<double> y(log_.size());
  double mean = 0;
  for (std::size_t k = 0; k < log_.size(); ++k) {
    y[k] = std::isnan(log_[k]) ? failure : log_[k];
    mean += y[k];
  }
  mean /= static_cast<double>(y.size());
  intercept_ = mean;

  // Normal equations of the centred targets: (X^T X + ridge I) w = X^T (y - mean), from the running sums.
  std::vector<double>& a = chol_;
  a = gram_;
  std::vector<double> b(d);
  for (std::size_t j = 0; j < d; ++j) b[j] = xy_[j] + failure * x_failed_[j] - mean * x_sum_[j];
  for (std::size_t j = 0; j < d; ++j) a[j * d + j] += ridge_;
  for (std::size_t j = 0; j < d; ++j) {  // Cholesky, lower triangle (positive definite thanks to the ridge)
    double diag = a[j * d + j];
    for (std::size_t k = 0; k < j; ++k) diag -= a[j * d + k] * a[j * d + k];
    diag = std::sqrt(std::max(diag, 1e-12));
    a[j * d + j] = diag;
    for (std::size_t i = j + 1; i < d; ++i) {
      double v = a[i * d + j];
      for (std::size_t k = 0; k < j; ++k) v -= a[i * d + k] * a[j * d + k];
      a[i * d + j] = v / diag;
    }
  }
  for (std::size_t i = 0; i < d; ++i) {  // L z = b
    double v = b[i];
    for (std::size_t k = 0; k < i; ++k) v -= a[i * d + k] * b[k];
    b[i] = v / a[i * d + i];
  }
  for (std::size_t i = d; i-- > 0;) {  // L^T w = z
    double v = b[i];
    for (std::size_t k = i + 1; k < d; ++k) v -= a[k * d + i] * effect_[k];
    effect_[i] = v / a[i * d + i];
  }
  for (std::size_t k = 0; k < index_.size(); ++k) {
    const double r = y[k] - predict(index_[k]);
    residual_ += r * r;
  }
  residual_ /= static_cast<double>(index_.size());
}

double MarginalModel::predict(std::size_t i) const {
  const std::size_t n = features(i, cols_.data(), x_.data());
  double v = intercept_;
  for (std::size_t k = 0; k < n; ++k) v += effect_[cols_[k]] * x_[k];
  return v;
}

double MarginalModel::spread(std::size_t i) const {
  if (chol_.empty()) return 0;
  const std::size_t d = dims_;
  z_.assign(d, 0.0);
  const std::size_t n = features(i, cols_.data(), x_.data());
  for (std::size_t k = 0; k < n; ++k) z_[cols_[k]] += x_[k];
  double q = 0;
  for (std::size_t r = 0; r < d; ++r) {  // ||L^-1 x||^2
    double v = z_[r];
    for (std::size_t k = 0; k < r; ++k) v -= chol_[r * d + k] * z_[k];
    z_[r] = v / chol_[r * d + r];
    q += z_[r] * z_[r];
  }
  return std::sqrt(residual_ * q);
}

}  // namespace autotune::search::detail
