// Internal to tuner/cuda: the hardware-counter observer (a TrialObserver, trial_observer.hpp). After a
// configuration's timed samples it replays the plan under CUPTI's range profiler (user range, user replay: one
// range around one run of the whole plan, as many passes as the metrics need, the L2 flushed before each), so the
// counters never perturb the time; it adds each metric as a Metric (counters.hpp names and units), the replay's
// wall time as "counter_replay_ms", and "cupti;passes=N;replay=T ms;phases=...;flush=..." to the method. What
// depends only on the metric set and the chip (the configuration image, the evaluator: cupti_host.hpp) is built
// once per process; the range profiler stays enabled on the context from the first replay until the observer
// closes (cupti_range.hpp), so a replay pays its passes, not CUPTI's set-up. CUPTI is loaded with dlopen
// (cupti.hpp); without it, or where the machine refuses profiling, the observer does not open and says why once.
// docs/observers.md.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tuner/cuda/trial_observer.hpp"

namespace autotune::cuda::detail {

struct Cupti;

/// The counter observer of q.metrics on the site's GPU with the process's CUPTI (cupti.hpp cupti()); nullptr and
/// *why without CUPTI, for a GPU or metric CUPTI does not know, or where the machine refuses profiling (one clear
/// message: cupti.hpp profiling_refused_message). A refusal that only shows when a replay starts leaves the trial
/// without counters, says so in note() and stops replaying.
std::unique_ptr<TrialObserver> open_counter_observer(const ObserverSite& site, const TimeRequest& q, std::string* why);
/// The same with a CUPTI of the caller's (tests load a fake one with load_cupti).
std::unique_ptr<TrialObserver> open_counter_observer(const Cupti& api, const ObserverSite& site,
                                                     const std::vector<std::string>& metrics, std::string* why);

/// What CUPTI's host side makes of metrics (counters.hpp names) for a chip such as "GH100", without a GPU.
struct CounterPlan {
  std::size_t passes = 0;         // replays of the plan per configuration
  std::vector<std::string> dims;  // CUPTI's dimension of each metric ("byte", "percent", ...)
};
/// Throws EnvironmentError without CUPTI, for an unknown chip, or for a metric the chip does not have (naming it).
CounterPlan plan_counters(const std::string& chip, const std::vector<std::string>& metrics);

}  // namespace autotune::cuda::detail
