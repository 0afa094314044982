// How an online search starts (search.hpp): its settings from RuntimeOptions or the environment variable
// AUTOTUNE_ONLINE, and its strategy warm-started from the database's trials of the kernel's other problems, as
// `autotune tune` warm-starts (tuner/session/warm_start.hpp). No CUDA.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "db/database.hpp"
#include "search/strategy.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/online/search.hpp"

namespace autotune::online {

struct Settings {
  Budget budget;
  std::string strategy = search::kLimitedDefaultStrategy;
  std::uint64_t seed = 1;
  /// Write what the search settled on into the database (online trials).
  bool record = true;
};

/// Parses AUTOTUNE_ONLINE's value: "off", "0" or "" for no online tuning (nullopt); "on" for the defaults;
/// else comma-separated items: N (launches), Ns (seconds), launches=N, seconds=S, samples=K, ahead=K,
/// strategy=NAME, seed=N, record=0|1. Throws UsageError naming the item that is wrong.
std::optional<Settings> parse_settings(const std::string& text);

/// The strategy of the search with its limited options, told its budget, and warm-started from the database's
/// trials of spec / w at other problems on `device` (or devices of its architecture); `*source` says where the warm
/// start came from ("" when none). db may be null (no warm start).
std::unique_ptr<search::Strategy> make_strategy(const Settings& s, const ParameterSpace& space, const TuningSpec& spec,
                                                const Workload& w, const ProblemKey& p, const DeviceInfo& device,
                                                const db::Database* db, std::string* source);

}  // namespace autotune::online
