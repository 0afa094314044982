#if __has_include(<cupti_range_profiler.h>)
#include "tuner/cuda/cupti.hpp"

#include <vector>

#include "tuner/cuda/dl_library.hpp"

namespace autotune::cuda::detail {
namespace {

/// Where libcupti.so.13 may be: the library path first, then the toolkit the tuner was built with.
std::vector<std::string> candidates() {
  std::vector<std::string> out = {"libcupti.so.13"};
#ifdef AUTOTUNE_CUDA_INCLUDE_DIR
  std::string include = AUTOTUNE_CUDA_INCLUDE_DIR;
  include = include.substr(0, include.find(';'));
  const std::string root = include.substr(0, include.find_last_of('/'));
  out.push_back(root + "/lib64/libcupti.so.13");
  out.push_back(root + "/extras/CUPTI/lib64/libcupti.so.13");
  out.push_back(root + "/lib/libcupti.so.13");
#endif
  return out;
}

}  // namespace

std::string Cupti::error_text(CUptiResult r) const {
  const char* s = nullptr;
  if (get_result_string != nullptr) get_result_string(r, &s);
  return (s != nullptr ? std::string(s) : std::string("CUPTI error")) + " (" + std::to_string(static_cast<int>(r)) +
         ")";
}

bool refuses_profiling(CUptiResult r) {
  return r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES;
}

std::string profiling_refused_message(const std::string& call) {
  return "this machine refuses GPU performance counters to this user (" + call +
         ": CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, ERR_NVGPUCTRPERM); tuning goes on without counters. To allow them, "
         "run as root or load the driver with NVreg_RestrictProfilingToAdminUsers=0 "
         "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
}

void check_cupti(const Cupti& api, CUptiResult r, const std::string& what) {
  if (r == CUPTI_SUCCESS) return;
  if (refuses_profiling(r)) throw CuptiError(profiling_refused_message(what), true);
  throw CuptiError(what + " failed: " + api.error_text(r), false);
}

std::unique_ptr<Cupti> load_cupti(const std::string& library, std::string* why) {
  DlLibrary lib;
  if (!lib.open(library, why)) return nullptr;
  auto c = std::make_unique<Cupti>();
  c->library = library;
  lib.need(&c->get_result_string, "cuptiGetResultString");
  lib.need(&c->profiler_initialize, "cuptiProfilerInitialize");
  lib.need(&c->device_get_chip_name, "cuptiDeviceGetChipName");
  lib.need(&c->get_counter_availability, "cuptiProfilerGetCounterAvailability");
  lib.need(&c->host_initialize, "cuptiProfilerHostInitialize");
  lib.need(&c->host_deinitialize, "cuptiProfilerHostDeinitialize");
  lib.need(&c->host_get_metric_properties, "cuptiProfilerHostGetMetricProperties");
  lib.need(&c->host_config_add_metrics, "cuptiProfilerHostConfigAddMetrics");
  lib.need(&c->host_get_config_image_size, "cuptiProfilerHostGetConfigImageSize");
  lib.need(&c->host_get_config_image, "cuptiProfilerHostGetConfigImage");
  lib.need(&c->host_get_num_of_passes, "cuptiProfilerHostGetNumOfPasses");
  lib.need(&c->host_evaluate_to_gpu_values, "cuptiProfilerHostEvaluateToGpuValues");
  lib.need(&c->range_enable, "cuptiRangeProfilerEnable");
  lib.need(&c->range_disable, "cuptiRangeProfilerDisable");
  lib.need(&c->range_get_counter_data_size, "cuptiRangeProfilerGetCounterDataSize");
  lib.need(&c->range_counter_data_image_initialize, "cuptiRangeProfilerCounterDataImageInitialize");
  lib.need(&c->range_set_config, "cuptiRangeProfilerSetConfig");
  lib.need(&c->range_start, "cuptiRangeProfilerStart");
  lib.need(&c->range_stop, "cuptiRangeProfilerStop");
  lib.need(&c->range_push, "cuptiRangeProfilerPushRange");
  lib.need(&c->range_pop, "cuptiRangeProfilerPopRange");
  lib.need(&c->range_decode, "cuptiRangeProfilerDecodeData");
  lib.need(&c->range_get_counter_data_info, "cuptiRangeProfilerGetCounterDataInfo");
  if (lib.missing() != nullptr) {
    *why = library + " has no " + lib.missing() + " (the range profiler needs CUPTI of CUDA 12.6 or later)";
    return nullptr;
  }
  return c;
}

const Cupti* cupti(std::string* why) {
  static LoadedOnce<Cupti> once;
  return once.get(why, [](std::string* reason) -> std::unique_ptr<Cupti> {
    const LibraryChoice choice = library_choice("AUTOTUNE_CUPTI");
    if (choice.off) {
      *reason = "CUPTI is switched off (AUTOTUNE_CUPTI=off)";
      return nullptr;
    }
    if (!choice.library.empty()) return load_cupti(choice.library, reason);
    for (const std::string& library : candidates()) {
      std::string why_not;
      std::unique_ptr<Cupti> loaded = load_cupti(library, &why_not);
      if (loaded != nullptr) return loaded;
      if (reason->empty()) *reason = why_not;
    }
    return nullptr;
  });
}

}  // namespace autotune::cuda::detail
#endif
