#include "tuner/session/session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>

#include "tuner/core/error.hpp"
#include "db/ranking.hpp"
#include "db/sources.hpp"
#include "tuner/core/timer.hpp"

namespace autotune::session {

namespace {

// A fixed order measures the same configurations whatever its rounds are, so its rounds grow to about this much
// measuring per device (at most kMaxRoundGrowth times the base batch; under a time limit, a twentieth of it at
// most): between rounds no device measures while the session records the round and proposes the next, and with
// configurations of a few ms those pauses added up (76 rounds of 32 for the 2436 reduction configurations).
constexpr double kRoundSeconds = 1.0;
constexpr std::size_t kMaxRoundGrowth = 8;
// How long the first configuration of a time-limited session may wait for its binary: as long as it takes.
constexpr double kUnboundedWaitS = 1e6;

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
  bool fixed_order() const override { return true; }
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

/// One tuning session: start() opens it (space, strategy, backend, session row), round() runs one batch,
/// record() stores a batch's trials, finish() closes it and fills Result. Neither copied nor moved: the
/// strategy keeps a reference to the space.
class Session {
 public:
  using clock = std::chrono::steady_clock;

  Session(const TuningSpec& spec, Backend& backend, db::Database& db, const Workload& w, const ProblemKey& p,
          const Options& opt)
      : spec_(spec), backend_(backend), db_(db), w_(w), p_(p), opt_(opt), t0_(clock::now()),
        dev_(checked_device(spec, backend, w, p)), space_(session_space(spec, backend, dev_, w, p)) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start();
  /// Proposes, evaluates and records one batch; false when the session is over (budget, time limit, the
  /// strategy has nothing more, or it keeps proposing only known configurations).
  bool round();
  /// The session row ends "finished"; the best trials and the time split.
  Result finish();
  /// The session row ends "failed" (for an escaping exception; errors of its own are swallowed).
  void fail() noexcept;

 private:
  /// A round's proposals: answers known already, and the fresh configurations to evaluate.
  struct Batch {
    std::vector<search::Observation> answers;
    std::vector<std::size_t> fresh;
    std::vector<Config> fresh_configs;
  };

  static DeviceInfo checked_device(const TuningSpec& spec, Backend& backend, const Workload& w,
                                   const ProblemKey& p) {
    spec.check_workload(w);
    spec.check_problem(p);
    return backend.device();
  }
  /// The spec's valid space, restricted to the backend's space_limit() where it has one.
  static ParameterSpace session_space(const TuningSpec& spec, const Backend& backend, const DeviceInfo& dev,
                                      const Workload& w, const ProblemKey& p) {
    ParameterSpace s = spec.space(p, dev, w);
    if (std::optional<std::vector<Config>> only = backend.space_limit(w, p)) return s.restricted_to(*only);
    return s;
  }
  double elapsed_s() const { return std::chrono::duration<double>(clock::now() - t0_).count(); }
  void make_strategy();
  void open_row();
  std::optional<db::TrialRow> find_recorded(const Config& c) {
    ScopedTimer timer(db_ms_);
    return db_.find_trial(spec_.name, sources_, res_.device_id, w_.key(), p_.key(), c.hash());
  }
  /// What upcoming_configs() leaves out: the configurations the database knows already.
  std::function<bool(const Config&)> recorded_test() {
    return [this](const Config& c) { return find_recorded(c).has_value(); };
  }
  Batch sort_proposals(const std::vector<std::size_t>& proposed);
  std::size_t round_size(double seconds, std::size_t measured) const;
  void prefetch(const Batch& b);
  std::vector<Measurement> measure(Batch& b);
  void record(const Batch& b, const std::vector<Measurement>& ms);
  void learn(Batch& b, const std::vector<Measurement>& ms);
  void note_best(const Measurement& m, double gbps, double cost, const Config& c);
  void report_progress();
  void fill_timing();

  const TuningSpec& spec_;
  Backend& backend_;
  db::Database& db_;
  const Workload& w_;
  const ProblemKey& p_;
  const Options& opt_;
  const clock::time_point t0_;
  const DeviceInfo dev_;
  ParameterSpace space_;
  std::unique_ptr<search::Strategy> strategy_;
  Result res_;
  BackendStats stats_before_;
  double setup_ms_ = 0, db_ms_ = 0;
  std::string source_hash_;
  std::vector<std::string> sources_;  // this source first, then the texts with the same code (db/sources.hpp)
  Progress prog_;
  std::size_t base_batch_ = 1;  // configurations per round: Options::batch, times the devices for a fixed order
  std::size_t batch_ = 1;       // this round's: base_batch_, or more for a fixed order (kRoundSeconds)
  std::size_t next_batch_ = 1;  // the next round's, named to the backend (prefetch) before this one is measured
  std::unordered_map<std::size_t, double> known_;  // index -> objective cost answered in this session
  double best_cost_ = std::numeric_limits<double>::infinity();
  std::size_t stalled_rounds_ = 0;
};

void Session::start() {
  res_.space_size = space_.size();
  res_.cartesian_size = space_.cartesian_size();
  if (space_.empty())
    throw UsageError("the constraints of " + spec_.name + " leave no valid configuration for " + p_.key() + ", " +
                     w_.key() + " on " + dev_.name);
  make_strategy();
  // A fixed order measures the same configurations whatever the batch: each device measuring in parallel gets a
  // batch's worth per round, so that the devices wait for each other and for the session's step between rounds
  // half as often with two of them.
  base_batch_ = std::max<std::size_t>(1, opt_.batch) *
                (strategy_->fixed_order() ? std::max<std::size_t>(1, backend_.parallel_devices()) : 1);
  batch_ = next_batch_ = base_batch_;
  stats_before_ = backend_.stats();
  {
    ScopedTimer timer(db_ms_);
    res_.device_id = db_.upsert_device(dev_);
    db::record_source_identity(db_, spec_);
    sources_ = db::accepted_sources(db_, spec_);
  }
  // The first batch compiles while the backend makes the inputs and the reference.
  std::size_t first = batch_;
  if (opt_.budget) first = std::min(first, opt_.budget);
  backend_.expect(w_, p_, upcoming_configs(*strategy_, first, space_, known_, {}, recorded_test()));
  {
    ScopedTimer timer(setup_ms_);
    backend_.prepare(w_, p_, opt_.seed);
    res_.copy_gbps = backend_.copy_bandwidth_gbps();
    res_.verification = backend_.verification();
  }
  open_row();
  const std::size_t planned = opt_.configs.empty() ? space_.size() : std::min(opt_.configs.size(), space_.size());
  prog_.total = opt_.budget ? std::min(opt_.budget, planned) : planned;
}

/// The strategy (or the list of Options::configs), warm-started with Options::warm_start.
void Session::make_strategy() {
  // Under a limit, strategies take their limited defaults (brute force: a covering order, every value of every
  // parameter early, instead of the enumeration order).
  const bool limited = opt_.budget > 0 || opt_.time_limit_s > 0;
  const search::Options strategy_options =
      limited ? search::limited_options(opt_.strategy, opt_.strategy_options) : opt_.strategy_options;
  strategy_ = opt_.configs.empty() ? search::make_strategy(opt_.strategy, space_, opt_.seed, strategy_options)
                                   : list_strategy(space_, opt_.configs, spec_);
  if (opt_.budget > 0) strategy_->set_budget(opt_.budget);
  if (!opt_.configs.empty() || opt_.warm_start.empty()) return;
  search::WarmStartHint hint;
  for (const Config& c : opt_.warm_start) {
    const std::ptrdiff_t i = space_.find(c);
    if (i >= 0 &&
        std::find(hint.indices.begin(), hint.indices.end(), static_cast<std::size_t>(i)) == hint.indices.end())
      hint.indices.push_back(static_cast<std::size_t>(i));
  }
  for (const auto& [c, v] : opt_.warm_values) {
    const std::ptrdiff_t i = space_.find(c);
    if (i >= 0 && std::isfinite(v)) hint.source_values.push_back({static_cast<std::size_t>(i), v});
  }
  hint.distance = opt_.warm_distance;
  hint.source = opt_.warm_source;
  res_.warm_started = hint.indices.size();
  if (!hint.indices.empty()) strategy_->warm_start(hint);
}

/// The session row (and the device's copy bandwidth).
void Session::open_row() {
  db::SessionRow srow;
  srow.kernel = spec_.name;
  srow.source_hash = spec_.source_hash();
  srow.spec_hash = spec_.spec_hash();
  srow.compiler_version = backend_.compiler_version();
  srow.strategy = opt_.strategy;
  srow.seed = opt_.seed;
  srow.workload = w_.key();
  srow.problem = p_.key();
  srow.device_id = res_.device_id;
  srow.backend = backend_.kind();
  {
    ScopedTimer timer(db_ms_);
    if (res_.copy_gbps > 0) db_.set_copy_bandwidth(res_.device_id, res_.copy_gbps);
    res_.session_id = db_.begin_session(srow);
  }
  source_hash_ = srow.source_hash;
}

bool Session::round() {
  if (opt_.budget && res_.evaluated >= opt_.budget) return false;
  if (opt_.time_limit_s > 0 && elapsed_s() >= opt_.time_limit_s) return false;

  std::size_t want = batch_;
  if (opt_.budget) want = std::min(want, opt_.budget - res_.evaluated);
  std::vector<std::size_t> proposed = strategy_->propose(want);
  if (proposed.empty()) return false;

  Batch b = sort_proposals(proposed);
  if (!b.fresh.empty()) {
    stalled_rounds_ = 0;
    prefetch(b);
    const clock::time_point measured_from = clock::now();
    std::vector<Measurement> ms = measure(b);
    const double seconds = std::chrono::duration<double>(clock::now() - measured_from).count();
    batch_ = next_batch_;  // the round named to the backend before this one was measured
    next_batch_ = round_size(seconds, b.fresh.size());
    ScopedTimer timer(db_ms_);
    record(b, ms);
    learn(b, ms);
  } else if (++stalled_rounds_ > 1000) {
    return false;  // the strategy keeps proposing only known configurations
  }
  strategy_->observe(b.answers);
  report_progress();
  return true;
}

/// The measurements of b's fresh configurations, in their order. Under a time limit the batch is measured in
/// parts, so that the limit stops it between two configurations rather than after the whole batch (a batch of a
/// kernel that takes seconds to compile can take longer than the limit): a part is what the backend has compiled
/// already (Backend::ready); with nothing compiled, the session waits for the first binary until the limit
/// (Backend::wait_ready), and measures the first configuration left if the backend cannot tell. The batch is
/// compiled ahead of other speculation from the start, as a single evaluate() of it would have it. What is left
/// when the limit has passed is dropped from b: neither recorded nor answered. A backend that is always ready (a
/// replay, the ranks of an MPI run) measures the batch in one part, as without a limit.
std::vector<Measurement> Session::measure(Batch& b) {
  const std::size_t n = b.fresh.size();
  auto evaluate = [this](const std::vector<Config>& configs) {
    std::vector<Measurement> ms = backend_.evaluate(configs);
    if (ms.size() != configs.size()) throw Error("backend returned a wrong number of measurements");
    return ms;
  };
  if (!(opt_.time_limit_s > 0)) return evaluate(b.fresh_configs);
  std::vector<Measurement> ms(n);
  std::vector<bool> done(n, false);
  std::size_t left = n;
  auto ready_part = [&] {
    std::vector<std::size_t> part;
    for (std::size_t i = 0; i < n; ++i)
      if (!done[i] && backend_.ready(b.fresh_configs[i])) part.push_back(i);
    return part;
  };
  backend_.wait_ready(b.fresh_configs, 0);  // compiled first, as one evaluate() of the batch would have them
  // The session's first configuration is measured whatever the limit (a session with nothing measured tells the
  // user nothing); after it, the limit bounds every wait.
  const bool first = res_.evaluated == 0;
  while (left > 0 && ((first && left == n) || elapsed_s() < opt_.time_limit_s)) {
    std::vector<std::size_t> part = ready_part();
    if (part.empty()) {
      std::vector<Config> waiting;
      for (std::size_t i = 0; i < n; ++i)
        if (!done[i]) waiting.push_back(b.fresh_configs[i]);
      const double wait_s = first && left == n ? kUnboundedWaitS : opt_.time_limit_s - elapsed_s();
      if (!backend_.wait_ready(waiting, wait_s)) break;  // the limit passed first
      part = ready_part();
    }
    for (std::size_t i = 0; i < n && part.empty(); ++i)
      if (!done[i]) part.push_back(i);
    std::vector<Config> configs;
    configs.reserve(part.size());
    for (std::size_t i : part) configs.push_back(b.fresh_configs[i]);
    std::vector<Measurement> got = evaluate(configs);
    for (std::size_t k = 0; k < part.size(); ++k) {
      ms[part[k]] = std::move(got[k]);
      done[part[k]] = true;
    }
    left -= part.size();
  }
  if (left == 0) return ms;
  Batch kept;
  kept.answers = std::move(b.answers);
  std::vector<Measurement> kept_ms;
  for (std::size_t i = 0; i < n; ++i) {
    if (!done[i]) continue;
    kept.fresh.push_back(b.fresh[i]);
    kept.fresh_configs.push_back(std::move(b.fresh_configs[i]));
    kept_ms.push_back(std::move(ms[i]));
  }
  b = std::move(kept);
  return kept_ms;
}

/// After a round that measured `measured` configurations in `seconds`: the round after the next one (the next one
/// was named to the backend already). Only a fixed order's rounds change (kRoundSeconds); other strategies keep
/// the batch asked for, so that their proposals stay those of the batch.
std::size_t Session::round_size(double seconds, std::size_t measured) const {
  if (!strategy_->fixed_order() || measured == 0 || !(seconds > 0)) return next_batch_;
  const std::size_t devices = std::max<std::size_t>(1, backend_.parallel_devices());
  const std::size_t per_device = (measured + devices - 1) / devices;  // configurations each device measured
  double target = kRoundSeconds;
  if (opt_.time_limit_s > 0) target = std::min(target, opt_.time_limit_s / 20);
  const double fits = target / (seconds / static_cast<double>(per_device));
  const std::size_t base = base_batch_ / devices;
  const auto want = static_cast<std::size_t>(
      std::clamp(fits, static_cast<double>(base), static_cast<double>(base * kMaxRoundGrowth)));
  return want * devices;
}

/// Answers what this session or the database knows; the rest (within the budget, once each) is fresh.
Session::Batch Session::sort_proposals(const std::vector<std::size_t>& proposed) {
  Batch b;
  for (std::size_t idx : proposed) {
    if (idx >= space_.size()) throw Error("strategy " + opt_.strategy + " proposed index out of range");
    if (auto it = known_.find(idx); it != known_.end()) {
      b.answers.push_back({idx, it->second});
      continue;
    }
    bool queued = false;
    for (std::size_t f : b.fresh) queued = queued || f == idx;
    if (queued) continue;
    Config c = space_.config(idx);
    auto row = find_recorded(c);
    if (row) {
      double v = objective_cost(opt_.objective, row->m, row->gbps);
      known_[idx] = v;
      b.answers.push_back({idx, v});
      ++res_.reused;
      ++prog_.done;
      note_best(row->m, row->gbps, v, c);
      continue;
    }
    if (opt_.budget && res_.evaluated + b.fresh.size() >= opt_.budget) continue;
    b.fresh.push_back(idx);
    b.fresh_configs.push_back(std::move(c));
  }
  return b;
}

/// This batch, then what the strategy expects next: the backend compiles ahead of its GPU.
void Session::prefetch(const Batch& b) {
  std::size_t ahead = next_batch_;
  if (opt_.budget) ahead = std::min(ahead, opt_.budget - res_.evaluated - b.fresh.size());
  std::vector<Config> hint = b.fresh_configs;
  for (Config& c : upcoming_configs(*strategy_, ahead, space_, known_, b.fresh, recorded_test()))
    hint.push_back(std::move(c));
  backend_.prefetch(hint);
}

/// One trial row per fresh configuration, in one transaction.
void Session::record(const Batch& b, const std::vector<Measurement>& ms) {
  db_.transaction([&] {
    for (std::size_t i = 0; i < b.fresh.size(); ++i) {
      db::TrialRow t;
      t.session_id = res_.session_id;
      t.device_id = res_.device_id;
      t.kernel = spec_.name;
      t.source_hash = source_hash_;
      t.workload = w_.key();
      t.problem = p_.key();
      t.problem_elements = p_.elements();
      t.config_json = b.fresh_configs[i].to_json();
      t.config_hash = b.fresh_configs[i].hash();
      t.m = ms[i];
      t.gbps = gbps_of(ms[i], opt_.bytes_moved);
      db_.insert_trial(t);
    }
  });
}

/// The objective costs of the fresh measurements, as answers for the strategy and counts.
void Session::learn(Batch& b, const std::vector<Measurement>& ms) {
  for (std::size_t i = 0; i < b.fresh.size(); ++i) {
    const double gbps = gbps_of(ms[i], opt_.bytes_moved);
    double v = objective_cost(opt_.objective, ms[i], gbps);
    if (ms[i].ok() && !std::isfinite(v))
      throw UsageError(std::string("--objective ") + to_string(opt_.objective) + " needs the power or energy of "
                       "each run, but the backend measured none" +
                       (backend_.observer_note().empty() ? "" : " (" + backend_.observer_note() + ")") +
                       "; tune with --objective time, or where NVML is available");
    known_[b.fresh[i]] = v;
    b.answers.push_back({b.fresh[i], v});
    ++res_.evaluated;
    ++prog_.done;
    if (!ms[i].ok()) ++res_.failed;
    note_best(ms[i], gbps, v, b.fresh_configs[i]);
  }
}

void Session::note_best(const Measurement& m, double gbps, double cost, const Config& c) {
  if (!m.ok() || !(cost < best_cost_)) return;
  best_cost_ = cost;
  prog_.best_ns = m.median_ns;
  prog_.best_value = objective_value(opt_.objective, m, gbps);
  prog_.best_config = c.str(&spec_.params);
}

void Session::report_progress() {
  prog_.evaluated = res_.evaluated;
  prog_.reused = res_.reused;
  prog_.failed = res_.failed;
  prog_.elapsed_s = elapsed_s();
  prog_.total = std::max(prog_.total, prog_.done);
  prog_.eta_s = prog_.done
                    ? prog_.elapsed_s / static_cast<double>(prog_.done) * static_cast<double>(prog_.total - prog_.done)
                    : -1;
  if (opt_.on_progress) opt_.on_progress(prog_);
}

void Session::fail() noexcept {
  try {
    db_.finish_session(res_.session_id, "failed");
  } catch (...) {
  }
}

Result Session::finish() {
  {
    ScopedTimer timer(db_ms_);
    db_.finish_session(res_.session_id, "finished");
    auto f = db::TrialFilter::cell(spec_.name, sources_, res_.device_id, w_.key(), p_.key());
    f.ok_only = true;
    f.by_time = true;
    res_.top = db::rank_trials(db_.trials(f), opt_.objective, false);
    if (res_.top.size() > 10) res_.top.resize(10);
  }
  res_.warm_trust = strategy_->warm_trust();
  fill_timing();
  return std::move(res_);
}

/// Result::timing from this session's clocks and the backend's counters.
void Session::fill_timing() {
  const BackendStats d = backend_.stats() - stats_before_;
  TimeSplit& t = res_.timing;
  t.wall_s = elapsed_s();
  t.setup_s = setup_ms_ / 1e3;
  for (const auto& [part, ms] : d.setup_ms) t.setup_parts_s[part] = ms / 1e3;
  t.compile_s = d.compile.thread_ms / 1e3;
  t.idle_gpu_s = d.compile.wait_ms / 1e3;
  t.verify_s = d.verify_ms / 1e3;
  t.benchmark_s = d.benchmark_ms / 1e3;
  t.database_s = (db_ms_ + d.compile.cache_ms) / 1e3;
  t.other_s = std::max(0.0, t.wall_s - t.setup_s - t.idle_gpu_s - t.verify_s - t.benchmark_s - t.database_s);
  t.compile_jobs = d.compile_jobs;
  t.compile_threads_used = d.compile.active_threads;
  t.compile_threads_stopped = d.compile.shrinks;
  t.compiled = d.compile.compiled;
  t.cache_hits = d.compile.cache_hits;
  t.compile_failures = d.compile.failed;
  t.unused_compiles = d.compile.unused;
  t.compiler_s = d.compile.compiler_ms / 1e3;
  t.compile_cpu_s = d.compile.cpu_ms / 1e3;
  t.compile_voluntary_switches = d.compile.voluntary_switches;
  t.compile_involuntary_switches = d.compile.involuntary_switches;
  t.compile_minor_faults = d.compile.minor_faults;
}

}  // namespace

Result run(const TuningSpec& spec, Backend& backend, db::Database& db, const Workload& w, const ProblemKey& p,
           const Options& opt) {
  Session session(spec, backend, db, w, p, opt);
  session.start();
  try {
    while (session.round()) {
    }
  } catch (...) {
    session.fail();
    throw;
  }
  return session.finish();
}

}  // namespace autotune::session
