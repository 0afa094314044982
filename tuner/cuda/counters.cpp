#include "tuner/cuda/counters.hpp"

#include <algorithm>

#include "tuner/core/error.hpp"

namespace autotune::cuda {

const std::vector<CounterMetric>& counter_metrics() {
  // Names checked against CUPTI's host API for GH100 (tests/nvrtc/test_counters.cpp); units are CUPTI's dimension
  // of each metric. Passes on GH100 (CUDA 13.0's host API): one for each alone, but l2_hit_rate 2 and
  // sm_throughput 8 (a maximum over many units).
  static const std::vector<CounterMetric> kMetrics = {
      {"dram_bytes_read", "dram__bytes_read.sum", "byte", "bytes read from DRAM"},
      {"dram_bytes_write", "dram__bytes_write.sum", "byte", "bytes written to DRAM"},
      {"l2_hit_rate", "lts__t_sector_hit_rate.pct", "percent", "share of L2 sector lookups that hit"},
      {"achieved_occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active", "percent",
       "warps in flight per active cycle, as a share of the SM's maximum"},
      {"sm_throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "percent",
       "SM throughput as a share of its peak"},
      {"gpu_time", "gpu__time_duration.sum", "ns", "GPU time of the replayed plan as the counters saw it"},
      {"dram_throughput", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "percent",
       "DRAM throughput as a share of its peak"},
      {"shared_bank_conflicts_ld", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "conflict",
       "shared-memory bank conflicts of loads"},
      {"shared_bank_conflicts_st", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "conflict",
       "shared-memory bank conflicts of stores"},
      {"shared_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "wavefront",
       "shared-memory wavefronts (one per conflict-free access; more with conflicts)"},
      {"barrier_stall", "smsp__average_warp_latency_issue_stalled_barrier.ratio", "cycle",
       "average cycles a warp waits at a block barrier per issued instruction"},
  };
  return kMetrics;
}

const std::vector<std::string>& default_counter_metrics() {
  static const std::vector<std::string> kDefault = {"dram_bytes_read", "dram_bytes_write", "dram_throughput",
                                                    "achieved_occupancy", "gpu_time"};
  return kDefault;
}

const CounterMetric* find_counter_metric(const std::string& name) {
  for (const CounterMetric& m : counter_metrics())
    if (name == m.name) return &m;
  return nullptr;
}

std::vector<std::string> resolve_metrics(const std::string& list) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  std::size_t at = 0;
  while (at <= list.size()) {
    std::size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(at, comma - at);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    at = comma + 1;
    if (name.empty()) continue;
    if (name == "counters") {
      for (const std::string& d : default_counter_metrics()) add(d);
    } else if (name == "dram_bytes") {
      add("dram_bytes_read");
      add("dram_bytes_write");
    } else if (name == "shared_bank_conflicts") {
      add("shared_bank_conflicts_ld");
      add("shared_bank_conflicts_st");
    } else if (find_counter_metric(name) != nullptr || name.find("__") != std::string::npos) {
      add(name);
    } else {
      std::string known = "counters, dram_bytes, shared_bank_conflicts";
      for (const CounterMetric& m : counter_metrics()) known += std::string(", ") + m.name;
      throw UsageError("unknown metric '" + name + "' (known: " + known +
                       "; or a CUPTI metric name such as dram__bytes_read.sum)");
    }
  }
  if (out.empty()) throw UsageError("--metrics names no metric");
  return out;
}

std::string cupti_metric_name(const std::string& name) {
  const CounterMetric* m = find_counter_metric(name);
  return m != nullptr ? m->cupti : name;
}

std::string counter_unit(const std::string& name) {
  const CounterMetric* m = find_counter_metric(name);
  return m != nullptr ? m->unit : "";
}

}  // namespace autotune::cuda
