#include "tuner/core/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "tuner/core/stats.hpp"

namespace autotune {

double median_ci_width(std::vector<double> v) {
  const std::size_t n = v.size();
  if (n < 2) return std::numeric_limits<double>::infinity();
  std::sort(v.begin(), v.end());
  const double median = stats::median_sorted(v);
  if (!(median > 0)) return std::numeric_limits<double>::infinity();
  // 1-based ranks j = floor(n/2 - 1.96 sqrt(n)/2), k = ceil(1 + n/2 + 1.96 sqrt(n)/2), clamped to [1, n].
  const double half = 0.98 * std::sqrt(static_cast<double>(n));
  const double nd = static_cast<double>(n);
  const auto j = static_cast<std::size_t>(std::max(1.0, std::floor(nd / 2 - half)));
  const auto k = static_cast<std::size_t>(std::min(nd, std::ceil(1 + nd / 2 + half)));
  return (v[k - 1] - v[j - 1]) / median;
}

bool SamplingRule::lost_race(const std::vector<double>& samples_ms) const {
  if (!(race_above_ms > 0) || static_cast<int>(samples_ms.size()) < std::max(race_after, 1)) return false;
  return *std::min_element(samples_ms.begin(), samples_ms.end()) > race_above_ms;
}

bool SamplingRule::done(const std::vector<double>& samples_ms) const {
  const int n = static_cast<int>(samples_ms.size());
  if (n >= std::max(max_samples, 1) || lost_race(samples_ms)) return true;
  if (n < std::min(min_samples, max_samples)) return false;
  const double total_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0);
  if (total_ms > max_seconds * 1e3) return true;
  return stable_ci > 0 && median_ci_width(samples_ms) <= stable_ci;
}

std::string SamplingRule::describe() const {
  const int lo = std::min(min_samples, max_samples);
  std::string s = "samples=" + (lo == max_samples ? std::to_string(max_samples)
                                                  : std::to_string(lo) + ".." + std::to_string(max_samples));
  if (lo == max_samples) return s;
  char buf[64];
  std::string stop;
  if (stable_ci > 0) {
    std::snprintf(buf, sizeof buf, "ci95<=%g%%", stable_ci * 100);
    stop = buf;
  }
  std::snprintf(buf, sizeof buf, "%gs", max_seconds);
  stop += (stop.empty() ? "" : "|") + std::string(buf);
  return s + ";stop=" + stop;
}

}  // namespace autotune
