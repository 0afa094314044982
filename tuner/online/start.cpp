#include "tuner/online/start.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "tuner/core/error.hpp"
#include "tuner/core/text.hpp"
#include "tuner/session/warm_start.hpp"

namespace autotune::online {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::size_t count_of(const std::string& item, const std::string& v) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || v[0] == '-')
    throw UsageError("AUTOTUNE_ONLINE: '" + item + "' is not a whole number");
  return static_cast<std::size_t>(n);
}

double seconds_of(const std::string& item, std::string v) {
  if (!v.empty() && v.back() == 's') v.pop_back();
  char* end = nullptr;
  const double s = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(s) || s < 0)
    throw UsageError("AUTOTUNE_ONLINE: '" + item + "' is not a number of seconds");
  return s;
}

}  // namespace

std::optional<Settings> parse_settings(const std::string& text) {
  const std::string t = lower(trim(text));
  if (t.empty() || t == "0" || t == "off" || t == "false" || t == "no") return std::nullopt;
  Settings s;
  if (t == "on" || t == "1" || t == "true" || t == "yes") return s;
  std::size_t from = 0;
  while (from <= t.size()) {
    const std::size_t comma = t.find(',', from);
    const std::string item = trim(t.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    from = comma == std::string::npos ? t.size() + 1 : comma + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) {
      if (item.back() == 's')
        s.budget.seconds = seconds_of(item, item);
      else
        s.budget.launches = count_of(item, item);
      continue;
    }
    const std::string key = trim(item.substr(0, eq)), v = trim(item.substr(eq + 1));
    if (key == "launches")
      s.budget.launches = count_of(item, v);
    else if (key == "seconds")
      s.budget.seconds = seconds_of(item, v);
    else if (key == "samples")
      s.budget.samples = std::max<std::size_t>(1, count_of(item, v));
    else if (key == "ahead")
      s.budget.ahead = std::max<std::size_t>(1, count_of(item, v));
    else if (key == "strategy")
      s.strategy = v;
    else if (key == "seed")
      s.seed = count_of(item, v);
    else if (key == "record")
      s.record = count_of(item, v) != 0;
    else
      throw UsageError("AUTOTUNE_ONLINE: unknown item '" + item +
                       "' (expected N launches, Ns seconds, launches=, seconds=, samples=, ahead=, strategy=, seed=, "
                       "record=)");
  }
  return s;
}

std::unique_ptr<search::Strategy> make_strategy(const Settings& s, const ParameterSpace& space, const TuningSpec& spec,
                                                const Workload& w, const ProblemKey& p, const DeviceInfo& device,
                                                const db::Database* db, std::string* source) {
  auto strategy = search::make_strategy(s.strategy, space, s.seed, search::limited_options(s.strategy, {}));
  // Each judged configuration costs `samples` launches and one verification.
  strategy->set_budget(std::max<std::size_t>(1, s.budget.launches / (s.budget.samples + 1)));
  if (source != nullptr) source->clear();
  if (db == nullptr) return strategy;
  const session::WarmStart ws = session::find_warm_start(*db, spec, device, w, p);
  search::WarmStartHint hint;
  for (const Config& c : ws.configs) {
    const std::ptrdiff_t i = space.find(c);
    if (i >= 0 &&
        std::find(hint.indices.begin(), hint.indices.end(), static_cast<std::size_t>(i)) == hint.indices.end())
      hint.indices.push_back(static_cast<std::size_t>(i));
  }
  for (const auto& [c, v] : ws.values) {
    const std::ptrdiff_t i = space.find(c);
    if (i >= 0 && std::isfinite(v)) hint.source_values.push_back({static_cast<std::size_t>(i), v});
  }
  hint.distance = ws.distance;
  hint.source = ws.problem;
  if (!hint.indices.empty()) {
    strategy->warm_start(hint);
    if (source != nullptr) *source = ws.source;
  }
  return strategy;
}

}  // namespace autotune::online
