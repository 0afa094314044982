// Internal to tuner/cuda: the tool kernels (device_kernels.hpp) loaded into the GPU executor's context, with the
// functions its parts launch: the L2 flush (l2_flush.hpp), the draw and prefix kernels (problem_buffers.hpp) and
// the comparison kernels (verifier.hpp).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "tuner/cuda/driver.hpp"

namespace autotune::cuda::detail {

/// The tool kernels' module on the current context; every function is nullptr until load() succeeded. Driver
/// errors throw CudaCallError. Not thread-safe.
class ToolModule {
 public:
  explicit ToolModule(const Driver& d) : d_(d) {}
  ToolModule(const ToolModule&) = delete;
  ToolModule& operator=(const ToolModule&) = delete;

  /// Loads the tool kernels' cubin (unloading an earlier one first) and resolves the flush, draw and prefix
  /// kernels.
  void load(const std::vector<unsigned char>& cubin);
  bool loaded() const { return module_ != nullptr; }

  CUfunction flush() const { return flush_; }
  CUfunction draw() const { return draw_; }
  /// The prefix kernels: totals, carries, write (device_kernels.hpp).
  CUfunction prefix(int k) const { return prefix_[k]; }
  /// The comparison kernel `name` (compare_kernel_name()), resolved on first use. Throws EnvironmentError
  /// before load().
  CUfunction compare(const std::string& name);

  /// Unloads the module; ignores errors.
  void destroy() noexcept;

 private:
  const Driver& d_;
  CUmodule module_ = nullptr;
  CUfunction flush_ = nullptr;
  CUfunction draw_ = nullptr;
  CUfunction prefix_[3] = {};                  // totals, carries, write
  std::map<std::string, CUfunction> compare_;  // by entry point, resolved on first use
};

}  // namespace autotune::cuda::detail
