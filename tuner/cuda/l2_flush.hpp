// Internal to tuner/cuda: the L2 flush before each timed sample of the GPU executor (nvbench's l2flush).
#pragma once
#include <cstddef>

#include "tuner/cuda/device_memory.hpp"
#include "tuner/cuda/tool_module.hpp"

namespace autotune::cuda::detail {

/// Evicts the L2 before a timed run: with the tool kernels' flush kernel by reading a buffer of twice the L2 (no
/// dirty line is left to be written back during the timed run), without it by overwriting the buffer with a memset.
/// Work is queued on the memory's stream. Driver errors throw CudaCallError. Nothing is freed on destruction
/// (DeviceMemory says why): destroy(). Not thread-safe.
class L2Flush {
 public:
  /// bytes: the buffer's size, l2_flush_bytes() of the GPU's L2 (0: no flush); sm_count: the flush kernel's
  /// grid is 4 blocks per SM.
  L2Flush(DeviceMemory& memory, const ToolModule& tools, std::size_t bytes, int sm_count)
      : memory_(memory), tools_(tools), bytes_(bytes), sm_count_(sm_count) {}
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;

  /// The 4 bytes the flush kernel could write, once the tool kernels are loaded.
  void allocate_sink();
  /// Allocates and fills the buffer (once; nothing when the L2 size is not known).
  void allocate();
  /// Whether there is a buffer to flush with.
  bool ready() const { return buffer_.ptr != 0; }
  /// Queues the flush before timed sample `sample` (the memset's pattern differs from sample to sample).
  void flush(unsigned sample);
  /// Frees the buffer (the sink stays).
  void release();
  /// Frees the buffer and the sink; ignores errors.
  void destroy() noexcept;

 private:
  DeviceMemory& memory_;
  const ToolModule& tools_;
  std::size_t bytes_;
  int sm_count_;
  DeviceBuffer buffer_;  // 2x L2
  DeviceBuffer sink_;    // 4 bytes the flush kernel could write
};

}  // namespace autotune::cuda::detail
