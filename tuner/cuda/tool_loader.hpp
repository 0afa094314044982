// Internal to tuner/cuda: the CUDA backend's end of the tool kernels (device_kernels.hpp): compiled once for the
// GPU's architecture on a thread of their own while the backend starts, then handed to the GPU executor (again to
// each replacement worker).
#pragma once
#include <future>
#include <string>
#include <vector>

#include "tuner/cuda/executor_client.hpp"
#include "tuner/cuda/runtime.hpp"

namespace autotune::cuda::detail {

/// How long the executor may take to load a module of the tuner's own kernels (the tool kernels, a spec's
/// comparison kernels), seconds.
inline constexpr double kToolsTimeoutS = 300;

/// Not thread-safe (its compile thread aside).
class ToolLoader {
 public:
  /// Starts compiling the tool kernels for arch ("sm_90") on a thread of its own (once).
  void begin_compile(const std::string& arch);
  /// Hands the tool kernels to the executor once (install_once) or, after a restart, again where they were
  /// (reinstall). Throws EnvironmentError when they do not compile or the executor cannot load them.
  void install_once(ExecutorClient& executor);
  void reinstall(ExecutorClient& executor);
  bool installed() const { return installed_; }

 private:
  /// The L2 flush reads a 2x L2 buffer before each timed run instead of writing it, and the comparison kernels
  /// verify outputs on the device.
  void install(ExecutorClient& executor);

  std::string arch_;
  std::vector<unsigned char> cubin_;           // device_kernels.hpp for arch_
  std::shared_future<CompileResult> compile_;  // its compilation, started once the arch is known
  bool installed_ = false;                     // the executor has them (set by the first install_once())
};

}  // namespace autotune::cuda::detail
