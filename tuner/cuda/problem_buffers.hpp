// Internal to tuner/cuda: the problem's data on the GPU executor's device (the executor's end of problem_data.hpp):
// its inputs, uploaded from the shared region or drawn by the draw kernel, and the expected values that the
// comparison kernels read, uploaded or made by the prefix kernels.
#pragma once
#include <map>
#include <string>
#include <variant>

#include "tuner/cuda/device_memory.hpp"
#include "tuner/cuda/messages.hpp"
#include "tuner/cuda/tool_module.hpp"
#include "tuner/cuda/worker_process.hpp"

namespace autotune::cuda::detail {

/// The problem's buffers, until release(). Requests that do not fit the buffers throw UsageError; driver errors
/// throw CudaCallError. Nothing is freed on destruction (DeviceMemory says why): destroy(). Not thread-safe.
class ProblemBuffers {
 public:
  ProblemBuffers(DeviceMemory& memory, const ToolModule& tools, SharedRegion& region)
      : memory_(memory), tools_(tools), region_(region) {}
  ProblemBuffers(const ProblemBuffers&) = delete;
  ProblemBuffers& operator=(const ProblemBuffers&) = delete;

  /// An input (kept in the shared region for restore_inputs) or expected values (the region may be reused)
  /// from the shared region to the device.
  void upload(const UploadRequest& q);
  /// An input drawn on the device by the draw kernel; replies with its chunks' summaries.
  DrawRequest::Reply draw(const DrawRecipe& r);
  /// The expected values of a prefix scan of an input on the device (device_kernels.hpp's prefix kernels).
  PrefixRequest::Reply prefix(const PrefixRecipe& r);
  /// Every input again, from the shared region or the draw kernel (a kernel may have written into them).
  void restore_inputs();

  /// Inputs by name, at their exact sizes.
  const std::map<std::string, DeviceBuffer>& inputs() const { return inputs_; }
  /// Expected values of the comparison kernels by name, at their exact sizes.
  const std::map<std::string, DeviceBuffer>& expected() const { return expected_; }

  /// Frees every buffer and forgets where the inputs came from.
  void release();
  /// Frees every buffer; ignores errors.
  void destroy() noexcept;

 private:
  struct HostInput {
    int fd = -1;  // the shared region that holds it for the problem's lifetime
    std::uint64_t region_bytes = 0, offset = 0, bytes = 0;
  };

  /// Runs the draw kernel for r into dst and waits for it (summary 0: no summaries).
  void launch_draw(CUdeviceptr dst, const DrawRecipe& r, CUdeviceptr summary);

  DeviceMemory& memory_;
  const ToolModule& tools_;
  SharedRegion& region_;
  /// Where restore_inputs() takes each input from again: the shared region or the draw kernel.
  std::map<std::string, std::variant<HostInput, DrawRecipe>> sources_;
  std::map<std::string, DeviceBuffer> inputs_;    // exact sizes
  std::map<std::string, DeviceBuffer> expected_;  // expected values of the comparison kernels, exact sizes
};

}  // namespace autotune::cuda::detail
