// Occupancy as the driver computes it, for `autotune explore` (tuner/explore reports it per sweep point).
#include <mutex>

#include "tuner/cuda/driver.hpp"
#include "tuner/cuda/runtime.hpp"

namespace autotune::cuda {

namespace {

// Above this, dynamic shared memory must be enabled per function (as the executor does before launching).
constexpr std::size_t kDefaultSharedLimit = std::size_t{48} * 1024;

// Serialises the context switch + module load of concurrent callers (the driver is thread-safe, but the
// current context is per thread and the primary context is shared).
std::mutex& occupancy_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

int max_active_blocks_per_sm(const CompileResult& binary, const std::string& kernel, int block_threads,
                             std::size_t dynamic_shared_bytes, int device) {
  using namespace detail;
  if (!binary.ok || binary.cubin.empty())
    throw UsageError("occupancy of " + kernel + ": the binary did not compile (" +
                     (binary.log.empty() ? std::string("no image") : binary.log.substr(0, 200)) + ")");
  if (block_threads < 1) throw UsageError("occupancy of " + kernel + ": block size must be at least 1");
  const Driver& d = driver();
  if (device < 0 || device >= d.device_count)
    throw UsageError("GPU " + std::to_string(device) + " does not exist (this machine has " +
                     std::to_string(d.device_count) + ")");

  std::lock_guard<std::mutex> lock(occupancy_mutex());
  CUdevice dev = 0;
  check(d.device_get(&dev, device), "cuDeviceGet");
  CUcontext ctx = nullptr;
  check(d.primary_ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  CUmodule module = nullptr;
  auto release = [&] {
    if (module != nullptr) d.module_unload(module);
    d.primary_ctx_release(dev);
  };
  try {
    check(d.ctx_set_current(ctx), "cuCtxSetCurrent");
    CUresult r = d.module_load_data(&module, binary.cubin.data());
    if (r != CUDA_SUCCESS) {
      module = nullptr;
      throw UsageError("occupancy of " + kernel + ": " + call_error_text(r, "cuModuleLoadData"));
    }
    CUfunction fn = nullptr;
    r = d.module_get_function(&fn, module, kernel.c_str());
    if (r != CUDA_SUCCESS)
      throw UsageError("occupancy: the binary has no kernel '" + kernel + "' (" + error_text(r) + ")");
    if (dynamic_shared_bytes > kDefaultSharedLimit) {
      r = d.func_set_attribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               static_cast<int>(dynamic_shared_bytes));
      // Beyond the opt-in limit the block cannot be launched: occupancy 0, like the driver would answer.
      if (r != CUDA_SUCCESS) {
        release();
        return 0;
      }
    }
    int blocks = 0;
    check(d.occupancy_max_active_blocks(&blocks, fn, block_threads, dynamic_shared_bytes),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    release();
    return blocks;
  } catch (...) {
    release();
    throw;
  }
}

}  // namespace autotune::cuda
