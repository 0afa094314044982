#include "tuner/report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "tuner/core/counter_reading.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/stats.hpp"
#include "tuner/core/trial.hpp"
#include "tuner/report/power_chart.hpp"
#include "tuner/report/svg.hpp"

namespace autotune::report {

namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// "VARIANT=grid_stride BLOCK_SIZE=512 ...": the spec's parameter order and labels, then any other keys.
std::string config_text(const std::string& json, const std::vector<Param>& params) {
  try {
    const Config c = Config::from_json(json);
    std::string out;
    for (const auto& p : params)
      if (auto v = c.get(p.name)) out += (out.empty() ? "" : " ") + p.name + "=" + p.label(*v);
    for (const auto& kv : c.values()) {
      bool known = false;
      for (const auto& p : params) known = known || p.name == kv.first;
      if (!known) out += (out.empty() ? "" : " ") + kv.first + "=" + std::to_string(kv.second);
    }
    return out;
  } catch (const std::exception&) {
    return json;
  }
}

std::string first_line(const std::string& s, std::size_t max) {
  std::string l = s.substr(0, s.find('\n'));
  if (l.size() > max) l = l.substr(0, max) + "...";
  return l;
}

const char* kCss = R"css(
body { font-family: "DejaVu Sans", "Liberation Sans", Helvetica, Arial, sans-serif; color: #111827;
       background: #f3f4f6; margin: 0; }
main { max-width: 1080px; margin: 0 auto; padding: 24px 28px 48px; background: #ffffff; }
h1 { font-size: 24px; margin: 4px 0 4px; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 2px solid #e5e7eb; }
h3 { font-size: 14px; margin: 18px 0 6px; color: #374151; }
p, li { font-size: 14px; line-height: 1.45; }
.sub { color: #4b5563; font-size: 14px; margin: 0 0 14px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0 8px; }
.card { flex: 1 1 180px; border: 1px solid #e5e7eb; border-radius: 8px; padding: 10px 14px; background: #f9fafb; }
.card .k { font-size: 12px; color: #6b7280; text-transform: uppercase; letter-spacing: 0.04em; }
.card .v { font-size: 20px; font-weight: bold; margin-top: 2px; }
.card .n { font-size: 12px; color: #4b5563; margin-top: 2px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 6px 0 10px; }
th { text-align: left; background: #f3f4f6; color: #374151; font-weight: 600; }
th, td { padding: 5px 8px; border-bottom: 1px solid #e5e7eb; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.cfg { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 12px; }
tr:nth-child(even) td { background: #fafafa; }
.chart { margin: 8px 0 4px; overflow-x: auto; }
.chart svg { max-width: 100%; height: auto; border: 1px solid #e5e7eb; border-radius: 6px; }
.note { background: #fffbeb; border-left: 4px solid #f59e0b; padding: 8px 12px; font-size: 13px; margin: 10px 0; }
.ok { color: #047857; font-weight: 600; }
.bad { color: #b91c1c; font-weight: 600; }
pre { font-size: 12px; background: #f9fafb; padding: 6px 8px; white-space: pre-wrap; margin: 0; }
footer { color: #6b7280; font-size: 12px; margin-top: 36px; }
)css";

}  // namespace

std::vector<ParamEffect> parameter_effect(const std::vector<db::TrialRow>& trials, const std::string& param,
                                          const Param* spec_param) {
  std::map<Value, std::vector<double>> gbps;
  std::map<Value, std::size_t> failed;
  for (const auto& t : trials) {
    std::optional<Value> v;
    try {
      v = Config::from_json(t.config_json).get(param);
    } catch (const std::exception&) {
    }
    if (!v) continue;
    if (t.m.ok() && t.gbps > 0) gbps[*v].push_back(t.gbps);
    else {
      ++failed[*v];
      gbps[*v];  // keep the value listed
    }
  }
  std::vector<Value> order;
  if (spec_param)
    for (Value v : spec_param->values)
      if (gbps.count(v)) order.push_back(v);
  for (const auto& [v, list] : gbps)
    if (std::find(order.begin(), order.end(), v) == order.end()) order.push_back(v);
  std::vector<ParamEffect> out;
  for (Value v : order) {
    ParamEffect e;
    e.value = v;
    e.label = spec_param ? spec_param->label(v) : std::to_string(v);
    const auto& list = gbps[v];
    e.ok = list.size();
    e.failed = failed[v];
    if (!list.empty()) {
      e.best_gbps = *std::max_element(list.begin(), list.end());
      e.median_gbps = stats::median(list);
    }
    out.push_back(e);
  }
  return out;
}

ReportData load_report_data(const db::Database& db, const ReportQuery& q) {
  ReportData d;
  d.db_path = db.path();
  db::TrialFilter f;
  std::optional<std::int64_t> device_id;
  if (q.session_id) {
    auto s = db.session(*q.session_id);
    if (!s) throw UsageError("session " + std::to_string(*q.session_id) + " does not exist in " + db.path());
    d.kernel = s->kernel;
    d.workload = s->workload;
    d.problem = s->problem;
    device_id = s->device_id;
    d.scope = "session " + std::to_string(s->id);
    f.session_id = s->id;
    d.trials = db.trials(f);
    if (d.trials.empty()) {
      // The session answered everything from earlier trials: show those, and say so.
      db::TrialFilter g;
      g.kernel = s->kernel;
      g.source_hash = s->source_hash;
      g.device_id = s->device_id;
      g.workload = s->workload;
      g.problem = s->problem;
      d.trials = db.trials(g);
      d.notes.push_back("session " + std::to_string(s->id) +
                        " measured nothing new (every configuration was answered from earlier trials): the page shows "
                        "all recorded trials of the same kernel source, workload, problem and device");
      d.scope = "session " + std::to_string(s->id) + " (answered from earlier trials)";
    }
  } else {
    if (q.kernel.empty()) throw UsageError("report: name a kernel or a session id");
    f.kernel = d.kernel = q.kernel;
    f.workload = d.workload = q.workload;
    f.problem = d.problem = q.problem;
    f.source_hashes = q.sources;
    d.scope = "all recorded trials";
    std::vector<db::TrialRow> rows = db.trials(f);
    std::set<std::int64_t> ids;
    for (const auto& t : rows) ids.insert(t.device_id);
    std::vector<std::int64_t> chosen;
    std::string names;
    for (std::int64_t id : ids) {
      auto dev = db.device(id);
      std::string name = dev ? dev->info.name : "device " + std::to_string(id);
      names += (names.empty() ? "" : ", ") + name;
      if (q.device_name.empty() ||
          (dev && (dev->info.name == q.device_name || dev->info.normalised_name() == q.device_name)))
        chosen.push_back(id);
    }
    if (rows.empty()) {
      std::string what = q.kernel + " " + q.workload + " " + q.problem;
      db::TrialFilter any;
      any.kernel = q.kernel;
      any.workload = q.workload;
      any.problem = q.problem;
      bool other_source = !q.sources.empty() && !db.trials(any).empty();
      throw UsageError("no trials of " + what + " in " + db.path() +
                       (other_source ? " for the current kernel source (only for an older source)" : ""));
    }
    if (chosen.empty()) throw UsageError("no trials on device '" + q.device_name + "' (recorded: " + names + ")");
    if (chosen.size() > 1) {
      // Boards of one model: the one that recorded the most trials here is the recording (another board of the
      // model may hold a few checks, e.g. revalidate's re-measurements).
      std::map<std::int64_t, std::size_t> count;
      for (const auto& t : rows) ++count[t.device_id];
      bool one_model = true;
      const auto first = db.device(chosen.front());
      for (std::int64_t id : chosen) {
        const auto dev = db.device(id);
        one_model = one_model && dev && first && DeviceKey::of(dev->info) == DeviceKey::of(first->info);
      }
      if (!one_model) throw UsageError("trials of several devices match (" + names + "): choose one with --device");
      std::sort(chosen.begin(), chosen.end(), [&](std::int64_t a, std::int64_t b) { return count[a] > count[b]; });
      d.notes.push_back("the trials of the board of the model that recorded the most here (" +
                        std::to_string(count[chosen.front()]) + " of " + std::to_string(rows.size()) + ")");
    }
    device_id = chosen.front();
    for (auto& t : rows)
      if (t.device_id == *device_id) d.trials.push_back(std::move(t));
  }
  if (d.trials.empty())
    throw UsageError("no trials of " + d.kernel + " " + d.workload + " " + d.problem + " in " + db.path());
  if (auto dev = db.device(*device_id)) d.device = *dev;
  std::set<std::int64_t> sids;
  for (const auto& t : d.trials) sids.insert(t.session_id);
  if (q.session_id) sids.insert(*q.session_id);
  for (std::int64_t id : sids)
    if (auto s = db.session(id)) d.sessions.push_back(*s);
  return d;
}

namespace {

/// A report's trials split into valid ones (by median time, fastest first) and failed ones.
struct SortedTrials {
  std::vector<const db::TrialRow*> ok, failed;
};

SortedTrials sort_trials(const ReportData& d) {
  SortedTrials s;
  for (const auto& t : d.trials) (t.m.ok() && t.m.median_ns > 0 ? s.ok : s.failed).push_back(&t);
  std::sort(s.ok.begin(), s.ok.end(), [](auto* a, auto* b) { return a->m.median_ns < b->m.median_ns; });
  return s;
}

/// From the doctype to the notes under the title.
void write_head(std::ostream& o, const ReportData& d) {
  bool simulated = false;
  for (const auto& s : d.sessions) simulated = simulated || s.backend == "simulation" || s.backend == "synthetic";
  const std::string what = d.kernel + " " + d.workload + " " + d.problem;
  o << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>autotune report: "
    << xml_escape(what) << "</title>\n<style>" << kCss << "</style>\n</head>\n<body>\n<main>\n";
  o << "<h1 id=\"title\">" << xml_escape(d.kernel) << " <span style=\"font-weight:normal\">" << xml_escape(d.workload)
    << " " << xml_escape(d.problem) << "</span></h1>\n";
  o << "<p class=\"sub\">" << xml_escape(d.device.info.name) << " &#183; " << xml_escape(d.scope) << " &#183; "
    << d.trials.size() << " trials in " << xml_escape(d.db_path) << "</p>\n";
  for (const auto& n : d.notes) o << "<div class=\"note\">" << xml_escape(n) << "</div>\n";
  if (simulated)
    o << "<div class=\"note\">Some of these trials come from a simulation or synthetic session: their numbers "
         "are replayed or generated, not measured by that session (see Provenance).</div>\n";
}

void write_summary(std::ostream& o, const ReportData& d, const SortedTrials& s) {
  const double copy = d.device.copy_gbps;
  o << "<div class=\"cards\" id=\"summary\">\n";
  if (!s.ok.empty()) {
    const auto* b = s.ok.front();
    o << "<div class=\"card\"><div class=\"k\">best</div><div class=\"v\">" << fixed(b->gbps, 1)
      << " GB/s</div><div class=\"n\">" << format_time_ns(b->m.median_ns) << " median</div></div>\n";
    if (copy > 0)
      o << "<div class=\"card\"><div class=\"k\">of device copy</div><div class=\"v\">"
        << fixed(100 * b->gbps / copy, 1) << "%</div><div class=\"n\">copy " << fixed(copy, 1) << " GB/s</div></div>\n";
  }
  o << "<div class=\"card\"><div class=\"k\">trials</div><div class=\"v\">" << d.trials.size()
    << "</div><div class=\"n\">" << s.ok.size() << " valid, " << s.failed.size() << " failed</div></div>\n";
  o << "<div class=\"card\"><div class=\"k\">device</div><div class=\"v\" style=\"font-size:16px\">"
    << xml_escape(d.device.info.name) << "</div><div class=\"n\">cc " << d.device.info.cc / 10 << "."
    << d.device.info.cc % 10 << ", " << d.device.info.sm_count << " SMs</div></div>\n</div>\n";
}

void write_best(std::ostream& o, const ReportData& d, const std::vector<const db::TrialRow*>& ok) {
  const double copy = d.device.copy_gbps;
  o << "<h2 id=\"best\">Best configurations</h2>\n";
  if (ok.empty()) {
    o << "<p>No configuration verified.</p>\n";
    return;
  }
  o << "<table id=\"best-table\">\n<tr><th class=\"num\">rank</th><th class=\"num\">median</th>"
       "<th class=\"num\">min</th><th class=\"num\">spread</th><th class=\"num\">GB/s</th>"
       "<th class=\"num\">% copy</th><th>configuration</th></tr>\n";
  for (std::size_t i = 0; i < ok.size() && i < d.top; ++i) {
    const auto* t = ok[i];
    o << "<tr><td class=\"num\">" << i + 1 << "</td><td class=\"num\">" << format_time_ns(t->m.median_ns)
      << "</td><td class=\"num\">" << format_time_ns(t->m.min_ns) << "</td><td class=\"num\">"
      << fixed(100 * t->m.spread, 1) << "%</td><td class=\"num\">" << fixed(t->gbps, 1) << "</td><td class=\"num\">"
      << (copy > 0 ? fixed(100 * t->gbps / copy, 1) + "%" : "-") << "</td><td class=\"cfg\">"
      << xml_escape(config_text(t->config_json, d.params)) << "</td></tr>\n";
  }
  o << "</table>\n";
}

void write_distribution(std::ostream& o, const std::vector<const db::TrialRow*>& ok) {
  o << "<h2 id=\"distribution\">Time distribution</h2>\n";
  if (ok.empty()) {
    o << "<p>No valid trial to show.</p>\n";
    return;
  }
  std::vector<double> us;
  us.reserve(ok.size());
  for (const auto* t : ok) us.push_back(t->m.median_ns / 1e3);
  HistogramSpec h;
  h.id = "time-histogram";
  h.title = "Median time of the " + std::to_string(ok.size()) + " valid trials";
  h.subtitle = "fastest " + format_time_ns(ok.front()->m.median_ns) + ", median " +
               format_time_ns(stats::median(us) * 1e3) + ", slowest " + format_time_ns(ok.back()->m.median_ns) +
               "; log scale";
  h.x_label = "median time per run (microseconds, log scale)";
  h.values = us;
  h.log_x = true;
  h.width = 1020;
  h.bins = std::min<int>(40, std::max<int>(8, static_cast<int>(std::sqrt(static_cast<double>(ok.size())) * 1.5)));
  o << "<div class=\"chart\">" << histogram(h) << "</div>\n";
}

/// The spec's parameters, then any other key of a trial's configuration.
std::vector<std::string> parameter_names(const ReportData& d) {
  std::vector<std::string> names;
  for (const auto& p : d.params) names.push_back(p.name);
  for (const auto& t : d.trials) {
    try {
      const Config c = Config::from_json(t.config_json);
      for (const auto& kv : c.values())
        if (std::find(names.begin(), names.end(), kv.first) == names.end()) names.push_back(kv.first);
    } catch (const std::exception&) {
    }
  }
  return names;
}

/// Best and median GB/s for each value of parameter `name` (sp: its spec entry, if any).
BarChartSpec parameter_chart(const std::string& name, const Param* sp, const std::vector<ParamEffect>& eff,
                             double copy) {
  BarChartSpec b;
  b.id = "param-" + name;
  b.title = name;
  if (sp && !sp->description.empty()) b.subtitle = sp->description;
  b.y_label = "GB/s";
  b.series = {"best", "median"};
  b.height = 300;
  b.width = 1020;
  for (const auto& e : eff) {
    BarGroup g;
    g.label = e.label;
    g.values = {e.ok ? e.best_gbps : -1, e.ok ? e.median_gbps : -1};
    std::string counts =
        " (" + std::to_string(e.ok) + " valid" + (e.failed ? ", " + std::to_string(e.failed) + " failed" : "") + ")";
    g.tooltips = {name + "=" + e.label + ": best " + fixed(e.best_gbps, 1) + " GB/s" + counts,
                  name + "=" + e.label + ": median " + fixed(e.median_gbps, 1) + " GB/s" + counts};
    b.groups.push_back(g);
  }
  std::size_t longest = 0;
  for (const auto& g : b.groups) longest = std::max(longest, g.label.size());
  if (static_cast<double>(longest) * 7.0 > 900.0 / static_cast<double>(std::max<std::size_t>(b.groups.size(), 1)))
    b.height = 380;  // rotated labels
  if (copy > 0) b.hlines.push_back({copy, "device copy " + fixed(copy, 0) + " GB/s", "#b91c1c", "device copy", false});
  return b;
}

void write_parameters(std::ostream& o, const ReportData& d) {
  o << "<h2 id=\"parameters\">Effect of each parameter</h2>\n<p>For each value: the best and the median GB/s "
       "over the valid trials that have it (all other parameters free). Hover a bar for the numbers.</p>\n";
  for (const auto& name : parameter_names(d)) {
    const Param* sp = nullptr;
    for (const auto& p : d.params)
      if (p.name == name) sp = &p;
    std::vector<ParamEffect> eff = parameter_effect(d.trials, name, sp);
    if (eff.empty()) continue;
    o << "<div class=\"chart\">" << bar_chart(parameter_chart(name, sp, eff, d.device.copy_gbps)) << "</div>\n";
  }
}

/// Energy and power (only where NVML observed the trials).
void write_energy(std::ostream& o, const ReportData& d, const std::vector<const db::TrialRow*>& ok) {
  std::vector<PowerPoint> power;
  std::string group_by = "BLOCK_SIZE";
  if (std::none_of(d.params.begin(), d.params.end(), [](const Param& p) { return p.name == "BLOCK_SIZE"; }) &&
      !d.params.empty())
    group_by = d.params.front().name;
  for (const auto* t : ok) {
    const Observation& ob = t->m.observed;
    if (!(ob.power_w > 0) || !(t->gbps > 0)) continue;
    std::string group = "-";
    try {
      if (auto v = Config::from_json(t->config_json).get(group_by)) group = group_by + "=" + std::to_string(*v);
    } catch (const std::exception&) {
    }
    power.push_back({ob.power_w, t->gbps, ob.has_energy() ? ob.energy_j : 0.0, group,
                     config_text(t->config_json, d.params)});
  }
  if (power.empty()) return;
  o << "<h2 id=\"energy\">Energy and power</h2>\n<p>GB/s against the board power measured while each valid "
       "configuration ran (NVML; docs/observers.md), one line per "
    << xml_escape(group_by)
    << ". Rings: the fastest "
       "configuration and the one with the least energy per run.</p>\n";
  PowerChartSpec pc;
  pc.title = "GB/s against power (" + std::to_string(power.size()) + " valid trials)";
  pc.points = power;
  o << "<div class=\"chart\">" << power_chart_svg(pc) << "</div>\n";
}

/// The hardware counters of the best configurations (only where a counter observer took them; docs/observers.md).
void write_counters(std::ostream& o, const ReportData& d, const std::vector<const db::TrialRow*>& ok) {
  auto cell = [](double v, int decimals, const char* suffix) {
    return std::isfinite(v) ? fixed(v, decimals) + suffix : std::string("-");
  };
  std::vector<const db::TrialRow*> rows;
  for (std::size_t i = 0; i < ok.size() && rows.size() < d.top; ++i)
    if (!ok[i]->m.observed.metrics.empty()) rows.push_back(ok[i]);
  if (rows.empty()) return;
  const double peak = peak_dram_gbps(d.device.info);
  o << "<h2 id=\"counters\">Hardware counters</h2>\n<p>Taken in a replay of each configuration after its timing "
       "(CUPTI; docs/observers.md), so they never perturb the time. DRAM bytes against the kernel's ideal (the bytes "
       "the spec says it must move), the DRAM bandwidth the counters saw as a share of the measured copy and of the "
       "device's peak ("
    << cell(peak, 0, " GB/s") << "), the achieved occupancy.</p>\n";
  o << "<table id=\"counters-table\">\n<tr><th class=\"num\">median</th><th class=\"num\">DRAM B/elem</th>"
       "<th class=\"num\">x ideal</th><th class=\"num\">DRAM GB/s</th><th class=\"num\">% copy</th>"
       "<th class=\"num\">% peak</th><th class=\"num\">occupancy</th><th class=\"num\">L2 hit</th>"
       "<th>other metrics</th><th>configuration</th></tr>\n";
  double replay_ms = 0;
  int replays = 0;
  for (const auto* t : rows) {
    const CounterReading r = read_counters(t->m, t->gbps, t->problem_elements, d.device.copy_gbps, d.device.info);
    if (std::isfinite(r.replay_ms)) replay_ms += r.replay_ms, ++replays;
    const std::string others = other_metrics(t->m.observed.metrics);
    o << "<tr><td class=\"num\">" << format_time_ns(t->m.median_ns) << "</td><td class=\"num\">"
      << cell(r.bytes_per_element, 3, "") << "</td><td class=\"num\">" << cell(r.vs_ideal, 3, "")
      << "</td><td class=\"num\">" << cell(r.dram_gbps, 1, "") << "</td><td class=\"num\">"
      << cell(100 * r.share_of_copy, 1, "%") << "</td><td class=\"num\">" << cell(100 * r.share_of_peak, 1, "%")
      << "</td><td class=\"num\">" << cell(r.occupancy_pct, 1, "%") << "</td><td class=\"num\">"
      << cell(r.l2_hit_pct, 1, "%") << "</td><td>" << xml_escape(others) << "</td><td class=\"cfg\">"
      << xml_escape(config_text(t->config_json, d.params)) << "</td></tr>\n";
  }
  o << "</table>\n";
  if (replays > 0)
    o << "<p>Counter replays: " << fixed(replay_ms / replays, 1) << " ms each on average (extra GPU time per "
      << "configuration, after its timing).</p>\n";
}

void write_failures(std::ostream& o, const ReportData& d, const std::vector<const db::TrialRow*>& failed) {
  o << "<h2 id=\"failures\">Failures by status</h2>\n";
  if (failed.empty()) {
    o << "<p class=\"ok\">No failures: all " << d.trials.size() << " trials verified.</p>\n";
    return;
  }
  std::map<std::string, std::vector<const db::TrialRow*>> by;
  for (const auto* t : failed) by[to_string(t->m.status)].push_back(t);
  o << "<table id=\"failures-table\">\n<tr><th>status</th><th class=\"num\">trials</th><th>example configuration</th>"
       "<th>log (first line)</th></tr>\n";
  for (const auto& [st, list] : by) {
    o << "<tr><td class=\"bad\">" << xml_escape(st) << "</td><td class=\"num\">" << list.size()
      << "</td><td class=\"cfg\">" << xml_escape(config_text(list.front()->config_json, d.params)) << "</td><td><pre>"
      << xml_escape(first_line(list.front()->m.log, 200)) << "</pre></td></tr>\n";
  }
  o << "</table>\n";
}

/// The device table: properties, copy bandwidth and measurement protocols.
void write_device(std::ostream& o, const ReportData& d) {
  const DeviceInfo& di = d.device.info;
  const double copy = d.device.copy_gbps;
  o << "<h2 id=\"provenance\">Device and provenance</h2>\n<table id=\"device-table\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    o << "<tr><th>" << xml_escape(k) << "</th><td>" << xml_escape(v) << "</td></tr>\n";
  };
  row("device", di.name + " (" + di.normalised_name() + ")");
  row("compute capability", std::to_string(di.cc / 10) + "." + std::to_string(di.cc % 10));
  row("SMs", std::to_string(di.sm_count));
  row("memory", fixed(static_cast<double>(di.total_memory) / 1073741824.0, 1) + " GiB, bus " +
                    std::to_string(di.memory_bus_width) + " bit, memory clock " +
                    fixed(di.memory_clock_khz / 1000.0, 0) + " MHz");
  row("L2", fixed(di.l2_bytes / 1048576.0, 0) + " MiB");
  row("SM clock", fixed(di.clock_khz / 1000.0, 0) + " MHz");
  row("driver", std::to_string(di.driver_version / 1000) + "." + std::to_string(di.driver_version % 1000 / 10));
  row("uuid", di.uuid);
  row("copy bandwidth", copy > 0 ? fixed(copy, 1) + " GB/s (device-to-device, bytes read + written)" : "not measured");
  std::map<std::string, std::size_t> protocols;
  for (const auto& t : d.trials)
    if (!t.m.protocol.empty()) ++protocols[t.m.protocol];
  std::string ps;
  for (const auto& [p, n] : protocols) ps += (ps.empty() ? "" : "; ") + p + " (" + std::to_string(n) + ")";
  row("measurement protocol", ps.empty() ? "-" : ps);
  row("GB/s", "bytes the kernel must move (the spec's bytes_moved) / median time");
  o << "</table>\n";
}

/// The sessions table, the footer and the end of the page.
void write_sessions(std::ostream& o, const ReportData& d) {
  o << "<h3>Sessions</h3>\n<table id=\"sessions-table\">\n<tr><th "
       "class=\"num\">id</th><th>backend</th><th>strategy</th>"
       "<th>compiler</th><th "
       "class=\"num\">seed</th><th>started</th><th>finished</th><th>status</th><th>source</th></tr>\n";
  for (const auto& s : d.sessions) {
    o << "<tr><td class=\"num\">" << s.id << "</td><td>" << xml_escape(s.backend) << "</td><td>"
      << xml_escape(s.strategy) << "</td><td>" << xml_escape(s.compiler_version) << "</td><td class=\"num\">" << s.seed
      << "</td><td>" << xml_escape(s.started_at) << "</td><td>" << xml_escape(s.finished_at) << "</td><td>"
      << xml_escape(s.status) << "</td><td class=\"cfg\">" << xml_escape(s.source_hash.substr(0, 16)) << "</td></tr>\n";
  }
  o << "</table>\n";
  o << "<footer>Generated by autotune report" << (d.generated_at.empty() ? "" : " at " + xml_escape(d.generated_at))
    << " from " << xml_escape(d.db_path) << ". Self-contained page: no scripts, no external resources.</footer>\n";
  o << "</main>\n</body>\n</html>\n";
}

}  // namespace

std::string render_html(const ReportData& d) {
  const SortedTrials s = sort_trials(d);
  std::ostringstream o;
  write_head(o, d);
  write_summary(o, d, s);
  write_best(o, d, s.ok);
  write_distribution(o, s.ok);
  write_parameters(o, d);
  write_energy(o, d, s.ok);
  write_counters(o, d, s.ok);
  write_failures(o, d, s.failed);
  write_device(o, d);
  write_sessions(o, d);
  return o.str();
}

}  // namespace autotune::report
