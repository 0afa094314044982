// `autotune summary`: the best recorded trial for each value of one parameter, and the failures by status.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db/ranking.hpp"
#include "db/sources.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/cli/observed.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/counter_reading.hpp"
#include "tuner/core/error.hpp"
#include "tuner/interop/resolve.hpp"

namespace autotune::cli {

namespace {

/// The recorded device called `name` (name or normalised name), or the only one recorded. UsageError when
/// none or several match.
db::DeviceRow recorded_device(const db::Database& db, const std::string& name, const std::string& db_path) {
  std::vector<db::DeviceRow> devs;
  for (const auto& d : db.devices())
    if (name.empty() || d.info.name == name || d.info.normalised_name() == name) devs.push_back(d);
  if (devs.size() != 1)
    throw UsageError(devs.empty() ? "no matching device recorded in " + db_path
                                  : "several devices recorded in " + db_path + ": choose one with --device");
  return devs.front();
}

/// The trials of the cell ranked by `objective`; for a user spec without trials of its own, the imported ones
/// (their source unknown). UsageError when there are none.
std::vector<db::TrialRow> ranked_trials(const db::Database& db, const TuningSpec& spec, const db::DeviceRow& dev,
                                        const Workload& w, const ProblemKey& p, Objective objective,
                                        const std::string& db_path) {
  auto f = db::TrialFilter::cell(spec.name, db::accepted_sources(db, spec), dev.id, w.key(), p.key());
  auto rows = db::rank_trials(db.trials(f), objective, true);
  if (rows.empty() && spec.source_hash() != kImportedSourceHash) {  // a user spec's imported rows
    f.source_hashes.clear();
    f.source_hash = kImportedSourceHash;
    rows = db::rank_trials(db.trials(f), objective, true);
    if (!rows.empty())
      std::printf("note: imported trials (their kernel source is unknown, not necessarily the current one)\n");
  }
  if (rows.empty())
    throw UsageError("no trials of " + spec.name + " " + case_key(w, p) + " on " + dev.info.name + " recorded in " +
                     db_path + " (another size? --n / --problem; another workload? --dtype / --op)");
  return rows;
}

/// "reduction float32/sum n=... on ...: 40 trials (ok 38, wrong_result 2)" and the copy bandwidth.
void print_counts(const TuningSpec& spec, const Workload& w, const ProblemKey& p, const db::DeviceRow& dev,
                  const std::vector<db::TrialRow>& rows) {
  std::map<std::string, std::size_t> by_status;
  for (const auto& t : rows) ++by_status[to_string(t.m.status)];
  std::printf("%s %s %s on %s: %zu trials (", spec.name.c_str(), w.key().c_str(), p.key().c_str(),
              dev.info.name.c_str(), rows.size());
  bool first = true;
  for (const auto& [st, cnt] : by_status) {
    std::printf("%s%s %zu", first ? "" : ", ", st.c_str(), cnt);
    first = false;
  }
  if (dev.copy_gbps > 0) std::printf(")\ncopy bandwidth %.1f GB/s\n", dev.copy_gbps);
  else std::printf(")\ncopy bandwidth not measured on this device (imported or merged trials): %% copy shows '-'\n");
}

/// The best ok trial of each value of parameter `by` in ranked `rows`, in rank order.
std::vector<const db::TrialRow*> best_per_value(const std::vector<db::TrialRow>& rows, const std::string& by,
                                                Objective objective) {
  std::map<Value, const db::TrialRow*> best_by;
  for (const auto& t : rows) {
    if (!t.m.ok()) continue;
    Value v = Config::from_json(t.config_json).at(by);
    if (!best_by.count(v)) best_by[v] = &t;
  }
  std::vector<const db::TrialRow*> order;
  order.reserve(best_by.size());
  for (const auto& [v, t] : best_by) order.push_back(t);
  std::sort(order.begin(), order.end(), [&](const db::TrialRow* a, const db::TrialRow* b) {
    return db::ranks_before(*a, *b, objective, true);
  });
  return order;
}

/// The table of best_per_value's rows and what a reader needs to know about its ranking.
void print_table(const TuningSpec& spec, const Param& param, const db::DeviceRow& dev,
                 const std::vector<const db::TrialRow*>& order, Objective objective) {
  bool observed = false, throttled = false;
  for (const auto* t : order) {
    observed = observed || t->m.observed.observed();
    throttled = throttled || t->m.observed.throttled();
  }
  const std::string obs_header = observed ? " " + observation_header() : "";
  std::printf("%-4s %-28s %12s %9s %8s%s  %s\n", "rank", param.name.c_str(), "median", "GB/s", "% copy",
              obs_header.c_str(), "best configuration");
  int rank = 1;
  for (const auto* t : order) {
    const Value v = Config::from_json(t->config_json).at(param.name);
    std::string pct = dev.copy_gbps > 0 ? fmt("%.1f%%", 100.0 * t->gbps / dev.copy_gbps) : "-";
    const std::string cells = observed ? " " + observation_cells(t->m.observed) : "";
    std::printf("%-4d %-28s %12s %9.1f %8s%s  %s\n", rank++, param.label(v).c_str(), fmt_time(t->m.median_ns).c_str(),
                t->gbps, pct.c_str(), cells.c_str(), Config::from_json(t->config_json).str(&spec.params).c_str());
  }
  if (objective != Objective::time) {
    std::size_t have = 0;
    for (const auto* t : order) have += std::isfinite(objective_cost(objective, t->m, t->gbps)) ? 1 : 0;
    std::printf("ranked by %s\n", to_string(objective));
    if (have < order.size())
      std::printf("%zu of these rows lack the power or energy it needs (recorded without NVML): they rank last, "
                  "by time\n", order.size() - have);
  }
  if (throttled)
    std::printf("thr = yes: the clocks were throttled (power or thermal) while measuring; such rows rank after "
                "unthrottled ones\n");
}

/// "12.5%" or "-" for NaN.
std::string pct_cell(double share) { return std::isfinite(share) ? fmt("%.1f%%", 100.0 * share) : "-"; }
std::string num_cell(const char* format, double v) { return std::isfinite(v) ? fmt(format, v) : "-"; }

/// The hardware counters of the rows, where any was taken (docs/observers.md): DRAM bytes per element and against
/// the kernel's ideal, the DRAM bandwidth the counters saw as a share of the copy and of the peak, occupancy, L2
/// hits, any other metric by name; then what the replays cost.
void print_counters(const Param& param, const db::DeviceRow& dev, const std::vector<const db::TrialRow*>& order) {
  std::vector<CounterReading> readings;
  bool any = false;
  for (const auto* t : order) {
    readings.push_back(read_counters(t->m, t->gbps, t->problem_elements, dev.copy_gbps, dev.info));
    any = any || !t->m.observed.metrics.empty();
  }
  if (!any) return;
  const double peak = peak_dram_gbps(dev.info);
  std::printf("\nhardware counters (a replay after the timing; ideal = the spec's bytes moved; %% peak of %s):\n",
              std::isfinite(peak) ? fmt("%.0f GB/s", peak).c_str() : "an unknown peak");
  std::printf("%-4s %-28s %12s %8s %10s %7s %7s %9s %7s  %s\n", "rank", param.name.c_str(), "DRAM B/elem", "x ideal",
              "DRAM GB/s", "% copy", "% peak", "occupancy", "L2 hit", "other metrics");
  double replay_ms = 0;
  int replays = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const db::TrialRow& t = *order[i];
    const CounterReading& r = readings[i];
    const std::string others = other_metrics(t.m.observed.metrics);
    if (std::isfinite(r.replay_ms)) replay_ms += r.replay_ms, ++replays;
    const Value v = Config::from_json(t.config_json).at(param.name);
    std::printf("%-4zu %-28s %12s %8s %10s %7s %7s %9s %7s  %s\n", i + 1, param.label(v).c_str(),
                num_cell("%.3f", r.bytes_per_element).c_str(), num_cell("%.3f", r.vs_ideal).c_str(),
                num_cell("%.1f", r.dram_gbps).c_str(), pct_cell(r.share_of_copy).c_str(),
                pct_cell(r.share_of_peak).c_str(), num_cell("%.1f%%", r.occupancy_pct).c_str(),
                num_cell("%.1f%%", r.l2_hit_pct).c_str(), others.c_str());
  }
  if (replays > 0)
    std::printf(
        "counter replays: %.1f ms each on average over these %d configurations (extra GPU time per "
        "configuration, after its timing)\n",
        replay_ms / replays, replays);
}

}  // namespace

int run_summary(const SummaryArgs& a, const std::string& db_path) {
  TuningSpec spec = interop::resolve_kernel(a.kernel, {db_path});
  ProblemKey p = a.pf.problem_key(spec);
  Workload w = a.pf.workload(spec);
  std::string by = a.by.empty() ? spec.params.front().name : a.by;
  const Param* param = spec.find_param(by);
  if (!param) throw UsageError("kernel " + spec.name + " has no parameter '" + by + "'");
  auto db = db::Database::open(db_path, db::Database::Mode::read_only);
  const db::DeviceRow dev = recorded_device(*db, a.device_name, db_path);
  const Objective objective = objective_from_string(a.objective);
  const std::vector<db::TrialRow> rows = ranked_trials(*db, spec, dev, w, p, objective, db_path);
  print_counts(spec, w, p, dev, rows);
  const std::vector<const db::TrialRow*> order = best_per_value(rows, by, objective);
  print_table(spec, *param, dev, order, objective);
  print_counters(*param, dev, order);
  return 0;
}

}  // namespace autotune::cli
