#include "tuner/cuda/driver.hpp"

#include <cstdlib>

#include <dlfcn.h>

#include <mutex>
#include <string_view>

#include "tuner/cuda/runtime.hpp"

namespace autotune::cuda {
namespace detail {
namespace {

struct LoadState {
  Driver driver;
  bool ok = false;
  std::string reason;  // full message, starting with kNoDriverPrefix
};

// Resolves one entry point through cuGetProcAddress_v2; false (and *why) if the driver lacks it.
template <typename Fn>
bool resolve(PFN_cuGetProcAddress_v12000 get_proc, Fn* slot, const char* symbol, std::string* why,
             int version = kRequestedApiVersion) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult r = get_proc(symbol, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || fn == nullptr) {
    *why = std::string("the driver does not provide ") + symbol + " for CUDA " +
           std::to_string(kRequestedApiVersion / 1000) + "." + std::to_string(kRequestedApiVersion % 1000 / 10) +
           " (cuGetProcAddress_v2 returned " + std::to_string(static_cast<int>(r)) + ", status " +
           std::to_string(static_cast<int>(status)) + ")";
    return false;
  }
  *slot = reinterpret_cast<Fn>(fn);
  return true;
}

// Returns "" on success, otherwise the reason (without prefix).
std::string load(Driver& d) {
  // RTLD_LOCAL keeps the driver's symbols out of the global namespace; the handle is never closed.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    return std::string("libcuda.so.1 cannot be loaded (") + (err ? err : "unknown dlopen error") + ")";
  }
  auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(lib, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    return "libcuda.so.1 has no cuGetProcAddress_v2 (the driver is older than CUDA 12.0; a newer driver is needed)";
  }
  std::string why;
  bool ok = resolve(get_proc, &d.get_error_name, "cuGetErrorName", &why) &&
            resolve(get_proc, &d.get_error_string, "cuGetErrorString", &why) &&
            resolve(get_proc, &d.init, "cuInit", &why) &&
            resolve(get_proc, &d.driver_get_version, "cuDriverGetVersion", &why) &&
            resolve(get_proc, &d.device_get_count, "cuDeviceGetCount", &why) &&
            resolve(get_proc, &d.device_get, "cuDeviceGet", &why) &&
            resolve(get_proc, &d.device_get_name, "cuDeviceGetName", &why) &&
            resolve(get_proc, &d.device_get_attribute, "cuDeviceGetAttribute", &why) &&
            resolve(get_proc, &d.device_total_mem, "cuDeviceTotalMem", &why) &&
            resolve(get_proc, &d.device_get_uuid, "cuDeviceGetUuid", &why) &&
            resolve(get_proc, &d.primary_ctx_retain, "cuDevicePrimaryCtxRetain", &why) &&
            resolve(get_proc, &d.primary_ctx_release, "cuDevicePrimaryCtxRelease", &why) &&
            resolve(get_proc, &d.primary_ctx_reset, "cuDevicePrimaryCtxReset", &why) &&
            resolve(get_proc, &d.ctx_set_current, "cuCtxSetCurrent", &why) &&
            resolve(get_proc, &d.ctx_synchronize, "cuCtxSynchronize", &why) &&
            resolve(get_proc, &d.ctx_get_current, "cuCtxGetCurrent", &why) &&
            resolve(get_proc, &d.ctx_get_device, "cuCtxGetDevice", &why) &&
            resolve(get_proc, &d.ctx_push_current, "cuCtxPushCurrent", &why) &&
            resolve(get_proc, &d.ctx_pop_current, "cuCtxPopCurrent", &why) &&
            resolve(get_proc, &d.stream_wait_event, "cuStreamWaitEvent", &why) &&
            resolve(get_proc, &d.mem_get_info, "cuMemGetInfo", &why) &&
            resolve(get_proc, &d.mem_alloc, "cuMemAlloc", &why) &&
            resolve(get_proc, &d.mem_free, "cuMemFree", &why) &&
            resolve(get_proc, &d.memcpy_htod, "cuMemcpyHtoD", &why) &&
            resolve(get_proc, &d.memcpy_dtoh, "cuMemcpyDtoH", &why) &&
            resolve(get_proc, &d.memcpy_dtod_async, "cuMemcpyDtoDAsync", &why) &&
            resolve(get_proc, &d.memset_d8, "cuMemsetD8", &why) &&
            resolve(get_proc, &d.memset_d32_async, "cuMemsetD32Async", &why) &&
            resolve(get_proc, &d.stream_create, "cuStreamCreate", &why) &&
            resolve(get_proc, &d.stream_destroy, "cuStreamDestroy", &why) &&
            resolve(get_proc, &d.stream_synchronize, "cuStreamSynchronize", &why) &&
            resolve(get_proc, &d.event_create, "cuEventCreate", &why) &&
            resolve(get_proc, &d.event_destroy, "cuEventDestroy", &why) &&
            resolve(get_proc, &d.event_record, "cuEventRecord", &why) &&
            resolve(get_proc, &d.event_synchronize, "cuEventSynchronize", &why) &&
            resolve(get_proc, &d.event_elapsed_time, "cuEventElapsedTime", &why) &&
            resolve(get_proc, &d.module_load_data, "cuModuleLoadData", &why) &&
            resolve(get_proc, &d.module_unload, "cuModuleUnload", &why) &&
            resolve(get_proc, &d.module_get_function, "cuModuleGetFunction", &why) &&
            resolve(get_proc, &d.func_set_attribute, "cuFuncSetAttribute", &why) &&
            resolve(get_proc, &d.launch_kernel, "cuLaunchKernel", &why) &&
            resolve(get_proc, &d.occupancy_max_active_blocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor", &why) &&
            resolve(get_proc, &d.func_get_attribute, "cuFuncGetAttribute", &why) &&
            resolve(get_proc, &d.module_get_global, "cuModuleGetGlobal", &why);
  // The executor's uploads through pinned staging buffers.
  ok = ok && resolve(get_proc, &d.memcpy_htod_async, "cuMemcpyHtoDAsync", &why) &&
       resolve(get_proc, &d.mem_alloc_host, "cuMemAllocHost", &why) &&
       resolve(get_proc, &d.mem_free_host, "cuMemFreeHost", &why) &&
       resolve(get_proc, &d.event_query, "cuEventQuery", &why) &&
       resolve(get_proc, &d.memcpy_dtoh_async, "cuMemcpyDtoHAsync", &why);
  if (!ok) return why;
  std::string optional;  // newer entry points: left null on drivers that lack them
  if (!resolve(get_proc, &d.module_get_function_count, "cuModuleGetFunctionCount", &optional, 12040) ||
      !resolve(get_proc, &d.module_enumerate_functions, "cuModuleEnumerateFunctions", &optional, 12040) ||
      !resolve(get_proc, &d.func_get_name, "cuFuncGetName", &optional, 12030)) {
    d.module_get_function_count = nullptr;
    d.module_enumerate_functions = nullptr;
    d.func_get_name = nullptr;
  }
  if (!resolve(get_proc, &d.func_get_param_info, "cuFuncGetParamInfo", &optional, 12040))
    d.func_get_param_info = nullptr;

  CUresult r = d.driver_get_version(&d.version);
  if (r != CUDA_SUCCESS) return "cuDriverGetVersion failed: " + error_text(r);
  if (d.version < kRequestedApiVersion) {
    return "the driver supports CUDA " + std::to_string(d.version / 1000) + "." +
           std::to_string(d.version % 1000 / 10) + " only; CUDA 12.0 or newer is needed";
  }
  // Eager module loading: the tuner's modules are small, and function handles found by enumeration (C++ entry
  // points) must be loaded for cuFuncGetAttribute, which the resource pre-check asks before a launch. A value
  // the user set is kept.
  ::setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  r = d.init(0);
  if (r != CUDA_SUCCESS) return "cuInit failed: " + error_text(r);
  r = d.device_get_count(&d.device_count);
  if (r != CUDA_SUCCESS) return "cuDeviceGetCount failed: " + error_text(r);
  if (d.device_count <= 0) return "the driver sees no CUDA device (check CUDA_VISIBLE_DEVICES)";
  return {};
}

LoadState& state() {
  static LoadState s;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string why = load(s.driver);
    s.ok = why.empty();
    if (!s.ok) {
      s.reason = kNoDriverPrefix + why;
      s.driver = Driver{};  // never hand out half-resolved entry points
    }
  });
  return s;
}

// Known names, used when the driver itself is not available to translate a code.
const char* fallback_error_name(CUresult r) {
  switch (r) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case CUDA_ERROR_LAUNCH_FAILED: return "CUDA_ERROR_LAUNCH_FAILED";
    default: return nullptr;
  }
}

}  // namespace

const Driver* try_driver(std::string* reason) {
  LoadState& s = state();
  if (!s.ok) {
    if (reason) *reason = s.reason;
    return nullptr;
  }
  return &s.driver;
}

const Driver& driver() {
  std::string reason;
  const Driver* d = try_driver(&reason);
  if (d == nullptr) throw EnvironmentError(reason);
  return *d;
}

std::string error_text(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  LoadState& s = state();
  if (s.ok) {
    if (s.driver.get_error_name(r, &name) != CUDA_SUCCESS) name = nullptr;
    if (s.driver.get_error_string(r, &text) != CUDA_SUCCESS) text = nullptr;
  }
  if (name == nullptr) name = fallback_error_name(r);
  std::string out = name ? name : ("CUresult " + std::to_string(static_cast<int>(r)));
  if (text != nullptr) out += std::string(" (") + text + ")";
  return out;
}

std::string call_site(const char* file, int line) {
  std::string_view where = file != nullptr ? file : "";
#ifdef AUTOTUNE_SOURCE_DIR
  // Call sites are compiled by their absolute paths: keep the part inside the project.
  const std::string_view root = AUTOTUNE_SOURCE_DIR "/";
  if (where.substr(0, root.size()) == root) where.remove_prefix(root.size());
#endif
  return std::string(where) + ":" + std::to_string(line);
}

std::string call_error_text(CUresult r, const std::string& function, const char* file, int line) {
  return function + " failed at " + call_site(file, line) + ": " + error_text(r);
}

void throw_call_error(CUresult r, const std::string& function, const char* file, int line) {
  throw CudaCallError(r, function, call_error_text(r, function, file, line));
}

bool is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

DeviceInfo query_device(int ordinal) {
  const Driver& d = driver();
  if (ordinal < 0 || ordinal >= d.device_count) {
    throw UsageError("GPU " + std::to_string(ordinal) + " does not exist (this machine has " +
                     std::to_string(d.device_count) + ")");
  }
  CUdevice dev = 0;
  check(d.device_get(&dev, ordinal), "cuDeviceGet");
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    check(d.device_get_attribute(&v, a, dev), "cuDeviceGetAttribute");
    return v;
  };
  DeviceInfo info;
  char name[256] = {};
  check(d.device_get_name(name, static_cast<int>(sizeof(name) - 1), dev), "cuDeviceGetName");
  info.name = name;
  info.cc = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
            attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.max_shared_memory_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info.max_shared_memory_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  if (info.max_shared_memory_per_block_optin < info.max_shared_memory_per_block) {
    info.max_shared_memory_per_block_optin = info.max_shared_memory_per_block;
  }
  info.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  info.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  size_t total = 0;
  check(d.device_total_mem(&total, dev), "cuDeviceTotalMem");
  info.total_memory = total;
  info.driver_version = d.version;
  CUuuid uuid{};
  check(d.device_get_uuid(&uuid, dev), "cuDeviceGetUuid");
  static const char* hex = "0123456789abcdef";
  for (char byte : uuid.bytes) {
    auto b = static_cast<unsigned char>(byte);
    info.uuid += hex[b >> 4];
    info.uuid += hex[b & 15];
  }
  info.clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.memory_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info.memory_bus_width = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  return info;
}

}  // namespace detail

bool driver_available(std::string* reason) { return detail::try_driver(reason) != nullptr; }

std::vector<DeviceInfo> list_devices() {
  const detail::Driver& d = detail::driver();
  std::vector<DeviceInfo> out;
  out.reserve(static_cast<std::size_t>(d.device_count));
  for (int i = 0; i < d.device_count; ++i) out.push_back(detail::query_device(i));
  return out;
}

}  // namespace autotune::cuda
