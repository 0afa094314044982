#include "tuner/cuda/device_memory.hpp"

#include <algorithm>

#include "tuner/cuda/host_copy.hpp"

namespace autotune::cuda::detail {
namespace {

// Uploads from this size on go through pinned staging buffers of kStageBytes each (DeviceMemory::copy_to_device).
constexpr std::size_t kStageFrom = std::size_t{64} << 20;
constexpr std::size_t kStageBytes = std::size_t{64} << 20;

}  // namespace

DeviceBuffer DeviceMemory::allocate(std::size_t bytes) {
  DeviceBuffer b;
  check(d_.mem_alloc(&b.ptr, std::max<std::size_t>(bytes, 4)), "cuMemAlloc");
  b.bytes = bytes;
  return b;
}

void DeviceMemory::free_quietly(DeviceBuffer& b) noexcept {
  if (b.ptr != 0) d_.mem_free(b.ptr);
  b = {};
}

void DeviceMemory::free_checked(DeviceBuffer& b) {
  if (b.ptr != 0) check(d_.mem_free(b.ptr), "cuMemFree");
  b = {};
}

DeviceBuffer& DeviceMemory::exact_size(DeviceBuffer& b, std::size_t bytes) {
  if (b.ptr != 0 && b.bytes != bytes) free_checked(b);
  if (b.ptr == 0) b = allocate(bytes);
  return b;
}

// A pageable copy runs at a fraction of the link's speed (0.41 s for 1 GB of inputs on an H100 host), a pinned one
// at its full speed.
void DeviceMemory::copy_to_device(CUdeviceptr dst, const unsigned char* src, std::size_t bytes) {
  if (bytes < kStageFrom) {
    if (bytes != 0) check(d_.memcpy_htod(dst, src, bytes), "cuMemcpyHtoD");
    return;
  }
  for (int i = 0; i < 2; ++i) {
    if (stage_[i] == nullptr) check(d_.mem_alloc_host(&stage_[i], kStageBytes), "cuMemAllocHost");
    if (stage_free_[i] == nullptr) check(d_.event_create(&stage_free_[i], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  }
  std::size_t piece = 0;
  for (std::size_t at = 0; at < bytes; at += kStageBytes, ++piece) {
    const std::size_t n = std::min(kStageBytes, bytes - at);
    const int i = static_cast<int>(piece % 2);
    if (piece >= 2) check(d_.event_synchronize(stage_free_[i]), "cuEventSynchronize");  // its last piece has left
    parallel_copy(static_cast<unsigned char*>(stage_[i]), src + at, n);
    check(d_.memcpy_htod_async(dst + at, stage_[i], n, stream_), "cuMemcpyHtoDAsync");
    check(d_.event_record(stage_free_[i], stream_), "cuEventRecord");
  }
  check(d_.stream_synchronize(stream_), "cuStreamSynchronize");
}

void DeviceMemory::destroy() noexcept {
  for (int i = 0; i < 2; ++i) {
    if (stage_[i] != nullptr) d_.mem_free_host(stage_[i]);
    if (stage_free_[i] != nullptr) d_.event_destroy(stage_free_[i]);
    stage_[i] = nullptr;
    stage_free_[i] = nullptr;
  }
}

}  // namespace autotune::cuda::detail
