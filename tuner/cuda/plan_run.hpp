// Internal to tuner/cuda: the configuration the GPU executor measures: its module, its launch plan bound to the
// module (plan_binding.hpp), and the plan's output and scratch buffers, which are poisoned or zeroed before a
// verified run and copied into the shared region after it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tuner/core/plan.hpp"
#include "tuner/cuda/device_memory.hpp"
#include "tuner/cuda/messages.hpp"
#include "tuner/cuda/plan_binding.hpp"
#include "tuner/cuda/worker_process.hpp"

namespace autotune::cuda::detail {

/// One loaded configuration at a time; the output and scratch buffers stay from one to the next while large
/// enough. Plans that do not fit the inputs throw UsageError; driver errors throw CudaCallError. Nothing is freed
/// on destruction (DeviceMemory says why): destroy(). Not thread-safe.
class PlanRun {
 public:
  explicit PlanRun(DeviceMemory& memory) : memory_(memory), d_(memory.driver()) {}
  PlanRun(const PlanRun&) = delete;
  PlanRun& operator=(const PlanRun&) = delete;

  /// Allocates the plan's buffers (its inputs must be in `inputs`), loads the module, binds the plan to it and
  /// fills its __constant__ inputs. The module of an earlier load() must have been unloaded.
  void load(LaunchPlan plan, const std::vector<unsigned char>& cubin,
            const std::map<std::string, DeviceBuffer>& inputs);
  bool loaded() const { return module_ != nullptr; }
  /// Queues one run of the loaded plan on the stream.
  void run() { enqueue(d_, bound_, addresses_.data(), memory_.stream()); }
  /// memsets every kernel-state buffer (state = true) or every output and scratch buffer with `byte` (an output
  /// with an initial input gets a copy of that input instead); returns whether there was such a buffer.
  bool fill(bool state, unsigned char byte, const std::map<std::string, DeviceBuffer>& inputs);
  /// Copies every output into the shared region from outputs_at on, each at a multiple of 64 bytes; says where.
  std::vector<OutputPlace> copy_outputs(SharedRegion& region, int fd, std::uint64_t region_bytes,
                                        std::uint64_t outputs_at);

  /// The bytes of every output buffer, in plan order, copied to the host (the run-to-run check of a deterministic
  /// tune). Synchronous.
  std::vector<std::vector<unsigned char>> output_bytes() const;
  /// "" when `before` (output_bytes() of an earlier run) holds the same bytes as the outputs now; else the first
  /// output that differs and where ("output 'out' differs from byte 0 on (4 bytes)").
  std::string repeat_mismatch(const std::vector<std::vector<unsigned char>>& before) const;

  /// The loaded plan and the device address of each of its buffers, in order.
  const LaunchPlan& plan() const { return plan_; }
  const std::vector<std::uintptr_t>& addresses() const { return addresses_; }

  /// Unloads the module (if any).
  void unload();
  /// Unloads the module (if any); ignores errors.
  void unload_quietly() noexcept;
  /// Forgets the module without a driver call (the context is lost).
  void forget() noexcept;
  /// Frees the output and scratch buffers.
  void release();
  /// Unloads the module and frees the buffers; ignores errors.
  void destroy() noexcept;

 private:
  void ensure_work(const std::string& name, std::size_t bytes);

  DeviceMemory& memory_;
  const Driver& d_;
  CUmodule module_ = nullptr;
  LaunchPlan plan_;  // of the loaded module
  BoundPlan bound_;
  std::vector<std::uintptr_t> addresses_;     // of plan_.buffers, in order (CUdeviceptr values)
  std::map<std::string, DeviceBuffer> work_;  // outputs and scratch, reused while large enough
};

}  // namespace autotune::cuda::detail
