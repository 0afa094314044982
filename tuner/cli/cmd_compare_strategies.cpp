// `autotune compare-strategies`: wiring only (the logic lives in tuner/compare/compare.*).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "db/database.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/compare/compare.hpp"
#include "tuner/compare/score.hpp"
#include "tuner/compare/traces.hpp"
#include "tuner/core/error.hpp"
#include "tuner/interop/resolve.hpp"

namespace autotune::cli {

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t comma = s.find(',', start);
    std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

/// The benchmark's options from the flags. UsageError for a malformed --budgets or --strategy-option.
compare::CompareOptions compare_options(const CompareStrategiesArgs& a) {
  compare::CompareOptions opt;
  opt.budgets = compare::parse_budgets(a.budgets);
  opt.repeats = a.repeats;
  opt.seed = a.seed;
  opt.batch = a.batch;
  opt.within = a.within_percent / 100.0;
  opt.keep_runs = !a.runs_csv.empty();
  opt.strategies = split_list(a.strategies);
  for (const auto& kv : a.strategy_options) {
    auto dot = kv.find('.');
    auto eq = kv.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot == 0 || eq < dot + 2)
      throw UsageError("--strategy-option expects strategy.key=value, got '" + kv + "'");
    opt.strategy_options[kv.substr(0, dot)][kv.substr(dot + 1, eq - dot - 1)] = kv.substr(eq + 1);
  }
  opt.on_strategy_done = [](const std::string& name, double s) {
    std::fprintf(stderr, "  %-24s %s\n", name.c_str(), (s < 1 ? fmt("%.1f ms", s * 1e3) : fmt("%.2f s", s)).c_str());
  };
  return opt;
}

/// What was recorded: the space, its failures, the optimum and how many configurations come close to it.
void print_recording(const TuningSpec& spec, const Workload& w, const ProblemKey& p, const compare::Recording& rec,
                     const std::string& from, double within_percent) {
  const ParameterSpace& space = *rec.space;
  const double within = within_percent / 100.0;  // as CompareOptions::within
  std::printf("%s %s %s on %s (recorded in %s): %zu valid configurations, %zu failed, optimum %s: %s\n",
              spec.name.c_str(), w.key().c_str(), p.key().c_str(), rec.device.info.name.c_str(), from.c_str(),
              space.size(), rec.recorded.failures, fmt_time(rec.recorded.optimum).c_str(),
              space.config(rec.recorded.optimum_index).str(&spec.params).c_str());
  std::size_t good = 0;
  for (double v : rec.recorded.values) good += v <= (1 + within) * rec.recorded.optimum ? 1 : 0;
  std::printf("%zu configurations (%.1f%%) are within %g%% of the optimum\n", good,
              100.0 * static_cast<double>(good) / static_cast<double>(space.size()), within_percent);
  if (!rec.space_note.empty()) std::printf("%s\n", rec.space_note.c_str());
  if (!rec.note.empty()) std::printf("note: %s\n", rec.note.c_str());
}

/// --warm-from-problem: the warm start a session would get from the other problem (--warm-as-given: its fastest
/// configurations only).
void add_warm_start(const db::Database& db, const compare::Recording& rec, const TuningSpec& spec, const Workload& w,
                    const CompareStrategiesArgs& a, compare::CompareOptions& opt) {
  const ParameterSpace& space = *rec.space;
  compare::RecordedWarmStart ws = compare::load_warm_start(db, rec, spec, w, ProblemKey::parse(a.warm_from));
  opt.warm_start = ws.hint;
  if (a.warm_as_given) opt.warm_start.source_values.clear();
  std::printf("warm start: the %zu fastest configurations recorded for %s", ws.indices.size() + ws.skipped,
              ws.problem.c_str());
  if (ws.skipped) std::printf(" (%zu not valid here, skipped)", ws.skipped);
  if (a.warm_as_given)
    std::printf(", evaluated first by every run:\n");
  else
    std::printf(", with the times of %zu configurations recorded there (distance %.2g), tested by every run:\n",
                opt.warm_start.source_values.size(), opt.warm_start.distance);
  for (std::size_t k = 0; k < ws.indices.size(); ++k) {
    const double here = rec.recorded.values[ws.indices[k]];
    std::printf("  %s there, %s here: %s\n", fmt_time(ws.source_ns[k]).c_str(),
                std::isfinite(here) ? fmt_time(here).c_str() : "failed",
                space.config(ws.indices[k]).str(&spec.params).c_str());
  }
}

/// A recorded space to score: workload, problem and device name.
struct ScoreCase {
  Workload w;
  ProblemKey p;
  std::string device;
};

/// The cases to score of one kernel in one database: the problem the flags give, else every one recorded (of the
/// flags' workload when one is given), on the device --device names, else on every device that recorded it; none,
/// with a note, when the kernel has no trials there.
std::vector<ScoreCase> score_cases(const db::Database& db, const TuningSpec& spec, const CompareStrategiesArgs& a) {
  db::TrialFilter f;
  f.kernel = spec.name;
  if (a.pa.has_workload()) f.workload = a.pa.workload(spec).key();
  if (a.pa.has_problem()) f.problem = a.pa.problem_key(spec).key();
  std::map<std::int64_t, std::string> device_names;
  for (const auto& d : db.devices()) device_names[d.id] = d.info.name;
  std::set<std::tuple<std::string, std::string, std::string>> keys;
  for (const auto& t : db.trials(f))
    keys.insert({t.workload, t.problem, a.device_name.empty() ? device_names[t.device_id] : a.device_name});
  std::vector<ScoreCase> out;
  if (a.pa.has_problem()) {  // the flags' problem, on each device (load_recording says when nothing is recorded)
    std::set<std::string> devices;
    for (const auto& k : keys) devices.insert(std::get<2>(k));
    if (devices.empty()) devices.insert(a.device_name);
    for (const auto& d : devices) out.push_back({a.pa.workload(spec), a.pa.problem_key(spec), d});
    return out;
  }
  out.reserve(keys.size());
  for (const auto& [w, p, d] : keys) out.push_back({Workload::parse(w), ProblemKey::parse(p), d});
  if (out.empty()) std::printf("note: no recorded trials of %s in %s\n", spec.name.c_str(), db.path().c_str());
  return out;
}

/// The scores of every space, printed and written as the flags ask.
void write_scores(const CompareStrategiesArgs& a, const std::vector<compare::SpaceScore>& spaces) {
  const std::vector<compare::AggregateScore> all = compare::aggregate_scores(spaces);
  std::printf(
      "\nmethodology score (mean normalised best-so-far over the time range; 0 = random search, 1 = the "
      "optimum; +- standard error over %zu runs per space):\n%s",
      a.repeats, compare::score_table(spaces, all, a.markdown).c_str());
  if (!a.csv.empty()) {
    write_file(a.csv, compare::score_csv(spaces, all, false));
    std::printf("CSV written to %s\n", a.csv.c_str());
  }
  if (!a.curve_csv.empty()) {
    write_file(a.curve_csv, compare::score_csv(spaces, all, true));
    std::printf("curves CSV written to %s\n", a.curve_csv.c_str());
  }
  if (!a.plot.empty()) {
    write_file(a.plot, compare::score_svg(spaces, all));
    std::printf("SVG curve written to %s\n", a.plot.c_str());
  }
}

}  // namespace

int run_compare_score(const CompareStrategiesArgs& a, const std::string& db_path) {
  if (!a.warm_from.empty()) throw UsageError("--warm-from-problem is not scored over time (leave out --score)");
  if (!a.runs_csv.empty()) throw UsageError("--runs-csv is not written with --score (see --curve-csv)");
  if (!a.traces.empty() && !a.no_strategy_time)
    throw UsageError(
        "--traces charges the external runs no decision time: give --no-strategy-time so that ours are "
        "charged none either");
  const std::vector<compare::ExternalRun> traces =
      a.traces.empty() ? std::vector<compare::ExternalRun>{} : compare::read_traces(a.traces);
  std::size_t traced = 0;  // spaces with external runs
  compare::CompareOptions opt = compare_options(a);
  compare::ScoreSettings settings;
  settings.cutoff = a.cutoff_percent / 100.0;
  settings.resolution = a.resolution;
  settings.strategy_time = !a.no_strategy_time;
  const std::vector<std::string> froms = a.from_list.empty() ? std::vector<std::string>{db_path} : a.from_list;
  std::vector<compare::SpaceScore> spaces;
  for (const std::string& kernel : split_list(a.kernel)) {
    for (const std::string& from : froms) {
      TuningSpec spec = interop::resolve_kernel(kernel, {from, db_path});
      auto db = db::Database::open(from, db::Database::Mode::read_only);
      for (const auto& [w, p, device] : score_cases(*db, spec, a)) {
        spec.check_workload(w);
        compare::Recording rec = compare::load_recording(*db, spec, w, p, device);
        std::string label = spec.name + " " + w.key() + " " + p.key() + " " + rec.device.info.name;
        if (froms.size() > 1) label += " in " + from.substr(from.find_last_of('/') + 1);  // npos + 1 = 0
        std::printf("space %zu: %s (%s): %zu valid configurations, %zu failed, optimum %s\n", spaces.size() + 1,
                    label.c_str(), from.c_str(), rec.space->size(), rec.recorded.failures,
                    fmt_time(rec.recorded.optimum).c_str());
        if (!rec.note.empty()) std::printf("note: %s\n", rec.note.c_str());
        std::fflush(stdout);
        spaces.push_back(compare::score_space(*rec.space, rec.recorded, opt, settings, label));
        if (traces.empty()) continue;
        const auto orders = compare::trace_orders(traces, *rec.space, spec.name, p.key(), rec.device.info.name, from);
        for (const auto& [name, runs] : orders) compare::score_orders(spaces.back(), rec.recorded, name, runs);
        if (orders.empty())
          std::printf("note: %s has no runs of %s on %s %s\n", a.traces.c_str(), spec.name.c_str(), p.key().c_str(),
                      rec.device.info.name.c_str());
        traced += orders.empty() ? 0 : 1;
      }
    }
  }
  if (spaces.empty()) throw UsageError("no recorded space of " + a.kernel + " to score");
  if (!traces.empty() && traced == 0)
    throw UsageError("none of the runs in " + a.traces +
                     " is of a scored space (kernel, problem and device must match)");
  write_scores(a, spaces);
  return 0;
}

int run_compare_strategies(const CompareStrategiesArgs& a, const std::string& db_path) {
  if (a.from_list.size() > 1) throw UsageError("several --from databases are compared only with --score");
  TuningSpec spec = interop::resolve_kernel(a.kernel, {a.from, db_path});
  ProblemKey p = a.pa.problem_key(spec);
  Workload w = a.pa.workload(spec);
  spec.check_workload(w);
  compare::CompareOptions opt = compare_options(a);
  const std::string from = a.from.empty() ? db_path : a.from;
  auto db = db::Database::open(from, db::Database::Mode::read_only);
  compare::Recording rec = compare::load_recording(*db, spec, w, p, a.device_name);
  print_recording(spec, w, p, rec, from, a.within_percent);
  if (!a.warm_from.empty()) add_warm_start(*db, rec, spec, w, a, opt);
  std::fflush(stdout);
  std::cerr << "simulating " << opt.repeats << " runs per strategy (batch " << opt.batch << ")\n";
  compare::CompareResult res = compare::compare_strategies(*rec.space, rec.recorded, opt);
  std::printf("\n%s", compare::compare_table(res, a.markdown).c_str());
  const std::vector<std::pair<std::string, std::string>> context = {
      {"kernel", spec.name}, {"workload", w.key()}, {"problem", p.key()}, {"device", rec.device.info.name}};
  if (!a.csv.empty()) {
    write_file(a.csv, compare::compare_csv(res, context));
    std::printf("CSV written to %s\n", a.csv.c_str());
  }
  if (!a.runs_csv.empty()) {
    write_file(a.runs_csv, compare::compare_runs_csv(res, context));
    std::printf("per-run CSV written to %s\n", a.runs_csv.c_str());
  }
  return 0;
}

}  // namespace autotune::cli
