#include "tuner/cuda/observer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>
#include <utility>

#include "tuner/core/stats.hpp"
#include "tuner/cuda/trial_observer.hpp"

namespace autotune::cuda::detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
/// Most runs of one energy window (a kernel of 1 us at a 100 ms window needs 10^5).
constexpr std::uint64_t kMaxEnergyRuns = 1000000;

/// Median and minimum of the finite values of one field; NaN when there are none.
std::pair<double, double> median_min(const std::vector<NvmlSample>& samples, double NvmlSample::*field) {
  std::vector<double> v;
  for (const auto& s : samples)
    if (std::isfinite(s.*field)) v.push_back(s.*field);
  if (v.empty()) return {kNaN, kNaN};
  return {stats::median(v), *std::min_element(v.begin(), v.end())};
}

/// Observer behind the TrialObserver interface.
class NvmlTrialObserver final : public TrialObserver {
 public:
  explicit NvmlTrialObserver(std::unique_ptr<Observer> obs) : obs_(std::move(obs)) {}
  void before_timing(const TimeRequest& q) override {
    obs_->start(std::chrono::microseconds(std::max(100, q.observe_interval_us)));
  }
  void after_timing(const TimeRequest& q, const TimedRuns& r, Observation& o) override {
    if (q.energy_ms > 0) {
      const double median_ms = std::max(1e-4, r.median_ms);
      const auto runs = static_cast<std::uint64_t>(
          std::clamp(std::ceil(q.energy_ms / median_ms), 1.0, static_cast<double>(kMaxEnergyRuns)));
      r.sync();
      obs_->energy_begin();
      for (std::uint64_t i = 0; i < runs; ++i) r.run();
      r.sync();
      obs_->energy_end(runs);
    }
    Observation seen = obs_->stop();
    seen.metrics = std::move(o.metrics);
    const std::string earlier = std::move(o.method);
    o = std::move(seen);
    const std::string mine = std::move(o.method);
    o.method = earlier;
    add_method(o, mine);
  }

 private:
  std::unique_ptr<Observer> obs_;
};

}  // namespace

std::unique_ptr<TrialObserver> open_nvml_observer(const ObserverSite& site, const TimeRequest&, std::string* why) {
  const Nvml* api = nvml(why);
  if (api == nullptr) return nullptr;
  std::unique_ptr<Observer> obs = Observer::open(*api, site.uuid, why);
  if (obs == nullptr) return nullptr;
  return std::make_unique<NvmlTrialObserver>(std::move(obs));
}

std::unique_ptr<Observer> Observer::open(const Nvml& api, const std::string& uuid_hex, std::string* why) {
  const std::string uuid = nvml_uuid(uuid_hex);
  if (uuid.empty()) {
    *why = "the GPU reports no UUID NVML could match ('" + uuid_hex + "')";
    return nullptr;
  }
  Nvml::Device device = nullptr;
  const Nvml::Return r = api.device_get_handle_by_uuid(uuid.c_str(), &device);
  if (r != nvml_abi::kSuccess || device == nullptr) {
    *why = "nvmlDeviceGetHandleByUUID(" + uuid + ") failed: " + api.error_text(r);
    return nullptr;
  }
  return std::make_unique<Observer>(api, device);
}

Observer::Observer(const Nvml& api, Nvml::Device device) : api_(api), device_(device), power_limit_w_(kNaN) {
  unsigned mw = 0;
  if (api_.device_get_enforced_power_limit(device_, &mw) == nvml_abi::kSuccess && mw > 0) power_limit_w_ = mw / 1e3;
}

Observer::~Observer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

NvmlSample Observer::sample() const {
  NvmlSample s{kNaN, kNaN, kNaN, kNaN};
  unsigned v = 0;
  if (api_.device_get_clock_info(device_, nvml_abi::kClockSm, &v) == nvml_abi::kSuccess) s.sm_mhz = v;
  if (api_.device_get_clock_info(device_, nvml_abi::kClockMem, &v) == nvml_abi::kSuccess) s.mem_mhz = v;
  if (api_.device_get_power_usage(device_, &v) == nvml_abi::kSuccess) s.power_w = v / 1e3;
  if (api_.device_get_temperature(device_, nvml_abi::kTemperatureGpu, &v) == nvml_abi::kSuccess) s.temperature_c = v;
  unsigned long long reasons = 0;
  if (api_.device_get_clock_event_reasons(device_, &reasons) == nvml_abi::kSuccess) s.reasons = reasons;
  s.in_energy_window = in_window_.load();
  return s;
}

void Observer::start(std::chrono::microseconds interval) {
  if (thread_.joinable()) stop();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    samples_.clear();
    samples_.push_back(sample());
  }
  counter_ok_ = false;
  runs_ = 0;
  stop_ = false;
  thread_ = std::thread([this, interval] { loop(interval); });
}

void Observer::loop(std::chrono::microseconds interval) {
  auto next = std::chrono::steady_clock::now() + interval;
  while (!stop_.load()) {
    std::this_thread::sleep_until(next);
    next += interval;
    if (stop_.load()) break;
    NvmlSample s = sample();
    std::lock_guard<std::mutex> lock(mutex_);
    samples_.push_back(s);
  }
}

void Observer::energy_begin() {
  counter_ok_ = api_.device_get_total_energy_consumption(device_, &energy_start_mj_) == nvml_abi::kSuccess;
  window_start_ = std::chrono::steady_clock::now();
  in_window_ = true;
  std::lock_guard<std::mutex> lock(mutex_);
  samples_.push_back(sample());
}

void Observer::energy_end(std::uint64_t runs) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    samples_.push_back(sample());
  }
  in_window_ = false;
  if (counter_ok_)
    counter_ok_ = api_.device_get_total_energy_consumption(device_, &energy_end_mj_) == nvml_abi::kSuccess &&
                  energy_end_mj_ >= energy_start_mj_;
  window_end_ = std::chrono::steady_clock::now();
  runs_ = runs;
}

Observation Observer::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  std::vector<NvmlSample> samples;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    samples_.push_back(sample());
    samples.swap(samples_);
  }
  const double window_s = runs_ > 0 ? std::chrono::duration<double>(window_end_ - window_start_).count() : 0.0;
  const double counter_mj = counter_ok_ && runs_ > 0 ? static_cast<double>(energy_end_mj_ - energy_start_mj_) : -1.0;
  Observation o = summarise(samples, counter_mj, window_s, runs_, power_limit_w_);
  runs_ = 0;
  return o;
}

Observation summarise(const std::vector<NvmlSample>& samples, double counter_mj, double window_s,
                      std::uint64_t runs, double power_limit_w) {
  Observation o;
  std::tie(o.sm_clock_mhz, o.sm_clock_min_mhz) = median_min(samples, &NvmlSample::sm_mhz);
  std::tie(o.mem_clock_mhz, o.mem_clock_min_mhz) = median_min(samples, &NvmlSample::mem_mhz);
  o.power_limit_w = power_limit_w;
  std::vector<NvmlSample> window;
  for (const auto& s : samples) {
    o.throttle_reasons |= s.reasons;
    if (std::isfinite(s.temperature_c) && !(s.temperature_c <= o.temperature_c)) o.temperature_c = s.temperature_c;
    if (s.in_energy_window) window.push_back(s);
  }
  const std::vector<NvmlSample>& powered = window.empty() ? samples : window;
  double sum = 0;
  int n = 0;
  for (const auto& s : powered)
    if (std::isfinite(s.power_w)) sum += s.power_w, ++n;
  const double sampled_w = n > 0 ? sum / n : kNaN;
  const char* energy_method = "none";
  if (runs > 0 && window_s > 0 && counter_mj >= 0) {
    o.energy_j = counter_mj / 1e3 / static_cast<double>(runs);
    o.power_w = counter_mj / 1e3 / window_s;
    energy_method = "counter";
  } else if (runs > 0 && window_s > 0 && std::isfinite(sampled_w)) {
    o.energy_j = sampled_w * window_s / static_cast<double>(runs);
    o.power_w = sampled_w;
    energy_method = "power";
  } else {
    o.power_w = sampled_w;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "nvml;energy=%s;runs=%llu;window=%.1fms;samples=%zu", energy_method,
                static_cast<unsigned long long>(runs), window_s * 1e3, samples.size());
  o.method = buf;
  return o;
}

}  // namespace autotune::cuda::detail
