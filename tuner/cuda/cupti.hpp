// Internal to tuner/cuda: CUPTI's profiling API (CUDA 13's range profiler and profiler host) loaded at run time
// with dlopen("libcupti.so.13"), like NVML: nothing links it, and where it is missing (or profiling is refused)
// the tuner measures without hardware counters. Only the counter observer (counter_observer.hpp) uses it. The
// entry points are typed from CUPTI's own headers (cupti_range_profiler.h, cupti_profiler_host.h); include this
// header only where __has_include(<cupti_range_profiler.h>) holds.
#pragma once
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <memory>
#include <string>

namespace autotune::cuda::detail {

/// CUPTI entry points. Immutable once loaded.
struct Cupti {
  std::string library;  // what was loaded, e.g. "/usr/local/cuda/lib64/libcupti.so.13"

  decltype(&cuptiGetResultString) get_result_string = nullptr;
  decltype(&cuptiProfilerInitialize) profiler_initialize = nullptr;
  decltype(&cuptiDeviceGetChipName) device_get_chip_name = nullptr;
  decltype(&cuptiProfilerGetCounterAvailability) get_counter_availability = nullptr;
  decltype(&cuptiProfilerHostInitialize) host_initialize = nullptr;
  decltype(&cuptiProfilerHostDeinitialize) host_deinitialize = nullptr;
  decltype(&cuptiProfilerHostGetMetricProperties) host_get_metric_properties = nullptr;
  decltype(&cuptiProfilerHostConfigAddMetrics) host_config_add_metrics = nullptr;
  decltype(&cuptiProfilerHostGetConfigImageSize) host_get_config_image_size = nullptr;
  decltype(&cuptiProfilerHostGetConfigImage) host_get_config_image = nullptr;
  decltype(&cuptiProfilerHostGetNumOfPasses) host_get_num_of_passes = nullptr;
  decltype(&cuptiProfilerHostEvaluateToGpuValues) host_evaluate_to_gpu_values = nullptr;
  decltype(&cuptiRangeProfilerEnable) range_enable = nullptr;
  decltype(&cuptiRangeProfilerDisable) range_disable = nullptr;
  decltype(&cuptiRangeProfilerGetCounterDataSize) range_get_counter_data_size = nullptr;
  decltype(&cuptiRangeProfilerCounterDataImageInitialize) range_counter_data_image_initialize = nullptr;
  decltype(&cuptiRangeProfilerSetConfig) range_set_config = nullptr;
  decltype(&cuptiRangeProfilerStart) range_start = nullptr;
  decltype(&cuptiRangeProfilerStop) range_stop = nullptr;
  decltype(&cuptiRangeProfilerPushRange) range_push = nullptr;
  decltype(&cuptiRangeProfilerPopRange) range_pop = nullptr;
  decltype(&cuptiRangeProfilerDecodeData) range_decode = nullptr;
  decltype(&cuptiRangeProfilerGetCounterDataInfo) range_get_counter_data_info = nullptr;

  /// "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)"-style text of r.
  std::string error_text(CUptiResult r) const;
};

/// True for the results by which a machine refuses profiling to this user (ERR_NVGPUCTRPERM).
bool refuses_profiling(CUptiResult r);

/// The one message for a machine that refuses profiling: what was refused, why, and how to allow it.
std::string profiling_refused_message(const std::string& call);

/// Loads `library` (a name for dlopen or a path). nullptr and *why when it is missing or lacks an entry point.
/// The library is never unloaded. Thread-safe.
std::unique_ptr<Cupti> load_cupti(const std::string& library, std::string* why);

/// The process's CUPTI, loaded on first use: the library named by the environment variable AUTOTUNE_CUPTI (a path,
/// or "off"), else libcupti.so.13 from the library path, else from the toolkit the tuner was built with (lib64,
/// extras/CUPTI/lib64). nullptr and *why when unavailable (remembered). Thread-safe.
const Cupti* cupti(std::string* why);

}  // namespace autotune::cuda::detail
