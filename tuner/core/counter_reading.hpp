// What a trial's hardware counters (Observation::metrics, docs/observers.md) say against the kernel's ideal and
// the device: DRAM bytes per element against the bytes the spec says the kernel must move, the DRAM bandwidth the
// counters saw as a share of the measured copy and of the device's peak, the achieved occupancy. Shared by
// `summary` and `report --html`.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "tuner/core/keys.hpp"
#include "tuner/core/trial.hpp"

namespace autotune {

/// A trial's counters read against its ideal and its device; NaN where a metric was not taken.
struct CounterReading {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double dram_bytes = kNaN;         // dram_bytes_read + dram_bytes_write (either alone where only one was taken)
  double ideal_bytes = kNaN;        // the spec's bytes_moved: gbps x median
  double bytes_per_element = kNaN;  // dram_bytes / problem elements
  double vs_ideal = kNaN;           // dram_bytes / ideal_bytes (1 = exactly what the kernel must move)
  double dram_gbps = kNaN;          // dram_bytes over the counters' gpu_time (else over the median time), GB/s
  double share_of_copy = kNaN;      // dram_gbps / the measured device-to-device copy
  double share_of_peak = kNaN;      // dram_gbps / peak_dram_gbps
  double occupancy_pct = kNaN;      // achieved_occupancy, % of the SM's warps
  double l2_hit_pct = kNaN;         // l2_hit_rate
  double replay_ms = kNaN;          // counter_replay_ms: the replay's wall time
  /// Whether any of the DRAM bytes, occupancy or L2 hit rate was taken.
  bool any() const;
};

/// The device's theoretical DRAM bandwidth in GB/s: 2 transfers per memory clock over the bus (HBM and GDDR as
/// cudaDeviceProp reports them; H100 SXM: 2 x 2619 MHz x 5120 bit = 3352 GB/s); NaN where they are unknown.
double peak_dram_gbps(const DeviceInfo& d);

/// m's counters read against its ideal bytes (gbps x median; none for gbps 0), `elements` of the problem, the copy
/// bandwidth (0 = not measured) and the device.
CounterReading read_counters(const Measurement& m, double gbps, double elements, double copy_gbps, const DeviceInfo& d);

/// The metrics a CounterReading does not read, as "name value unit" joined by ", " (values to 4 digits, "-" for
/// NaN): the rest of what the counters took.
std::string other_metrics(const std::vector<Metric>& ms);

}  // namespace autotune
