// How the CLI shows what the observers (NVML) recorded with a trial.
#pragma once
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "db/database.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/objective.hpp"

namespace autotune::cli {

/// A number for JSON: null where not observed (NaN).
inline nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

/// The observation as JSON (null fields where not observed; null altogether when nothing was).
inline nlohmann::json observation_json(const Observation& o, double gbps) {
  if (!o.observed()) return nullptr;
  const double per_watt = gbps > 0 && o.power_w > 0 ? gbps / o.power_w : NAN;
  return {{"sm_clock_mhz", json_number(o.sm_clock_mhz)},
          {"sm_clock_min_mhz", json_number(o.sm_clock_min_mhz)},
          {"mem_clock_mhz", json_number(o.mem_clock_mhz)},
          {"mem_clock_min_mhz", json_number(o.mem_clock_min_mhz)},
          {"power_w", json_number(o.power_w)},
          {"energy_j", json_number(o.energy_j)},
          {"gbps_per_watt", json_number(per_watt)},
          {"temperature_c", json_number(o.temperature_c)},
          {"power_limit_w", json_number(o.power_limit_w)},
          {"throttle_reasons", throttle_reason_names(o.throttle_reasons)},
          {"throttled", o.throttled()},
          {"method", o.method}};
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
