// Internal to tuner/cuda: the target side of the counter observer (counter_observer.hpp): CUPTI's range profiler
// enabled on the GPU's context, with the counter data image sized for a metric set, and one replay of a timed
// configuration under it. Which CUPTI calls are made once and which per replay, and why, is in docs/observers.md
// ("Cost"). Include only where __has_include(<cupti_range_profiler.h>) holds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tuner/cuda/cupti_host.hpp"
#include "tuner/cuda/trial_observer.hpp"

namespace autotune::cuda::detail {

/// How the counter observer replays, from the environment variable AUTOTUNE_CUPTI_REPLAY (comma-separated flags;
/// for measuring the replay itself, docs/observers.md) and AUTOTUNE_CUPTI_DEBUG.
struct ReplayOptions {
  /// Keep the range profiler enabled on the context from the first replay until the observer closes (default);
  /// flag "reenable": enable and disable it around every replay.
  bool keep_enabled = true;
  /// Queue each pass's L2 flush inside the pass, after cuptiRangeProfilerStart and before the range is pushed,
  /// without waiting for it (default): the range then starts on the GPU when the flush ends, with the plan's
  /// launches already queued behind it, as each timed sample starts behind its flush. Flag "sync_flush": flush and
  /// wait before the pass (the GPU idles while the host pushes the range and launches the plan, and that wait is
  /// inside the range's gpu__time_duration).
  bool queue_flush = true;
  /// Flag "config_once": set the configuration (cuptiRangeProfilerSetConfig) only at the first replay after
  /// enabling, and per replay only re-initialise the counter data image, where the metrics take one pass. Off by
  /// default (the configuration is set at every replay, which also restarts the replay at pass 0): for measuring
  /// what SetConfig costs per replay.
  bool config_once = false;
  /// AUTOTUNE_CUPTI_DEBUG set and not "0": one line per opening and per replay on stderr with the phases' times.
  bool debug = false;
};
/// Parses the flags of AUTOTUNE_CUPTI_REPLAY (reenable, sync_flush, config_once) ("" = the defaults). Throws UsageError
/// naming an unknown flag.
ReplayOptions parse_replay_options(const std::string& flags, bool debug);
/// The options of this process's environment (read at each call); an unknown flag gives the defaults and *error
/// (the counter observer then does not open and says why).
ReplayOptions replay_options_from_env(std::string* error);

/// Where one replay's wall time went, ms (what the observer stores in its method and prints with debug).
struct ReplayPhases {
  double enable = 0;    // cuptiRangeProfilerEnable and the counter data image's size (0 while kept enabled)
  double setup = 0;     // re-initialising the counter data image and setting the configuration (config_once: once)
  double runs = 0;      // the passes: Start, flush, Push, the plan, Pop, Stop, waiting for the stream
  double decode = 0;    // cuptiRangeProfilerDecodeData
  double evaluate = 0;  // the host's evaluation of the metrics
  double disable = 0;   // cuptiRangeProfilerDisable (only with "reenable")
  std::size_t passes = 0;
  double total() const { return enable + setup + runs + decode + evaluate + disable; }
  /// "enable:0.00,setup:0.12,runs:0.51,decode:0.30,evaluate:0.20,disable:0.00".
  std::string text() const;
};

/// The range profiler enabled on one context for one counter host's metrics. Failed calls throw CuptiError;
/// the plan's own driver errors propagate from TimedRuns. Not thread-safe.
class RangeProfiler {
 public:
  /// Enables the range profiler on ctx and sizes (once) the counter data image for host's metrics, one range.
  RangeProfiler(const Cupti& api, CUcontext ctx, const CounterHost& host);
  /// Disables it; ignores errors.
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  /// One replay of the configuration r runs: the counter data image re-initialised and the configuration set,
  /// then one user range around one run of the plan per pass (at most max_passes), then decoded. Returns the
  /// decoded image (valid until the next replay) and adds its phases to t.
  std::vector<std::uint8_t>& replay(const TimedRuns& r, const ReplayOptions& options, std::size_t max_passes,
                                    ReplayPhases& t);

 private:
  void disable() noexcept;
  void setup(const ReplayOptions& options);
  bool pass(const TimedRuns& r, const ReplayOptions& options);
  void decode();

  const Cupti& api_;
  const CounterHost& host_;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  std::vector<std::uint8_t> image_;  // the counter data image: sized once, re-initialised per replay
  bool configured_ = false;          // SetConfig was called since enabling
};

}  // namespace autotune::cuda::detail
