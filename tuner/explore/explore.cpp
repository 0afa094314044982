#include "db/sources.hpp"
#include "tuner/explore/explore.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "tuner/core/error.hpp"
#include "tuner/core/trial.hpp"
#include "tuner/report/power_chart.hpp"
#include "tuner/report/svg.hpp"

namespace autotune::explore {

namespace {

bool config_fits_spec(const TuningSpec& spec, const Config& c, const ProblemKey& p, const DeviceInfo& d,
                      const Workload& w) {
  for (const auto& prm : spec.params) {
    auto v = c.get(prm.name);
    if (!v || prm.index_of(*v) < 0) return false;
  }
  if (c.values().size() != spec.params.size()) return false;
  try {
    for (const auto& e : spec.constraints)
      if (eval_expr(e, c, p, d, w) == 0) return false;
  } catch (const ExprError&) {
    return false;
  }
  return true;
}

/// "VARIANT=grid_stride ITEMS_PER_THREAD=8" (labels where the spec has them), optionally with origins.
std::string base_text(const ExploreResult& r, bool with_origin) {
  std::string s;
  for (const auto& [name, v] : r.plan.base.values()) {
    std::string value = std::to_string(v);
    for (const auto& prm : r.params)
      if (prm.name == name) value = prm.label(v);
    s += (s.empty() ? "" : with_origin ? ", " : " ") + name + "=" + value;
    if (with_origin) {
      auto it = r.plan.origin.find(name);
      if (it != r.plan.origin.end()) s += " (" + it->second + ")";
    }
  }
  return s;
}

}  // namespace

std::optional<Config> best_known_config(const db::Database& db, const TuningSpec& spec, const DeviceInfo& d,
                                        const Workload& w, const ProblemKey& p) {
  std::optional<Config> best;
  double best_ns = 0;
  for (const auto& dev : db.devices()) {
    if (dev.info.normalised_name() != d.normalised_name() || dev.info.cc != d.cc) continue;
    auto f = db::TrialFilter::cell(spec.name, db::accepted_sources(db, spec), dev.id, w.key(), p.key());
    f.ok_only = true;
    f.by_time = true;
    f.limit = 50;
    for (const auto& t : db.trials(f)) {
      Config c = Config::from_json(t.config_json);
      if (!config_fits_spec(spec, c, p, d, w)) continue;
      if (!best || t.m.median_ns < best_ns) {
        best = c;
        best_ns = t.m.median_ns;
      }
      break;  // rows are fastest first
    }
  }
  return best;
}

ExploreResult collect_results(const TuningSpec& spec, const db::Database& db, std::int64_t device_id,
                              const DeviceInfo& device, double copy_gbps, const Workload& w, const ProblemKey& p,
                              const SweepPlan& plan, const ExploreOptions& opt) {
  ExploreResult r;
  r.plan = plan;
  r.kernel = spec.name;
  r.params = spec.params;
  r.workload = w;
  r.problem = p;
  r.device = device;
  r.copy_gbps = copy_gbps;
  const std::vector<std::string> sources = db::accepted_sources(db, spec);
  std::vector<VerdictPoint> vps;
  for (const auto& pt : plan.points) {
    PointResult pr;
    pr.point = pt;
    if (!pt.valid) {
      pr.state = "excluded";
      pr.occupancy.note = "not run";
    } else {
      std::optional<db::TrialRow> row;
      if (device_id > 0) row = db.find_trial(spec.name, sources, device_id, w.key(), p.key(), pt.config.hash());
      if (row) {
        pr.m = row->m;
        pr.state = to_string(row->m.status);
        if (row->m.ok()) {
          pr.gbps = row->gbps;
          if (pr.gbps <= 0 && opt.bytes_moved > 0 && row->m.median_ns > 0) pr.gbps = opt.bytes_moved / row->m.median_ns;
          if (copy_gbps > 0 && pr.gbps > 0) pr.pct_copy = 100.0 * pr.gbps / copy_gbps;
        }
      } else if (opt.available && !opt.available(pt.config)) {
        pr.state = "not recorded";
      } else {
        pr.state = "not run";
      }
      if (pt.grid_blocks > 0) {
        std::optional<int> drv;
        std::string err;
        if (opt.driver_occupancy) {
          try {
            drv = opt.driver_occupancy(pt);
          } catch (const std::exception& e) {
            err = e.what();
          }
        }
        if (drv) {
          pr.occupancy.source = Occupancy::Source::driver;
          pr.occupancy.blocks_per_sm = *drv;
          pr.occupancy.note = "cuOccupancyMaxActiveBlocksPerMultiprocessor";
        } else {
          pr.occupancy = theoretical_occupancy(device, pt.block_threads, pt.shared_bytes);
          if (!err.empty()) pr.occupancy.note = "driver occupancy failed (" + err + "); " + pr.occupancy.note;
        }
        pr.geo = geometry(pt, pr.occupancy, device.sm_count);
      } else if (!pt.plan_error.empty()) {
        pr.occupancy.note = "no launch plan: " + pt.plan_error;
      }
    }
    VerdictPoint vp;
    vp.block_size = pt.block_size;
    vp.blocks_per_sm = pt.blocks_per_sm;
    vp.threads_per_sm =
        pr.geo.resident_threads_per_sm > 0
            ? pr.geo.resident_threads_per_sm
            : static_cast<double>(pt.block_size) * static_cast<double>(std::max<Value>(pt.blocks_per_sm, 1));
    vp.ok = pr.m && pr.m->ok() && pr.gbps > 0;
    vp.gbps = pr.gbps;
    vp.state = pt.valid ? pr.state : "excluded by " + pt.excluded_by;
    vps.push_back(vp);
    r.points.push_back(std::move(pr));
  }
  int max_threads = 0;
  if (auto lim = sm_limits(device.cc)) max_threads = lim->max_threads_per_sm;
  r.verdict = make_verdict(vps, opt.tolerance, max_threads);
  return r;
}

ExploreResult run_explore(const TuningSpec& spec, Backend& backend, db::Database& db, const Workload& w,
                          const ProblemKey& p, const SweepPlan& plan, const ExploreOptions& opt) {
  std::vector<Config> todo;
  for (const auto& pt : plan.points)
    if (pt.valid && (!opt.available || opt.available(pt.config))) todo.push_back(pt.config);
  const DeviceInfo dev = backend.device();
  if (todo.empty()) {
    // Nothing to run: report the plan alone (every point excluded or not recorded).
    std::int64_t device_id = 0;
    for (const auto& d : db.devices())
      if (DeviceKey::of(d.info) == DeviceKey::of(dev)) device_id = d.id;
    ExploreResult r = collect_results(spec, db, device_id, dev, 0, w, p, plan, opt);
    r.backend = backend.kind();
    return r;
  }
  session::Options so;
  so.strategy = "explore";
  so.seed = opt.seed;
  so.bytes_moved = opt.bytes_moved;
  so.on_progress = opt.on_progress;
  so.configs = todo;
  session::Result sr = session::run(spec, backend, db, w, p, so);
  double copy = sr.copy_gbps;
  if (copy <= 0)
    if (auto d = db.device(sr.device_id)) copy = d->copy_gbps;
  ExploreResult r = collect_results(spec, db, sr.device_id, dev, copy, w, p, plan, opt);
  r.backend = backend.kind();
  r.session_id = sr.session_id;
  r.evaluated = sr.evaluated;
  r.reused = sr.reused;
  return r;
}

std::string format_report(const ExploreResult& r) {
  std::ostringstream o;
  const DeviceInfo& d = r.device;
  o << "explore " << r.kernel << " " << r.workload.key() << " " << r.problem.key() << " on " << d.name << " (cc "
    << d.cc / 10 << "." << d.cc % 10 << ", " << d.sm_count << " SMs), backend "
    << (r.backend.empty() ? "-" : r.backend);
  if (r.session_id)
    o << ", session " << r.session_id << " (" << r.evaluated << " measured now, " << r.reused
      << " from earlier trials)";
  o << "\n";
  if (r.copy_gbps > 0)
    o << "copy bandwidth: " << format_fixed(r.copy_gbps, 1) << " GB/s (device-to-device, bytes read + written)\n";
  else
    o << "copy bandwidth: unknown (no copy measured for this device)\n";
  std::string fixed = base_text(r, true);
  o << "fixed: " << (fixed.empty() ? "(nothing else to fix)" : fixed) << "\n";
  for (const auto& n : r.plan.notes) o << "note: " << n << "\n";

  bool any_driver = false, any_theory = false;
  std::string theory_note;
  for (const auto& pr : r.points) {
    any_driver = any_driver || pr.occupancy.source == Occupancy::Source::driver;
    if (pr.occupancy.source == Occupancy::Source::theoretical) {
      any_theory = true;
      theory_note = pr.occupancy.note;
    }
  }
  o << "occupancy: blocks per SM; d = from the driver (cuOccupancyMaxActiveBlocksPerMultiprocessor)";
  if (any_theory) o << ", t = " << theory_note;
  if (!any_driver && !any_theory) o << " (unknown for every point)";
  o << "\n\n";

  // The achieved occupancy where the points carry hardware counters (--metrics), beside what the launch allows.
  bool achieved = false;
  for (const auto& pr : r.points)
    achieved = achieved || (pr.m && std::isfinite(metric_value(pr.m->observed.metrics, "achieved_occupancy")));
  if (achieved)
    o << "achieved: the share of the SM's warps in flight while the point ran (hardware counters, --metrics); "
         "thr/SM: the threads per SM its launch allows\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%6s %7s %7s %12s %9s %7s %6s %7s %6s %8s%s  %s\n", "block", "grid/SM", "grid",
                "median", "GB/s", "% copy", "occ", "waves", "whole", "thr/SM", achieved ? " achieved" : "", "state");
  o << line;
  for (const auto& pr : r.points) {
    const auto& pt = pr.point;
    std::string grid_sm = pt.blocks_per_sm > 0 ? std::to_string(pt.blocks_per_sm) : "-";
    if (!pt.valid) {
      std::snprintf(line, sizeof line, "%6lld %7s %7s %12s %9s %7s %6s %7s %6s %8s  excluded by %s\n",
                    static_cast<long long>(pt.block_size), grid_sm.c_str(), "-", "-", "-", "-", "-", "-", "-", "-",
                    pt.excluded_by.c_str());
      o << line;
      continue;
    }
    std::string grid = pt.grid_blocks > 0 ? std::to_string(pt.grid_blocks) : "-";
    std::string median = pr.m && pr.m->ok() ? format_time_ns(pr.m->median_ns) : "-";
    std::string gbps = pr.gbps > 0 ? format_fixed(pr.gbps, 1) : "-";
    std::string pct = pr.pct_copy > 0 ? format_fixed(pr.pct_copy, 1) + "%" : "-";
    std::string occ = "?";
    if (pr.occupancy.source == Occupancy::Source::driver) occ = std::to_string(pr.occupancy.blocks_per_sm) + " d";
    if (pr.occupancy.source == Occupancy::Source::theoretical) occ = std::to_string(pr.occupancy.blocks_per_sm) + " t";
    std::string waves = pr.geo.waves > 0 ? format_fixed(pr.geo.waves, 2) : "-";
    std::string whole = pr.geo.waves > 0 ? (pr.geo.whole_waves ? "yes" : "no") : "-";
    std::string thr = pr.geo.resident_threads_per_sm > 0 ? format_fixed(pr.geo.resident_threads_per_sm, 0) : "-";
    std::string state = pr.state;
    if (pr.m && !pr.m->ok() && !pr.m->log.empty()) state += ": " + pr.m->log.substr(0, 80);
    if (!pt.plan_error.empty()) state += " (no plan: " + pt.plan_error + ")";
    std::string ach;
    if (achieved) {
      const double a = pr.m ? metric_value(pr.m->observed.metrics, "achieved_occupancy") : NAN;
      ach = std::isfinite(a) ? " " + format_fixed(a, 1) + "%" : std::string(" -");
      ach = std::string(9 - std::min<std::size_t>(9, ach.size()), ' ') + ach;
    }
    std::snprintf(line, sizeof line, "%6lld %7s %7s %12s %9s %7s %6s %7s %6s %8s%s  %s\n",
                  static_cast<long long>(pt.block_size), grid_sm.c_str(), grid.c_str(), median.c_str(), gbps.c_str(),
                  pct.c_str(), occ.c_str(), waves.c_str(), whole.c_str(), thr.c_str(), ach.c_str(), state.c_str());
    o << line;
  }
  o << "\nverdict for " << r.kernel << " on " << d.name << " (peak = within "
    << format_fixed(100 * r.verdict.tolerance, 0) << "% of the best point of this sweep):\n";
  for (const auto& l : r.verdict.lines) o << "  - " << l << "\n";
  return o.str();
}

std::string power_chart_svg(const ExploreResult& r) {
  report::PowerChartSpec c;
  c.id = "explore-power-chart";
  c.title = r.kernel + " " + r.workload.key() + " " + r.problem.key() + " on " + r.device.name + ": GB/s against power";
  const std::string fixed = base_text(r, false);
  c.subtitle = "fixed: " + (fixed.empty() ? std::string("-") : fixed) + "  |  one line per block size, points by power";
  for (const auto& pr : r.points) {
    if (!pr.m || !pr.m->ok()) continue;
    const Observation& o = pr.m->observed;
    std::string label = std::to_string(pr.point.block_size) + " threads";
    if (r.plan.has_grid_param) label += " x " + std::to_string(pr.point.blocks_per_sm) + " x SMs";
    c.points.push_back({o.power_w, pr.gbps, o.has_energy() ? o.energy_j : 0.0,
                        std::to_string(pr.point.block_size) + " threads", label});
  }
  return report::power_chart_svg(c);
}

std::string explore_chart_svg(const ExploreResult& r) {
  report::LineChartSpec c;
  c.id = "explore-chart";
  c.title = r.kernel + " " + r.workload.key() + " " + r.problem.key() + " on " + r.device.name;
  std::string fixed = base_text(r, false);
  c.subtitle = "fixed: " + (fixed.empty() ? std::string("-") : fixed) + "  |  backend: " + r.backend +
               (r.backend == "simulation" ? " (replay of recorded trials)" : "");
  c.y_label = "GB/s";
  c.log2_x = true;
  if (r.plan.has_grid_param) {
    c.x_label = "blocks per SM (grid = blocks per SM x " + std::to_string(r.device.sm_count) + " SMs), log scale";
    for (Value g : r.plan.blocks_per_sm)
      if (g > 0) c.x_ticks.push_back(static_cast<double>(g));
    std::sort(c.x_ticks.begin(), c.x_ticks.end());
    std::size_t i = 0;
    for (Value bs : r.plan.block_sizes) {
      report::Series s;
      s.name = std::to_string(bs) + " threads";
      s.color = report::palette(i++);
      std::vector<const PointResult*> pts;
      for (const auto& pr : r.points)
        if (pr.point.block_size == bs && pr.gbps > 0) pts.push_back(&pr);
      std::sort(pts.begin(), pts.end(),
                [](auto* a, auto* b) { return a->point.blocks_per_sm < b->point.blocks_per_sm; });
      for (const auto* pr : pts) {
        report::LinePoint lp;
        lp.x = static_cast<double>(pr->point.blocks_per_sm);
        lp.y = pr->gbps;
        lp.tooltip = std::to_string(bs) + " threads x " + std::to_string(pr->point.blocks_per_sm) + " x SMs: " +
                     format_fixed(pr->gbps, 1) + " GB/s" +
                     (pr->pct_copy > 0 ? " (" + format_fixed(pr->pct_copy, 1) + "% of copy)" : "");
        s.points.push_back(lp);
        if (pr->point.blocks_per_sm == 2) c.highlights.push_back({lp.x, lp.y, s.color, "2 x SMs: " + lp.tooltip});
      }
      if (!s.points.empty()) c.series.push_back(std::move(s));
    }
    c.vlines.push_back({2.0, "2 x SMs", "#6b7280"});
    c.highlight_legend = "2 x SMs";
  } else {
    c.x_label = "threads per block (grid set by the problem), log scale";
    report::Series s;
    s.name = "GB/s";
    for (const auto& pr : r.points)
      if (pr.gbps > 0) {
        s.points.push_back({static_cast<double>(pr.point.block_size), pr.gbps,
                            std::to_string(pr.point.block_size) + " threads: " + format_fixed(pr.gbps, 1) + " GB/s"});
        c.x_ticks.push_back(static_cast<double>(pr.point.block_size));
      }
    if (!s.points.empty()) c.series.push_back(std::move(s));
  }
  if (r.copy_gbps > 0)
    c.hlines.push_back(
        {r.copy_gbps, "device copy " + format_fixed(r.copy_gbps, 0) + " GB/s", "#b91c1c", "device copy", false});
  if (r.verdict.best_gbps > 0) {
    const std::string tol = format_fixed(100 * r.verdict.tolerance, 0) + "%";
    c.hlines.push_back({(1 - r.verdict.tolerance) * r.verdict.best_gbps, "", "#6b7280", "best - " + tol, false});
  }
  return report::line_chart(c);
}

}  // namespace autotune::explore
