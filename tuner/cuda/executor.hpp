// Internal to tuner/cuda: the GPU side of the CUDA backend.
//
// An Executor owns one device's primary context, the problem's device buffers (inputs, expected values,
// outputs and scratch), the tool kernels (device_kernels.hpp) and the module of the configuration being
// measured. It is driven by request messages (messages.hpp) and answers with reply messages, so that the same
// code runs either in-process or in the GPU worker process (gpu_worker.hpp).
//
// A sticky fault (illegal address, misaligned address, trap ...) cannot be recovered inside a process on
// current drivers: checked on an H200 with driver 580 (2026): after CUDA_ERROR_ILLEGAL_ADDRESS,
// cuDevicePrimaryCtxReset succeeds but cuDevicePrimaryCtxRetain keeps returning CUDA_ERROR_ILLEGAL_ADDRESS,
// and the runtime's cudaDeviceReset() leaves cudaMalloc failing with cudaErrorDevicesUnavailable. The
// backend therefore runs the Executor in a worker process by default and starts a new one after a fault.
#pragma once
#include <memory>
#include <string>

namespace autotune::cuda::detail {

/// Serves requests for one GPU. handle() never throws: errors become replies. After a sticky fault every
/// further request is answered with environment_error (the process cannot use the GPU any more).
/// Not thread-safe.
class Executor {
 public:
  Executor();
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  std::string handle(const std::string& request);
  /// True once a sticky fault happened.
  bool lost() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace autotune::cuda::detail
