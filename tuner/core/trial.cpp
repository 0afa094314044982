#include "tuner/core/trial.hpp"

#include <cstdio>
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
