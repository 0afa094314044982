// Internal to tuner/cuda: the CUDA backend's set-up of a problem: the size check, the inputs (made on the host and
// uploaded, or drawn on the GPU), the expected values (the adapter's CPU reference, a reference kernel's outputs,
// or made on the GPU from drawn inputs), and where the outputs are verified (comparison kernels on the GPU or the
// CPU); the copy bandwidth, measured once while the inputs are made.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tuner/core/adapter.hpp"
#include "tuner/core/backend.hpp"
#include "tuner/cuda/config_compiler.hpp"
#include "tuner/cuda/executor_client.hpp"
#include "tuner/cuda/problem_data.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/cuda/tool_loader.hpp"

namespace autotune::cuda::detail {

/// The problem the backend prepares or has prepared.
struct PreparedProblem {
  Workload workload;
  ProblemKey problem;
  std::uint64_t seed = 0;
  HostBuffers expected;                      // expected values that the host made (all but those the GPU made)
  std::vector<OutputCheck> checks;           // non-empty: outputs are compared on the GPU
  std::vector<unsigned char> compare_cubin;  // the reference's module, holding the spec's comparison kernels
  bool compare_installed = false;            // the executor has compare_cubin loaded
  std::string verification = "host";         // CudaBackend::verification()
};

/// Sets up the problem in `current` over the backend's parts (all must outlive it). Not thread-safe.
class ProblemSetup {
 public:
  /// Runs a reference kernel's plan once on poisoned outputs and puts its outputs in `outputs` (the module stays
  /// loaded); returns "" or, when the run failed, why.
  using ReferenceRun = std::function<std::string(const LaunchPlan&, const CompileResult&, HostBuffers& outputs)>;

  ProblemSetup(const KernelAdapter& adapter, const TimingOptions& opt, const DeviceInfo& info,
               const ConfigCompiler& compiler, ProblemData& data, ExecutorClient& executor, ToolLoader& tools,
               BackendStats& counters, PreparedProblem& current, ReferenceRun run_reference)
      : adapter_(adapter),
        opt_(opt),
        info_(info),
        compiler_(compiler),
        data_(data),
        executor_(executor),
        tools_(tools),
        counters_(counters),
        p_(current),
        run_reference_(std::move(run_reference)) {}

  /// For `current`'s workload, problem and seed, with the executor released: checks that the problem fits, makes
  /// its inputs and expected values and chooses its verification (the tool kernels are installed on the way when
  /// the GPU draws the inputs). Throws UsageError when the problem does not fit or cannot be verified,
  /// SpecError when the reference does not compile, EnvironmentError when the GPU fails.
  void make();

  /// Bytes of the L2 flush buffer (0: no flush).
  std::size_t flush_bytes() const;
  /// Names of the expected buffers the checks read (values and tolerances), each once, but those the GPU made
  /// itself (ProblemData::make_expected): the ones that go from the host to the device.
  std::set<std::string> expected_names() const;
  /// Hands the module with the spec's comparison kernels (the reference kernel's) to the executor.
  void install_compare_kernels();
  /// Free device memory (cuMemGetInfo in the executor's context).
  std::uint64_t free_memory();
  /// The device-to-device copy bandwidth in GB/s, measured once.
  double copy_bandwidth();

 private:
  std::vector<DrawRecipe> device_draws() const;
  std::optional<PrefixRecipe> device_reference() const;
  std::size_t expected_device_bytes() const;
  void check_fits(std::size_t needed);
  std::optional<LaunchPlan> default_plan() const;
  void make_and_upload(bool estimated, std::size_t& needed);
  void draw_inputs(const std::vector<DrawRecipe>& draws, const std::optional<PrefixRecipe>& made, bool estimated,
                   std::size_t& needed);
  HostBuffers expected_values(std::optional<HostBuffers> ref);
  void choose_verification(std::size_t needed);
  CompileResult compile_reference();
  std::string reference_what() const;
  HostBuffers run_reference_kernel(const LaunchPlan& plan);

  const KernelAdapter& adapter_;
  const TimingOptions& opt_;
  const DeviceInfo& info_;
  const ConfigCompiler& compiler_;
  ProblemData& data_;
  ExecutorClient& executor_;
  ToolLoader& tools_;
  BackendStats& counters_;
  PreparedProblem& p_;
  ReferenceRun run_reference_;
  std::optional<double> copy_gbps_;
};

}  // namespace autotune::cuda::detail
