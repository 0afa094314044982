#include "tuner/core/counter_reading.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace autotune {

bool CounterReading::any() const {
  return std::isfinite(dram_bytes) || std::isfinite(occupancy_pct) || std::isfinite(l2_hit_pct);
}

double peak_dram_gbps(const DeviceInfo& d) {
  if (d.memory_clock_khz <= 0 || d.memory_bus_width <= 0) return CounterReading::kNaN;
  return 2.0 * d.memory_clock_khz * 1e3 * (d.memory_bus_width / 8.0) / 1e9;
}

CounterReading read_counters(const Measurement& m, double gbps, double elements, double copy_gbps,
                             const DeviceInfo& d) {
  CounterReading r;
  const std::vector<Metric>& ms = m.observed.metrics;
  const double read = metric_value(ms, "dram_bytes_read"), write = metric_value(ms, "dram_bytes_write");
  if (std::isfinite(read) || std::isfinite(write))
    r.dram_bytes = (std::isfinite(read) ? read : 0.0) + (std::isfinite(write) ? write : 0.0);
  if (gbps > 0 && m.median_ns > 0) r.ideal_bytes = gbps * m.median_ns;  // GB/s x ns = bytes
  if (elements > 0) r.bytes_per_element = r.dram_bytes / elements;
  if (r.ideal_bytes > 0) r.vs_ideal = r.dram_bytes / r.ideal_bytes;
  const double gpu_ns = metric_value(ms, "gpu_time");
  const double ns = gpu_ns > 0 ? gpu_ns : m.median_ns;
  if (ns > 0) r.dram_gbps = r.dram_bytes / ns;
  if (copy_gbps > 0) r.share_of_copy = r.dram_gbps / copy_gbps;
  r.share_of_peak = r.dram_gbps / peak_dram_gbps(d);
  r.occupancy_pct = metric_value(ms, "achieved_occupancy");
  r.l2_hit_pct = metric_value(ms, "l2_hit_rate");
  r.replay_ms = metric_value(ms, "counter_replay_ms");
  return r;
}

std::string other_metrics(const std::vector<Metric>& ms) {
  static const char* const kRead[] = {"dram_bytes_read", "dram_bytes_write", "achieved_occupancy",
                                      "l2_hit_rate",     "gpu_time",         "counter_replay_ms"};
  std::string out;
  for (const Metric& m : ms) {
    bool read = false;
    for (const char* k : kRead) read = read || m.name == k;
    if (read) continue;
    char value[32] = "-";
    if (std::isfinite(m.value)) std::snprintf(value, sizeof value, "%.4g", m.value);
    out += (out.empty() ? "" : ", ") + m.name + " " + value + (m.unit.empty() ? "" : " " + m.unit);
  }
  return out;
}

}  // namespace autotune
