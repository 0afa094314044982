#include "tuner/session/compare.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>

#include "tuner/core/error.hpp"
#include "tuner/session/warm_start.hpp"

namespace autotune::session {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  std::size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

/// Percentile q in [0, 1] of sorted values, linear interpolation between closest ranks.
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

std::string list_some(const std::vector<std::string>& items, std::size_t total) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < 5; ++i) out += (i ? ", " : "") + items[i];
  if (total > 5) out += ", ... (" + std::to_string(total) + " in all)";
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

// ---- budgets

std::size_t BudgetSpec::resolve(std::size_t space_size) const {
  double n = percent ? std::round(value / 100.0 * static_cast<double>(space_size)) : value;
  if (n < 1) n = 1;
  std::size_t out = static_cast<std::size_t>(n);
  return std::min(out, space_size);
}

std::string BudgetSpec::str() const {
  if (!percent) return std::to_string(static_cast<std::size_t>(value));
  std::ostringstream os;
  os << value << "%";
  return os.str();
}

std::vector<BudgetSpec> parse_budgets(const std::string& text) {
  std::vector<BudgetSpec> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    std::string part = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (part.empty()) {
      if (comma == std::string::npos && !out.empty()) break;  // tolerate a trailing comma
      throw UsageError("bad budget list '" + text + "': empty entry (expected e.g. 10,20,50 or 5%,10%)");
    }
    BudgetSpec b;
    if (part.back() == '%') {
      b.percent = true;
      part = trim(part.substr(0, part.size() - 1));
    }
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || !std::isfinite(v) || v <= 0)
      throw UsageError("bad budget '" + part + (b.percent ? "%" : "") + "' in '" + text +
                       "': expected a positive count or a percentage of the space (e.g. 50 or 5%)");
    if (!b.percent && v != std::floor(v))
      throw UsageError("bad budget '" + part + "': a count of evaluations must be a whole number (or add % for a share)");
    if (b.percent && v > 100) throw UsageError("bad budget '" + part + "%': more than 100% of the space");
    b.value = v;
    out.push_back(b);
  }
  if (out.empty()) throw UsageError("no budgets given (expected e.g. --budgets 10,20,50 or 5%,10%)");
  return out;
}

// ---- recordings

RecordedSpace map_recording(const ParameterSpace& space, const std::vector<db::TrialRow>& rows) {
  RecordedSpace rec;
  rec.values.assign(space.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<std::string> unknown;
  std::size_t unknown_total = 0;
  for (const auto& t : rows) {
    Config c = Config::from_json(t.config_json);
    std::ptrdiff_t i = space.find(c);
    if (i < 0) {
      if (t.m.status == TrialStatus::invalid) {
        ++rec.ignored;
        continue;
      }
      ++unknown_total;
      if (unknown.size() < 5) unknown.push_back(c.to_json());
      continue;
    }
    double v = t.m.ok() && std::isfinite(t.m.median_ns) && t.m.median_ns > 0 ? t.m.median_ns : kInf;
    if (!std::isnan(rec.values[i])) continue;  // first row wins, as in the database
    rec.values[i] = v;
  }
  if (unknown_total)
    throw UsageError(std::to_string(unknown_total) + " recorded configuration(s) are not in the valid space of " +
                     std::to_string(space.size()) + " configurations (another spec version, device or problem?): " +
                     list_some(unknown, unknown_total));
  std::vector<std::string> missing;
  std::size_t missing_total = 0;
  rec.optimum = kInf;
  for (std::size_t i = 0; i < space.size(); ++i) {
    if (std::isnan(rec.values[i])) {
      ++missing_total;
      if (missing.size() < 5) missing.push_back(space.config(i).to_json());
      continue;
    }
    if (!std::isfinite(rec.values[i])) ++rec.failures;
    else if (rec.values[i] < rec.optimum) {
      rec.optimum = rec.values[i];
      rec.optimum_index = i;
    }
  }
  if (missing_total)
    throw UsageError(std::to_string(missing_total) + " of " + std::to_string(space.size()) +
                     " valid configuration(s) have no recorded trial, so a simulated strategy could not be answered "
                     "(record the whole space with --strategy brute_force first): " +
                     list_some(missing, missing_total));
  return rec;
}

Recording load_recording(const db::Database& from, const TuningSpec& spec, const Workload& w, const ProblemKey& p,
                         const std::string& device_name) {
  db::TrialFilter f;
  f.kernel = spec.name;
  std::set<std::int64_t> ids;
  for (const auto& t : from.trials(f)) ids.insert(t.device_id);
  if (ids.empty()) throw UsageError("no recorded trials of kernel '" + spec.name + "' in " + from.path());
  std::vector<db::DeviceRow> matches;
  std::string names;
  for (std::int64_t id : ids) {
    auto d = from.device(id);
    if (!d) continue;
    names += (names.empty() ? "" : ", ") + d->info.name;
    if (device_name.empty() || d->info.name == device_name || d->info.normalised_name() == device_name)
      matches.push_back(*d);
  }
  if (matches.empty())
    throw UsageError("no recorded trials of kernel '" + spec.name + "' on device '" + device_name + "' in " +
                     from.path() + " (recorded devices: " + names + ")");
  if (matches.size() > 1)
    throw UsageError("trials of kernel '" + spec.name + "' were recorded on several devices (" + names +
                     "): choose one with --device");

  Recording r;
  r.device = matches.front();
  r.problem = p.key();
  f.device_id = r.device.id;
  f.workload = w.key();
  f.problem = p.key();
  std::vector<db::TrialRow> rows = from.trials(f);
  const std::string what = spec.name + " " + w.key() + " " + p.key() + " on " + r.device.info.name;
  if (rows.empty()) throw UsageError("no recorded trials of " + what + " in " + from.path());

  std::map<std::string, std::size_t> hashes;
  for (const auto& t : rows) ++hashes[t.source_hash];
  const std::string current = spec.source_hash();
  if (hashes.count(current)) {
    r.source_hash = current;
  } else if (hashes.size() == 1) {
    r.source_hash = hashes.begin()->first;
    r.note = "the recorded trials were measured with kernel source " + r.source_hash + ", not the current " + current;
  } else {
    std::string list;
    for (const auto& [h, n] : hashes) list += (list.empty() ? "" : ", ") + h + " (" + std::to_string(n) + " trials)";
    throw UsageError("trials of " + what + " were recorded with several kernel sources, none of them the current " +
                     current + ": " + list);
  }
  if (hashes.size() > 1) {
    std::vector<db::TrialRow> kept;
    for (auto& t : rows)
      if (t.source_hash == r.source_hash) kept.push_back(std::move(t));
    rows.swap(kept);
  }

  r.space = std::make_unique<ParameterSpace>(spec.space(p, r.device.info, w));
  if (r.space->empty())
    throw UsageError("the constraints of " + spec.name + " leave no valid configuration for " + p.key() + ", " +
                     w.key() + " on " + r.device.info.name);
  try {
    r.recorded = map_recording(*r.space, rows);
  } catch (const UsageError& e) {
    throw UsageError(what + " in " + from.path() + ": " + e.what());
  }
  return r;
}

RecordedWarmStart load_warm_start(const db::Database& from, const Recording& target, const TuningSpec& spec,
                                  const Workload& w, const ProblemKey& source, std::size_t count) {
  const std::string what = spec.name + " " + w.key() + " " + source.key() + " on " + target.device.info.name;
  if (source.key() == target.problem)
    throw UsageError("the warm start must come from another problem than the one simulated (" + source.key() + ")");
  db::TrialFilter f;
  f.kernel = spec.name;
  f.device_id = target.device.id;
  f.workload = w.key();
  f.problem = source.key();
  std::vector<db::TrialRow> rows;
  if (!target.source_hash.empty()) {
    f.source_hash = target.source_hash;
    rows = fastest_configs(from, f, count);
    f.source_hash.reset();
  }
  if (rows.empty()) rows = fastest_configs(from, f, count);
  RecordedWarmStart ws;
  ws.problem = source.key();
  for (const auto& t : rows) {
    const std::ptrdiff_t i = target.space->find(Config::from_json(t.config_json));
    if (i < 0) {
      ++ws.skipped;
      continue;
    }
    ws.indices.push_back(static_cast<std::size_t>(i));
    ws.source_ns.push_back(t.m.median_ns);
  }
  if (rows.empty()) throw UsageError("no successful recorded trials of " + what + " in " + from.path() + " to warm-start from");
  return ws;
}

// ---- simulation

std::vector<double> simulate_run(const ParameterSpace& space, const RecordedSpace& rec, const std::string& strategy,
                                 const search::Options& options, std::uint64_t seed, std::size_t max_evaluations,
                                 std::size_t batch, const std::vector<std::size_t>& warm_start) {
  auto s = search::make_strategy(strategy, space, seed, options);
  return simulate_run(space, rec, *s, max_evaluations, batch, warm_start);
}

std::vector<double> simulate_run(const ParameterSpace& space, const RecordedSpace& rec, search::Strategy& s,
                                 std::size_t max_evaluations, std::size_t batch,
                                 const std::vector<std::size_t>& warm_start) {
  if (rec.values.size() != space.size()) throw Error("recording does not match the space");
  if (batch == 0) batch = 1;
  if (!warm_start.empty()) s.warm_start(warm_start);
  std::vector<double> trace;
  trace.reserve(max_evaluations);
  std::vector<char> seen(space.size(), 0);
  std::vector<std::size_t> fresh;
  std::vector<search::Observation> answers;
  double best = kInf;
  std::size_t stalled = 0;
  while (trace.size() < max_evaluations) {
    std::size_t want = std::min(batch, max_evaluations - trace.size());
    std::vector<std::size_t> proposed = s.propose(want);
    if (proposed.empty()) break;
    answers.clear();
    fresh.clear();
    for (std::size_t idx : proposed) {
      if (idx >= space.size()) throw Error("strategy " + s.name() + " proposed an index out of range");
      if (seen[idx]) {  // revisit: answered from memory, no budget
        answers.push_back({idx, rec.values[idx]});
        continue;
      }
      if (std::find(fresh.begin(), fresh.end(), idx) != fresh.end()) continue;
      if (trace.size() + fresh.size() >= max_evaluations) continue;
      fresh.push_back(idx);
    }
    if (fresh.empty()) {
      if (++stalled > 1000) break;  // only known configs, as session::run
    } else {
      stalled = 0;
    }
    for (std::size_t idx : fresh) {
      seen[idx] = 1;
      double v = rec.values[idx];
      answers.push_back({idx, v});
      best = std::min(best, v);
      trace.push_back(best);
    }
    s.observe(answers);
  }
  return trace;
}

CompareResult compare_strategies(const ParameterSpace& space, const RecordedSpace& rec, const CompareOptions& opt) {
  if (space.empty()) throw UsageError("the space is empty: nothing to compare");
  if (opt.budgets.empty()) throw UsageError("no budgets given");
  if (opt.repeats == 0) throw UsageError("--repeats must be at least 1");
  if (!std::isfinite(rec.optimum))
    throw UsageError("every recorded configuration failed: there is no optimum to compare with");

  // Strategies: random_sample first, then the given order (or the registry's), no duplicates.
  std::vector<std::string> names{"random_sample"};
  std::vector<std::string> wanted = opt.strategies;
  if (wanted.empty())
    for (const auto& info : search::list_strategies()) wanted.push_back(info.name);
  for (const auto& n : wanted)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  for (const auto& [n, o] : opt.strategy_options)
    if (std::find(names.begin(), names.end(), n) == names.end())
      throw UsageError("strategy options given for '" + n + "', which is not among the compared strategies");
  // Every run is cut short by a budget: each strategy runs with the options of a limited run.
  std::map<std::string, search::Options> options;
  for (const auto& n : names) {  // validate names and options before any long run
    auto it = opt.strategy_options.find(n);
    options[n] = search::limited_options(n, it == opt.strategy_options.end() ? search::Options{} : it->second);
    search::make_strategy(n, space, opt.seed, options[n]);
  }

  CompareResult res;
  res.space_size = space.size();
  res.optimum_ns = rec.optimum;
  res.failures = rec.failures;
  for (const auto& b : opt.budgets) {
    std::size_t n = b.resolve(space.size());
    if (std::find(res.budgets.begin(), res.budgets.end(), n) == res.budgets.end()) res.budgets.push_back(n);
  }
  const std::size_t max_budget = *std::max_element(res.budgets.begin(), res.budgets.end());
  const double threshold = (1.0 + opt.within) * rec.optimum;

  for (const auto& name : names) {
    const search::Options& so = options[name];
    const auto t0 = std::chrono::steady_clock::now();
    // scores[b][r], spent[b][r]
    std::vector<std::vector<double>> scores(res.budgets.size()), bests(res.budgets.size());
    std::vector<double> spent(res.budgets.size(), 0);
    for (std::size_t r = 0; r < opt.repeats; ++r) {
      const std::uint64_t seed = opt.seed + r;
      std::vector<double> trace;
      if (opt.batch <= 1) trace = simulate_run(space, rec, name, so, seed, max_budget, 1, opt.warm_start);
      for (std::size_t b = 0; b < res.budgets.size(); ++b) {
        const std::size_t budget = res.budgets[b];
        if (opt.batch > 1) trace = simulate_run(space, rec, name, so, seed, budget, opt.batch, opt.warm_start);
        std::size_t used = std::min(budget, trace.size());
        double best = used ? trace[used - 1] : kInf;
        spent[b] += static_cast<double>(used);
        bests[b].push_back(best);
        scores[b].push_back(std::isfinite(best) && best > 0 ? rec.optimum / best : 0.0);
      }
    }
    for (std::size_t b = 0; b < res.budgets.size(); ++b) {
      CompareRow row;
      row.strategy = name;
      row.budget = res.budgets[b];
      row.budget_percent = 100.0 * static_cast<double>(row.budget) / static_cast<double>(space.size());
      row.repeats = opt.repeats;
      std::vector<double> s = scores[b];
      std::sort(s.begin(), s.end());
      row.median = percentile(s, 0.5);
      row.p10 = percentile(s, 0.1);
      row.p90 = percentile(s, 0.9);
      double sum = 0;
      for (double v : s) sum += v;
      row.mean = sum / static_cast<double>(s.size());
      std::size_t within = 0, found = 0;
      for (double best : bests[b]) {
        within += best <= threshold ? 1 : 0;
        found += best <= rec.optimum ? 1 : 0;
      }
      row.within = static_cast<double>(within) / static_cast<double>(opt.repeats);
      row.found = static_cast<double>(found) / static_cast<double>(opt.repeats);
      row.mean_evaluations = spent[b] / static_cast<double>(opt.repeats);
      res.rows.push_back(row);
    }
    if (opt.on_strategy_done)
      opt.on_strategy_done(name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return res;
}

// ---- output

std::string compare_csv(const CompareResult& r, const std::vector<std::pair<std::string, std::string>>& context) {
  std::ostringstream os;
  for (const auto& [k, v] : context) os << csv_field(k) << ",";
  os << "space_size,optimum_ns,strategy,budget,budget_percent,repeats,median,p10,p90,mean,within,found_optimum,"
        "mean_evaluations\n";
  for (const auto& row : r.rows) {
    for (const auto& [k, v] : context) os << csv_field(v) << ",";
    os << r.space_size << "," << fmt("%.6g", r.optimum_ns) << "," << csv_field(row.strategy) << "," << row.budget
       << "," << fmt("%.4g", row.budget_percent) << "," << row.repeats << "," << fmt("%.6f", row.median) << ","
       << fmt("%.6f", row.p10) << "," << fmt("%.6f", row.p90) << "," << fmt("%.6f", row.mean) << ","
       << fmt("%.4f", row.within) << "," << fmt("%.4f", row.found) << "," << fmt("%.2f", row.mean_evaluations)
       << "\n";
  }
  return os.str();
}

std::string compare_table(const CompareResult& r, double within, bool markdown) {
  std::ostringstream os;
  const std::string wlabel = "within " + fmt("%.0f", within * 100) + "%";
  std::vector<std::string> names;
  for (const auto& row : r.rows)
    if (std::find(names.begin(), names.end(), row.strategy) == names.end()) names.push_back(row.strategy);
  auto find = [&](const std::string& s, std::size_t b) -> const CompareRow* {
    for (const auto& row : r.rows)
      if (row.strategy == s && row.budget == b) return &row;
    return nullptr;
  };
  if (markdown) {
    os << "| strategy |";
    for (std::size_t b : r.budgets)
      os << " " << b << " evals (" << fmt("%.3g", 100.0 * b / r.space_size) << "%) |";
    os << "\n|---|";
    for (std::size_t i = 0; i < r.budgets.size(); ++i) os << "---|";
    os << "\n";
    for (const auto& n : names) {
      os << "| " << (n == "random_sample" ? "random_sample (baseline)" : n) << " |";
      for (std::size_t b : r.budgets) {
        const CompareRow* row = find(n, b);
        if (!row) {
          os << " - |";
          continue;
        }
        os << " " << fmt("%.3f", row->median) << " (" << fmt("%.3f", row->p10) << "-" << fmt("%.3f", row->p90)
           << "), " << fmt("%.0f", row->within * 100) << "%, " << fmt("%.0f", row->found * 100) << "% |";
      }
      os << "\n";
    }
    os << "\nEach cell: median (10th-90th percentile) of optimum time / best found time over "
       << (r.rows.empty() ? 0 : r.rows.front().repeats) << " seeds; share of runs " << wlabel
       << " of the optimum; share of runs that found the optimum.\n";
    return os.str();
  }
  for (std::size_t b : r.budgets) {
    const CompareRow* base = find("random_sample", b);
    os << "budget " << b << " evaluations (" << fmt("%.3g", 100.0 * b / r.space_size) << "% of " << r.space_size
       << "), " << (base ? base->repeats : 0) << " runs each\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-24s %7s %7s %7s %7s %10s %8s %11s\n", "strategy", "median", "p10", "p90",
                  "mean", wlabel.c_str(), "optimum", "vs random");
    os << line;
    for (const auto& n : names) {
      const CompareRow* row = find(n, b);
      if (!row) continue;
      std::string vs = "baseline";
      if (n != "random_sample" && base)
        vs = fmt("%+.3f", row->median - base->median);
      std::snprintf(line, sizeof line, "  %-24s %7.3f %7.3f %7.3f %7.3f %9.0f%% %7.0f%% %11s\n", n.c_str(),
                    row->median, row->p10, row->p90, row->mean, row->within * 100, row->found * 100, vs.c_str());
      os << line;
    }
    os << "\n";
  }
  os << "score = optimum time / best found time (1.000 = optimum found); optimum = share of runs that found it;\n"
        "vs random = median score minus random_sample's\n";
  return os.str();
}

}  // namespace autotune::session
