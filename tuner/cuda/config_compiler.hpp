// Internal to tuner/cuda: the CUDA backend's compile requests: each configuration's NVRTC options
// (kernel_compile_options) and binary-cache key, and its compile task on the CompilePipeline (NVRTC on the compile
// threads, each in a compile worker process of its own unless TimingOptions::compile_processes is off).
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tuner/core/adapter.hpp"
#include "tuner/core/compile.hpp"

namespace autotune::cuda::detail {

/// Compile requests for one adapter's kernel on one architecture. Not thread-safe (the pipeline's own threads
/// aside).
class ConfigCompiler {
 public:
  /// jobs and cache as CompilePipeline takes them; processes: TimingOptions::compile_processes.
  ConfigCompiler(std::shared_ptr<const KernelAdapter> adapter, int jobs, BinaryCache* cache, bool processes)
      : adapter_(std::move(adapter)), processes_(processes), pipeline_(jobs, cache) {}

  /// The architecture compiled for ("sm_90"), set once the device is known.
  void set_arch(std::string arch) { arch_ = std::move(arch); }
  const std::string& arch() const { return arch_; }

  /// NVRTC options of c for workload w (kernel_compile_options; reference: the reference's compile).
  std::vector<std::string> options_for(const Workload& w, const Config& c, bool reference = false) const;
  /// The binary-cache key of c for workload w, without building a compile task (the readiness checks).
  const std::string& key_of(const Workload& w, const Config& c) { return key_for(options_for(w, c)); }
  /// The compile tasks of configs for workload w and their binary-cache keys, in order.
  std::vector<CompilePipeline::Item> items(const Workload& w, const std::vector<Config>& configs);

  CompilePipeline& pipeline() { return pipeline_; }
  const CompilePipeline& pipeline() const { return pipeline_; }

 private:
  /// The binary-cache key of a configuration compiled with these options, kept by its options.
  const std::string& key_for(const std::vector<std::string>& options);
  /// NVRTC's name of the program: the source file's, else the kernel's name with ".cu".
  std::string program_name() const;

  std::shared_ptr<const KernelAdapter> adapter_;
  bool processes_;
  std::string arch_;
  std::unordered_map<std::string, std::string> keys_by_options_;  // binary key by the options, '\0'-joined
  CompilePipeline pipeline_;
};

}  // namespace autotune::cuda::detail
