#include "tuner/session/warm_start.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace autotune::session {

namespace {

bool same_identity(const DeviceInfo& a, const DeviceInfo& b) {
  return a.cc == b.cc && a.normalised_name() == b.normalised_name();
}

/// The fastest distinct configurations of one problem on one device.
struct ProblemTop {
  std::string problem;
  double elements = 0;
  std::vector<db::TrialRow> rows;  // fastest first, one per config
};

/// Ok trials of spec.name / w on device_id, grouped by problem (`skip` left out), `per_problem` per group.
std::vector<ProblemTop> tops_of(const db::Database& db, const std::string& kernel, std::int64_t device_id,
                                const Workload& w, const std::string& skip, std::size_t per_problem) {
  db::TrialFilter f;
  f.kernel = kernel;
  f.device_id = device_id;
  f.workload = w.key();
  f.ok_only = true;
  f.by_time = true;
  std::vector<ProblemTop> groups;
  std::map<std::string, std::size_t> at;
  std::map<std::string, std::set<std::string>> seen;  // config hashes per problem
  for (db::TrialRow& t : db.trials(f)) {
    if (t.problem == skip || !(t.m.median_ns > 0)) continue;
    auto it = at.find(t.problem);
    if (it == at.end()) {
      it = at.emplace(t.problem, groups.size()).first;
      groups.push_back({t.problem, t.problem_elements, {}});
    }
    ProblemTop& g = groups[it->second];
    if (g.rows.size() >= per_problem || !seen[t.problem].insert(t.config_hash).second) continue;
    g.rows.push_back(std::move(t));
  }
  return groups;
}

double log2_distance(double a, double b) {
  if (!(a > 0) || !(b > 0)) return 1e30;
  return std::fabs(std::log2(a) - std::log2(b));
}

std::string time_text(double ns) {
  char buf[32];
  if (ns >= 1e6) std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
  return buf;
}

/// Rank 1 of every group, then rank 2, ... (groups nearest in size first), up to count distinct configs.
WarmStart interleave(std::vector<ProblemTop> groups, double target_elements, std::size_t count,
                     const std::string& where) {
  std::stable_sort(groups.begin(), groups.end(), [&](const ProblemTop& a, const ProblemTop& b) {
    return log2_distance(a.elements, target_elements) < log2_distance(b.elements, target_elements);
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
      const std::string what = g.problem + " (best " + time_text(g.rows.front().m.median_ns) + ")";
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

WarmStart find_warm_start(const db::Database& db, const TuningSpec& spec, const DeviceInfo& device, const Workload& w,
                          const ProblemKey& p, std::size_t count) {
  if (count == 0) return {};
  const std::vector<db::DeviceRow> devices = db.devices();
  std::vector<ProblemTop> same, related;
  std::vector<std::string> related_names;
  for (const db::DeviceRow& d : devices) {
    if (same_identity(d.info, device)) {
      for (ProblemTop& g : tops_of(db, spec.name, d.id, w, p.key(), count)) same.push_back(std::move(g));
    }
  }
  if (!same.empty()) return interleave(std::move(same), p.elements(), count, "on this device");
  for (const db::DeviceRow& d : devices) {
    if (same_identity(d.info, device) || d.info.cc / 10 != device.cc / 10 || device.cc <= 0) continue;
    std::vector<ProblemTop> groups = tops_of(db, spec.name, d.id, w, "", count);
    if (groups.empty()) continue;
    related_names.push_back(d.info.name);
    for (ProblemTop& g : groups) {
      g.problem += " on " + d.info.name;
      related.push_back(std::move(g));
    }
  }
  if (related.empty()) return {};
  return interleave(std::move(related), p.elements(), count,
                    "(same architecture, sm_" + std::to_string(device.cc / 10) + "x)");
}

WarmStart best_of_problem(const db::Database& db, const TuningSpec& spec, const DeviceInfo& device, const Workload& w,
                          const ProblemKey& p, std::size_t count) {
  std::vector<ProblemTop> groups;
  for (const db::DeviceRow& d : db.devices()) {
    if (!same_identity(d.info, device)) continue;
    for (ProblemTop& g : tops_of(db, spec.name, d.id, w, "", count))
      if (g.problem == p.key()) groups.push_back(std::move(g));
  }
  return interleave(std::move(groups), p.elements(), count, "on this device");
}

}  // namespace autotune::session
