#include "tuner/core/stats.hpp"

#include <algorithm>
#include <cmath>

namespace autotune::stats {

double median_sorted(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return median_sorted(values);
}

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, q);
}

double relative_spread_sorted(const std::vector<double>& sorted) {
  if (sorted.size() < 2) return 0;
  const double mid = quantile_sorted(sorted, 0.5);
  return mid > 0 ? (quantile_sorted(sorted, 0.9) - quantile_sorted(sorted, 0.1)) / mid : 0;
}

double relative_spread(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return relative_spread_sorted(values);
}

}  // namespace autotune::stats
