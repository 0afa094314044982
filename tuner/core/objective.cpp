#include "tuner/core/objective.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "tuner/core/error.hpp"

namespace autotune {

namespace {
constexpr Objective kAll[] = {Objective::time, Objective::energy, Objective::edp, Objective::gbps_per_watt};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// value with an SI prefix chosen so that the number is at least 1: "12.35 mJ".
std::string with_prefix(double value, const char* unit) {
  static const std::pair<double, const char*> kPrefixes[] = {{1, ""}, {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}};
  const auto* p = &kPrefixes[0];
  for (const auto& q : kPrefixes) {
    p = &q;
    if (std::fabs(value) >= q.first) break;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g %s%s", value / p->first, p->second, unit);
  return buf;
}
}  // namespace

const char* to_string(Objective o) {
  switch (o) {
    case Objective::time: return "time";
    case Objective::energy: return "energy";
    case Objective::edp: return "edp";
    case Objective::gbps_per_watt: return "gbps_per_watt";
  }
  return "unknown";
}

Objective objective_from_string(const std::string& s) {
  for (Objective o : kAll)
    if (s == to_string(o)) return o;
  throw UsageError("unknown objective '" + s + "' (choose time, energy, edp or gbps_per_watt)");
}

std::vector<std::string> objective_names() {
  std::vector<std::string> out;
  for (Objective o : kAll) out.emplace_back(to_string(o));
  return out;
}

bool needs_power(Objective o) { return o != Objective::time; }

double objective_value(Objective o, const Measurement& m, double gbps) {
  if (!m.ok() || !(m.median_ns > 0) || !std::isfinite(m.median_ns)) return kNaN;
  const Observation& ob = m.observed;
  switch (o) {
    case Objective::time: return m.median_ns;
    case Objective::energy: return ob.has_energy() ? ob.energy_j : kNaN;
    case Objective::edp: return ob.has_energy() ? ob.energy_j * m.median_ns * 1e-9 : kNaN;
    case Objective::gbps_per_watt:
      return gbps > 0 && std::isfinite(gbps) && ob.power_w > 0 && std::isfinite(ob.power_w) ? gbps / ob.power_w : kNaN;
  }
  return kNaN;
}

double objective_cost(Objective o, const Measurement& m, double gbps) {
  const double v = objective_value(o, m, gbps);
  if (!(v > 0) || !std::isfinite(v)) return std::numeric_limits<double>::infinity();
  return o == Objective::gbps_per_watt ? 1.0 / v : v;
}

std::string format_objective(Objective o, double value) {
  if (std::isnan(value)) return "-";
  switch (o) {
    case Objective::time: return format_time_ns(value);
    case Objective::energy: return with_prefix(value, "J");
    case Objective::edp: return with_prefix(value, "J*s");
    case Objective::gbps_per_watt: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g GB/s/W", value);
      return buf;
    }
  }
  return "-";
}

}  // namespace autotune
