#include "db/sources.hpp"
#include "tuner/compare/compare.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>

#include "tuner/core/error.hpp"
#include "tuner/core/stats.hpp"
#include "tuner/core/text.hpp"
#include "tuner/session/warm_start.hpp"

namespace autotune::compare {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string list_some(const std::vector<std::string>& items, std::size_t total) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < 5; ++i) out += (i ? ", " : "") + items[i];
  if (total > 5) out += ", ... (" + std::to_string(total) + " in all)";
  return out;
}

/// Compile + verification + benchmark time of a recorded trial (s); a failure without samples costs no benchmark.
double recorded_cost_s(const Measurement& m) {
  double bench_ns = 0;
  for (double x : m.sample_ns) bench_ns += std::isfinite(x) && x > 0 ? x : 0;
  if (m.sample_ns.empty() && std::isfinite(m.median_ns) && m.median_ns > 0) bench_ns = m.samples * m.median_ns;
  const double ms = (std::isfinite(m.compile_ms) ? m.compile_ms : 0) + (std::isfinite(m.verify_ms) ? m.verify_ms : 0);
  return std::max(0.0, ms) * 1e-3 + bench_ns * 1e-9;
}

/// Rows whose binary came from the cache (compile_ms 0) take the compile time recorded for the same configuration,
/// source and device under another problem or workload, so that a replay over time charges what a fresh run compiles.
/// Returns how many rows took one.
std::size_t borrow_compile_times(const db::Database& from, const Recording& r, const std::string& kernel,
                                 std::vector<db::TrialRow>& rows) {
  std::size_t cached = 0;
  for (const auto& t : rows) cached += t.m.compile_ms > 0 ? 0 : 1;
  if (cached == 0) return 0;
  db::TrialFilter f;
  f.kernel = kernel;
  f.device_id = r.device.id;
  f.source_hash = r.source_hash;
  std::map<std::string, double> compile_ms;
  for (const auto& t : from.trials(f))
    if (t.m.compile_ms > 0 && std::isfinite(t.m.compile_ms)) compile_ms.emplace(t.config_hash, t.m.compile_ms);
  std::size_t borrowed = 0;
  for (auto& t : rows) {
    auto it = compile_ms.find(t.config_hash);
    if (t.m.compile_ms > 0 || it == compile_ms.end()) continue;
    t.m.compile_ms = it->second;
    ++borrowed;
  }
  return borrowed;
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
      throw UsageError("bad budget '" + part +
                       "': a count of evaluations must be a whole number (or add % for a share)");
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
  rec.cost_s.assign(space.size(), 0.0);
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
    rec.cost_s[i] = recorded_cost_s(t.m);
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
  f.workload = w.key();
  f.problem = p.key();
  const db::DeviceRow board = db::recorded_board(from, device_name, f);

  Recording r;
  r.device = board;
  r.problem = p.key();
  f.device_id = r.device.id;
  f.workload = w.key();
  f.problem = p.key();
  std::vector<db::TrialRow> rows = from.trials(f);
  const std::string what = spec.name + " " + case_key(w, p) + " on " + r.device.info.name;
  if (rows.empty()) throw UsageError("no recorded trials of " + what + " in " + from.path());

  std::map<std::string, std::size_t> hashes;
  for (const auto& t : rows) ++hashes[t.source_hash];
  const std::string current = spec.source_hash();
  const std::vector<std::string> accepted = db::accepted_sources(from, spec);
  std::string same_code;  // a recorded source with the current code identity, the current text first
  for (const std::string& h : accepted)
    if (same_code.empty() && hashes.count(h)) same_code = h;
  if (!same_code.empty()) {
    r.source_hash = same_code;
    if (same_code != current)
      r.note = "the recorded trials were measured with kernel source " + same_code + ", whose code is the current one's";
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

  const std::size_t borrowed = borrow_compile_times(from, r, spec.name, rows);
  if (borrowed)
    r.note += std::string(r.note.empty() ? "" : "; ") + "the compile times of " + std::to_string(borrowed) +
              " configuration(s) whose binary came from the cache are those recorded for another problem";
  r.space = std::make_unique<ParameterSpace>(spec.space(p, r.device.info, w));
  if (spec.is_stub() && spec.constraints.empty()) {  // a stub knows no constraints: the space is what was recorded
    std::vector<Config> configs;
    configs.reserve(rows.size());
    for (const auto& t : rows) configs.push_back(Config::from_json(t.config_json));
    r.space = std::make_unique<ParameterSpace>(r.space->restricted_to(configs));
    r.space_note =
        "space: the " + std::to_string(r.space->size()) + " recorded configurations (the stub knows no constraints)";
  }
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
    rows = session::fastest_configs(from, f, count);
    f.source_hash.reset();
  }
  if (rows.empty()) rows = session::fastest_configs(from, f, count);
  RecordedWarmStart ws;
  ws.problem = source.key();
  ws.hint.source = source.key();
  ws.hint.distance = session::size_distance(source.elements(), ProblemKey::parse(target.problem).elements());
  if (!rows.empty()) {
    if (!rows.front().source_hash.empty()) f.source_hash = rows.front().source_hash;
    for (const auto& t : session::fastest_configs(from, f, std::numeric_limits<std::size_t>::max())) {
      const std::ptrdiff_t i = target.space->find(Config::from_json(t.config_json));
      if (i >= 0) ws.hint.source_values.push_back({static_cast<std::size_t>(i), t.m.median_ns});
    }
  }
  for (const auto& t : rows) {
    const std::ptrdiff_t i = target.space->find(Config::from_json(t.config_json));
    if (i < 0) {
      ++ws.skipped;
      continue;
    }
    ws.indices.push_back(static_cast<std::size_t>(i));
    ws.source_ns.push_back(t.m.median_ns);
  }
  ws.hint.indices = ws.indices;
  if (rows.empty())
    throw UsageError("no successful recorded trials of " + what + " in " + from.path() + " to warm-start from");
  return ws;
}

// ---- simulation

std::vector<double> simulate_run(const ParameterSpace& space, const RecordedSpace& rec, const std::string& strategy,
                                 const search::Options& options, std::uint64_t seed, std::size_t max_evaluations,
                                 std::size_t batch, const search::WarmStartHint& warm_start,
                                 std::vector<double>* step_ns) {
  auto s = search::make_strategy(strategy, space, seed, options);
  s->set_budget(max_evaluations);  // as `tune --budget` does
  return simulate_run(space, rec, *s, max_evaluations, batch, warm_start, step_ns);
}

std::vector<double> simulate_run(const ParameterSpace& space, const RecordedSpace& rec, search::Strategy& s,
                                 std::size_t max_evaluations, std::size_t batch,
                                 const search::WarmStartHint& warm_start, std::vector<double>* step_ns,
                                 TimedReplay* timed) {
  using Clock = std::chrono::steady_clock;
  const bool clocked = step_ns || (timed && timed->strategy_time);
  double clock_s = 0, decided_s = 0;  // simulated time; decision time not yet charged to an evaluation
  if (rec.values.size() != space.size()) throw Error("recording does not match the space");
  if (batch == 0) batch = 1;
  if (!warm_start.indices.empty() || !warm_start.source_values.empty()) s.warm_start(warm_start);
  std::vector<double> trace;
  trace.reserve(max_evaluations);
  std::vector<char> seen(space.size(), 0);
  std::vector<std::size_t> fresh;
  std::vector<search::Observation> answers;
  double best = kInf;
  std::size_t stalled = 0;
  while (trace.size() < max_evaluations) {
    std::size_t want = std::min(batch, max_evaluations - trace.size());
    const auto t0 = clocked ? Clock::now() : Clock::time_point{};
    std::vector<std::size_t> proposed = s.propose(want);
    auto spent = clocked ? Clock::now() - t0 : Clock::duration{};
    if (timed && timed->strategy_time) decided_s += std::chrono::duration<double>(spent).count();
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
      if (timed) {
        clock_s += (idx < rec.cost_s.size() ? rec.cost_s[idx] : 0.0) + decided_s;
        decided_s = 0;
        timed->end_s.push_back(clock_s);
      }
    }
    if (timed && clock_s > timed->limit_s) break;
    const auto t1 = clocked ? Clock::now() : Clock::time_point{};
    s.observe(answers);
    if (timed && timed->strategy_time) decided_s += std::chrono::duration<double>(Clock::now() - t1).count();
    if (step_ns) {
      spent += Clock::now() - t1;
      step_ns->push_back(static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count()));
    }
  }
  return trace;
}

namespace {

/// Statistics of one strategy at one budget from its runs' best values.
CompareRow summarise(const std::vector<double>& bests, const RecordedSpace& rec, const CompareResult& res,
                     double spent) {
  CompareRow row;
  const auto n = static_cast<double>(bests.size());
  row.repeats = bests.size();
  std::vector<double> s;
  s.reserve(bests.size());
  for (double best : bests) s.push_back(std::isfinite(best) && best > 0 ? rec.optimum / best : 0.0);
  double sum = 0, sum2 = 0;
  for (double v : s) {
    sum += v;
    sum2 += v * v;
  }
  row.mean = sum / n;
  row.mean_se = bests.size() > 1 ? std::sqrt(std::max(0.0, (sum2 - n * row.mean * row.mean) / (n - 1)) / n) : 0.0;
  std::sort(s.begin(), s.end());
  row.median = stats::quantile_sorted(s, 0.5);
  row.p10 = stats::quantile_sorted(s, 0.1);
  row.p90 = stats::quantile_sorted(s, 0.9);
  auto share = [&](double limit) {
    std::size_t k = 0;
    for (double best : bests) k += best <= limit ? 1 : 0;
    return static_cast<double>(k) / n;
  };
  auto share_se = [&](double p) { return std::sqrt(p * (1 - p) / n); };
  for (double t : res.thresholds) row.within_at.push_back(share((1.0 + t) * rec.optimum));
  row.within = share((1.0 + res.within) * rec.optimum);
  row.within_se = share_se(row.within);
  row.found = share(rec.optimum);
  row.found_se = share_se(row.found);
  row.mean_evaluations = spent / n;
  return row;
}

DecisionTime decision_time(const std::string& name, std::vector<double>& step_ns, double wall_s) {
  DecisionTime d;
  d.strategy = name;
  d.steps = step_ns.size();
  d.wall_s = wall_s;
  if (step_ns.empty()) return d;
  double sum = 0;
  for (double v : step_ns) sum += v;
  d.total_s = sum * 1e-9;
  d.mean_us = sum / static_cast<double>(step_ns.size()) * 1e-3;
  std::sort(step_ns.begin(), step_ns.end());
  d.p99_us = stats::quantile_sorted(step_ns, 0.99) * 1e-3;
  d.max_us = step_ns.back() * 1e-3;
  return d;
}

}  // namespace

std::vector<std::pair<std::string, search::Options>> compared_strategies(const ParameterSpace& space,
                                                                         const CompareOptions& opt) {
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
  std::vector<std::pair<std::string, search::Options>> out;
  for (const auto& n : names) {  // validate names and options before any long run
    auto it = opt.strategy_options.find(n);
    out.emplace_back(n, search::limited_options(n, it == opt.strategy_options.end() ? search::Options{} : it->second));
    search::make_strategy(n, space, opt.seed, out.back().second);
  }
  return out;
}

CompareResult compare_strategies(const ParameterSpace& space, const RecordedSpace& rec, const CompareOptions& opt) {
  if (space.empty()) throw UsageError("the space is empty: nothing to compare");
  if (opt.budgets.empty()) throw UsageError("no budgets given");
  if (opt.repeats == 0) throw UsageError("--repeats must be at least 1");
  if (!(opt.within >= 0)) throw UsageError("--within must be a share of at least 0");
  if (!std::isfinite(rec.optimum))
    throw UsageError("every recorded configuration failed: there is no optimum to compare with");

  const std::vector<std::pair<std::string, search::Options>> strategies = compared_strategies(space, opt);

  CompareResult res;
  res.space_size = space.size();
  res.optimum_ns = rec.optimum;
  res.failures = rec.failures;
  res.within = opt.within;
  res.thresholds = {0.01, 0.02, 0.05};
  if (std::find(res.thresholds.begin(), res.thresholds.end(), opt.within) == res.thresholds.end()) {
    res.thresholds.push_back(opt.within);
    std::sort(res.thresholds.begin(), res.thresholds.end());
  }
  for (const auto& b : opt.budgets) {
    std::size_t n = b.resolve(space.size());
    if (std::find(res.budgets.begin(), res.budgets.end(), n) == res.budgets.end()) res.budgets.push_back(n);
  }

  for (const auto& [name, so] : strategies) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::vector<double>> bests(res.budgets.size());  // [budget][run]
    std::vector<double> spent(res.budgets.size(), 0);
    std::vector<double> trust_sum(res.budgets.size(), 0), trusted(res.budgets.size(), 0);
    std::vector<double> step_ns;
    for (std::size_t r = 0; r < opt.repeats; ++r) {
      const std::uint64_t seed = opt.seed + r;
      for (std::size_t b = 0; b < res.budgets.size(); ++b) {
        const std::size_t budget = res.budgets[b];  // a run of its own: the strategy is told its budget
        auto strategy = search::make_strategy(name, space, seed, so);
        strategy->set_budget(budget);  // as `tune --budget` does
        const std::vector<double> trace =
            simulate_run(space, rec, *strategy, budget, opt.batch, opt.warm_start, &step_ns);
        const double trust = strategy->warm_trust().trust;
        trust_sum[b] += trust;
        trusted[b] += trust > 0 ? 1 : 0;
        const std::size_t used = std::min(budget, trace.size());
        const double best = used ? trace[used - 1] : kInf;
        spent[b] += static_cast<double>(used);
        bests[b].push_back(best);
        if (opt.keep_runs)
          res.runs.push_back({name, budget, seed, best, std::isfinite(best) && best > 0 ? rec.optimum / best : 0.0,
                              used});
      }
    }
    for (std::size_t b = 0; b < res.budgets.size(); ++b) {
      CompareRow row = summarise(bests[b], rec, res, spent[b]);
      row.strategy = name;
      row.budget = res.budgets[b];
      row.budget_percent = 100.0 * static_cast<double>(row.budget) / static_cast<double>(space.size());
      row.warm_trust = trust_sum[b] / static_cast<double>(opt.repeats);
      row.warm_trusted = trusted[b] / static_cast<double>(opt.repeats);
      if (name != "random_sample") {
        const CompareRow& base = res.rows[b];  // random_sample's rows come first, budgets in order
        const double se = std::sqrt(row.within_se * row.within_se + base.within_se * base.within_se);
        const double diff = row.within - base.within;
        row.vs_random = diff > 0 && diff >= 2 * se ? 1 : (diff < 0 && -diff >= 2 * se ? -1 : 0);
      }
      res.rows.push_back(row);
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.decisions.push_back(decision_time(name, step_ns, wall));
    if (opt.on_strategy_done) opt.on_strategy_done(name, wall);
  }
  return res;
}

}  // namespace autotune::compare
