// Internal to tuner/cuda: the GPU executor's device allocations and its copies from host memory to the device
// (executor.hpp).
#pragma once
#include <cstddef>

#include "tuner/cuda/driver.hpp"

namespace autotune::cuda::detail {

/// A device allocation (ptr 0: none).
struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  std::size_t bytes = 0;  // allocated size
};

/// Allocations on the current context, and host-to-device copies on one stream (large ones through two pinned
/// staging buffers, made on first use). Driver errors throw CudaCallError. Nothing is freed on destruction:
/// after a sticky fault the context cannot free anything, so the owner calls destroy() while it still can.
/// Not thread-safe.
class DeviceMemory {
 public:
  DeviceMemory(const Driver& d, CUstream stream) : d_(d), stream_(stream) {}
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  /// A buffer of `bytes` (at least 4 bytes are allocated); its contents are undefined.
  DeviceBuffer allocate(std::size_t bytes);
  /// Frees b (if allocated) and clears it; ignores errors.
  void free_quietly(DeviceBuffer& b) noexcept;
  /// Frees b (if allocated) and clears it.
  void free_checked(DeviceBuffer& b);
  /// b at exactly `bytes` (freed and allocated again when its size differs); its contents are undefined.
  DeviceBuffer& exact_size(DeviceBuffer& b, std::size_t bytes);
  /// Host (pageable memory, e.g. the shared region) to device, synchronously. From kStageFrom bytes on, in pieces
  /// through the two pinned staging buffers, each piece copied in on several threads while the last one travels.
  void copy_to_device(CUdeviceptr dst, const unsigned char* src, std::size_t bytes);
  /// Frees the staging buffers and their events; ignores errors.
  void destroy() noexcept;

  const Driver& driver() const { return d_; }
  CUstream stream() const { return stream_; }

  /// A device buffer for the length of one request: freed (quietly) when it goes out of scope.
  class Scratch {
   public:
    Scratch(DeviceMemory& memory, std::size_t bytes) : memory_(memory), buffer_(memory.allocate(bytes)) {}
    ~Scratch() { memory_.free_quietly(buffer_); }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    CUdeviceptr ptr() const { return buffer_.ptr; }

   private:
    DeviceMemory& memory_;
    DeviceBuffer buffer_;
  };

 private:
  const Driver& d_;
  CUstream stream_;
  void* stage_[2] = {nullptr, nullptr};
  CUevent stage_free_[2] = {nullptr, nullptr};
};

}  // namespace autotune::cuda::detail
