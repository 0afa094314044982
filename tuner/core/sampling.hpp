// When the timing of one configuration may stop: enough samples for a stable median, without spending
// seconds on a kernel of microseconds. Used by the CUDA executor after every sample; no clocks here.
#pragma once
#include <string>
#include <vector>

namespace autotune {

struct SamplingRule {
  int min_samples = 7;       // never fewer (capped at max_samples)
  int max_samples = 15;      // never more
  /// Stop once the 95% confidence interval of the median (median_ci_width) is at most this fraction of the
  /// median; 0 = no such stop (max_samples are taken unless the budget ends first).
  double stable_ci = 0.02;
  double max_seconds = 2.0;  // stop once the samples add up to this much GPU time (after min_samples)
  /// Early rejection (racing): after race_after samples, stop when the fastest of them is above this many
  /// milliseconds (a configuration clearly slower than the best so far); 0 = no racing.
  double race_above_ms = 0;
  int race_after = 3;
  /// The warm-up probe of racing: the first warm-up run is timed too (no L2 flush, the module already run once by
  /// the verification), and a configuration whose probe is above race_probe_factor x race_above_ms has lost
  /// before any sample (a single unflushed run, hence the wider margin); 0 = no probe.
  double race_probe_factor = 0;

  /// True when racing is on and the samples taken lose the race (race_after of them, all above race_above_ms).
  bool lost_race(const std::vector<double>& samples_ms) const;
  /// True when racing is on with a probe and the probe's time (ms) loses (see race_probe_factor).
  bool lost_probe(double probe_ms) const {
    return race_above_ms > 0 && race_probe_factor > 0 && probe_ms > race_probe_factor * race_above_ms;
  }

  /// samples in milliseconds, in the order taken. A lost race is done, whatever min_samples says.
  bool done(const std::vector<double>& samples_ms) const;
  /// The rule as it goes into a measurement's protocol, e.g. "samples=7..15;stop=ci95<=2%|2s";
  /// "samples=15" when every sample is always taken.
  std::string describe() const;
};

/// Width of the distribution-free 95% confidence interval of the median (order statistics: ranks
/// n/2 -+ 0.98 sqrt(n)) relative to the median; for n <= 9 this is the whole range. +infinity for fewer
/// than 2 samples or a median <= 0.
double median_ci_width(std::vector<double> v);

}  // namespace autotune
