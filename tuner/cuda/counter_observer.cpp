#include "tuner/cuda/counter_observer.hpp"

#include "tuner/core/error.hpp"

#if __has_include(<cupti_range_profiler.h>)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <utility>

#include "tuner/cuda/counters.hpp"
#include "tuner/cuda/cupti.hpp"
#include "tuner/cuda/cupti_host.hpp"
#include "tuner/cuda/cupti_range.hpp"

namespace autotune::cuda::detail {
namespace {

/// Most replay passes of one configuration (CUPTI says how many it needs; GH100 needs 1 to 9 for our metrics).
constexpr std::size_t kMaxPasses = 64;

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

class CounterObserver final : public TrialObserver {
 public:
  CounterObserver(const Cupti& api, ObserverSite site, std::vector<std::string> names,
                  std::shared_ptr<const CounterHost> host, ReplayOptions options)
      : api_(api), site_(std::move(site)), names_(std::move(names)), host_(std::move(host)), options_(options) {}

  bool serves(const TimeRequest& q) const override { return q.metrics == names_; }

  void after_timing(const TimeRequest&, const TimedRuns& r, Observation& o) override {
    if (refused_) return;  // note_ says why, once per request
    note_.clear();
    ReplayPhases t;
    std::vector<double> values;
    try {
      if (profiler_ == nullptr) {  // the first replay, or every one with "reenable"
        const auto t0 = Clock::now();
        profiler_ = std::make_unique<RangeProfiler>(api_, site_.ctx, *host_);
        t.enable = ms_since(t0);
      }
      std::vector<std::uint8_t>& image = profiler_->replay(r, options_, kMaxPasses, t);
      const auto t0 = Clock::now();
      values = host_->evaluate(image);
      t.evaluate = ms_since(t0);
      if (!options_.keep_enabled) {
        const auto t1 = Clock::now();
        profiler_.reset();
        t.disable = ms_since(t1);
      }
    } catch (const CuptiError& e) {
      profiler_.reset();  // a replay that failed part-way leaves the profiler in no known state
      note_ = e.what();
      refused_ = e.refused;
      return;
    } catch (...) {
      profiler_.reset();
      throw;
    }
    ++replays_;
    const double ms = t.total();
    for (std::size_t i = 0; i < names_.size(); ++i) {
      const std::string unit = counter_unit(names_[i]);
      o.metrics.push_back(Metric{names_[i], values[i], unit.empty() ? host_->dims()[i] : unit});
    }
    o.metrics.push_back(Metric{"counter_replay_ms", ms, "ms"});
    char method[64];
    std::snprintf(method, sizeof method, "cupti;passes=%zu;replay=%.1fms;", t.passes, ms);
    add_method(o, method + ("phases=" + t.text()) + (options_.queue_flush ? ";flush=queued" : ";flush=synced") +
                      (options_.keep_enabled ? "" : ";reenable") + (options_.config_once ? ";config_once" : ""));
    if (options_.debug)
      std::fprintf(stderr, "autotune cupti: replay %zu: passes %zu, %.2f ms (%s)\n", replays_, t.passes, ms,
                   t.text().c_str());
  }

  std::string note() const override { return note_; }

 private:
  const Cupti& api_;
  ObserverSite site_;
  std::vector<std::string> names_;
  std::shared_ptr<const CounterHost> host_;  // shared through counter_hosts()
  ReplayOptions options_;
  std::unique_ptr<RangeProfiler> profiler_;  // enabled at the first replay; kept unless options_.keep_enabled is off
  std::string note_;
  std::size_t replays_ = 0;
  bool refused_ = false;
};

/// cuptiProfilerInitialize, once per process and library (tests load a fake one beside the real one).
void initialize_profiler(const Cupti& api) {
  static std::mutex mutex;
  static std::vector<std::pair<const Cupti*, CUptiResult>> done;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [which, result] : done)
    if (which == &api) return check_cupti(api, result, "cuptiProfilerInitialize");
  auto p = sized<CUpti_Profiler_Initialize_Params>();
  const CUptiResult result = api.profiler_initialize(&p);
  done.emplace_back(&api, result);
  check_cupti(api, result, "cuptiProfilerInitialize");
}

}  // namespace

std::unique_ptr<TrialObserver> open_counter_observer(const ObserverSite& site, const TimeRequest& q, std::string* why) {
  const Cupti* api = cupti(why);
  if (api == nullptr) return nullptr;
  return open_counter_observer(*api, site, q.metrics, why);
}

std::unique_ptr<TrialObserver> open_counter_observer(const Cupti& api, const ObserverSite& site,
                                                     const std::vector<std::string>& metrics, std::string* why) {
  std::string bad_option;
  const ReplayOptions options = replay_options_from_env(&bad_option);
  if (!bad_option.empty()) {
    *why = bad_option;
    return nullptr;
  }
  try {
    const auto t0 = Clock::now();
    initialize_profiler(api);
    auto chip = sized<CUpti_Device_GetChipName_Params>();
    chip.deviceIndex = static_cast<std::size_t>(site.ordinal);
    check_cupti(api, api.device_get_chip_name(&chip), "cuptiDeviceGetChipName");
    auto avail = sized<CUpti_Profiler_GetCounterAvailability_Params>();
    avail.ctx = site.ctx;
    check_cupti(api, api.get_counter_availability(&avail), "cuptiProfilerGetCounterAvailability");
    std::vector<std::uint8_t> availability(avail.counterAvailabilityImageSize, 0);
    avail.pCounterAvailabilityImage = availability.data();
    check_cupti(api, api.get_counter_availability(&avail), "cuptiProfilerGetCounterAvailability");
    const double device_ms = ms_since(t0);
    const std::string chip_name = chip.pChipName != nullptr ? chip.pChipName : "";
    bool built = false;
    std::shared_ptr<const CounterHost> host = counter_hosts().get(api, chip_name, &availability, metrics, &built);
    if (options.debug)
      std::fprintf(stderr,
                   "autotune cupti: opened %zu metrics on %s: initialise, chip and counter availability %.2f ms; "
                   "configuration image %s (%.2f ms when built), %zu passes per replay\n",
                   metrics.size(), chip_name.c_str(), device_ms, built ? "built" : "reused", host->build_ms(),
                   host->passes());
    return std::make_unique<CounterObserver>(api, site, metrics, std::move(host), options);
  } catch (const CuptiError& e) {
    *why = e.what();
    return nullptr;
  }
}

CounterPlan plan_counters(const std::string& chip, const std::vector<std::string>& metrics) {
  std::string why;
  const Cupti* api = cupti(&why);
  if (api == nullptr) throw EnvironmentError("no CUPTI: " + why);
  try {
    const std::shared_ptr<const CounterHost> host = counter_hosts().get(*api, chip, nullptr, metrics);
    return CounterPlan{host->passes(), host->dims()};
  } catch (const CuptiError& e) {
    throw EnvironmentError(e.what());
  }
}

}  // namespace autotune::cuda::detail

#else  // built without CUPTI's headers: the counter observer never opens

namespace autotune::cuda::detail {

std::unique_ptr<TrialObserver> open_counter_observer(const ObserverSite&, const TimeRequest&, std::string* why) {
  *why = "the tuner was built without CUPTI's headers (cupti_range_profiler.h)";
  return nullptr;
}

std::unique_ptr<TrialObserver> open_counter_observer(const Cupti&, const ObserverSite&, const std::vector<std::string>&,
                                                     std::string* why) {
  *why = "the tuner was built without CUPTI's headers (cupti_range_profiler.h)";
  return nullptr;
}

CounterPlan plan_counters(const std::string&, const std::vector<std::string>&) {
  throw EnvironmentError("the tuner was built without CUPTI's headers (cupti_range_profiler.h)");
}

}  // namespace autotune::cuda::detail
#endif
