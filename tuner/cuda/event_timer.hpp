// Internal to tuner/cuda: how the GPU executor measures (nvbench's measure_cold): warm-up, then samples between
// CUDA events on the launch stream, each after an L2 flush, until the SamplingRule says enough; the observers a
// request asks for (trial_observer.hpp: NVML around the samples, the hardware counters in a replay after them);
// and the device-to-device copy bandwidth.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tuner/cuda/device_memory.hpp"
#include "tuner/cuda/l2_flush.hpp"
#include "tuner/cuda/messages.hpp"
#include "tuner/cuda/trial_observer.hpp"

namespace autotune::cuda::detail {

/// Times runs on the memory's stream. Driver errors throw CudaCallError. Nothing is freed on destruction
/// (DeviceMemory says why): close_observers(), then destroy(). Not thread-safe.
class EventTimer {
 public:
  /// Creates the two events of copy_bandwidth(). site: the GPU the observers watch (each opened on the first
  /// timing that asks for it).
  EventTimer(DeviceMemory& memory, ObserverSite site);
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  /// Warm-up, then samples between events, each after an L2 flush (q.flush_l2: `flush` allocated first), until
  /// q.rule says enough: a stable median, the GPU-time budget spent, or the most samples taken. `run` queues one
  /// run of the measured plan on the stream. With racing, a warm-up probe that loses ends the timing at once
  /// (lost_probe). The observers q asks for act around the samples (q.observe: NVML samples the timed runs and,
  /// for q.energy_ms > 0, an energy window of back-to-back runs follows them; q.metrics: the counters replay the
  /// plan after them).
  TimeRequest::Reply time(const TimeRequest& q, L2Flush& flush, const std::function<void()>& run);

  /// The device-to-device copy bandwidth in GB/s (read + write) over min(1 GiB, free / 4) bytes. Throws
  /// EnvironmentError with too little free memory or a zero time.
  double copy_bandwidth();

  /// Stops and closes the observers (also after a sticky fault).
  void close_observers() noexcept { observers_.close(); }
  /// Destroys the events; ignores errors.
  void destroy() noexcept;

 private:
  void ensure_sample_events(std::size_t n);
  /// Queues one timed run between the events of slot i, after an L2 flush unless flush is null.
  void queue_sample(int i, L2Flush* flush, const std::function<void()>& run);
  /// Waits for slot to - 1 and appends the times of slots [from, to) to samples_.
  void collect(int from, int to);
  /// The samples after the warm-up: the first min_samples queued back to back (or, racing, the first
  /// race_after of them), then one at a time until the rule is satisfied.
  void sample(const SamplingRule& rule, L2Flush* flush, const std::function<void()>& run);

  DeviceMemory& memory_;
  const Driver& d_;
  CUevent ev_start_ = nullptr;
  CUevent ev_end_ = nullptr;
  std::vector<double> samples_ms_;                          // of the timing request, reused
  std::vector<std::pair<CUevent, CUevent>> sample_events_;  // start and end of each sample, created on demand
  ObserverSet observers_;
};

}  // namespace autotune::cuda::detail
