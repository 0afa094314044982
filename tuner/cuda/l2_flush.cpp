#include "tuner/cuda/l2_flush.hpp"

#include <algorithm>

namespace autotune::cuda::detail {

void L2Flush::allocate_sink() {
  if (sink_.ptr == 0) sink_ = memory_.allocate(4);
}

void L2Flush::allocate() {
  if (buffer_.ptr != 0 || bytes_ == 0) return;
  buffer_ = memory_.allocate(bytes_);
  check(memory_.driver().memset_d32_async(buffer_.ptr, 0x3f800000u, buffer_.bytes / 4, memory_.stream()),
        "cuMemsetD32Async");
}

void L2Flush::flush(unsigned sample) {
  const Driver& d = memory_.driver();
  if (tools_.flush() == nullptr) {
    check(d.memset_d32_async(buffer_.ptr, 0x9e3779b9u + sample, buffer_.bytes / 4, memory_.stream()),
          "cuMemsetD32Async(L2 flush)");
    return;
  }
  CUdeviceptr buffer = buffer_.ptr;
  unsigned long long n = buffer_.bytes / 16;
  CUdeviceptr sink = sink_.ptr;
  void* args[] = {&buffer, &n, &sink};
  const unsigned blocks = static_cast<unsigned>(std::max(1, sm_count_) * 4);
  CUresult r = d.launch_kernel(tools_.flush(), blocks, 1, 1, 256, 1, 1, 0, memory_.stream(), args, nullptr);
  if (r != CUDA_SUCCESS) throw_call_error(r, "cuLaunchKernel(L2 flush)");
}

void L2Flush::release() { memory_.free_checked(buffer_); }

void L2Flush::destroy() noexcept {
  memory_.free_quietly(buffer_);
  memory_.free_quietly(sink_);
}

}  // namespace autotune::cuda::detail
