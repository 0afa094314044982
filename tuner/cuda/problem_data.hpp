// Internal to tuner/cuda: where a prepared problem's data lie and how they reach the GPU executor. Inputs made
// on the host go through the start of the shared region (the executor restores them from there after a wrong
// result); inputs the GPU draws itself (tuner/core/draw.hpp) never touch the region. Expected values follow the
// inputs in the region one buffer at a time (or are made on the device from the inputs there, for a scan), and
// verification outputs come back after the inputs. For large
// problems the region's pages are allocated ahead while the inputs are made (RegionPrefault).
#pragma once
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "tuner/core/draw.hpp"
#include "tuner/core/plan.hpp"
#include "tuner/cuda/executor_client.hpp"
#include "tuner/cuda/host_copy.hpp"
#include "tuner/cuda/worker_process.hpp"

namespace autotune::cuda::detail {

/// Not thread-safe; one per CudaBackend, living as long as its region and executor.
class ProblemData {
 public:
  ProblemData(SharedRegion& region, ExecutorClient& executor) : region_(region), executor_(executor) {}

  /// Forgets the previous problem's data (the executor has released them), after its pages ahead are allocated.
  void reset();

  /// Starts allocating the region's pages for the problem of `plan` while its inputs are made: its inputs (placed
  /// as upload_inputs places them; none when the GPU draws them), then its largest output (the expected values
  /// pass there one at a time, and host-verified outputs start there). Only from 64 MiB on.
  void prefault(const LaunchPlan& plan, bool inputs_drawn);

  /// The inputs through the start of the region to the device, where they stay for the problem's lifetime.
  void upload_inputs(const HostBuffers& inputs);

  /// Draws the inputs on the device (the executor's tool kernels must be loaded); their chunks' summaries.
  DrawSummaries draw(const std::vector<DrawRecipe>& draws);

  /// Makes expected values on the device from an input there (a PrefixRecipe; the tool kernels must be loaded);
  /// the hash of each chunk's values.
  std::vector<std::uint64_t> make_expected(const PrefixRecipe& recipe);

  /// Names of the expected buffers make_expected() made for this problem.
  std::set<std::string> expected_made() const;

  /// The expected buffers `names` of `expected`, one at a time through the region after the inputs, to the device.
  void upload_expected(const HostBuffers& expected, const std::set<std::string>& names);

  /// For a replacement executor: the inputs again, drawn again or made by `make` and uploaded, and the expected
  /// values make_expected() made.
  void restore_inputs(const std::function<HostBuffers()>& make);

  /// Bytes of the region the inputs take (64-byte aligned; 0 when they were drawn): outputs go after them.
  std::size_t inputs_end() const { return inputs_end_; }
  /// Bytes of the inputs on the device.
  std::size_t device_input_bytes() const;

 private:
  SharedRegion& region_;
  ExecutorClient& executor_;
  RegionPrefault prefault_;         // the region's pages for the problem being prepared, allocated ahead
  std::size_t inputs_end_ = 0;      // inputs at [0, inputs_end_) of the region
  std::vector<DrawRecipe> drawn_;   // the inputs when drawn on the GPU
  std::vector<PrefixRecipe> made_;  // expected values made on the GPU
};

}  // namespace autotune::cuda::detail
