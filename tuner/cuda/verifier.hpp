// Internal to tuner/cuda: the GPU executor's verification of a run's outputs on the device: a comparison kernel
// of the tool kernels (device_kernels.hpp) or of the user's module (kUserCompareContract) against expected values
// kept on the device; only a verdict and the elements of the first mismatches come back.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tuner/core/check.hpp"
#include "tuner/core/plan.hpp"
#include "tuner/cuda/device_memory.hpp"
#include "tuner/cuda/tool_module.hpp"

namespace autotune::cuda::detail {

/// Runs comparisons on the memory's stream and waits for their verdicts. Malformed checks throw UsageError, a
/// comparison before its module EnvironmentError, driver errors CudaCallError. Nothing is freed on destruction
/// (DeviceMemory says why): destroy(). Not thread-safe.
class Verifier {
 public:
  Verifier(DeviceMemory& memory, ToolModule& tools) : memory_(memory), d_(memory.driver()), tools_(tools) {}
  Verifier(const Verifier&) = delete;
  Verifier& operator=(const Verifier&) = delete;

  /// Loads the module of the user's comparison kernels (unloading an earlier one first).
  void load_user_kernels(const std::vector<unsigned char>& cubin);

  /// Runs the comparison kernel of c on the output of `plan` (whose buffers lie at `addresses`) against the
  /// `expected` buffers and brings back its verdict: the count of mismatches and, for the first mismatch of each
  /// of the first regions that have one, the elements.
  CheckVerdict compare(const OutputCheck& c, const LaunchPlan& plan, const std::vector<std::uintptr_t>& addresses,
                       const std::map<std::string, DeviceBuffer>& expected);

  /// Frees the results buffer and unloads the user's module; ignores errors.
  void destroy() noexcept;

 private:
  CUfunction compare_function(const OutputCheck& c);
  /// The user's comparison kernel on got and want (kUserCompareContract): its mismatch count and the element
  /// at the lowest mismatching index it reports.
  CheckVerdict compare_by_user_kernel(const OutputCheck& c, CUdeviceptr got, CUdeviceptr want);
  /// Element i of got, want and (when tol is given) its tolerance.
  Mismatch example(const OutputCheck& c, CUdeviceptr got, CUdeviceptr want, const DeviceBuffer* tol, std::uint64_t i);

  DeviceMemory& memory_;
  const Driver& d_;
  ToolModule& tools_;
  DeviceBuffer results_;                        // 2 x kCompareMaxBlocks u64
  CUmodule user_ = nullptr;                     // the user's comparison kernels, when the backend sent them
  std::map<std::string, CUfunction> user_fns_;  // by entry point, resolved on first use
};

}  // namespace autotune::cuda::detail
