#include "tuner/cuda/event_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>

#include "tuner/core/stats.hpp"
#include "tuner/core/text.hpp"

namespace autotune::cuda::detail {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kGiB = std::size_t{1} << 30;
constexpr int kCopyWarmup = 3;
constexpr int kCopySamples = 15;

}  // namespace

EventTimer::EventTimer(DeviceMemory& memory, ObserverSite site)
    : memory_(memory), d_(memory.driver()), observers_(std::move(site)) {
  check(d_.event_create(&ev_start_, CU_EVENT_DEFAULT), "cuEventCreate");
  if (CUresult res = d_.event_create(&ev_end_, CU_EVENT_DEFAULT); res != CUDA_SUCCESS) {
    d_.event_destroy(ev_start_);
    throw_call_error(res, "cuEventCreate");
  }
}

void EventTimer::ensure_sample_events(std::size_t n) {
  while (sample_events_.size() < n) {
    CUevent start = nullptr, end = nullptr;
    check(d_.event_create(&start, CU_EVENT_DEFAULT), "cuEventCreate");
    if (CUresult res = d_.event_create(&end, CU_EVENT_DEFAULT); res != CUDA_SUCCESS) {
      d_.event_destroy(start);
      throw_call_error(res, "cuEventCreate");
    }
    sample_events_.emplace_back(start, end);
  }
}

void EventTimer::queue_sample(int i, L2Flush* flush, const std::function<void()>& run) {
  ensure_sample_events(static_cast<std::size_t>(i) + 1);
  if (flush != nullptr && flush->ready()) flush->flush(static_cast<unsigned>(i));
  check(d_.event_record(sample_events_[i].first, memory_.stream()), "cuEventRecord");
  run();
  check(d_.event_record(sample_events_[i].second, memory_.stream()), "cuEventRecord");
}

void EventTimer::collect(int from, int to) {
  check(d_.event_synchronize(sample_events_[to - 1].second), "cuEventSynchronize");
  for (int i = from; i < to; ++i) {
    float t = 0;
    check(d_.event_elapsed_time(&t, sample_events_[i].first, sample_events_[i].second), "cuEventElapsedTime");
    samples_ms_.push_back(t);
  }
}

TimeRequest::Reply EventTimer::time(const TimeRequest& q, L2Flush& flush, const std::function<void()>& run) {
  SamplingRule rule = q.rule;
  rule.max_samples = std::max(1, rule.max_samples);
  if (q.flush_l2) flush.allocate();
  samples_ms_.clear();
  TimeRequest::Reply reply;
  int warm = std::max(0, q.warmup);
  if (warm > 0 && rule.race_above_ms > 0 && rule.race_probe_factor > 0) {  // the warm-up probe of racing
    queue_sample(0, nullptr, run);                                         // a warm-up run: no flush
    collect(0, 1);
    --warm;
    if (rule.lost_probe(samples_ms_.back())) {
      reply.samples_ms = samples_ms_;
      reply.lost_probe = true;
      return reply;
    }
    samples_ms_.clear();
  }
  for (int i = 0; i < warm; ++i) run();
  const std::vector<TrialObserver*> observers = observers_.for_request(q);
  for (TrialObserver* o : observers) o->before_timing(q);
  sample(rule, q.flush_l2 ? &flush : nullptr, run);
  if (!observers.empty()) {
    const TimedRuns timed{run,
                          [&flush, &q] {
                            if (q.flush_l2 && flush.ready()) flush.flush(0);
                          },
                          [this] { check(d_.stream_synchronize(memory_.stream()), "cuStreamSynchronize"); },
                          stats::median(samples_ms_)};
    for (TrialObserver* o : observers) o->after_timing(q, timed, reply.observed);
  }
  reply.observer_note = observers_.notes(q);
  reply.samples_ms = samples_ms_;
  return reply;
}

void EventTimer::sample(const SamplingRule& rule, L2Flush* flush, const std::function<void()>& run) {
  // The first min_samples samples are queued back to back with one synchronisation; after that one at a
  // time, since each further sample depends on whether the rule is satisfied.
  const int full = std::max(1, std::min(rule.min_samples, rule.max_samples));
  // Racing: the first race_after samples decide whether the rest are taken at all.
  const int first = rule.race_above_ms > 0 ? std::max(1, std::min(full, rule.race_after)) : full;
  for (int i = 0; i < first; ++i) queue_sample(i, flush, run);
  collect(0, first);
  if (first < full && !rule.lost_race(samples_ms_)) {
    for (int i = first; i < full; ++i) queue_sample(i, flush, run);
    collect(first, full);
  }
  for (int i = static_cast<int>(samples_ms_.size()); !rule.done(samples_ms_); ++i) {
    queue_sample(i, flush, run);
    collect(i, i + 1);
  }
}

double EventTimer::copy_bandwidth() {
  std::size_t free_bytes = 0, total_bytes = 0;
  check(d_.mem_get_info(&free_bytes, &total_bytes), "cuMemGetInfo");
  const std::size_t bytes = std::min(kGiB, free_bytes / 4) / 256 * 256;
  if (bytes < 16 * kMiB) {
    throw EnvironmentError("too little free device memory (" + gib_text(static_cast<double>(free_bytes)) +
                           " GiB) to measure the copy bandwidth");
  }
  const DeviceMemory::Scratch src(memory_, bytes), dst(memory_, bytes);
  const CUstream stream = memory_.stream();
  check(d_.memset_d32_async(src.ptr(), 0x3f800000u, bytes / 4, stream), "cuMemsetD32Async");
  for (int i = 0; i < kCopyWarmup; ++i) {
    check(d_.memcpy_dtod_async(dst.ptr(), src.ptr(), bytes, stream), "cuMemcpyDtoDAsync");
  }
  std::vector<double> ms;
  for (int i = 0; i < kCopySamples; ++i) {
    check(d_.event_record(ev_start_, stream), "cuEventRecord");
    check(d_.memcpy_dtod_async(dst.ptr(), src.ptr(), bytes, stream), "cuMemcpyDtoDAsync");
    check(d_.event_record(ev_end_, stream), "cuEventRecord");
    check(d_.event_synchronize(ev_end_), "cuEventSynchronize");
    float t = 0;
    check(d_.event_elapsed_time(&t, ev_start_, ev_end_), "cuEventElapsedTime");
    ms.push_back(t);
  }
  const double median_ms = stats::median(ms);
  if (!(median_ms > 0)) throw EnvironmentError("copy bandwidth measurement gave a zero time");
  return 2.0 * static_cast<double>(bytes) / (median_ms * 1e-3) / 1e9;
}

void EventTimer::destroy() noexcept {
  for (auto& [start, end] : sample_events_) {
    d_.event_destroy(start);
    d_.event_destroy(end);
  }
  sample_events_.clear();
  if (ev_start_ != nullptr) d_.event_destroy(ev_start_);
  if (ev_end_ != nullptr) d_.event_destroy(ev_end_);
  ev_start_ = ev_end_ = nullptr;
}

}  // namespace autotune::cuda::detail
