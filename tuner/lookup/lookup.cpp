#include "tuner/lookup/lookup.hpp"

#include <cmath>
#include <limits>
#include <map>

namespace autotune::lookup {

const char* to_string(Match m) {
  switch (m) {
    case Match::exact: return "exact";
    case Match::nearest_size: return "nearest_size";
    case Match::spec_default: return "spec_default";
  }
  return "unknown";
}

Answer best(const db::Database& db, const TuningSpec& spec, const Workload& w, const DeviceInfo& device,
            const ProblemKey& problem) {
  Answer a;
  a.config = spec.default_config();
  std::int64_t device_id = 0;
  for (const auto& d : db.devices())
    if (d.info.normalised_name() == device.normalised_name() && d.info.cc == device.cc) device_id = d.id;
  if (!device_id) {
    a.note = "no trials recorded on " + device.name;
    return a;
  }
  db::TrialFilter f;
  f.kernel = spec.name;
  f.device_id = device_id;
  f.workload = w.key();
  f.ok_only = true;
  f.by_time = true;
  const std::string source_hash = spec.source_hash();
  std::size_t stale = 0;
  // Best valid row per problem size.
  std::map<std::string, db::TrialRow> per_problem;
  std::map<std::string, ParameterSpace> spaces;
  for (const auto& t : db.trials(f)) {
    if (per_problem.count(t.problem)) continue;
    if (t.source_hash != source_hash) { ++stale; continue; }
    ProblemKey pk = ProblemKey::parse(t.problem);
    auto it = spaces.find(t.problem);
    if (it == spaces.end()) it = spaces.emplace(t.problem, spec.space(pk, device, w)).first;
    Config c = Config::from_json(t.config_json);
    if (it->second.find(c) < 0) { ++stale; continue; }
    per_problem.emplace(t.problem, t);
  }
  if (stale) a.note = std::to_string(stale) + " recorded rows were skipped: measured with another kernel source or no longer valid in the spec";
  const db::TrialRow* chosen = nullptr;
  double best_dist = std::numeric_limits<double>::infinity();
  for (const auto& [key, row] : per_problem) {
    double d = std::fabs(std::log2(row.problem_elements) - std::log2(problem.elements()));
    if (key == problem.key()) d = -1;
    if (d < best_dist) { best_dist = d; chosen = &row; }
  }
  if (!chosen) return a;
  a.config = Config::from_json(chosen->config_json);
  a.match = chosen->problem == problem.key() ? Match::exact : Match::nearest_size;
  a.device = device.name;
  a.problem = chosen->problem;
  a.session_id = chosen->session_id;
  a.median_ns = chosen->m.median_ns;
  a.gbps = chosen->gbps;
  return a;
}

}  // namespace autotune::lookup
