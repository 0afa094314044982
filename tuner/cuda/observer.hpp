// Internal to tuner/cuda: the NVML observer (a TrialObserver, trial_observer.hpp): watches one GPU through NVML
// while a configuration is measured (in the GPU worker, next to the timed samples: event_timer.cpp). A thread samples
// SM and memory clocks, power, temperature and the clock event ("throttle") reasons; an energy window reads NVML's
// total energy counter (Volta and later; Hopper has it) around back-to-back runs, or integrates the sampled power where
// the counter is missing. Never changes clocks or limits. Method and limits: docs/observers.md.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tuner/core/trial.hpp"
#include "tuner/cuda/nvml.hpp"

namespace autotune::cuda::detail {

class TrialObserver;  // trial_observer.hpp
struct ObserverSite;  // trial_observer.hpp
struct TimeRequest;   // messages.hpp

/// One NVML reading; NaN where the query failed or is not supported.
struct NvmlSample {
  double sm_mhz, mem_mhz, power_w, temperature_c;
  std::uint64_t reasons = 0;
  bool in_energy_window = false;
};

/// Not thread-safe (one measuring thread drives it); its sampling thread is internal.
class Observer {
 public:
  /// The observer of the GPU with this UUID (DeviceInfo::uuid, 32 hex digits); nullptr and *why when NVML
  /// does not know the device.
  static std::unique_ptr<Observer> open(const Nvml& api, const std::string& uuid_hex, std::string* why);
  Observer(const Nvml& api, Nvml::Device device);
  ~Observer();
  Observer(const Observer&) = delete;
  Observer& operator=(const Observer&) = delete;

  /// Takes one sample at once, then one every `interval` on a thread of its own until stop().
  void start(std::chrono::microseconds interval);
  /// Marks the start of the energy window: reads the energy counter (samples from now on are in the window).
  void energy_begin();
  /// Ends the energy window, in which `runs` runs of the plan were executed back to back.
  void energy_end(std::uint64_t runs);
  /// Stops sampling (after one last sample) and summarises: clocks (median, min), highest temperature,
  /// reasons OR-ed, and, if an energy window was taken, power and energy per run.
  Observation stop();

  /// One reading now (also used by the sampling thread).
  NvmlSample sample() const;

 private:
  void loop(std::chrono::microseconds interval);

  const Nvml& api_;
  Nvml::Device device_;
  double power_limit_w_;
  std::thread thread_;
  std::mutex mutex_;                 // guards samples_
  std::vector<NvmlSample> samples_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> in_window_{false};
  bool counter_ok_ = false;
  unsigned long long energy_start_mj_ = 0, energy_end_mj_ = 0;
  std::chrono::steady_clock::time_point window_start_, window_end_;
  std::uint64_t runs_ = 0;
};

/// The NVML observer of the site's GPU as a TrialObserver: samples every q.observe_interval_us over the timed
/// samples, then, for q.energy_ms > 0, an energy window of back-to-back runs (no L2 flush: the tool's own traffic
/// is not charged to the kernel) for about that long, estimated from the median sample. nullptr and *why without
/// NVML or where it does not know the device.
std::unique_ptr<TrialObserver> open_nvml_observer(const ObserverSite& site, const TimeRequest& q, std::string* why);

/// The summary of samples (pure; tested with a fake NVML): clocks over every sample; power over the samples
/// in the energy window (all samples when none is); energy per run from the counter delta when
/// counter_mj >= 0, else from the mean power over window_s; NaN energy without runs.
Observation summarise(const std::vector<NvmlSample>& samples, double counter_mj, double window_s,
                      std::uint64_t runs, double power_limit_w);

}  // namespace autotune::cuda::detail
