#if __has_include(<cupti_range_profiler.h>)
#include "tuner/cuda/cupti.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace autotune::cuda::detail {
namespace {

template <typename Fn>
bool resolve(void* lib, Fn* slot, const char* symbol) {
  *slot = reinterpret_cast<Fn>(dlsym(lib, symbol));
  return *slot != nullptr;
}

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

std::unique_ptr<Cupti> load_cupti(const std::string& library, std::string* why) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    *why = library + " cannot be loaded (" + (err ? err : "unknown dlopen error") + ")";
    return nullptr;
  }
  auto c = std::make_unique<Cupti>();
  c->library = library;
  const char* missing = nullptr;
  auto need = [&](auto* slot, const char* symbol) {
    if (missing == nullptr && !resolve(lib, slot, symbol)) missing = symbol;
  };
  need(&c->get_result_string, "cuptiGetResultString");
  need(&c->profiler_initialize, "cuptiProfilerInitialize");
  need(&c->device_get_chip_name, "cuptiDeviceGetChipName");
  need(&c->get_counter_availability, "cuptiProfilerGetCounterAvailability");
  need(&c->host_initialize, "cuptiProfilerHostInitialize");
  need(&c->host_deinitialize, "cuptiProfilerHostDeinitialize");
  need(&c->host_get_metric_properties, "cuptiProfilerHostGetMetricProperties");
  need(&c->host_config_add_metrics, "cuptiProfilerHostConfigAddMetrics");
  need(&c->host_get_config_image_size, "cuptiProfilerHostGetConfigImageSize");
  need(&c->host_get_config_image, "cuptiProfilerHostGetConfigImage");
  need(&c->host_get_num_of_passes, "cuptiProfilerHostGetNumOfPasses");
  need(&c->host_evaluate_to_gpu_values, "cuptiProfilerHostEvaluateToGpuValues");
  need(&c->range_enable, "cuptiRangeProfilerEnable");
  need(&c->range_disable, "cuptiRangeProfilerDisable");
  need(&c->range_get_counter_data_size, "cuptiRangeProfilerGetCounterDataSize");
  need(&c->range_counter_data_image_initialize, "cuptiRangeProfilerCounterDataImageInitialize");
  need(&c->range_set_config, "cuptiRangeProfilerSetConfig");
  need(&c->range_start, "cuptiRangeProfilerStart");
  need(&c->range_stop, "cuptiRangeProfilerStop");
  need(&c->range_push, "cuptiRangeProfilerPushRange");
  need(&c->range_pop, "cuptiRangeProfilerPopRange");
  need(&c->range_decode, "cuptiRangeProfilerDecodeData");
  need(&c->range_get_counter_data_info, "cuptiRangeProfilerGetCounterDataInfo");
  if (missing != nullptr) {
    *why = library + " has no " + missing + " (the range profiler needs CUPTI of CUDA 12.6 or later)";
    return nullptr;
  }
  return c;
}

const Cupti* cupti(std::string* why) {
  static std::unique_ptr<Cupti> loaded;
  static std::string reason;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("AUTOTUNE_CUPTI");
    if (env != nullptr && std::string(env) == "off") {
      reason = "CUPTI is switched off (AUTOTUNE_CUPTI=off)";
      return;
    }
    if (env != nullptr && *env != '\0') {
      loaded = load_cupti(env, &reason);
      return;
    }
    for (const std::string& library : candidates()) {
      std::string why_not;
      loaded = load_cupti(library, &why_not);
      if (loaded != nullptr) return;
      if (reason.empty()) reason = why_not;
    }
  });
  if (loaded == nullptr && why != nullptr) *why = reason;
  return loaded.get();
}

}  // namespace autotune::cuda::detail
#endif
