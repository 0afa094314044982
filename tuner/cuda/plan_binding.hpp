// Internal to tuner/cuda: a LaunchPlan bound to a loaded module, and its launch. One implementation for the
// tuner's GPU executor and for the application launch API (Launcher).
#pragma once
#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tuner/core/plan.hpp"
#include "tuner/cuda/cubin_params.hpp"
#include "tuner/cuda/driver.hpp"

namespace autotune::cuda::detail {

/// Kernel arguments of one launch are packed on the stack, so bounded.
constexpr std::size_t kMaxKernelArgs = 32;

/// One step of a bound plan: for a kernel its function, launch geometry and packed arguments (8 bytes a slot,
/// every KernelArg type fits; a buffer slot holds the byte offset into its buffer until launch); for a memset
/// the buffer index, value and count.
struct BoundStep {
  LaunchStep::Kind kind = LaunchStep::Kind::kernel;
  std::string name;  // kernel name or "memset32(buffer)", for messages
  CUfunction fn = nullptr;
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t shared_bytes = 0;
  std::vector<std::uint64_t> args;
  struct Patch {
    std::size_t slot;    // into args
    std::size_t buffer;  // index into the plan's buffers
  };
  std::vector<Patch> patches;
  struct ScalarPatch {
    std::size_t slot;    // into args
    std::size_t scalar;  // index into the caller's scalars (KernelArg::scalar)
  };
  std::vector<ScalarPatch> scalar_patches;
  std::size_t buffer = 0;  // memset32
  std::uint32_t value = 0;
  std::size_t count = 0;
  std::size_t offset_bytes = 0;

  /// "cuLaunchKernel(k, grid 4x1x1, block 256x1x1, 0 B dynamic shared)" or "cuMemsetD32Async(memset32(b))".
  std::string describe() const;
};

/// A __constant__ symbol of the module and the plan buffer whose bytes go there.
struct BoundConstant {
  std::string symbol;
  CUdeviceptr address = 0;
  std::size_t bytes = 0;   // the buffer's bytes (at most the symbol's)
  std::size_t buffer = 0;  // index into the plan's buffers
};

struct BoundPlan {
  std::vector<BoundStep> steps;
  std::vector<BoundConstant> constants;  // bind_constants()
};

/// Prefix of the message of a configuration that the resource pre-check rules out (CudaCallError with code
/// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, function "resource pre-check"): the backend records it as
/// TrialStatus::invalid_resources.
inline constexpr const char* kInvalidResourcesPrefix = "invalid_resources: ";

/// The function of `name` in module: an extern "C" name or a lowered (mangled) name as it is, else a C++ name
/// (a plain identifier that is not extern "C", a template instantiation compiled as an NVRTC name expression)
/// found among the module's functions by its demangled name (needs a CUDA 12.4 driver). With `symbols` (the
/// image's entry points by symbol, cubin_parameter_sizes()), a name that is none of them is searched for by its
/// demangled name without asking cuModuleGetFunction first. Throws CudaCallError CUDA_ERROR_NOT_FOUND naming the
/// function.
CUfunction resolve_function(const Driver& d, CUmodule module, const std::string& name,
                            const ParameterSizes* symbols = nullptr);

/// Resolves every kernel of plan in module (the context that holds module must be current), enables dynamic
/// shared memory above 48 KiB where a step asks for it, packs the scalar arguments and checks every buffer
/// reference against the plan's declarations. Throws UsageError (undeclared buffer, an access beyond a buffer,
/// more than kMaxKernelArgs arguments) or CudaCallError (a kernel missing from the module, an attribute refused).
/// Before anything runs, each step is checked against what the compiled function can launch with (its register
/// use limits the threads per block; static + dynamic shared memory against the device's opt-in limit): a step
/// that cannot launch throws CudaCallError CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES whose message starts with
/// kInvalidResourcesPrefix and gives the numbers. Each kernel's parameters are checked against the step's
/// arguments (number and sizes; UsageError naming them): from `parameters` (cubin_parameter_sizes() of the loaded
/// image) where given, else by asking the driver.
BoundPlan bind_plan(const Driver& d, CUmodule module, const LaunchPlan& plan,
                    const ParameterSizes* parameters = nullptr);

/// The plan's constant inputs resolved to their module symbols (cuModuleGetGlobal). Throws UsageError for a
/// symbol the module lacks or one smaller than its buffer.
std::vector<BoundConstant> bind_constants(const Driver& d, CUmodule module, const LaunchPlan& plan);

/// Copies the constants' buffers into their symbols (a device copy on stream, before anything the caller
/// enqueues after it); buffers as for enqueue. Throws CudaCallError for a refused copy.
void copy_constants(const Driver& d, const std::vector<BoundConstant>& constants, const std::uintptr_t* buffers,
                    CUstream stream);

/// Enqueues the steps on stream; buffers[i] is the device address (a CUdeviceptr value) of the plan's
/// buffers[i]; scalars (when not null) the caller's values of the scalar arguments that name one
/// (KernelArg::scalar), each packed in the low bytes of a 64-bit slot as the kernel parameter's type.
/// Asynchronous; no allocation. Throws CudaCallError naming the step whose launch was refused.
void enqueue(const Driver& d, const BoundPlan& plan, const std::uintptr_t* buffers, CUstream stream,
             const std::uint64_t* scalars = nullptr);

}  // namespace autotune::cuda::detail
