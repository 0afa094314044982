// Internal to tuner/cuda: the host side of the counter observer (counter_observer.hpp): what CUPTI's profiler host
// API makes of a metric set for one chip (the configuration image that schedules the counters, the number of
// replay passes, each metric's dimension) and the evaluator that turns decoded counter data into metric values.
// All of it depends only on (CUPTI library, chip, counter availability, metric names), never on the configuration
// measured, so it is built once and kept for the process (CounterHostCache). Include only where
// __has_include(<cupti_range_profiler.h>) holds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tuner/cuda/cupti.hpp"

namespace autotune::cuda::detail {

/// The profiler host API's object for one chip with the metrics added. Failed calls throw CuptiError (an unknown
/// metric names the metric and the chip). evaluate() is thread-safe; the rest is immutable once built.
class CounterHost {
 public:
  /// names: counters.hpp names or CUPTI metric names; availability: the context's counter availability image
  /// (nullptr: every counter of the chip, for planning without a GPU).
  CounterHost(const Cupti& api, const std::string& chip, const std::vector<std::uint8_t>* availability,
              const std::vector<std::string>& names);
  ~CounterHost();
  CounterHost(const CounterHost&) = delete;
  CounterHost& operator=(const CounterHost&) = delete;

  /// The metrics' values (in the order of the names) in range 0 of a decoded counter data image.
  std::vector<double> evaluate(std::vector<std::uint8_t>& image) const;

  /// The CUPTI metric names, as CUPTI's calls take them.
  const std::vector<const char*>& names() const { return pointers_; }
  const std::vector<std::uint8_t>& config() const { return config_; }
  std::size_t passes() const { return passes_; }
  /// CUPTI's dimension of each metric ("byte", "percent", ...).
  const std::vector<std::string>& dims() const { return dims_; }
  /// How long building it took (host initialisation, metric properties, configuration image), ms.
  double build_ms() const { return build_ms_; }

 private:
  const Cupti& api_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  std::vector<std::string> cupti_names_;
  std::vector<const char*> pointers_;  // into cupti_names_
  std::vector<std::string> dims_;
  std::vector<std::uint8_t> config_;
  std::size_t passes_ = 0;
  double build_ms_ = 0;
  mutable std::mutex evaluate_mutex_;  // the host object is CUPTI's: one evaluation at a time
};

/// Counter hosts by (CUPTI library, chip, counter availability image, metric names): an observer opened again for
/// a metric set seen before (the request's metrics changed and changed back, or the observers were closed) takes
/// the one built before. Thread-safe.
class CounterHostCache {
 public:
  /// The host of this key, built (CounterHost's constructor, which may throw CuptiError) when there is none yet;
  /// *built (when given) says which.
  std::shared_ptr<const CounterHost> get(const Cupti& api, const std::string& chip,
                                         const std::vector<std::uint8_t>* availability,
                                         const std::vector<std::string>& names, bool* built = nullptr);
  std::size_t size() const;
  void clear();

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const CounterHost>> hosts_;
};

/// The process's cache of counter hosts.
CounterHostCache& counter_hosts();

}  // namespace autotune::cuda::detail
