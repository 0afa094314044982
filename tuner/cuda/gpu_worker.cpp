#include "tuner/cuda/gpu_worker.hpp"

#include <string>

#include "tuner/cuda/executor.hpp"
#include "tuner/cuda/messages.hpp"

namespace autotune::cuda::detail {

namespace {
constexpr const char* kWorkerEnv = "AUTOTUNE_CUDA_WORKER_FD";
}  // namespace

int worker_main(int fd) {
  Executor executor;
  std::string request;
  for (;;) {
    if (recv_frame(fd, request, 0) != RecvResult::ok) return 0;  // the backend went away
    const bool quit = !request.empty() && static_cast<Op>(request[0]) == Op::quit;
    const std::string reply = executor.handle(request);
    if (!send_frame(fd, reply)) return 0;
    // After a sticky fault the process is useless; exiting lets the driver clean up.
    if (quit || executor.lost()) return executor.lost() ? 3 : 0;
  }
}

WorkerProcess spawn_worker(int region_fd) {
  return spawn_helper(kWorkerEnv, "the GPU worker", "; TimingOptions::isolate = false runs GPU work in-process instead",
                      region_fd);
}

namespace {

// Runs before main() in a process started by spawn_worker(): serve, then exit without running the host
// program. Only this module's code and the C/C++ runtime are used, so static initialisation order of other
// translation units does not matter.
struct WorkerHook {
  WorkerHook() { serve_as_helper(kWorkerEnv, worker_main); }
};
WorkerHook worker_hook;

}  // namespace
}  // namespace autotune::cuda::detail
