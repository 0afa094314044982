// Internal to tuner/cuda: what watches a configuration while the GPU worker measures it (event_timer.cpp). An
// observer is one class behind TrialObserver: it may act around the timed samples (NVML samples clocks and power
// meanwhile, then opens its energy window) and may replay the configuration after them (the hardware counters, so
// that they never perturb the time); it adds what it saw to the trial's Observation, its own fields or named
// Metric values, which the one field list of the record carries to the database, the JSON and the T4 export.
// A new observer is one file pair plus one line in kObservers (trial_observer.cpp). docs/observers.md.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tuner/core/trial.hpp"
#include "tuner/cuda/driver.hpp"
#include "tuner/cuda/messages.hpp"

namespace autotune::cuda::detail {

/// The GPU an observer watches.
struct ObserverSite {
  std::string uuid;         // DeviceInfo::uuid (32 hex digits): NVML finds the device by it
  int ordinal = 0;          // the CUDA device ordinal: CUPTI's device index
  CUcontext ctx = nullptr;  // the context the plan runs in
};

/// What an observer may do with the configuration once it is timed.
struct TimedRuns {
  const std::function<void()>& run;  // queues one run of the plan on the stream
  std::function<void()> flush_l2;    // queues an L2 flush (nothing without a flush buffer)
  std::function<void()> sync;        // waits for the stream
  double median_ms = 0;              // of the timed samples
};

/// One observer of trials. Not thread-safe: the measuring thread drives it.
class TrialObserver {
 public:
  virtual ~TrialObserver() = default;
  /// Whether this observer, as opened, serves q (an observer opened for other metrics does not).
  virtual bool serves(const TimeRequest& q) const {
    (void)q;
    return true;
  }
  /// Just before the timed samples of q.
  virtual void before_timing(const TimeRequest& q) { (void)q; }
  /// After the timed samples of q: may run the plan further (r) and adds what it saw to o (its method appended
  /// with add_method). Driver errors throw CudaCallError; an observer's own failure leaves o as it was and says
  /// why in note().
  virtual void after_timing(const TimeRequest& q, const TimedRuns& r, Observation& o) = 0;
  /// Why the last after_timing() added nothing ("" when it did).
  virtual std::string note() const { return {}; }
};

/// Appends one observer's method to o.method (" + " between observers).
void add_method(Observation& o, const std::string& method);

/// The observers of one GPU, each opened on the first request that asks for it (kObservers). Not thread-safe.
class ObserverSet {
 public:
  explicit ObserverSet(ObserverSite site);
  ~ObserverSet();
  ObserverSet(const ObserverSet&) = delete;
  ObserverSet& operator=(const ObserverSet&) = delete;

  /// The open observers q asks for, in kObservers' order; opens them on first use. One that cannot open is left
  /// out, and notes(q) says why.
  std::vector<TrialObserver*> for_request(const TimeRequest& q);
  /// Why observers q asks for observe nothing ("nvml: ...; counters: ..."), "" when all of them do.
  std::string notes(const TimeRequest& q) const;
  /// Closes every observer (also after a sticky fault).
  void close() noexcept;

 private:
  struct Slot;
  ObserverSite site_;
  std::vector<std::unique_ptr<Slot>> slots_;  // one per entry of kObservers
};

}  // namespace autotune::cuda::detail
