// Launch entry point for applications (used by tuner/runtime): loads a CUBIN into a device's primary
// context -- the one the CUDA runtime API uses, so memory from cudaMalloc and cudaStream_t handles work --
// and runs a LaunchPlan on a stream with device pointers the caller supplies for the plan's buffers.
// No CUDA header here: pointers are std::uintptr_t (CUdeviceptr values), streams and modules void*.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/error.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/plan.hpp"

namespace autotune::cuda {

/// cuModuleLoadData refused an image (corrupt, truncated, built for another architecture). code() is the
/// CUresult. Callers holding a cached image recompile; a fresh image failing is an environment error.
class ModuleLoadError : public EnvironmentError {
 public:
  ModuleLoadError(int code, const std::string& message) : EnvironmentError(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// A CUBIN loaded in a Launcher's context; unloaded when the last reference goes. Immutable.
class Module {
 public:
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  void* handle() const { return module_; }  // CUmodule

 private:
  friend class Launcher;
  Module() = default;
  void* module_ = nullptr;
  void* ctx_ = nullptr;  // CUcontext it was loaded into
  /// Each entry point's parameter sizes as the image records them (detail::cubin_parameter_sizes), for the
  /// launch checks; unknown (no entry) where the image could not be read.
  std::optional<std::map<std::string, std::vector<std::size_t>>> parameters_;
};

/// A plan resolved against a module: functions looked up, large dynamic shared memory enabled, scalar
/// arguments packed. Run it with one device pointer per plan buffer (in plan.buffers order).
class PreparedPlan {
 public:
  ~PreparedPlan();
  const LaunchPlan& plan() const { return plan_; }

 private:
  friend class Launcher;
  struct Bound;  // the plan bound to the module's functions (plan_binding.hpp)
  PreparedPlan();
  LaunchPlan plan_;
  std::shared_ptr<const Module> module_;
  std::unique_ptr<Bound> bound_;
};

/// Binds one GPU's primary context. Thread-safe (the driver is; run() touches no shared mutable state), but
/// the caller orders work that shares buffers. Every method makes the context current for its duration:
/// if the calling thread has no current context the primary one is set (as the runtime API does); if another
/// context is current it is pushed and popped around the call.
class Launcher {
 public:
  /// ordinal < 0: the device of the calling thread's current context, or GPU 0 when none is current.
  /// Throws EnvironmentError (no driver/GPU) or UsageError (no such ordinal).
  explicit Launcher(int ordinal = -1);
  ~Launcher();
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  const DeviceInfo& device() const { return info_; }
  int ordinal() const { return ordinal_; }
  /// "sm_90".
  std::string arch() const { return "sm_" + std::to_string(info_.cc); }

  /// Loads a CUBIN. Throws ModuleLoadError with the CUDA message if the driver refuses it.
  std::shared_ptr<const Module> load(const std::vector<unsigned char>& image) const;

  /// Resolves a plan's kernels in module. Throws UsageError (kernel missing, malformed plan) or
  /// EnvironmentError (cuFuncSetAttribute refused) naming the step.
  std::shared_ptr<const PreparedPlan> prepare(std::shared_ptr<const Module> module, const LaunchPlan& plan) const;

  /// Enqueues the plan's steps on stream (a CUstream / cudaStream_t; nullptr = the legacy default stream),
  /// after copying the plan's constant buffers into their __constant__ symbols (plans with constants only).
  /// buffers[i] is the device address of plan().buffers[i]; scalars (when not null) the values of the scalar
  /// arguments that name one (KernelArg::scalar), each in the low bytes of a 64-bit slot as the kernel
  /// parameter's type. Asynchronous; throws EnvironmentError with the CUDA message if a launch is refused.
  void run(const PreparedPlan& p, const std::uintptr_t* buffers, void* stream,
           const std::uint64_t* scalars = nullptr) const;
  /// Same with buffers by name (slower: for tools and tests).
  void run(const PreparedPlan& p, const std::map<std::string, std::uintptr_t>& buffers, void* stream) const;

  /// Enqueues filling count 32-bit words at ptr with value on stream (cuMemsetD32Async).
  void fill32_async(std::uintptr_t ptr, std::uint32_t value, std::size_t count, void* stream) const;

  /// Makes `stream` wait for all work submitted to `previous` so far (an event; no host synchronisation).
  void order_after(void* stream, void* previous) const;

  // Plain memory helpers (synchronous), for programs without the CUDA runtime API.
  std::uintptr_t allocate(std::size_t bytes) const;
  void free(std::uintptr_t ptr) const noexcept;
  void copy_to_device(std::uintptr_t dst, const void* src, std::size_t bytes) const;
  void copy_to_host(void* dst, std::uintptr_t src, std::size_t bytes) const;
  void synchronize(void* stream) const;
  /// Waits for all work of the context (needed before freeing memory that pending work may use).
  void synchronize_context() const;

 private:
  friend class OnlineDevice;  // online_device.hpp: its work goes into the same context
  class Current;
  int ordinal_ = 0;
  int device_ = 0;        // CUdevice
  void* ctx_ = nullptr;   // CUcontext (retained primary)
  DeviceInfo info_;
};

}  // namespace autotune::cuda
