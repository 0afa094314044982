// Internal to tuner/runtime: online tuning of one (workload, problem) of a spec of the caller's, inside the
// application's own launches (docs/lookup.md "Online tuning"). The search (tuner/online/search.hpp) decides what
// each launch runs; this class prepares its candidates on background threads (plan, binary from the stores or
// NVRTC, module, bound plan), runs each launch's step on the application's stream through cuda::OnlineDevice
// (timed launches, candidates on shadow outputs, comparisons), feeds the polled results back, and once the search
// has settled records it in the database. Used by family.cpp under the family's lock.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tuner/core/adapter.hpp"
#include "tuner/cuda/launcher.hpp"
#include "tuner/online/start.hpp"

namespace autotune::runtime_detail {

struct OnlineSetup {
  const TuningSpec& spec;  // outlive the tuner, as the rest
  const KernelAdapter& adapter;
  const cuda::Launcher& launcher;
  Workload workload;
  ProblemKey problem;
  std::vector<std::string> buffers;  // the caller's buffer names, in the order of its pointers
  std::string db_path, cache_dir;
  bool store_binaries = true;
  online::Settings settings;
  Config reference;  // what the launch API would run without online tuning
  std::shared_ptr<const cuda::PreparedPlan> reference_plan;
};

class OnlineTuner {
 public:
  /// Throws UsageError where the problem cannot be tuned online (the reference outside the space, a plan with
  /// scratch buffers, outputs the comparison kernels cannot check): the caller then launches as without it.
  explicit OnlineTuner(OnlineSetup s);
  ~OnlineTuner();
  OnlineTuner(const OnlineTuner&) = delete;
  OnlineTuner& operator=(const OnlineTuner&) = delete;

  /// One launch of the application (user_ptrs: one address per caller buffer name; scalars as cuda::Launcher::run):
  /// the step of the search, enqueued on stream.
  void launch(const std::uintptr_t* user_ptrs, const std::uint64_t* scalars, void* stream);
  /// Whether the search has settled (and was recorded); then best() is its choice.
  bool settled() const;
  const Config& best_config() const;
  std::shared_ptr<const cuda::PreparedPlan> best_plan() const;
  /// "searching: 12 of 200 launches, 5 configurations judged" or "settled on ... after ...: ...".
  std::string status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Settings from RuntimeOptions::online, else the environment variable AUTOTUNE_ONLINE; nullopt when off. A malformed
/// value throws UsageError naming it.
std::optional<online::Settings> online_settings(const std::string& option);

}  // namespace autotune::runtime_detail
