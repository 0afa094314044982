// How the CLI shows what the observers (NVML) recorded with a trial.
#pragma once
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "db/database.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/objective.hpp"

namespace autotune::cli {

/// A number for JSON: null where not observed (NaN).
inline nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

/// An observation's named values (hardware counters) as JSON: an object keyed by name, each {"value" (null where not
/// evaluated), "unit"}; an empty object where none was taken.
inline nlohmann::json metrics_json(const std::vector<Metric>& ms) {
  nlohmann::json j = nlohmann::json::object();
  for (const Metric& m : ms) j[m.name] = {{"value", json_number(m.value)}, {"unit", m.unit}};
  return j;
}

/// The observation as JSON (null altogether when nothing was observed): every field under its name
/// (Observation::for_each_field), a number null where not observed, throttle_reasons as names
/// (throttle_reason_names), the metrics keyed by name (metrics_json); and the derived gbps_per_watt and throttled.
inline nlohmann::json observation_json(const Observation& o, double gbps) {
  if (!o.observed()) return nullptr;
  nlohmann::json j = nlohmann::json::object();
  Observation::for_each_field(o, [&](const char* name, const auto& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, double>)
      j[name] = json_number(v);
    else
      j[name] = v;
  });
  j["throttle_reasons"] = throttle_reason_names(o.throttle_reasons);
  j["metrics"] = metrics_json(o.metrics);
  j["gbps_per_watt"] = json_number(gbps > 0 && o.power_w > 0 ? gbps / o.power_w : NAN);
  j["throttled"] = o.throttled();
  return j;
}

/// Table cells of an observation: power, energy per run, median SM clock, throttled; and their header.
constexpr const char* kObservationCells = "%8s %9s %7s  %-3s";
inline std::string observation_header() {
  char buf[64];
  std::snprintf(buf, sizeof buf, kObservationCells, "power", "energy", "SM MHz", "thr");
  return buf;
}
inline std::string observation_cells(const Observation& o) {
  const std::string power = std::isfinite(o.power_w) ? fmt("%6.1f W", o.power_w) : "-";
  const std::string energy = std::isfinite(o.energy_j) ? format_objective(Objective::energy, o.energy_j) : "-";
  const std::string clock = std::isfinite(o.sm_clock_mhz) ? fmt("%.0f", o.sm_clock_mhz) : "-";
  char buf[96];
  std::snprintf(buf, sizeof buf, kObservationCells, power.c_str(), energy.c_str(), clock.c_str(),
                o.observed() ? (o.throttled() ? "yes" : "no") : "-");
  return buf;
}

}  // namespace autotune::cli
