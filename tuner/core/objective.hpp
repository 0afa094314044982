// What "best" means: the quantity a tuning session minimises and `best` ranks by. Every trial stores time and
// (where NVML observed it) power and energy, so the same trials answer every objective without re-measuring.
#pragma once
#include <string>
#include <vector>

#include "tuner/core/trial.hpp"

namespace autotune {

enum class Objective {
  time,           // median time of one run of the launch plan (default)
  energy,         // board energy per run, J
  edp,            // energy x time per run, J*s
  gbps_per_watt,  // bandwidth per watt of board power, GB/s/W (higher is better)
};

/// "time", "energy", "edp", "gbps_per_watt".
const char* to_string(Objective o);
/// Throws UsageError naming the choices for an unknown name.
Objective objective_from_string(const std::string& s);
/// Every objective's name, in declaration order (for CLI choices).
std::vector<std::string> objective_names();
/// True for the objectives that need power or energy observed (all but time).
bool needs_power(Objective o);

/// The objective as people read it: ns for time, J for energy, J*s for edp, GB/s/W for gbps_per_watt. NaN
/// when the trial failed or lacks what the objective needs (no energy observed, unknown bytes moved).
/// gbps: the trial's bandwidth (bytes moved / median), 0 = unknown.
double objective_value(Objective o, const Measurement& m, double gbps);
/// Lower is better: objective_value, or its inverse for gbps_per_watt; +infinity where objective_value is
/// NaN, so that strategies and rankings put such trials last.
double objective_cost(Objective o, const Measurement& m, double gbps);
/// "72.67 us", "12.35 mJ", "1.234 uJ*s", "8.91 GB/s/W"; "-" for NaN.
std::string format_objective(Objective o, double value);

}  // namespace autotune
