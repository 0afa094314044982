// A tuning run on one backend, shared by `autotune tune` in one process (cmd_tune.cpp) and under mpirun/srun
// (cmd_tune_mpi.cpp): the default search under a limit, warm starts from the database, the optional screening at
// a smaller size (multi-fidelity), progress, the time split and the final table; the local backend and the spec.
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
#include "tuner/cli/kernel_resolver.hpp"
#include "tuner/cli/observed.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/cli/tune.hpp"
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
  int filled = p.total ? static_cast<int>(width * static_cast<double>(p.done) / static_cast<double>(p.total)) : width;
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

/// One `tune` command on one backend: the optional screening, the session at the target size, its report.
/// Not copyable: the sessions' progress callback points at it.
class TuneRun {
 public:
  TuneRun(const TuneArgs& ta, const TuningSpec& spec, const std::shared_ptr<const KernelAdapter>& adapter,
          Backend& backend, db::Database& db, const std::string& db_path, const TuneOutput& o)
      : ta_(ta),
        spec_(spec),
        adapter_(adapter),
        backend_(backend),
        db_(db),
        db_path_(db_path),
        started_(o.started),
        out_(o.out ? o.out : stdout),
        tag_(o.label),
        p_(ta.pf.problem_key(spec)),
        w_(ta.pf.workload(spec)),
        limited_(ta.budget > 0 || ta.time_limit > 0),
        small_(ta.screen > 0 ? screening_problem(spec, p_, ta.screen) : ProblemKey{}),
        dev_(backend.device()),
        strategy_(ta.strategy.empty() ? default_strategy(limited_) : ta.strategy),
        tty_(isatty(STDERR_FILENO) && tag_.empty()) {}
  TuneRun(const TuneRun&) = delete;
  TuneRun& operator=(const TuneRun&) = delete;

  /// Returns the exit code: 1 when no configuration verified.
  int run();

 private:
  double since_start() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }
  session::Options session_options();
  session::WarmStart warm_from_db(const ProblemKey& problem) const;
  void screen(session::Options& opt);
  void print_report(const session::Result& r, const session::Options& opt) const;
  void write_stats(const session::Result& r, const session::Options& opt, const session::WarmStart& ws) const;

  const TuneArgs& ta_;
  const TuningSpec& spec_;
  const std::shared_ptr<const KernelAdapter>& adapter_;
  Backend& backend_;
  db::Database& db_;
  const std::string& db_path_;
  const std::chrono::steady_clock::time_point started_;
  std::FILE* const out_;
  const std::string tag_;  // "[NVIDIA H200] " when several device models tune at once, else ""
  const ProblemKey p_;
  const Workload w_;
  const bool limited_;
  const ProblemKey small_;  // the screening problem (--screen)
  const DeviceInfo dev_;
  const std::string strategy_;
  const bool tty_;
  ProgressState progress_;
  std::vector<TracePoint> trace_;
  std::string phase_ = "target";
  std::vector<Config> screened_;  // the screening's best, measured first at the target size
  nlohmann::json screen_json_;
};

int TuneRun::run() {
  std::cerr << tag_ << "tuning " << spec_.name << " " << w_.key() << " " << p_.key() << " on " << dev_.name
            << " (cc " << dev_.cc / 10 << "." << dev_.cc % 10 << ", " << dev_.sm_count << " SMs) with " << strategy_
            << (ta_.strategy.empty() ? (limited_ ? " (the default under a limit)" : " (the default without a limit)")
                                     : "")
            << ", results in " << db_path_ << "\n";
  session::Options opt = session_options();
  if (ta_.screen > 0) screen(opt);
  session::WarmStart ws = warm_from_db(p_);
  opt.warm_start = screened_;
  for (Config& c : ws.configs)
    if (std::find(opt.warm_start.begin(), opt.warm_start.end(), c) == opt.warm_start.end()) opt.warm_start.push_back(std::move(c));
  opt.bytes_moved = adapter_ ? adapter_->bytes_moved(w_, p_) : 0;
  session::Result r = session::run(spec_, backend_, db_, w_, p_, opt);

  print_report(r, opt);
  if (!ta_.stats_json.empty()) write_stats(r, opt, ws);
  if (r.top.empty()) {
    std::fprintf(out_, "no configuration verified: see the failures with `sqlite3 %s \"select status, log from trials "
                "where session_id=%lld\"`\n", db_path_.c_str(), static_cast<long long>(r.session_id));
    return 1;
  }
  std::vector<db::TrialRow> top(r.top.begin(), r.top.begin() + std::min<std::size_t>(r.top.size(), ta_.top));
  print_table(out_, spec_, top, r.copy_gbps);
  std::fprintf(out_, "session %lld recorded in %s\n", static_cast<long long>(r.session_id), db_path_.c_str());
  return 0;
}

/// The objective, strategy, seed and limits of the flags; progress lines and the best-so-far trace.
session::Options TuneRun::session_options() {
  session::Options opt;
  opt.objective = objective_from_string(ta_.objective);
  if (needs_power(opt.objective) && (ta_.no_observe || ta_.energy_ms == 0) && !ta_.simulate)
    throw UsageError(std::string("--objective ") + ta_.objective + " needs the energy window: drop --no-observe and "
                     "--energy-ms 0");
  opt.strategy = strategy_;
  opt.strategy_options = parse_options(ta_.strategy_options);
  opt.seed = ta_.seed;
  opt.budget = ta_.budget;
  opt.time_limit_s = ta_.time_limit;
  opt.on_progress = [this, objective = opt.objective](const session::Progress& pr) {
    print_progress(pr, tty_, tag_, progress_, objective);
    if (trace_.empty() || trace_.back().phase != phase_ || pr.best_ns != trace_.back().best_ns ||
        pr.done != trace_.back().done)
      trace_.push_back({since_start(), pr.done, pr.best_ns, phase_});
  };
  return opt;
}

session::WarmStart TuneRun::warm_from_db(const ProblemKey& problem) const {
  session::WarmStart ws;
  if (ta_.warm_start > 0) ws = session::find_warm_start(db_, spec_, dev_, w_, problem, ta_.warm_start);
  if (!ws.empty()) std::cerr << tag_ << "warm start (" << problem.key() << "): " << ws.source << "\n";
  return ws;
}

/// Screening (multi-fidelity): a share of the time limit at the smaller problem, then its best
/// configurations start the search at the target size, which gets the rest of the limit.
void TuneRun::screen(session::Options& opt) {
  session::Options so = opt;
  so.time_limit_s = ta_.time_limit * ta_.screen_share;
  so.budget = 0;
  so.bytes_moved = adapter_ ? adapter_->bytes_moved(w_, small_) : 0;
  so.warm_start = warm_from_db(small_).configs;
  std::cerr << tag_ << "screening at " << small_.key() << " for " << fmt("%.1f", so.time_limit_s) << " s of the "
            << fmt("%.1f", ta_.time_limit) << " s limit\n";
  phase_ = "screen";
  const session::Result sr = session::run(spec_, backend_, db_, w_, small_, so);
  phase_ = "target";
  const std::size_t measured = sr.evaluated + sr.reused;
  const std::size_t keep = std::clamp<std::size_t>((measured + 9) / 10, 5, 32);
  session::WarmStart best = session::best_of_problem(db_, spec_, dev_, w_, small_, keep);
  screened_ = best.configs;
  std::cerr << tag_ << "screening: " << measured << " configurations at " << small_.key() << " in "
            << fmt("%.1f s", sr.timing.wall_s) << "; the best " << screened_.size() << " are measured first at "
            << p_.key() << "\n";
  screen_json_ = {{"problem", small_.key()}, {"configs", measured}, {"wall_s", sr.timing.wall_s},
                  {"confirmed", screened_.size()}};
  opt.time_limit_s = std::max(0.001, ta_.time_limit - since_start());
}

/// What the session covered, why it stopped, what it measured with, where the time went.
void TuneRun::print_report(const session::Result& r, const session::Options& opt) const {
  std::fprintf(out_, "\n%s %s %s on %s: %zu valid configurations (cartesian %.0f); %zu measured now, %zu from earlier "
              "sessions, %zu failed\n",
              spec_.name.c_str(), w_.key().c_str(), p_.key().c_str(), dev_.name.c_str(), r.space_size,
              r.cartesian_size, r.evaluated, r.reused, r.failed);
  {
    db::TrialFilter sf;
    sf.session_id = r.session_id;
    std::size_t ruled_out = 0;
    for (const auto& t : db_.trials(sf)) ruled_out += t.m.status == TrialStatus::invalid_resources ? 1 : 0;
    if (ruled_out)
      std::fprintf(out_, "%zu of the failed were ruled out before launch: their compiled binary's registers or shared memory "
                  "do not allow the launch (invalid_resources, the numbers in the log)\n", ruled_out);
  }
  const std::size_t covered = r.evaluated + r.reused;
  if (covered < r.space_size && limited_)
    std::fprintf(out_, "stopped by the %s after %zu of %zu configurations (%s)\n", ta_.budget > 0 ? "budget" : "time limit",
                covered, r.space_size, strategy_.c_str());
  if (!opt.warm_start.empty())
    std::fprintf(out_, "warm start: %zu of %zu suggested configurations are valid here and were measured first\n",
                r.warm_started, opt.warm_start.size());
  if (r.copy_gbps > 0)
    std::fprintf(out_, "device-to-device copy: %.1f GB/s (bytes read + written), measured in this run\n", r.copy_gbps);
  if (!r.verification.empty()) std::fprintf(out_, "verification: %s\n", r.verification.c_str());
  if (!backend_.observer_note().empty())
    std::fprintf(out_, "no clocks, power or energy recorded: %s\n", backend_.observer_note().c_str());
  if (opt.objective != Objective::time)
    std::fprintf(out_, "objective: %s (the table is ranked by it)\n", ta_.objective.c_str());
  std::fprintf(out_, "%s\n", time_split_line(r).c_str());
}

/// --stats-json: the session's figures, the warm start, the screening and the best-so-far trace.
void TuneRun::write_stats(const session::Result& r, const session::Options& opt, const session::WarmStart& ws) const {
  nlohmann::json j = stats_json(spec_, w_, p_, dev_, strategy_, r, db_);
  j["command_s"] = since_start();
  j["warm_start"] = {{"suggested", opt.warm_start.size()}, {"used", r.warm_started}, {"source", ws.source}};
  if (!screen_json_.is_null()) j["screen"] = screen_json_;
  nlohmann::json tr = nlohmann::json::array();
  for (const TracePoint& t : trace_)
    tr.push_back({{"elapsed_s", t.elapsed_s}, {"done", t.done}, {"best_ns", t.best_ns}, {"phase", t.phase}});
  j["trace"] = tr;
  write_file(ta_.stats_json, j.dump(2) + "\n");
}

}  // namespace

void require_gpu(const TuneArgs& ta) {
  std::string why;
  if (!cuda::driver_available(&why))
    throw EnvironmentError(why + "\n  `autotune tune` needs an NVIDIA GPU. Without one, replay recorded trials: "
                           "autotune tune " + ta.kernel + " --simulate --from tests/data/recorded_h100.db --n 268435456 "
                           "(every family at two sizes; the error of a missing size lists those recorded)");
}

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
  require_gpu(ta);
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
  TuneRun run(ta, spec, adapter, backend, db, db_path, o);
  return run.run();
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

}  // namespace autotune::cli
