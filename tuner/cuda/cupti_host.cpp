#if __has_include(<cupti_range_profiler.h>)
#include "tuner/cuda/cupti_host.hpp"

#include <chrono>

#include "tuner/cuda/counters.hpp"

namespace autotune::cuda::detail {

CounterHost::CounterHost(const Cupti& api, const std::string& chip, const std::vector<std::uint8_t>* availability,
                         const std::vector<std::string>& names)
    : api_(api) {
  const auto t0 = std::chrono::steady_clock::now();
  for (const std::string& n : names) cupti_names_.push_back(cupti_metric_name(n));
  auto init = sized<CUpti_Profiler_Host_Initialize_Params>();
  init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  init.pChipName = chip.c_str();
  init.pCounterAvailabilityImage = availability != nullptr ? availability->data() : nullptr;
  check_cupti(api_, api_.host_initialize(&init), "cuptiProfilerHostInitialize(" + chip + ")");
  host_ = init.pHostObject;
  for (const std::string& n : cupti_names_) {
    auto p = sized<CUpti_Profiler_Host_GetMetricProperties_Params>();
    p.pHostObject = host_;
    p.pMetricName = n.c_str();
    if (api_.host_get_metric_properties(&p) != CUPTI_SUCCESS)
      throw CuptiError("CUPTI does not know the metric " + n + " on " + chip, false);
    dims_.emplace_back(p.pDimUnit != nullptr ? p.pDimUnit : "");
  }
  for (const std::string& n : cupti_names_) pointers_.push_back(n.c_str());
  auto add = sized<CUpti_Profiler_Host_ConfigAddMetrics_Params>();
  add.pHostObject = host_;
  add.ppMetricNames = pointers_.data();
  add.numMetrics = pointers_.size();
  check_cupti(api_, api_.host_config_add_metrics(&add), "cuptiProfilerHostConfigAddMetrics");
  auto size = sized<CUpti_Profiler_Host_GetConfigImageSize_Params>();
  size.pHostObject = host_;
  check_cupti(api_, api_.host_get_config_image_size(&size), "cuptiProfilerHostGetConfigImageSize");
  config_.assign(size.configImageSize, 0);
  auto image = sized<CUpti_Profiler_Host_GetConfigImage_Params>();
  image.pHostObject = host_;
  image.configImageSize = config_.size();
  image.pConfigImage = config_.data();
  check_cupti(api_, api_.host_get_config_image(&image), "cuptiProfilerHostGetConfigImage");
  auto passes = sized<CUpti_Profiler_Host_GetNumOfPasses_Params>();
  passes.configImageSize = config_.size();
  passes.pConfigImage = config_.data();
  check_cupti(api_, api_.host_get_num_of_passes(&passes), "cuptiProfilerHostGetNumOfPasses");
  passes_ = passes.numOfPasses;
  build_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

CounterHost::~CounterHost() {
  if (host_ == nullptr) return;
  auto p = sized<CUpti_Profiler_Host_Deinitialize_Params>();
  p.pHostObject = host_;
  api_.host_deinitialize(&p);
}

std::vector<double> CounterHost::evaluate(std::vector<std::uint8_t>& image) const {
  std::lock_guard<std::mutex> lock(evaluate_mutex_);
  auto info = sized<CUpti_RangeProfiler_GetCounterDataInfo_Params>();
  info.pCounterDataImage = image.data();
  info.counterDataImageSize = image.size();
  check_cupti(api_, api_.range_get_counter_data_info(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (info.numTotalRanges < 1) throw CuptiError("the replay recorded no range", false);
  std::vector<double> values(pointers_.size(), 0.0);
  auto p = sized<CUpti_Profiler_Host_EvaluateToGpuValues_Params>();
  p.pHostObject = host_;
  p.pCounterDataImage = image.data();
  p.counterDataImageSize = image.size();
  p.rangeIndex = 0;
  p.ppMetricNames = const_cast<const char**>(pointers_.data());
  p.numMetrics = pointers_.size();
  p.pMetricValues = values.data();
  check_cupti(api_, api_.host_evaluate_to_gpu_values(&p), "cuptiProfilerHostEvaluateToGpuValues");
  return values;
}

std::shared_ptr<const CounterHost> CounterHostCache::get(const Cupti& api, const std::string& chip,
                                                         const std::vector<std::uint8_t>* availability,
                                                         const std::vector<std::string>& names, bool* built) {
  // The key: every input the host depends on. The library by its address (a test loads a fake beside the real
  // one); names are joined with a newline, which no metric name holds.
  std::string key = std::to_string(reinterpret_cast<std::uintptr_t>(&api)) + '\n' + chip + '\n';
  if (availability != nullptr) {
    key += std::to_string(availability->size()) + ':';
    key.append(availability->begin(), availability->end());
  } else {
    key += "all";
  }
  for (const std::string& n : names) key += '\n' + cupti_metric_name(n);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = hosts_.find(key); it != hosts_.end()) {
    if (built != nullptr) *built = false;
    return it->second;
  }
  auto host = std::make_shared<const CounterHost>(api, chip, availability, names);
  hosts_.emplace(key, host);
  if (built != nullptr) *built = true;
  return host;
}

std::size_t CounterHostCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hosts_.size();
}

void CounterHostCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  hosts_.clear();
}

CounterHostCache& counter_hosts() {
  // Never destroyed: CUPTI is not called from a static destructor at exit, after its own teardown may have run.
  static auto* cache = new CounterHostCache;
  return *cache;
}

}  // namespace autotune::cuda::detail
#endif
