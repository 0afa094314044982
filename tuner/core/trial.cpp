#include "tuner/core/trial.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

namespace autotune {

namespace {
constexpr TrialStatus kAll[] = {TrialStatus::ok, TrialStatus::compile_error, TrialStatus::launch_error,
                                TrialStatus::wrong_result, TrialStatus::runtime_fault, TrialStatus::timeout,
                                TrialStatus::invalid, TrialStatus::invalid_resources};
}

const char* to_string(TrialStatus s) {
  switch (s) {
    case TrialStatus::ok: return "ok";
    case TrialStatus::compile_error: return "compile_error";
    case TrialStatus::launch_error: return "launch_error";
    case TrialStatus::wrong_result: return "wrong_result";
    case TrialStatus::runtime_fault: return "runtime_fault";
    case TrialStatus::timeout: return "timeout";
    case TrialStatus::invalid: return "invalid";
    case TrialStatus::invalid_resources: return "invalid_resources";
  }
  return "unknown";
}

TrialStatus trial_status_from_string(const std::string& s) {
  for (TrialStatus t : kAll)
    if (s == to_string(t)) return t;
  throw std::invalid_argument("unknown trial status '" + s + "'");
}

bool Metric::operator==(const Metric& o) const {
  const bool same_value = value == o.value || (std::isnan(value) && std::isnan(o.value));
  return name == o.name && unit == o.unit && same_value;
}

const Metric* find_metric(const std::vector<Metric>& ms, const std::string& name) {
  for (const Metric& m : ms)
    if (m.name == name) return &m;
  return nullptr;
}

double metric_value(const std::vector<Metric>& ms, const std::string& name) {
  const Metric* m = find_metric(ms, name);
  return m != nullptr ? m->value : std::numeric_limits<double>::quiet_NaN();
}

void to_json(nlohmann::json& j, const Metric& m) {
  j = nlohmann::json{{"name", m.name}, {"value", nullptr}, {"unit", m.unit}};
  if (std::isfinite(m.value)) j["value"] = m.value;
}

void from_json(const nlohmann::json& j, Metric& m) {
  j.at("name").get_to(m.name);
  const nlohmann::json& v = j.at("value");
  m.value = v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
  m.unit = j.value("unit", "");
}

std::string metrics_text(const std::vector<Metric>& ms) { return ms.empty() ? "" : nlohmann::json(ms).dump(); }

std::vector<Metric> parse_metrics(const std::string& text) {
  if (text.empty()) return {};
  try {
    return nlohmann::json::parse(text).get<std::vector<Metric>>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument("malformed metrics '" + text.substr(0, 80) + "': " + e.what());
  }
}

bool Observation::throttled() const { return (throttle_reasons & kThrottleFlagged) != 0; }

std::string throttle_reason_names(std::uint64_t reasons) {
  static const std::pair<std::uint64_t, const char*> kNames[] = {
      {kThrottleGpuIdle, "gpu_idle"},         {kThrottleApplicationClocks, "applications_clocks"},
      {kThrottleSwPowerCap, "sw_power_cap"},  {kThrottleHwSlowdown, "hw_slowdown"},
      {kThrottleSyncBoost, "sync_boost"},     {kThrottleSwThermal, "sw_thermal"},
      {kThrottleHwThermal, "hw_thermal"},     {kThrottleHwPowerBrake, "hw_power_brake"},
  };
  if (reasons == 0) return "none";
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((reasons & bit) == 0) continue;
    out += (out.empty() ? "" : ",") + std::string(name);
    reasons &= ~bit;
  }
  if (reasons != 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reasons));
    out += (out.empty() ? "" : ",") + std::string(buf);
  }
  return out;
}

std::string format_time_ns(double ns) {
  char buf[64];
  if (ns >= 1e6) std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  return buf;
}

}  // namespace autotune
