#include "tuner/session/warm_start.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "search/strategy.hpp"

namespace autotune::session {

namespace {

/// The fastest distinct configurations of one problem on one device.
struct ProblemTop {
  std::int64_t device_id = 0;
  std::string key;      // ProblemKey::key()
  std::string problem;  // for the output: the key, and the device when it is another one
  double elements = 0;
  std::vector<db::TrialRow> rows;  // fastest first, one per config
};

/// Rows of one query (fastest first) reduced to the fastest `count` distinct configurations with a finite positive
/// median.
std::vector<db::TrialRow> distinct_fastest(std::vector<db::TrialRow> rows, std::size_t count) {
  std::vector<db::TrialRow> out;
  std::set<std::string> seen;
  for (db::TrialRow& t : rows) {
    if (out.size() >= count) break;
    if (std::isfinite(t.m.median_ns) && t.m.median_ns > 0 && seen.insert(t.config_hash).second)
      out.push_back(std::move(t));
  }
  return out;
}

/// Ok trials of kernel / w on device_id, grouped by problem (`skip` left out, only `only` when given),
/// `per_problem` per group.
std::vector<ProblemTop> tops_of(const db::Database& db, const std::string& kernel, std::int64_t device_id,
                                const Workload& w, const std::string& skip, std::size_t per_problem,
                                const std::string& only = "") {
  db::TrialFilter f;
  f.kernel = kernel;
  f.device_id = device_id;
  f.workload = w.key();
  if (!only.empty()) f.problem = only;
  f.ok_only = true;
  f.by_time = true;
  std::vector<ProblemTop> groups;
  std::map<std::string, std::size_t> at;
  for (db::TrialRow& t : db.trials(f)) {
    if (t.problem == skip) continue;
    auto it = at.find(t.problem);
    if (it == at.end()) {
      it = at.emplace(t.problem, groups.size()).first;
      groups.push_back({device_id, t.problem, t.problem, t.problem_elements, {}});
    }
    groups[it->second].rows.push_back(std::move(t));
  }
  for (ProblemTop& g : groups) g.rows = distinct_fastest(std::move(g.rows), per_problem);
  return groups;
}

/// Every distinct ok configuration of the group nearest to target_elements (the same problem on another device
/// counts as WarmStartHint::kOtherDeviceDistance away) into ws.values, with the distance and the problem.
void add_values(const db::Database& db, const std::string& kernel, const Workload& w, const ProblemKey& target,
                const std::vector<ProblemTop>& groups, bool other_device, WarmStart& ws) {
  const ProblemTop* nearest = nullptr;
  for (const ProblemTop& g : groups)
    if (!nearest || size_distance(g.elements, target.elements()) < size_distance(nearest->elements, target.elements()))
      nearest = &g;
  if (!nearest) return;
  ws.distance = size_distance(nearest->elements, target.elements()) +
                (other_device ? search::WarmStartHint::kOtherDeviceDistance : 0.0);
  ws.problem = nearest->problem;
  for (const ProblemTop& g :
       tops_of(db, kernel, nearest->device_id, w, "", std::numeric_limits<std::size_t>::max(), nearest->key))
    for (const db::TrialRow& t : g.rows) ws.values.push_back({Config::from_json(t.config_json), t.m.median_ns});
}

/// Rank 1 of every group, then rank 2, ... (groups nearest in size first), up to count distinct configs.
WarmStart interleave(std::vector<ProblemTop> groups, double target_elements, std::size_t count,
                     const std::string& where) {
  std::stable_sort(groups.begin(), groups.end(), [&](const ProblemTop& a, const ProblemTop& b) {
    return size_distance(a.elements, target_elements) < size_distance(b.elements, target_elements);
  });
  WarmStart ws;
  std::set<std::string> taken;
  std::vector<std::string> used;
  for (std::size_t rank = 0; ws.configs.size() < count; ++rank) {
    bool any = false;
    for (const ProblemTop& g : groups) {
      if (rank >= g.rows.size() || ws.configs.size() >= count) continue;
      any = true;
      const db::TrialRow& t = g.rows[rank];
      if (!taken.insert(t.config_hash).second) continue;
      ws.configs.push_back(Config::from_json(t.config_json));
      const std::string what = g.problem + " (best " + format_time_ns(g.rows.front().m.median_ns) + ")";
      if (std::find(used.begin(), used.end(), what) == used.end()) used.push_back(what);
    }
    if (!any) break;
  }
  if (ws.configs.empty()) return ws;
  ws.source = std::to_string(ws.configs.size()) + " configuration" + (ws.configs.size() == 1 ? "" : "s") +
              ", the best of ";
  for (std::size_t i = 0; i < used.size(); ++i) ws.source += (i ? ", " : "") + used[i];
  ws.source += " " + where;
  return ws;
}

}  // namespace

double size_distance(double a, double b) {
  if (!(a > 0) || !(b > 0)) return 1e30;
  return std::fabs(std::log2(a) - std::log2(b));
}

std::vector<db::TrialRow> fastest_configs(const db::Database& db, db::TrialFilter f, std::size_t count) {
  f.ok_only = true;
  f.by_time = true;
  return distinct_fastest(db.trials(f), count);
}

WarmStart find_warm_start(const db::Database& db, const TuningSpec& spec, const DeviceInfo& device, const Workload& w,
                          const ProblemKey& p, std::size_t count) {
  if (count == 0) return {};
  const DeviceKey key = DeviceKey::of(device);
  const std::vector<db::DeviceRow> devices = db.devices();
  std::vector<ProblemTop> same, related;
  for (const db::DeviceRow& d : devices) {
    if (DeviceKey::of(d.info) == key) {
      for (ProblemTop& g : tops_of(db, spec.name, d.id, w, p.key(), count)) same.push_back(std::move(g));
    }
  }
  if (!same.empty()) {
    WarmStart ws = interleave(same, p.elements(), count, "on this device");
    add_values(db, spec.name, w, p, same, false, ws);
    return ws;
  }
  for (const db::DeviceRow& d : devices) {
    const DeviceKey other = DeviceKey::of(d.info);
    if (other == key || other.major() != key.major() || key.cc <= 0) continue;
    for (ProblemTop& g : tops_of(db, spec.name, d.id, w, "", count)) {
      g.problem += " on " + d.info.name;
      related.push_back(std::move(g));
    }
  }
  if (related.empty()) return {};
  WarmStart ws =
      interleave(related, p.elements(), count, "(same architecture, sm_" + std::to_string(key.major()) + "x)");
  add_values(db, spec.name, w, p, related, true, ws);
  return ws;
}

WarmStart best_of_problem(const db::Database& db, const TuningSpec& spec, const DeviceInfo& device, const Workload& w,
                          const ProblemKey& p, std::size_t count) {
  const DeviceKey key = DeviceKey::of(device);
  std::vector<ProblemTop> groups;
  for (const db::DeviceRow& d : db.devices()) {
    if (DeviceKey::of(d.info) != key) continue;
    for (ProblemTop& g : tops_of(db, spec.name, d.id, w, "", count, p.key())) groups.push_back(std::move(g));
  }
  return interleave(std::move(groups), p.elements(), count, "on this device");
}

}  // namespace autotune::session
