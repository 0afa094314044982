// Order statistics of samples: the one definition of the median, of quantiles and of the relative spread used
// for timings, spreads, imported results, reports and benchmark scores. Pure functions, thread-safe.
#pragma once
#include <vector>

namespace autotune::stats {

/// Median of sorted values: the middle value, or the mean of the two middle values; 0 for an empty vector.
double median_sorted(const std::vector<double>& sorted);

/// Median of values in any order (copied and sorted); 0 for an empty vector.
double median(std::vector<double> values);

/// Quantile q in [0, 1] of sorted values by linear interpolation between closest ranks; 0 for an empty vector.
/// (At q = 0.5 it may differ from median_sorted in the last bit: a + (b - a) / 2 against (a + b) / 2.)
double quantile_sorted(const std::vector<double>& sorted, double q);

/// Quantile q of values in any order (copied and sorted); 0 for an empty vector.
double quantile(std::vector<double> values, double q);

/// (p90 - p10) / p50 of sorted values, all three by quantile_sorted: the spread recorded with a measurement. 0 for
/// fewer than 2 values or a p50 that is not positive.
double relative_spread_sorted(const std::vector<double>& sorted);

/// relative_spread_sorted of values in any order (copied and sorted).
double relative_spread(std::vector<double> values);

}  // namespace autotune::stats
