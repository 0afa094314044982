// Internal to tuner/cuda: the GPU worker process, an Executor serving the backend's requests over a socket.
// It is this very executable (/proc/self/exe) started with AUTOTUNE_CUDA_WORKER_FD set: a static initializer
// in gpu_worker.cpp serves requests on that socket and exits before main() runs.
#pragma once
#include "tuner/cuda/worker_process.hpp"

namespace autotune::cuda::detail {

/// Serves requests on a connected socket until EOF or a quit request. Returns the process exit code (3 after a
/// sticky fault).
int worker_main(int fd);

/// Starts /proc/self/exe as a GPU worker; region_fd (a SharedRegion's fd) becomes kWorkerRegionFd there.
/// Throws EnvironmentError if it cannot be started.
WorkerProcess spawn_worker(int region_fd);

}  // namespace autotune::cuda::detail
