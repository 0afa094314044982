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

#include <cstddef>
#include <memory>
#include <stdexcept>
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

/// The structSize of each parameter struct of CUPTI's that is used here: its *_STRUCT_SIZE macro (the size up to
/// its last member, which the CUPTI of a newer toolkit reads to know what this build filled in).
template <typename P>
constexpr std::size_t kStructSize = 0;
// NOLINTBEGIN(bugprone-sizeof-expression): CUPTI's macros take the last member's sizeof through a null pointer.
#define AUTOTUNE_CUPTI_STRUCT_SIZE(P) \
  template <>                         \
  constexpr std::size_t kStructSize<P> = P##_STRUCT_SIZE;
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_Profiler_Host_Initialize_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_Profiler_Host_GetMetricProperties_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_Profiler_Host_ConfigAddMetrics_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_Profiler_Host_GetConfigImageSize_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_Profiler_Host_GetConfigImage_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_Profiler_Host_GetNumOfPasses_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_Profiler_Host_Deinitialize_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_RangeProfiler_GetCounterDataInfo_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_Profiler_Host_EvaluateToGpuValues_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_RangeProfiler_Enable_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_RangeProfiler_Disable_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_RangeProfiler_GetCounterDataSize_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_RangeProfiler_CounterDataImage_Initialize_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_RangeProfiler_SetConfig_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_RangeProfiler_Start_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_RangeProfiler_PushRange_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_RangeProfiler_PopRange_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_RangeProfiler_Stop_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_RangeProfiler_DecodeData_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_Profiler_Initialize_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_Device_GetChipName_Params)
AUTOTUNE_CUPTI_STRUCT_SIZE(CUpti_Profiler_GetCounterAvailability_Params)
#undef AUTOTUNE_CUPTI_STRUCT_SIZE
// NOLINTEND(bugprone-sizeof-expression)

/// A parameter struct of CUPTI's: zeroed, with its structSize set.
template <typename P>
P sized() {
  static_assert(kStructSize<P> > 0, "no kStructSize for this parameter struct");
  P p{};
  p.structSize = kStructSize<P>;
  return p;
}

/// True for the results by which a machine refuses profiling to this user (ERR_NVGPUCTRPERM).
bool refuses_profiling(CUptiResult r);

/// The one message for a machine that refuses profiling: what was refused, why, and how to allow it.
std::string profiling_refused_message(const std::string& call);

/// A failed CUPTI call; refused: the machine refuses profiling to this user (what() is then
/// profiling_refused_message).
struct CuptiError : std::runtime_error {
  CuptiError(const std::string& what, bool refused_) : std::runtime_error(what), refused(refused_) {}
  bool refused;
};

/// Throws CuptiError naming `what` (the call) unless r is CUPTI_SUCCESS.
void check_cupti(const Cupti& api, CUptiResult r, const std::string& what);

/// Loads `library` (a name for dlopen or a path) through DlLibrary (dl_library.hpp). nullptr and *why when it is
/// missing or lacks an entry point. The library is never unloaded. Thread-safe.
std::unique_ptr<Cupti> load_cupti(const std::string& library, std::string* why);

/// The process's CUPTI, loaded on first use: the library named by the environment variable AUTOTUNE_CUPTI (a path,
/// or "off"), else libcupti.so.13 from the library path, else from the toolkit the tuner was built with (lib64,
/// extras/CUPTI/lib64). nullptr and *why when unavailable (remembered). Thread-safe.
const Cupti* cupti(std::string* why);

}  // namespace autotune::cuda::detail
