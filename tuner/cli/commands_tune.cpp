// The `tune` sub-command: the default search under a limit, warm starts from the database, the optional
// screening at a smaller size (multi-fidelity), progress, the time split and the final table.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "search/strategy.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/kernel_resolver.hpp"
#include "tuner/cli/problem_flags.hpp"
#include "tuner/cli/observed.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/cli/tune.hpp"
#ifdef AUTOTUNE_WITH_MPI
#include "tuner/mpi/comm.hpp"
#endif
#include "tuner/core/error.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/session/session.hpp"
#include "tuner/session/warm_start.hpp"
#include "tuner/sim/replay.hpp"

namespace autotune::cli {

namespace {

/// When the last progress line was printed (lines without a terminal: every 5 s).
struct ProgressState {
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now() - std::chrono::hours(1);
};

void print_progress(const session::Progress& p, bool tty, const std::string& tag, ProgressState& st,
                    Objective objective) {
  auto& last = st.last;
  auto now = std::chrono::steady_clock::now();
  bool final = p.done >= p.total;
  if (!tty && !final && now - last < std::chrono::seconds(5)) return;
  last = now;
  const int width = 30;
  int filled = p.total ? static_cast<int>(width * static_cast<double>(p.done) / p.total) : width;
  std::string bar(filled, '#');
  bar += std::string(width - filled, '.');
  std::string line = tag + "[" + bar + "] " + std::to_string(p.done) + "/" + std::to_string(p.total);
  if (p.failed) line += " (" + std::to_string(p.failed) + " failed)";
  if (p.best_ns > 0) line += "  best " + fmt_time(p.best_ns);
  if (p.best_ns > 0 && objective != Objective::time) line += " (" + format_objective(objective, p.best_value) + ")";
  if (p.eta_s >= 0 && !final) line += "  ETA " + fmt("%.0fs", p.eta_s);
  if (tty) std::cerr << "\r" << line << "\033[K" << std::flush;
  else std::cerr << line << "\n";
  if (tty && final) std::cerr << "\n";
}

void print_table(std::FILE* out, const TuningSpec& spec, const std::vector<db::TrialRow>& rows, double copy_gbps) {
  bool observed = false;
  for (const auto& t : rows) observed = observed || t.m.observed.observed();
  const std::string obs_header = observed ? " " + observation_header() : "";
  std::fprintf(out, "%-4s %12s %12s %8s %9s %8s%s  %s\n", "rank", "median", "min", "spread", "GB/s", "% copy",
               obs_header.c_str(), "configuration");
  int rank = 1;
  for (const auto& t : rows) {
    Config c = Config::from_json(t.config_json);
    std::string pct = copy_gbps > 0 && t.gbps > 0 ? fmt("%.1f%%", 100.0 * t.gbps / copy_gbps) : "-";
    const std::string cells = observed ? " " + observation_cells(t.m.observed) : "";
    std::fprintf(out, "%-4d %12s %12s %7.1f%% %9.1f %8s%s  %s\n", rank++, fmt_time(t.m.median_ns).c_str(),
                 fmt_time(t.m.min_ns).c_str(), 100 * t.m.spread, t.gbps, pct.c_str(), cells.c_str(),
                 c.str(&spec.params).c_str());
  }
}

/// One line: where the session's time went.
std::string time_split_line(const session::Result& r) {
  const session::TimeSplit& t = r.timing;
  std::string line = "time split: wall " + fmt("%.2f s", t.wall_s);
  if (t.wall_s > 0) line += fmt(" (%.1f configs/s)", static_cast<double>(r.evaluated) / t.wall_s);
  line += " | setup " + fmt("%.2f s", t.setup_s);
  std::string parts;  // what the set-up consisted of (parts may overlap), and the start before the session
  for (const char* part : {"inputs", "reference", "upload", "copy_bandwidth"}) {
    auto it = t.setup_parts_s.find(part);
    if (it != t.setup_parts_s.end()) parts += (parts.empty() ? "" : ", ") + std::string(part) + fmt(" %.2f", it->second);
  }
  if (!parts.empty()) line += " (" + parts + ")";
  if (t.compile_jobs > 0)
    line += " | compile " + fmt("%.2f s", t.compile_s) + " on " + std::to_string(t.compile_jobs) + " threads" +
            " (idle GPU " + fmt("%.2f s)", t.idle_gpu_s);
  line += " | verify " + fmt("%.2f s", t.verify_s) + " | benchmark " + fmt("%.2f s", t.benchmark_s) + " | database " +
          fmt("%.2f s", t.database_s) + " | other " + fmt("%.2f s", t.other_s);
  if (t.compile_jobs > 0)
    line += " | " + std::to_string(t.compiled) + " compiled, " + std::to_string(t.cache_hits) + " cache hits, " +
            std::to_string(t.compile_failures) + " compile failures";
  if (auto it = t.setup_parts_s.find("start"); it != t.setup_parts_s.end())
    line += fmt(" | before the session: backend start %.2f s", it->second);
  return line;
}

/// The session's figures for --stats-json: the time split, counts by status, the best configurations.
nlohmann::json stats_json(const TuningSpec& spec, const Workload& w, const ProblemKey& p, const DeviceInfo& dev,
                          const std::string& strategy, const session::Result& r, db::Database& db) {
  const session::TimeSplit& t = r.timing;
  nlohmann::json j;
  j["kernel"] = spec.name;
  j["workload"] = w.key();
  j["problem"] = p.key();
  j["device"] = dev.name;
  j["strategy"] = strategy;
  j["verification"] = r.verification;
  j["session"] = r.session_id;
  j["space_size"] = r.space_size;
  j["configs"] = r.evaluated;
  j["reused"] = r.reused;
  j["failed"] = r.failed;
  j["configs_per_s"] = t.wall_s > 0 ? static_cast<double>(r.evaluated) / t.wall_s : 0.0;
  j["wall_s"] = t.wall_s;
  j["setup_s"] = t.setup_s;
  j["setup_parts_s"] = t.setup_parts_s;
  j["compile_s"] = t.compile_s;
  j["idle_gpu_s"] = t.idle_gpu_s;
  j["verify_s"] = t.verify_s;
  j["benchmark_s"] = t.benchmark_s;
  j["database_s"] = t.database_s;
  j["other_s"] = t.other_s;
  j["compile_jobs"] = t.compile_jobs;
  j["compiled"] = t.compiled;
  j["cache_hits"] = t.cache_hits;
  j["compile_failures"] = t.compile_failures;
  j["unused_compiles"] = t.unused_compiles;
  db::TrialFilter f;
  f.session_id = r.session_id;
  nlohmann::json statuses = nlohmann::json::object();
  nlohmann::json times = nlohmann::json::object();  // label -> median ns of every verified trial of the session
  for (const auto& row : db.trials(f)) {
    const std::string st = to_string(row.m.status);
    statuses[st] = statuses.value(st, 0) + 1;
    if (row.m.status == TrialStatus::ok)
      times[Config::from_json(row.config_json).str(&spec.params)] = row.m.median_ns;
  }
  j["statuses"] = statuses;
  j["ok_median_ns"] = times;
  nlohmann::json top = nlohmann::json::array();
  for (const auto& row : r.top)
    top.push_back({{"config", nlohmann::json::parse(Config::from_json(row.config_json).to_labelled_json(spec.params))},
                   {"config_values", nlohmann::json::parse(row.config_json)},
                   {"label", Config::from_json(row.config_json).str(&spec.params)},
                   {"median_ns", row.m.median_ns},
                   {"gbps", row.gbps},
                   {"samples", row.m.samples},
                   {"protocol", row.m.protocol},
                   {"observed", observation_json(row.m.observed, row.gbps)}});
  j["top"] = top;
  j["best"] = top.empty() ? nlohmann::json() : top.front();
  return j;
}

std::map<std::string, std::string> parse_options(const std::vector<std::string>& kv) {
  std::map<std::string, std::string> out;
  for (const auto& s : kv) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--strategy-option expects key=value, got '" + s + "'");
    out[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return out;
}



/// The default strategy: under a limit one that covers the space broadly first and then refines locally
/// (docs/strategies.md says why); without a limit every configuration is measured anyway.
std::string default_strategy(bool limited) { return limited ? search::kLimitedDefaultStrategy : "brute_force"; }

/// A smaller problem of the same shape for screening: every dimension above 1024 (sizes, unlike ratios such as
/// select_pct) divided so that the element count shrinks by about `factor`.
ProblemKey screening_problem(const TuningSpec& spec, const ProblemKey& p, double factor) {
  std::size_t sized = 0;
  for (const auto& [name, v] : p.dims) sized += v > 1024 ? 1 : 0;
  if (sized == 0) throw UsageError("--screen: no dimension of " + p.key() + " is large enough to shrink");
  const double per_dim = std::pow(factor, 1.0 / static_cast<double>(sized));
  ProblemKey small = p;
  for (auto& [name, v] : small.dims)
    if (v > 1024) v = std::max<std::int64_t>(1024, static_cast<std::int64_t>(std::llround(static_cast<double>(v) / per_dim)));
  if (small == p) throw UsageError("--screen " + fmt("%g", factor) + " leaves " + p.key() + " unchanged");
  spec.check_problem(small);
  return small;
}

/// Best-so-far after each batch of a session (elapsed seconds since the command started), for --stats-json.
struct TracePoint {
  double elapsed_s = 0;
  std::size_t done = 0;
  double best_ns = 0;
  std::string phase;  // "screen" or "target"
};

}  // namespace

LocalBackend make_local_backend(const TuneArgs& ta, const TuningSpec& spec,
                                const std::shared_ptr<const KernelAdapter>& adapter, const std::string& db_path,
                                int gpu, db::Database* cache_into) {
  LocalBackend lb;
  if (ta.simulate) {
    const std::string from = ta.from.empty() ? db_path : ta.from;
    lb.from_db = db::Database::open(from, db::Database::Mode::read_only);
    auto replay = std::make_unique<sim::ReplayBackend>(*lb.from_db, spec.name, ta.device_name, ta.simulate_delay_ms);
    lb.replay = replay.get();
    lb.backend = std::move(replay);
    return lb;
  }
  std::string why;
  if (!cuda::driver_available(&why))
    throw EnvironmentError(why + "\n  `autotune tune` needs an NVIDIA GPU. Without one, replay recorded trials: "
                           "autotune tune " + ta.kernel + " --simulate --from tests/data/recorded_h200.db");
  cuda::TimingOptions to;
  to.samples = ta.samples;
  to.stable_ci = ta.median_ci / 100;
  to.max_seconds_per_config = ta.max_seconds;
  to.timeout_seconds = ta.timeout;
  to.warmup = ta.warmup;
  to.flush_l2 = !ta.no_flush;
  to.jobs = ta.jobs;
  to.compile_processes = !ta.compile_in_process;
  to.device = gpu;
  to.verify = ta.verify == "host" ? cuda::TimingOptions::Verify::host : cuda::TimingOptions::Verify::device;
  to.observe = !ta.no_observe;
  to.energy_ms = ta.energy_ms >= 0 ? ta.energy_ms : (needs_power(objective_from_string(ta.objective)) ? 100.0 : 0.0);
  if (!ta.binary_cache.empty()) lb.cache_db = db::Database::open(ta.binary_cache);
  else if (!cache_into) lb.cache_db = db::Database::open(":memory:");
  lb.cache = std::make_unique<DbBinaryCache>(lb.cache_db ? *lb.cache_db : *cache_into);
  lb.backend = std::make_unique<cuda::CudaBackend>(adapter, to, lb.cache.get());
  return lb;
}

int tune_with(const TuneArgs& ta, const TuningSpec& spec, const std::shared_ptr<const KernelAdapter>& adapter,
              Backend& backend, db::Database& db, const std::string& db_path, const TuneOutput& o) {
  const auto t0 = o.started;
  auto since_start = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::FILE* out = o.out ? o.out : stdout;
  const std::string& tag = o.label;  // "[NVIDIA H200] " when several device models tune at once, else ""
  ProblemKey p = ta.pf.problem_key(spec);
  Workload w = ta.pf.workload(spec);
  const bool limited = ta.budget > 0 || ta.time_limit > 0;
  const ProblemKey small = ta.screen > 0 ? screening_problem(spec, p, ta.screen) : ProblemKey{};
  const DeviceInfo dev = backend.device();
  const std::string strategy = ta.strategy.empty() ? default_strategy(limited) : ta.strategy;
  std::cerr << tag << "tuning " << spec.name << " " << w.key() << " " << p.key() << " on " << dev.name << " (cc "
            << dev.cc / 10 << "." << dev.cc % 10 << ", " << dev.sm_count << " SMs) with " << strategy
            << (ta.strategy.empty() ? (limited ? " (the default under a limit)" : " (the default without a limit)") : "")
            << ", results in " << db_path << "\n";

  session::Options opt;
  opt.objective = objective_from_string(ta.objective);
  if (needs_power(opt.objective) && (ta.no_observe || ta.energy_ms == 0) && !ta.simulate)
    throw UsageError(std::string("--objective ") + ta.objective + " needs the energy window: drop --no-observe and "
                     "--energy-ms 0");
  opt.strategy = strategy;
  opt.strategy_options = parse_options(ta.strategy_options);
  opt.seed = ta.seed;
  opt.budget = ta.budget;
  opt.time_limit_s = ta.time_limit;
  bool tty = isatty(STDERR_FILENO) && tag.empty();
  ProgressState progress_state;
  std::vector<TracePoint> trace;
  std::string phase = "target";
  opt.on_progress = [&](const session::Progress& pr) {
    print_progress(pr, tty, tag, progress_state, opt.objective);
    if (trace.empty() || trace.back().phase != phase || pr.best_ns != trace.back().best_ns ||
        pr.done != trace.back().done)
      trace.push_back({since_start(), pr.done, pr.best_ns, phase});
  };
  auto warm_from_db = [&](const ProblemKey& problem) {
    session::WarmStart ws;
    if (ta.warm_start > 0) ws = session::find_warm_start(db, spec, dev, w, problem, ta.warm_start);
    if (!ws.empty()) std::cerr << tag << "warm start (" << problem.key() << "): " << ws.source << "\n";
    return ws;
  };

  // Screening (multi-fidelity): a share of the time limit at the smaller problem, then its best
  // configurations start the search at the target size.
  nlohmann::json screen_json;
  std::vector<Config> screened;
  if (ta.screen > 0) {
    session::Options so = opt;
    so.time_limit_s = ta.time_limit * ta.screen_share;
    so.budget = 0;
    so.bytes_moved = adapter ? adapter->bytes_moved(w, small) : 0;
    so.warm_start = warm_from_db(small).configs;
    std::cerr << tag << "screening at " << small.key() << " for " << fmt("%.1f", so.time_limit_s) << " s of the "
              << fmt("%.1f", ta.time_limit) << " s limit\n";
    phase = "screen";
    const session::Result sr = session::run(spec, backend, db, w, small, so);
    phase = "target";
    const std::size_t measured = sr.evaluated + sr.reused;
    const std::size_t keep = std::clamp<std::size_t>((measured + 9) / 10, 5, 32);
    session::WarmStart best = session::best_of_problem(db, spec, dev, w, small, keep);
    screened = best.configs;
    std::cerr << tag << "screening: " << measured << " configurations at " << small.key() << " in "
              << fmt("%.1f s", sr.timing.wall_s) << "; the best " << screened.size()
              << " are measured first at " << p.key() << "\n";
    screen_json = {{"problem", small.key()}, {"configs", measured}, {"wall_s", sr.timing.wall_s},
                   {"confirmed", screened.size()}};
    opt.time_limit_s = std::max(0.001, ta.time_limit - since_start());
  }
  session::WarmStart ws = warm_from_db(p);
  opt.warm_start = screened;
  for (Config& c : ws.configs)
    if (std::find(opt.warm_start.begin(), opt.warm_start.end(), c) == opt.warm_start.end()) opt.warm_start.push_back(std::move(c));
  opt.bytes_moved = adapter ? adapter->bytes_moved(w, p) : 0;
  session::Result r = session::run(spec, backend, db, w, p, opt);

  std::fprintf(out, "\n%s %s %s on %s: %zu valid configurations (cartesian %.0f); %zu measured now, %zu from earlier "
              "sessions, %zu failed\n",
              spec.name.c_str(), w.key().c_str(), p.key().c_str(), dev.name.c_str(), r.space_size, r.cartesian_size,
              r.evaluated, r.reused, r.failed);
  {
    db::TrialFilter sf;
    sf.session_id = r.session_id;
    std::size_t ruled_out = 0;
    for (const auto& t : db.trials(sf)) ruled_out += t.m.status == TrialStatus::invalid_resources ? 1 : 0;
    if (ruled_out)
      std::fprintf(out, "%zu of the failed were ruled out before launch: their compiled binary's registers or shared memory "
                  "do not allow the launch (invalid_resources, the numbers in the log)\n", ruled_out);
  }
  const std::size_t covered = r.evaluated + r.reused;
  if (covered < r.space_size && limited)
    std::fprintf(out, "stopped by the %s after %zu of %zu configurations (%s)\n", ta.budget > 0 ? "budget" : "time limit",
                covered, r.space_size, strategy.c_str());
  if (!opt.warm_start.empty())
    std::fprintf(out, "warm start: %zu of %zu suggested configurations are valid here and were measured first\n",
                r.warm_started, opt.warm_start.size());
  if (r.copy_gbps > 0)
    std::fprintf(out, "device-to-device copy: %.1f GB/s (bytes read + written), measured in this run\n", r.copy_gbps);
  if (!r.verification.empty()) std::fprintf(out, "verification: %s\n", r.verification.c_str());
  if (!backend.observer_note().empty())
    std::fprintf(out, "no clocks, power or energy recorded: %s\n", backend.observer_note().c_str());
  if (opt.objective != Objective::time)
    std::fprintf(out, "objective: %s (the table is ranked by it)\n", ta.objective.c_str());
  std::fprintf(out, "%s\n", time_split_line(r).c_str());
  if (!ta.stats_json.empty()) {
    nlohmann::json j = stats_json(spec, w, p, dev, strategy, r, db);
    j["command_s"] = since_start();
    j["warm_start"] = {{"suggested", opt.warm_start.size()}, {"used", r.warm_started}, {"source", ws.source}};
    if (!screen_json.is_null()) j["screen"] = screen_json;
    nlohmann::json tr = nlohmann::json::array();
    for (const TracePoint& t : trace)
      tr.push_back({{"elapsed_s", t.elapsed_s}, {"done", t.done}, {"best_ns", t.best_ns}, {"phase", t.phase}});
    j["trace"] = tr;
    write_file(ta.stats_json, j.dump(2) + "\n");
  }
  if (r.top.empty()) {
    std::fprintf(out, "no configuration verified: see the failures with `sqlite3 %s \"select status, log from trials "
                "where session_id=%lld\"`\n", db_path.c_str(), static_cast<long long>(r.session_id));
    return 1;
  }
  std::vector<db::TrialRow> top(r.top.begin(), r.top.begin() + std::min<std::size_t>(r.top.size(), ta.top));
  print_table(out, spec, top, r.copy_gbps);
  std::fprintf(out, "session %lld recorded in %s\n", static_cast<long long>(r.session_id), db_path.c_str());
  return 0;
}

std::shared_ptr<const KernelAdapter> tune_adapter(const TuneArgs& ta, const TuningSpec& spec) {
  // A spec stub (an imported kernel) has no adapter: it can only be replayed, and its GB/s stays unknown.
  return ta.simulate && spec.is_stub() ? nullptr : kernels::make_adapter(spec);
}

TuningSpec load_tune_spec(const TuneArgs& ta, const std::string& db_path) {
  TuningSpec spec = resolve_kernel(ta.kernel, {ta.from, db_path});
  ta.narrow.apply(spec);
  spec.check_workload(ta.pf.workload(spec));
  if (ta.screen > 0 && !(ta.time_limit > 0)) throw UsageError("--screen needs --time-limit (the screening gets a share of it)");
  return spec;
}

namespace {

int run_tune(const TuneArgs& ta, const std::string& db_path) {
  TuneOutput o;
#ifdef AUTOTUNE_WITH_MPI
  if (mpi::launched_by_mpi()) return run_tune_mpi(ta, db_path);
#endif
  const TuningSpec spec = load_tune_spec(ta, db_path);
  const std::shared_ptr<const KernelAdapter> adapter = tune_adapter(ta, spec);
  std::string why;
  if (!ta.simulate && !cuda::driver_available(&why))
    throw EnvironmentError(why + "\n  `autotune tune` needs an NVIDIA GPU. Without one, replay recorded trials: "
                           "autotune tune " + ta.kernel + " --simulate --from tests/data/recorded_h200.db");
  std::unique_ptr<db::Database> db, cache_conn;
  if (!ta.simulate) db = db::Database::open(db_path);
  // The binary cache gets a connection of its own: the compile threads then never queue behind the session's
  // statements on one connection (measured: bench/scale_out.sh, docs/performance.md "Scale-out").
  if (!ta.simulate && ta.binary_cache.empty()) cache_conn = db::Database::open(db_path);
  LocalBackend lb = make_local_backend(ta, spec, adapter, db_path, ta.device, cache_conn.get());
  if (ta.simulate) {
    std::cerr << "simulation: replaying trials recorded in " << (ta.from.empty() ? db_path : ta.from) << " on "
              << lb.backend->device().name << "\n";
    const std::string recorded = lb.replay->protocol_line(ta.pf.workload(spec), ta.pf.problem_key(spec));
    if (!recorded.empty()) std::cerr << recorded << "\n";
    db = db::Database::open(db_path);
  }
  return tune_with(ta, spec, adapter, *lb.backend, *db, db_path, o);
}

}  // namespace

void register_tune_command(CLI::App& app, Globals& g) {
  auto ta = std::make_shared<TuneArgs>();
  auto* tune = app.add_subcommand("tune", "tune a kernel on the GPU (or replay recorded trials with --simulate)");
  tune->add_option("kernel", ta->kernel, "built-in kernel name or path to a .json spec")->required();
  ta->pf.add(tune);
  tune->add_option("--strategy", ta->strategy,
                   "search strategy (see `autotune strategies`); default: broad_then_local when --budget or "
                   "--time-limit is given, else brute_force");
  tune->add_option("--strategy-option", ta->strategy_options, "strategy option key=value (repeatable)");
  tune->add_option("--budget", ta->budget, "maximum new evaluations (default: no limit)");
  tune->add_option("--time-limit", ta->time_limit, "stop after this many seconds");
  tune->add_option("--seed", ta->seed, "seed for inputs and the strategy")->capture_default_str();
  tune->add_option("--warm-start", ta->warm_start,
                   "measure first up to this many configurations that the database's trials at other sizes (or on "
                   "devices of the same architecture) suggest; 0 = off")
      ->capture_default_str();
  tune->add_option("--screen", ta->screen,
                   "multi-fidelity: first tune a problem this many times smaller for a share of --time-limit, then "
                   "start at the target size from its best configurations (0 = off)")
      ->check(CLI::Range(0.0, 1e9));
  tune->add_option("--screen-share", ta->screen_share, "share of --time-limit spent screening")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 0.95));
  ta->narrow.add(tune);
  tune->add_option("--samples", ta->samples, "most timed runs per configuration (>= 7)")->capture_default_str()->check(CLI::Range(7, 100000));
  tune->add_option("--median-ci", ta->median_ci,
                   "after 7 samples, stop once the 95% confidence interval of the median is within this many percent "
                   "of it (0: always take --samples)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  tune->add_option("--timeout", ta->timeout, kTimeoutHelp)->capture_default_str()->check(CLI::Range(0.0, 86400.0));
  tune->add_option("--max-seconds-per-config", ta->max_seconds,
                   "after 7 samples, stop once the samples add up to this much GPU time")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  tune->add_option("--warmup", ta->warmup, "untimed runs before sampling")->capture_default_str()->check(CLI::Range(0, 1000));
  tune->add_flag("--no-flush-l2", ta->no_flush, "do not flush the L2 cache before each sample");
  add_objective_option(tune, ta->objective, "what the strategy minimises and the table ranks by");
  tune->add_option("--energy-ms", ta->energy_ms,
                   "after the samples, run each configuration back to back for about this long between two readings "
                   "of NVML's energy counter, for its energy per run (0 = no energy window; default: 100 for an "
                   "--objective that needs energy, else 0, since the window costs about that much per configuration)")
      ->check(CLI::Range(0.0, 60000.0));
  tune->add_flag("--no-observe", ta->no_observe,
                 "record time only: no NVML clocks, power, energy or throttle reasons (also AUTOTUNE_NVML=off)");
  tune->add_option("--verify", ta->verify,
                   "where outputs are compared with the expected values: device (comparison kernels on the GPU, only "
                   "a verdict comes back) or host (outputs copied back and compared on the CPU)")
      ->capture_default_str()
      ->check(CLI::IsMember({"device", "host"}));
  tune->add_option("--jobs", ta->jobs, "compile threads (default: all cores)")->check(CLI::NonNegativeNumber);
  tune->add_flag("--compile-in-process", ta->compile_in_process,
                 "run NVRTC on the compile threads instead of one compile worker process per thread");
  tune->add_option("--binary-cache", ta->binary_cache,
                   "database whose binaries table caches the compiled kernels (default: --db itself)");
  tune->add_option("--stats-json", ta->stats_json,
                   "write the time split, counts and best configurations of the session to this JSON file");
  tune->add_option("--gpu", ta->device,
                   "GPU ordinal (under mpirun/srun: default the rank's node-local rank modulo the GPUs of its node)")
      ->capture_default_str();
  tune->add_option("--top", ta->top, "rows in the final table")->capture_default_str();
  tune->add_flag("--simulate", ta->simulate, "answer every evaluation from recorded trials instead of the GPU");
  tune->add_option("--from", ta->from, "database to replay with --simulate (default: --db)");
  tune->add_option("--simulate-delay-ms", ta->simulate_delay_ms,
                   "with --simulate: wall time each replayed configuration takes (to watch progress, or to exercise "
                   "an MPI job's fault handling)")
      ->check(CLI::Range(0.0, 60000.0));
  tune->add_option("--rank-timeout", ta->rank_timeout,
                   "under mpirun/srun: seconds without a message after which a rank is taken out and its "
                   "configurations go to the other ranks")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  tune->add_option("--device", ta->device_name, "device to replay with --simulate (when several are recorded)");
  tune->callback([&g, ta, tune] {
    ta->device_given = tune->count("--gpu") > 0;
    g.run = [&g, ta] { return run_tune(*ta, g.db_path); };
  });
}

}  // namespace autotune::cli
