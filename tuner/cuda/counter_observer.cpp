#include "tuner/cuda/counter_observer.hpp"

#include "tuner/core/error.hpp"

#if __has_include(<cupti_range_profiler.h>)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "tuner/cuda/counters.hpp"
#include "tuner/cuda/cupti.hpp"

namespace autotune::cuda::detail {
namespace {

/// Most replay passes of one configuration (CUPTI says how many it needs; GH100 needs 1 to 9 for our metrics).
constexpr std::size_t kMaxPasses = 64;
constexpr const char* kRangeName = "autotune";

/// A failed CUPTI call; refused: the machine refuses profiling to this user.
struct CuptiError : std::runtime_error {
  CuptiError(const std::string& what, bool refused_) : std::runtime_error(what), refused(refused_) {}
  bool refused;
};

void call(const Cupti& api, CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  if (refuses_profiling(r)) throw CuptiError(profiling_refused_message(what), true);
  throw CuptiError(std::string(what) + " failed: " + api.error_text(r), false);
}

/// The profiler host API's object for one chip with the metrics added: their config image and passes.
class CounterHost {
 public:
  CounterHost(const Cupti& api, const std::string& chip, const std::vector<std::uint8_t>* availability,
              const std::vector<std::string>& names)
      : api_(api) {
    for (const std::string& n : names) cupti_names_.push_back(cupti_metric_name(n));
    auto init = sized<CUpti_Profiler_Host_Initialize_Params>();
    init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    init.pChipName = chip.c_str();
    init.pCounterAvailabilityImage = availability != nullptr ? availability->data() : nullptr;
    call(api_, api_.host_initialize(&init), ("cuptiProfilerHostInitialize(" + chip + ")").c_str());
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
    call(api_, api_.host_config_add_metrics(&add), "cuptiProfilerHostConfigAddMetrics");
    auto size = sized<CUpti_Profiler_Host_GetConfigImageSize_Params>();
    size.pHostObject = host_;
    call(api_, api_.host_get_config_image_size(&size), "cuptiProfilerHostGetConfigImageSize");
    config_.assign(size.configImageSize, 0);
    auto image = sized<CUpti_Profiler_Host_GetConfigImage_Params>();
    image.pHostObject = host_;
    image.configImageSize = config_.size();
    image.pConfigImage = config_.data();
    call(api_, api_.host_get_config_image(&image), "cuptiProfilerHostGetConfigImage");
    auto passes = sized<CUpti_Profiler_Host_GetNumOfPasses_Params>();
    passes.configImageSize = config_.size();
    passes.pConfigImage = config_.data();
    call(api_, api_.host_get_num_of_passes(&passes), "cuptiProfilerHostGetNumOfPasses");
    passes_ = passes.numOfPasses;
  }
  ~CounterHost() {
    if (host_ == nullptr) return;
    auto p = sized<CUpti_Profiler_Host_Deinitialize_Params>();
    p.pHostObject = host_;
    api_.host_deinitialize(&p);
  }
  CounterHost(const CounterHost&) = delete;
  CounterHost& operator=(const CounterHost&) = delete;

  /// The metrics' values in range 0 of a decoded counter data image.
  std::vector<double> evaluate(std::vector<std::uint8_t>& image) const {
    auto info = sized<CUpti_RangeProfiler_GetCounterDataInfo_Params>();
    info.pCounterDataImage = image.data();
    info.counterDataImageSize = image.size();
    call(api_, api_.range_get_counter_data_info(&info), "cuptiRangeProfilerGetCounterDataInfo");
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
    call(api_, api_.host_evaluate_to_gpu_values(&p), "cuptiProfilerHostEvaluateToGpuValues");
    return values;
  }

  std::vector<const char*>& names() { return pointers_; }
  std::vector<std::uint8_t>& config() { return config_; }
  std::size_t passes() const { return passes_; }
  const std::vector<std::string>& dims() const { return dims_; }

 private:
  const Cupti& api_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  std::vector<std::string> cupti_names_;
  std::vector<const char*> pointers_;  // into cupti_names_
  std::vector<std::string> dims_;
  std::vector<std::uint8_t> config_;
  std::size_t passes_ = 0;
};

/// The range profiler enabled on a context for one replay; disabled on destruction.
class RangeProfiler {
 public:
  RangeProfiler(const Cupti& api, CUcontext ctx) : api_(api) {
    auto p = sized<CUpti_RangeProfiler_Enable_Params>();
    p.ctx = ctx;
    call(api_, api_.range_enable(&p), "cuptiRangeProfilerEnable");
    object_ = p.pRangeProfilerObject;
  }
  ~RangeProfiler() {
    auto p = sized<CUpti_RangeProfiler_Disable_Params>();
    p.pRangeProfilerObject = object_;
    api_.range_disable(&p);
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  /// A counter data image for one range of host's metrics, set as the configuration of user ranges and replay.
  std::vector<std::uint8_t> configure(CounterHost& host) {
    auto size = sized<CUpti_RangeProfiler_GetCounterDataSize_Params>();
    size.pRangeProfilerObject = object_;
    size.pMetricNames = host.names().data();
    size.numMetrics = host.names().size();
    size.maxNumOfRanges = 1;
    size.maxNumRangeTreeNodes = 1;
    call(api_, api_.range_get_counter_data_size(&size), "cuptiRangeProfilerGetCounterDataSize");
    std::vector<std::uint8_t> image(size.counterDataSize, 0);
    auto init = sized<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>();
    init.pRangeProfilerObject = object_;
    init.counterDataSize = image.size();
    init.pCounterData = image.data();
    call(api_, api_.range_counter_data_image_initialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");
    auto set = sized<CUpti_RangeProfiler_SetConfig_Params>();
    set.pRangeProfilerObject = object_;
    set.configSize = host.config().size();
    set.pConfig = host.config().data();
    set.counterDataImageSize = image.size();
    set.pCounterDataImage = image.data();
    set.range = CUPTI_UserRange;
    set.replayMode = CUPTI_UserReplay;
    set.maxRangesPerPass = 1;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    call(api_, api_.range_set_config(&set), "cuptiRangeProfilerSetConfig");
    return image;
  }

  /// One pass: the plan's run between Start/PushRange and PopRange/Stop. True when every pass is submitted.
  bool pass(const TimedRuns& r) {
    auto start = sized<CUpti_RangeProfiler_Start_Params>();
    start.pRangeProfilerObject = object_;
    call(api_, api_.range_start(&start), "cuptiRangeProfilerStart");
    auto push = sized<CUpti_RangeProfiler_PushRange_Params>();
    push.pRangeProfilerObject = object_;
    push.pRangeName = kRangeName;
    call(api_, api_.range_push(&push), "cuptiRangeProfilerPushRange");
    r.run();
    auto pop = sized<CUpti_RangeProfiler_PopRange_Params>();
    pop.pRangeProfilerObject = object_;
    call(api_, api_.range_pop(&pop), "cuptiRangeProfilerPopRange");
    auto stop = sized<CUpti_RangeProfiler_Stop_Params>();
    stop.pRangeProfilerObject = object_;
    call(api_, api_.range_stop(&stop), "cuptiRangeProfilerStop");
    r.sync();
    return stop.isAllPassSubmitted != 0;
  }

  void decode() {
    auto p = sized<CUpti_RangeProfiler_DecodeData_Params>();
    p.pRangeProfilerObject = object_;
    call(api_, api_.range_decode(&p), "cuptiRangeProfilerDecodeData");
    if (p.numOfRangeDropped != 0) throw CuptiError("CUPTI dropped the replay's range", false);
  }

 private:
  const Cupti& api_;
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

class CounterObserver final : public TrialObserver {
 public:
  CounterObserver(const Cupti& api, ObserverSite site, std::vector<std::string> names,
                  std::unique_ptr<CounterHost> host)
      : api_(api), site_(std::move(site)), names_(std::move(names)), host_(std::move(host)) {}

  bool serves(const TimeRequest& q) const override { return q.metrics == names_; }

  void after_timing(const TimeRequest&, const TimedRuns& r, Observation& o) override {
    if (refused_) return;  // note_ says why, once per request
    note_.clear();
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<double> values;
    std::size_t passes = 0;
    try {
      RangeProfiler profiler(api_, site_.ctx);
      std::vector<std::uint8_t> image = profiler.configure(*host_);
      for (bool done = false; !done;) {
        if (++passes > kMaxPasses)
          throw CuptiError("the replay did not end after " + std::to_string(kMaxPasses) + " passes", false);
        r.flush_l2();
        r.sync();
        done = profiler.pass(r);
      }
      profiler.decode();
      values = host_->evaluate(image);
    } catch (const CuptiError& e) {
      note_ = e.what();
      refused_ = e.refused;
      return;
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    for (std::size_t i = 0; i < names_.size(); ++i) {
      const std::string unit = counter_unit(names_[i]);
      o.metrics.push_back(Metric{names_[i], values[i], unit.empty() ? host_->dims()[i] : unit});
    }
    o.metrics.push_back(Metric{"counter_replay_ms", ms, "ms"});
    char method[96];
    std::snprintf(method, sizeof method, "cupti;passes=%zu;replay=%.1fms", passes, ms);
    add_method(o, method);
  }

  std::string note() const override { return note_; }

 private:
  const Cupti& api_;
  ObserverSite site_;
  std::vector<std::string> names_;
  std::unique_ptr<CounterHost> host_;
  std::string note_;
  bool refused_ = false;
};

/// cuptiProfilerInitialize, once per process and library (tests load a fake one beside the real one).
void initialize_profiler(const Cupti& api) {
  static std::mutex mutex;
  static std::vector<std::pair<const Cupti*, CUptiResult>> done;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [which, result] : done)
    if (which == &api) return call(api, result, "cuptiProfilerInitialize");
  auto p = sized<CUpti_Profiler_Initialize_Params>();
  const CUptiResult result = api.profiler_initialize(&p);
  done.emplace_back(&api, result);
  call(api, result, "cuptiProfilerInitialize");
}

}  // namespace

std::unique_ptr<TrialObserver> open_counter_observer(const ObserverSite& site, const TimeRequest& q, std::string* why) {
  const Cupti* api = cupti(why);
  if (api == nullptr) return nullptr;
  return open_counter_observer(*api, site, q.metrics, why);
}

std::unique_ptr<TrialObserver> open_counter_observer(const Cupti& api, const ObserverSite& site,
                                                     const std::vector<std::string>& metrics, std::string* why) {
  try {
    initialize_profiler(api);
    auto chip = sized<CUpti_Device_GetChipName_Params>();
    chip.deviceIndex = static_cast<std::size_t>(site.ordinal);
    call(api, api.device_get_chip_name(&chip), "cuptiDeviceGetChipName");
    auto avail = sized<CUpti_Profiler_GetCounterAvailability_Params>();
    avail.ctx = site.ctx;
    call(api, api.get_counter_availability(&avail), "cuptiProfilerGetCounterAvailability");
    std::vector<std::uint8_t> availability(avail.counterAvailabilityImageSize, 0);
    avail.pCounterAvailabilityImage = availability.data();
    call(api, api.get_counter_availability(&avail), "cuptiProfilerGetCounterAvailability");
    auto host =
        std::make_unique<CounterHost>(api, chip.pChipName != nullptr ? chip.pChipName : "", &availability, metrics);
    return std::make_unique<CounterObserver>(api, site, metrics, std::move(host));
  } catch (const CuptiError& e) {
    *why = e.what();
    return nullptr;
  }
}

CounterPlan plan_counters(const std::string& chip, const std::vector<std::string>& metrics) {
  std::string why;
  const Cupti* api = cupti(&why);
  if (api == nullptr) throw EnvironmentError("no CUPTI: " + why);
  try {
    CounterHost host(*api, chip, nullptr, metrics);
    return CounterPlan{host.passes(), host.dims()};
  } catch (const CuptiError& e) {
    throw EnvironmentError(e.what());
  }
}

}  // namespace autotune::cuda::detail

#else  // built without CUPTI's headers: the counter observer never opens

namespace autotune::cuda::detail {

std::unique_ptr<TrialObserver> open_counter_observer(const ObserverSite&, const TimeRequest&, std::string* why) {
  *why = "the tuner was built without CUPTI's headers (cupti_range_profiler.h)";
  return nullptr;
}

std::unique_ptr<TrialObserver> open_counter_observer(const Cupti&, const ObserverSite&, const std::vector<std::string>&,
                                                     std::string* why) {
  *why = "the tuner was built without CUPTI's headers (cupti_range_profiler.h)";
  return nullptr;
}

CounterPlan plan_counters(const std::string&, const std::vector<std::string>&) {
  throw EnvironmentError("the tuner was built without CUPTI's headers (cupti_range_profiler.h)");
}

}  // namespace autotune::cuda::detail
#endif
