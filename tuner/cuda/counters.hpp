// The hardware counters the tuner can take per configuration (`tune --metrics`, docs/observers.md): the short
// names users write, the CUPTI metric each stands for on Hopper-class GPUs, and its unit. Taken by the counter
// observer (counter_observer.hpp) in a replay of the configuration after its timing. No CUDA types here: the CLI
// checks a list with resolve_metrics before any GPU is touched.
#pragma once
#include <string>
#include <vector>

namespace autotune::cuda {

/// One counter metric the tuner knows by a short name.
struct CounterMetric {
  const char* name;   // short name, the Metric::name it is stored under, e.g. "dram_bytes_read"
  const char* cupti;  // the CUPTI/Nsight Compute metric, e.g. "dram__bytes_read.sum"
  const char* unit;   // of the stored value, e.g. "byte", "percent", "ns"
  const char* what;   // one line for help texts and docs
};

/// Every metric with a short name, in the order `--metrics counters` takes the default ones.
const std::vector<CounterMetric>& counter_metrics();

/// The short names of the default set (`--metrics counters`): DRAM bytes read and written, DRAM throughput,
/// achieved occupancy and the plan's GPU time as the counters saw it; one replay pass on GH100.
const std::vector<std::string>& default_counter_metrics();

/// The metric of a short name, nullptr for another name.
const CounterMetric* find_counter_metric(const std::string& name);

/// The metrics a `--metrics` list names, comma-separated: short names, "counters" (the default set), "dram_bytes"
/// (read and written), "shared_bank_conflicts" (loads and stores), or CUPTI metric names as Nsight Compute writes them
/// (anything with
/// "__", stored under that name). Duplicates are dropped, the order kept. Throws UsageError for an unknown name
/// (listing the known ones) or an empty list.
std::vector<std::string> resolve_metrics(const std::string& list);

/// The CUPTI metric of a name resolve_metrics returned (a short name's, or the name itself).
std::string cupti_metric_name(const std::string& name);
/// The unit stored with a name resolve_metrics returned ("" for a CUPTI name without a short one).
std::string counter_unit(const std::string& name);

}  // namespace autotune::cuda
