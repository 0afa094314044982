// Order statistics of samples: the one definition of the median and of quantiles used for timings, spreads
// and benchmark scores. Pure functions, thread-safe.
#pragma once
#include <vector>

namespace autotune::stats {

/// Quantile q in [0, 1] of sorted, non-empty values by linear interpolation between closest ranks
/// (q = 0.5 gives the median: the middle value, or the mean of the two middle values).
double quantile_sorted(const std::vector<double>& sorted, double q);

/// Median of values in any order (copied and sorted); 0 for an empty vector.
double median(std::vector<double> values);

/// Quantile q of values in any order (copied and sorted); 0 for an empty vector.
double quantile(std::vector<double> values, double q);

}  // namespace autotune::stats
