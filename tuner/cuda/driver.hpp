// Internal to tuner/cuda: the CUDA driver API loaded at run time with dlopen("libcuda.so.1").
// Nothing links libcuda: every entry point is obtained through cuGetProcAddress_v2, so binaries start on
// machines without an NVIDIA driver and report the missing driver only when a GPU is actually needed.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

#include "tuner/core/error.hpp"
#include "tuner/core/keys.hpp"

namespace autotune::cuda::detail {

/// Entry points requested from the driver with this CUDA version (ABI of CUDA 12.0; every PFN type below is
/// the one the driver hands out for it). Drivers older than 12.0 are refused.
constexpr int kRequestedApiVersion = 12000;

/// Prefix of every "driver/GPU is missing" message (tests and users grep for it).
constexpr const char* kNoDriverPrefix = "no NVIDIA driver/GPU found: ";

/// Driver entry points. Filled once by driver(); immutable afterwards, so safe to read from any thread.
struct Driver {
  int version = 0;       // cuDriverGetVersion, e.g. 13000
  int device_count = 0;  // cuDeviceGetCount at load time (> 0)

  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuGetErrorString_v6000 get_error_string = nullptr;
  PFN_cuInit_v2000 init = nullptr;
  PFN_cuDriverGetVersion_v2020 driver_get_version = nullptr;
  PFN_cuDeviceGetCount_v2000 device_get_count = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetName_v2000 device_get_name = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute = nullptr;
  PFN_cuDeviceTotalMem_v3020 device_total_mem = nullptr;
  PFN_cuDeviceGetUuid_v11040 device_get_uuid = nullptr;

  PFN_cuDevicePrimaryCtxRetain_v7000 primary_ctx_retain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 primary_ctx_release = nullptr;
  PFN_cuDevicePrimaryCtxReset_v11000 primary_ctx_reset = nullptr;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current = nullptr;
  PFN_cuCtxSynchronize_v2000 ctx_synchronize = nullptr;
  // Used by the launch API (launcher.cpp) to share the application's primary context.
  PFN_cuCtxGetCurrent_v4000 ctx_get_current = nullptr;
  PFN_cuCtxGetDevice_v2000 ctx_get_device = nullptr;
  PFN_cuCtxPushCurrent_v4000 ctx_push_current = nullptr;
  PFN_cuCtxPopCurrent_v4000 ctx_pop_current = nullptr;
  PFN_cuStreamWaitEvent_v3020 stream_wait_event = nullptr;

  PFN_cuMemGetInfo_v3020 mem_get_info = nullptr;
  PFN_cuMemAlloc_v3020 mem_alloc = nullptr;
  PFN_cuMemFree_v3020 mem_free = nullptr;
  PFN_cuMemcpyHtoD_v3020 memcpy_htod = nullptr;
  PFN_cuMemcpyHtoDAsync_v3020 memcpy_htod_async = nullptr;  // from pinned staging buffers (executor uploads)
  PFN_cuMemAllocHost_v3020 mem_alloc_host = nullptr;
  PFN_cuMemFreeHost_v2000 mem_free_host = nullptr;
  PFN_cuMemcpyDtoH_v3020 memcpy_dtoh = nullptr;
  PFN_cuMemcpyDtoDAsync_v3020 memcpy_dtod_async = nullptr;
  PFN_cuMemsetD8_v3020 memset_d8 = nullptr;
  PFN_cuMemsetD32Async_v3020 memset_d32_async = nullptr;

  PFN_cuStreamCreate_v2000 stream_create = nullptr;
  PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;
  PFN_cuStreamSynchronize_v2000 stream_synchronize = nullptr;
  PFN_cuEventCreate_v2000 event_create = nullptr;
  PFN_cuEventDestroy_v4000 event_destroy = nullptr;
  PFN_cuEventRecord_v2000 event_record = nullptr;
  PFN_cuEventSynchronize_v2000 event_synchronize = nullptr;
  PFN_cuEventElapsedTime_v2000 event_elapsed_time = nullptr;
  // The launch API's online tuning (online_device.cpp): polled events, verdicts copied back without waiting.
  PFN_cuEventQuery_v2000 event_query = nullptr;
  PFN_cuMemcpyDtoHAsync_v3020 memcpy_dtoh_async = nullptr;

  PFN_cuModuleLoadData_v2000 module_load_data = nullptr;
  PFN_cuModuleUnload_v2000 module_unload = nullptr;
  PFN_cuModuleGetFunction_v2000 module_get_function = nullptr;
  PFN_cuFuncSetAttribute_v9000 func_set_attribute = nullptr;
  PFN_cuLaunchKernel_v4000 launch_kernel = nullptr;
  PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050 occupancy_max_active_blocks = nullptr;
  PFN_cuFuncGetAttribute_v2020 func_get_attribute = nullptr;  // registers, shared memory, thread limit
  PFN_cuModuleGetGlobal_v3020 module_get_global = nullptr;    // __constant__ and __device__ symbols

  // Optional (CUDA 12.3/12.4 drivers): enumerating a module's functions, to find C++ entry points by their
  // demangled names. nullptr on older drivers.
  PFN_cuModuleGetFunctionCount_v12040 module_get_function_count = nullptr;
  PFN_cuModuleEnumerateFunctions_v12040 module_enumerate_functions = nullptr;
  PFN_cuFuncGetName_v12030 func_get_name = nullptr;
  // Optional (CUDA 12.4 drivers): a kernel's parameters, to check a launch's arguments against them.
  PFN_cuFuncGetParamInfo_v12040 func_get_param_info = nullptr;
};

/// The loaded driver (first call loads it: dlopen, cuGetProcAddress_v2, cuInit, at least one device).
/// Throws EnvironmentError "no NVIDIA driver/GPU found: <why>" when that fails (the failure is remembered).
/// Thread-safe.
const Driver& driver();

/// Like driver() but returns nullptr and sets *reason instead of throwing. Thread-safe.
const Driver* try_driver(std::string* reason);

/// A driver call that returned an error. code() lets callers tell launch errors from sticky faults.
class CudaCallError : public EnvironmentError {
 public:
  CudaCallError(CUresult code, std::string function, const std::string& message)
      : EnvironmentError(message), code_(code), function_(std::move(function)) {}
  CUresult code() const { return code_; }
  const std::string& function() const { return function_; }

 private:
  CUresult code_;
  std::string function_;
};

/// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"; works before/without a driver.
std::string error_text(CUresult r);

/// "<file>:<line>" with file relative to the project's source folder (where call sites are compiled by absolute
/// paths); file and line default to the caller's (GCC and Clang builtins).
std::string call_site(const char* file = __builtin_FILE(), int line = __builtin_LINE());

/// "<function> failed at <file>:<line>: <error_text>", file relative to the project's source folder: the text of
/// a failed driver call. file and line default to the caller's (GCC and Clang builtins), so call sites name only
/// the function, which may carry context, e.g. "cuModuleGetFunction(reduce)".
std::string call_error_text(CUresult r, const std::string& function, const char* file = __builtin_FILE(),
                            int line = __builtin_LINE());

/// Throws CudaCallError with call_error_text (file and line: the caller's).
[[noreturn]] void throw_call_error(CUresult r, const std::string& function, const char* file = __builtin_FILE(),
                                   int line = __builtin_LINE());

/// Throws CudaCallError unless r == CUDA_SUCCESS (no allocation on success); file and line: the caller's.
inline void check(CUresult r, const char* function, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  if (r != CUDA_SUCCESS) throw_call_error(r, function, file, line);
}

/// True for errors that corrupt the context (illegal address, misaligned address, launch failed, trap,
/// assert, ...): the context must be reset before the device can be used again.
bool is_sticky(CUresult r);

/// Properties of GPU `ordinal`. Throws EnvironmentError (no driver) or UsageError (no such ordinal).
DeviceInfo query_device(int ordinal);

}  // namespace autotune::cuda::detail
