#include "tuner/core/stats.hpp"

#include <algorithm>
#include <cmath>

namespace autotune::stats {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, q);
}

}  // namespace autotune::stats
