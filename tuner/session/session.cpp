#include "tuner/session/session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <unordered_map>

#include "tuner/core/error.hpp"
#include "db/ranking.hpp"
#include "tuner/core/timer.hpp"

namespace autotune::session {

namespace {

/// Bandwidth of a measurement, GB/s (0 = unknown).
double gbps_of(const Measurement& m, double bytes_moved) {
  return m.ok() && m.median_ns > 0 && bytes_moved > 0 ? bytes_moved / m.median_ns : 0.0;
}

/// Proposes a fixed list of space indices once, in order (Options::configs).
class ListStrategy : public search::Strategy {
 public:
  explicit ListStrategy(std::vector<std::size_t> order) : order_(std::move(order)) {}
  std::string name() const override { return "list"; }
  std::vector<std::size_t> propose(std::size_t n) override {
    std::vector<std::size_t> out;
    while (next_ < order_.size() && out.size() < n) out.push_back(order_[next_++]);
    return out;
  }
  void observe(const std::vector<search::Observation>&) override {}
  std::vector<std::size_t> upcoming(std::size_t n) const override {
    const std::size_t end = std::min(order_.size(), next_ + n);
    return {order_.begin() + static_cast<std::ptrdiff_t>(next_), order_.begin() + static_cast<std::ptrdiff_t>(end)};
  }

 private:
  std::vector<std::size_t> order_;
  std::size_t next_ = 0;
};

std::unique_ptr<search::Strategy> list_strategy(const ParameterSpace& space, const std::vector<Config>& configs,
                                                const TuningSpec& spec) {
  std::vector<std::size_t> order;
  for (const Config& c : configs) {
    std::ptrdiff_t i = space.find(c);
    if (i < 0) throw UsageError("configuration " + c.str(&spec.params) + " is not valid in the space of " + spec.name);
    bool seen = false;
    for (std::size_t o : order) seen = seen || o == static_cast<std::size_t>(i);
    if (!seen) order.push_back(static_cast<std::size_t>(i));
  }
  return std::make_unique<ListStrategy>(std::move(order));
}

/// Space indices the strategy expects next that still need an evaluation (not answered in this session, not
/// in this batch, not in the database), as configurations for Backend::prefetch.
std::vector<Config> upcoming_configs(const search::Strategy& strategy, std::size_t n, const ParameterSpace& space,
                                     const std::unordered_map<std::size_t, double>& known,
                                     const std::vector<std::size_t>& batch,
                                     const std::function<bool(const Config&)>& recorded) {
  std::vector<Config> out;
  if (n == 0) return out;
  for (std::size_t idx : strategy.upcoming(n)) {
    if (idx >= space.size() || known.count(idx) || std::find(batch.begin(), batch.end(), idx) != batch.end())
      continue;
    Config c = space.config(idx);
    if (!recorded(c)) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

Result run(const TuningSpec& spec, Backend& backend, db::Database& db, const Workload& w, const ProblemKey& p,
           const Options& opt) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  spec.check_workload(w);
  spec.check_problem(p);

  Result res;
  const DeviceInfo dev = backend.device();
  ParameterSpace space = spec.space(p, dev, w);
  res.space_size = space.size();
  res.cartesian_size = space.cartesian_size();
  if (space.empty())
    throw UsageError("the constraints of " + spec.name + " leave no valid configuration for " + p.key() + ", " +
                     w.key() + " on " + dev.name);
  // Under a limit, strategies take their limited defaults (brute force: a covering order, every value of every
  // parameter early, instead of the enumeration order).
  const bool limited = opt.budget > 0 || opt.time_limit_s > 0;
  const search::Options strategy_options =
      limited ? search::limited_options(opt.strategy, opt.strategy_options) : opt.strategy_options;
  auto strategy = opt.configs.empty() ? search::make_strategy(opt.strategy, space, opt.seed, strategy_options)
                                      : list_strategy(space, opt.configs, spec);
  if (opt.configs.empty() && !opt.warm_start.empty()) {
    std::vector<std::size_t> warm;
    for (const Config& c : opt.warm_start) {
      const std::ptrdiff_t i = space.find(c);
      if (i >= 0 && std::find(warm.begin(), warm.end(), static_cast<std::size_t>(i)) == warm.end())
        warm.push_back(static_cast<std::size_t>(i));
    }
    res.warm_started = warm.size();
    if (!warm.empty()) strategy->warm_start(warm);
  }

  const BackendStats stats_before = backend.stats();
  double setup_ms = 0, db_ms = 0;
  {
    ScopedTimer timer(db_ms);
    res.device_id = db.upsert_device(dev);
  }
  {
    ScopedTimer timer(setup_ms);
    backend.prepare(w, p, opt.seed);
    res.copy_gbps = backend.copy_bandwidth_gbps();
    res.verification = backend.verification();
  }

  db::SessionRow srow;
  srow.kernel = spec.name;
  srow.source_hash = spec.source_hash();
  srow.spec_hash = spec.spec_hash();
  srow.compiler_version = backend.compiler_version();
  srow.strategy = opt.strategy;
  srow.seed = opt.seed;
  srow.workload = w.key();
  srow.problem = p.key();
  srow.device_id = res.device_id;
  srow.backend = backend.kind();
  {
    ScopedTimer timer(db_ms);
    if (res.copy_gbps > 0) db.set_copy_bandwidth(res.device_id, res.copy_gbps);
    res.session_id = db.begin_session(srow);
  }

  const std::string source_hash = srow.source_hash;
  auto find_recorded = [&](const Config& c) {
    ScopedTimer timer(db_ms);
    return db.find_trial(spec.name, source_hash, res.device_id, w.key(), p.key(), c.hash());
  };
  Progress prog;
  const std::size_t planned = opt.configs.empty() ? space.size() : std::min(opt.configs.size(), space.size());
  prog.total = opt.budget ? std::min(opt.budget, planned) : planned;
  std::unordered_map<std::size_t, double> known;  // index -> objective cost answered in this session
  double best_cost = std::numeric_limits<double>::infinity();
  auto note_best = [&](const Measurement& m, double gbps, double cost, const Config& c) {
    if (!m.ok() || !(cost < best_cost)) return;
    best_cost = cost;
    prog.best_ns = m.median_ns;
    prog.best_value = objective_value(opt.objective, m, gbps);
    prog.best_config = c.str(&spec.params);
  };
  std::size_t stalled_rounds = 0;

  try {
    for (;;) {
      if (opt.budget && res.evaluated >= opt.budget) break;
      double elapsed = std::chrono::duration<double>(clock::now() - t0).count();
      if (opt.time_limit_s > 0 && elapsed >= opt.time_limit_s) break;

      std::size_t want = opt.batch ? opt.batch : 1;
      if (opt.budget) want = std::min(want, opt.budget - res.evaluated);
      std::vector<std::size_t> proposed = strategy->propose(want);
      if (proposed.empty()) break;

      std::vector<search::Observation> answers;
      std::vector<std::size_t> fresh;
      std::vector<Config> fresh_configs;
      for (std::size_t idx : proposed) {
        if (idx >= space.size()) throw Error("strategy " + opt.strategy + " proposed index out of range");
        if (auto it = known.find(idx); it != known.end()) {
          answers.push_back({idx, it->second});
          continue;
        }
        bool queued = false;
        for (std::size_t f : fresh) queued = queued || f == idx;
        if (queued) continue;
        Config c = space.config(idx);
        auto row = find_recorded(c);
        if (row) {
          double v = objective_cost(opt.objective, row->m, row->gbps);
          known[idx] = v;
          answers.push_back({idx, v});
          ++res.reused;
          ++prog.done;
          note_best(row->m, row->gbps, v, c);
          continue;
        }
        if (opt.budget && res.evaluated + fresh.size() >= opt.budget) continue;
        fresh.push_back(idx);
        fresh_configs.push_back(std::move(c));
      }

      if (!fresh.empty()) {
        stalled_rounds = 0;
        // This batch, then what the strategy expects next: the backend compiles ahead of its GPU.
        std::size_t ahead = opt.batch ? opt.batch : 1;
        if (opt.budget) ahead = std::min(ahead, opt.budget - res.evaluated - fresh.size());
        std::vector<Config> hint = fresh_configs;
        for (Config& c : upcoming_configs(*strategy, ahead, space, known, fresh,
                                          [&](const Config& c) { return find_recorded(c).has_value(); }))
          hint.push_back(std::move(c));
        backend.prefetch(hint);

        std::vector<Measurement> ms = backend.evaluate(fresh_configs);
        if (ms.size() != fresh.size()) throw Error("backend returned a wrong number of measurements");
        ScopedTimer timer(db_ms);
        db.transaction([&] {
          for (std::size_t i = 0; i < fresh.size(); ++i) {
            db::TrialRow t;
            t.session_id = res.session_id;
            t.device_id = res.device_id;
            t.kernel = spec.name;
            t.source_hash = source_hash;
            t.workload = w.key();
            t.problem = p.key();
            t.problem_elements = p.elements();
            t.config_json = fresh_configs[i].to_json();
            t.config_hash = fresh_configs[i].hash();
            t.m = ms[i];
            t.gbps = gbps_of(ms[i], opt.bytes_moved);
            db.insert_trial(t);
          }
        });
        for (std::size_t i = 0; i < fresh.size(); ++i) {
          const double gbps = gbps_of(ms[i], opt.bytes_moved);
          double v = objective_cost(opt.objective, ms[i], gbps);
          if (ms[i].ok() && !std::isfinite(v))
            throw UsageError(std::string("--objective ") + to_string(opt.objective) + " needs the power or energy of "
                             "each run, but the backend measured none" +
                             (backend.observer_note().empty() ? "" : " (" + backend.observer_note() + ")") +
                             "; tune with --objective time, or where NVML is available");
          known[fresh[i]] = v;
          answers.push_back({fresh[i], v});
          ++res.evaluated;
          ++prog.done;
          if (!ms[i].ok()) ++res.failed;
          note_best(ms[i], gbps, v, fresh_configs[i]);
        }
      } else if (++stalled_rounds > 1000) {
        break;  // the strategy keeps proposing only known configurations
      }
      strategy->observe(answers);

      prog.evaluated = res.evaluated;
      prog.reused = res.reused;
      prog.failed = res.failed;
      prog.elapsed_s = std::chrono::duration<double>(clock::now() - t0).count();
      prog.total = std::max(prog.total, prog.done);
      prog.eta_s = prog.done ? prog.elapsed_s / prog.done * (prog.total - prog.done) : -1;
      if (opt.on_progress) opt.on_progress(prog);
    }
  } catch (...) {
    try {
      db.finish_session(res.session_id, "failed");
    } catch (...) {
    }
    throw;
  }

  {
    ScopedTimer timer(db_ms);
    db.finish_session(res.session_id, "finished");
    auto f = db::TrialFilter::cell(spec.name, source_hash, res.device_id, w.key(), p.key());
    f.ok_only = true;
    f.by_time = true;
    res.top = db::rank_trials(db.trials(f), opt.objective, false);
    if (res.top.size() > 10) res.top.resize(10);
  }

  const BackendStats d = backend.stats() - stats_before;
  TimeSplit& t = res.timing;
  t.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  t.setup_s = setup_ms / 1e3;
  for (const auto& [part, ms] : d.setup_ms) t.setup_parts_s[part] = ms / 1e3;
  t.compile_s = d.compile.thread_ms / 1e3;
  t.idle_gpu_s = d.compile.wait_ms / 1e3;
  t.verify_s = d.verify_ms / 1e3;
  t.benchmark_s = d.benchmark_ms / 1e3;
  t.database_s = (db_ms + d.compile.cache_ms) / 1e3;
  t.other_s = std::max(0.0, t.wall_s - t.setup_s - t.idle_gpu_s - t.verify_s - t.benchmark_s - t.database_s);
  t.compile_jobs = d.compile_jobs;
  t.compiled = d.compile.compiled;
  t.cache_hits = d.compile.cache_hits;
  t.compile_failures = d.compile.failed;
  t.unused_compiles = d.compile.unused;
  return res;
}

}  // namespace autotune::session
