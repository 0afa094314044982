// A tuning run on one backend, shared by `autotune tune` in one process (cmd_tune.cpp) and under mpirun/srun
// (cmd_tune_mpi.cpp): the workflow (session::tune: default strategy, warm starts, screening) with progress lines,
// the time split and the final table; the local backend and the spec.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "db/database.hpp"
#include "search/strategy.hpp"
#include "tuner/cli/observed.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/cli/tune.hpp"
#include "tuner/core/error.hpp"
#include "tuner/cuda/counters.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/session/session.hpp"
#include "tuner/session/tune.hpp"
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
  for (const char* part : {"inputs", "draw", "tools", "reference", "upload", "copy_bandwidth"}) {
    auto it = t.setup_parts_s.find(part);
    if (it != t.setup_parts_s.end())
      parts += (parts.empty() ? "" : ", ") + std::string(part) + fmt(" %.2f", it->second);
  }
  if (!parts.empty()) line += " (" + parts + ")";
  if (t.compile_jobs > 0)
    line += " | compile " + fmt("%.2f s", t.compile_s) + " on " +
            (t.compile_threads_used > 0 && t.compile_threads_used < static_cast<std::size_t>(t.compile_jobs)
                 ? std::to_string(t.compile_threads_used) + " of "
                 : std::string()) +
            std::to_string(t.compile_jobs) + " threads" +
            (t.compile_threads_stopped > 0
                 ? ", " + std::to_string(t.compile_threads_stopped) + " stopped for no gain in compilations/s"
                 : std::string()) +
            " (idle GPU " + fmt("%.2f s)", t.idle_gpu_s);
  line += " | verify " + fmt("%.2f s", t.verify_s) + " | benchmark " + fmt("%.2f s", t.benchmark_s) + " | database " +
          fmt("%.2f s", t.database_s) + " | other " + fmt("%.2f s", t.other_s);
  if (t.compile_jobs > 0)
    line += " | " + std::to_string(t.compiled) + " compiled, " + std::to_string(t.cache_hits) + " cache hits, " +
            std::to_string(t.compile_failures) + " compile failures";
  if (auto it = t.setup_parts_s.find("start"); it != t.setup_parts_s.end())
    line += fmt(" | before the session: backend start %.2f s", it->second);
  if (t.compiled > 0 && t.compile_cpu_s > 0) {  // one compilation on average (docs/performance.md "The time split")
    const double n = static_cast<double>(t.compiled);
    line += "\ncompilations: " + fmt("%.1f/s", t.wall_s > 0 ? n / t.wall_s : 0.0) + ", each " +
            fmt("%.1f ms", 1e3 * t.compile_s / n) + " on its thread (compiler " +
            fmt("%.1f ms", 1e3 * t.compiler_s / n) + ", CPU " + fmt("%.1f ms", 1e3 * t.compile_cpu_s / n) + ", " +
            fmt("%.1f", static_cast<double>(t.compile_voluntary_switches) / n) + " waits, " +
            fmt("%.1f", static_cast<double>(t.compile_involuntary_switches) / n) + " preemptions, " +
            fmt("%.0f", static_cast<double>(t.compile_minor_faults) / n) + " page faults)";
  }
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
  j["compile_jobs"] = t.compile_jobs;
  j["compile_threads_used"] = t.compile_threads_used;
  j["compile_threads_stopped"] = t.compile_threads_stopped;
  j["idle_gpu_s"] = t.idle_gpu_s;
  j["verify_s"] = t.verify_s;
  j["benchmark_s"] = t.benchmark_s;
  j["database_s"] = t.database_s;
  j["other_s"] = t.other_s;
  j["compiled"] = t.compiled;
  j["cache_hits"] = t.cache_hits;
  j["compile_failures"] = t.compile_failures;
  j["unused_compiles"] = t.unused_compiles;
  // Per compilation run: what the pool threads waited for one (IPC included), the compiler's own wall and CPU time,
  // context switches and minor page faults of the compiling thread; compilations per second of session wall.
  const double n = static_cast<double>(t.compiled);
  if (t.compiled > 0) {
    j["compiles_per_s"] = t.wall_s > 0 ? n / t.wall_s : 0.0;
    j["compile_wall_ms_mean"] = 1e3 * t.compile_s / n;
    j["compiler_ms_mean"] = 1e3 * t.compiler_s / n;
    j["compile_cpu_ms_mean"] = 1e3 * t.compile_cpu_s / n;
    j["compile_voluntary_switches_mean"] = static_cast<double>(t.compile_voluntary_switches) / n;
    j["compile_involuntary_switches_mean"] = static_cast<double>(t.compile_involuntary_switches) / n;
    j["compile_minor_faults_mean"] = static_cast<double>(t.compile_minor_faults) / n;
  }
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
  for (const auto& row : r.top) {
    nlohmann::json e = {
        {"config", nlohmann::json::parse(Config::from_json(row.config_json).to_labelled_json(spec.params))},
        {"config_values", nlohmann::json::parse(row.config_json)},
        {"label", Config::from_json(row.config_json).str(&spec.params)},
        {"gbps", row.gbps}};
    // Every measured field by the record's one field list (median_ns, samples, protocol, ...; NaN as null).
    Measurement::for_each_field(row.m, [&e, &row](const char* name, const auto& v) {
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, Observation>)
        e[name] = observation_json(v, row.gbps);
      else if constexpr (std::is_same_v<T, TrialStatus>)
        e[name] = to_string(v);
      else
        e[name] = v;
    });
    top.push_back(std::move(e));
  }
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



/// One `tune` command on one backend: the workflow (session::tune) with progress lines, then its report.
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
        dev_(backend.device()),
        tty_(isatty(STDERR_FILENO) && tag_.empty()) {}
  TuneRun(const TuneRun&) = delete;
  TuneRun& operator=(const TuneRun&) = delete;

  /// Returns the exit code: 1 when no configuration verified.
  int run();

 private:
  double since_start() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }
  session::TuneRequest request();
  void print_report(const session::TuneOutcome& o) const;
  void print_final_pick(const session::FinalPickOutcome& f) const;
  void write_stats(const session::TuneOutcome& o) const;

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
  const DeviceInfo dev_;
  const bool tty_;
  ProgressState progress_;
};

int TuneRun::run() {
  const session::TuneRequest q = request();
  const bool limited = ta_.budget > 0 || ta_.time_limit > 0;
  const std::string strategy = ta_.strategy.empty() ? session::default_strategy(limited) : ta_.strategy;
  std::cerr << tag_ << "tuning " << spec_.name << " " << w_.key() << " " << p_.key() << " on " << dev_.name
            << " (cc " << dev_.cc / 10 << "." << dev_.cc % 10 << ", " << dev_.sm_count << " SMs) with " << strategy
            << (ta_.strategy.empty() ? (limited ? " (the default under a limit)" : " (the default without a limit)")
                                     : "")
            << ", results in " << db_path_ << "\n";
  const std::string deterministic = deterministic_summary(spec_, p_, dev_, w_);
  if (!deterministic.empty()) std::cerr << tag_ << deterministic << "\n";
  const session::TuneOutcome o = session::tune(spec_, backend_, db_, q);
  const session::Result& r = o.result;

  print_report(o);
  if (!ta_.stats_json.empty()) write_stats(o);
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

/// The workflow's request from the flags: objective, strategy, seed, limits, warm start, screening; notes and
/// progress lines on stderr.
session::TuneRequest TuneRun::request() {
  session::TuneRequest q;
  q.workload = w_;
  q.problem = p_;
  q.objective = objective_from_string(ta_.objective);
  if (needs_power(q.objective) && (ta_.no_observe || ta_.energy_ms == 0) && !ta_.simulate)
    throw UsageError(std::string("--objective ") + ta_.objective + " needs the energy window: drop --no-observe and "
                     "--energy-ms 0");
  q.strategy = ta_.strategy;
  q.strategy_options = parse_options(ta_.strategy_options);
  q.seed = ta_.seed;
  q.budget = ta_.budget;
  q.time_limit_s = ta_.time_limit;
  q.started = started_;  // the time limit and the screening's share count from here
  q.warm_start = ta_.warm_start;
  q.screen = ta_.screen;
  q.screen_share = ta_.screen_share;
  q.smaller_sizes = ta_.simulate ? 0 : ta_.smaller_sizes;  // a replay measures nothing new
  q.final_pick.k = ta_.final_k;
  q.final_pick.rounds = ta_.final_rounds;
  if (adapter_) q.bytes_moved = [a = adapter_](const Workload& w, const ProblemKey& p) { return a->bytes_moved(w, p); };
  q.note = [this](const std::string& line) { std::cerr << tag_ << line << "\n"; };
  q.on_progress = [this, objective = q.objective](const session::Progress& pr) {
    print_progress(pr, tty_, tag_, progress_, objective);
  };
  return q;
}

/// What the session covered, why it stopped, what it measured with, where the time went.
void TuneRun::print_report(const session::TuneOutcome& o) const {
  const session::Result& r = o.result;
  const session::Options& opt = o.options;
  std::fprintf(out_, "\n%s %s %s on %s: %zu valid configurations (cartesian %.0f); %zu measured now, %zu from earlier "
              "sessions, %zu failed\n",
              spec_.name.c_str(), w_.key().c_str(), p_.key().c_str(), dev_.name.c_str(), r.space_size,
              r.cartesian_size, r.evaluated, r.reused, r.failed);
  {
    db::TrialFilter sf;
    sf.session_id = r.session_id;
    std::size_t ruled_out = 0, wrong = 0, ok = 0;
    for (const auto& t : db_.trials(sf)) {
      ruled_out += t.m.status == TrialStatus::invalid_resources ? 1 : 0;
      wrong += t.m.status == TrialStatus::wrong_result ? 1 : 0;
      ok += t.m.status == TrialStatus::ok ? 1 : 0;
    }
    if (ruled_out)
      std::fprintf(
          out_,
          "%zu of the failed ask for more than the GPU has: their compiled binary's registers or shared memory "
          "do not allow the launch, or ptxas refused them (invalid_resources, the numbers in the log)\n",
          ruled_out);
    // Many wrong results against a configuration of the kernel itself usually mean that configuration is no
    // reference: the outputs depend on the parameters.
    const std::string reference = spec_.reference_text();
    if (wrong > 0 && wrong >= ok && spec_.reference && spec_.reference->configuration)
      std::fprintf(out_,
                   "%zu configurations computed other outputs than the reference, %s (%zu agreed): when the outputs "
                   "depend on the parameters (a parameter that changes what is computed, inputs only some "
                   "configurations read, a grid that leaves outputs unwritten), no configuration is a reference; "
                   "give the spec a reference kernel or expected values from files (a T1 file: ReferenceArguments)\n",
                   wrong, reference.c_str(), ok);
  }
  const std::size_t covered = r.evaluated + r.reused;
  const bool limited = ta_.budget > 0 || ta_.time_limit > 0;
  if (covered < r.space_size && limited)
    std::fprintf(out_, "stopped by the %s after %zu of %zu configurations (%s)\n",
                 ta_.budget > 0 ? "budget" : "time limit", covered, r.space_size, o.strategy.c_str());
  if (!opt.warm_start.empty() && opt.warm_values.empty())
    std::fprintf(out_, "warm start: %zu of %zu suggested configurations are valid here and were measured first\n",
                r.warm_started, opt.warm_start.size());
  else if (!opt.warm_start.empty())
    std::fprintf(out_, "warm start from %s: %zu of %zu suggested configurations valid here; trusted %.2f (%s)\n",
                 opt.warm_source.c_str(), r.warm_started, opt.warm_start.size(), r.warm_trust.trust,
                 r.warm_trust.reason.c_str());
  if (r.copy_gbps > 0)
    std::fprintf(out_, "device-to-device copy: %.1f GB/s (bytes read + written), measured in this run\n", r.copy_gbps);
  if (!r.verification.empty()) std::fprintf(out_, "verification: %s\n", r.verification.c_str());
  if (!backend_.observer_note().empty())
    std::fprintf(out_, "observers that recorded nothing: %s\n", backend_.observer_note().c_str());
  if (opt.objective != Objective::time)
    std::fprintf(out_, "objective: %s (the table is ranked by it)\n", ta_.objective.c_str());
  std::fprintf(out_, "%s\n", time_split_line(r).c_str());
  if (!o.smaller.empty()) {
    std::string line = "smaller sizes, measured for the lookup:";
    double wall = 0;
    for (const session::SmallerSize& s : o.smaller) {
      line += (&s == &o.smaller.front() ? " " : "; ") + s.problem + " " + std::to_string(s.measured) + " of " +
              std::to_string(s.configs) + " verified" +
              (s.best_ns > 0 ? fmt(", fastest %.2f us", s.best_ns / 1e3) : std::string());
      wall += s.wall_s;
    }
    std::fprintf(out_, "%s (%.1f s)\n", line.c_str(), wall);
  }
  if (!o.smaller_note.empty()) std::fprintf(out_, "smaller sizes: %s\n", o.smaller_note.c_str());
  print_final_pick(o.final_pick);
}

/// The final pick: how many configurations are within noise of the winner, which, and what it cost.
void TuneRun::print_final_pick(const session::FinalPickOutcome& f) const {
  if (!f.ran) {
    std::fprintf(out_, "final pick: %s\n", f.note.c_str());
    return;
  }
  std::fprintf(out_,
               "final pick: %zu configuration%s within noise (%.1f%%) after %zu interleaved rounds of %zu "
               "candidates (%.1f s)\n",
               f.tie, f.tie == 1 ? "" : "s", 100 * f.noise, f.rounds, f.candidates, f.wall_s);
  for (const db::FinalPickRow& r : f.rows) {
    if (!r.in_tie_set) continue;
    std::fprintf(out_, "  %s %s  %s, %+.2f%% paired\n", r.rank == 0 ? "winner" : "tied  ",
                 Config::from_json(r.config_json).str(&spec_.params).c_str(), fmt_time(r.median_ns).c_str(),
                 100 * (r.ratio - 1));
  }
}

/// --stats-json: the session's figures, the warm start, the screening and the best-so-far trace.
void TuneRun::write_stats(const session::TuneOutcome& o) const {
  nlohmann::json j = stats_json(spec_, w_, p_, dev_, o.strategy, o.result, db_);
  j["command_s"] = since_start();
  j["warm_start"] = {{"suggested", o.options.warm_start.size()},
                     {"used", o.result.warm_started},
                     {"source", o.warm.source},
                     {"from", o.options.warm_source},
                     {"distance", o.options.warm_distance},
                     {"source_values", o.options.warm_values.size()},
                     {"measured", o.result.warm_trust.measured},
                     {"overlap", o.result.warm_trust.overlap},
                     {"trust", o.result.warm_trust.trust},
                     {"why", o.result.warm_trust.reason}};
  if (std::isfinite(o.result.warm_trust.correlation))
    j["warm_start"]["rank_correlation"] = o.result.warm_trust.correlation;
  if (!o.screen.problem.empty())
    j["screen"] = {{"problem", o.screen.problem}, {"configs", o.screen.configs}, {"wall_s", o.screen.wall_s},
                   {"confirmed", o.screen.confirmed}};
  if (!o.smaller.empty() || !o.smaller_note.empty()) {
    nlohmann::json sm = nlohmann::json::array();
    for (const session::SmallerSize& s : o.smaller)
      sm.push_back({{"problem", s.problem},
                    {"configs", s.configs},
                    {"verified", s.measured},
                    {"session", s.session_id},
                    {"best_ns", s.best_ns},
                    {"best", s.best.empty() ? nlohmann::json() : nlohmann::json::parse(s.best)},
                    {"wall_s", s.wall_s}});
    j["smaller_sizes"] = {{"sizes", sm}, {"note", o.smaller_note}};
  }
  {
    const session::FinalPickOutcome& f = o.final_pick;
    nlohmann::json fp = {
        {"ran", f.ran},     {"note", f.note},     {"candidates", f.candidates}, {"tie_set_size", f.tie},
        {"noise", f.noise}, {"rounds", f.rounds}, {"wall_s", f.wall_s},         {"changed_leader", f.changed_leader}};
    nlohmann::json rows = nlohmann::json::array();
    for (const db::FinalPickRow& r : f.rows)
      rows.push_back({{"config", nlohmann::json::parse(r.config_json)},
                      {"rank", r.rank},
                      {"median_ns", r.median_ns},
                      {"ratio", r.ratio},
                      {"in_tie_set", r.in_tie_set},
                      {"samples_ns", r.samples_ns}});
    fp["configs"] = rows;
    j["final_pick"] = fp;
  }
  nlohmann::json tr = nlohmann::json::array();
  for (const session::TracePoint& t : o.trace)
    tr.push_back({{"elapsed_s", t.elapsed_s}, {"done", t.done}, {"best_ns", t.best_ns}, {"phase", t.phase}});
  j["trace"] = tr;
  write_file(ta_.stats_json, j.dump(2) + "\n");
}

}  // namespace

void require_gpu(const TuneArgs& ta, const std::string& command) {
  std::string why;
  if (!cuda::driver_available(&why)) throw EnvironmentError(why + no_gpu_hint(command, ta.kernel));
}

LocalBackend make_local_backend(const TuneArgs& ta, const TuningSpec& spec,
                                const std::shared_ptr<const KernelAdapter>& adapter, const std::string& db_path,
                                int gpu, db::Database* cache_into) {
  LocalBackend lb;
  if (ta.simulate) {
    const std::string from = ta.from.empty() ? db_path : ta.from;
    lb.from_db = db::Database::open(from, db::Database::Mode::read_only);
    auto replay = std::make_unique<sim::ReplayBackend>(*lb.from_db, spec.name, ta.device_name, ta.simulate_delay_ms);
    // A spec stub knows no constraints: its valid space is what was recorded (docs/interop.md).
    if (spec.is_stub() && spec.constraints.empty()) replay->limit_space_to_recorded();
    lb.replay = replay.get();
    lb.backend = std::move(replay);
    return lb;
  }
  require_gpu(ta);
  cuda::TimingOptions to;
  to.samples = ta.samples;
  to.stable_ci = ta.median_ci / 100;
  to.max_seconds_per_config = ta.max_seconds;
  // Racing compares times: an energy objective may prefer a slower configuration.
  to.race_margin = ta.objective == "time" ? ta.race / 100 : 0.0;
  to.timeout_seconds = ta.timeout;
  to.warmup = ta.warmup;
  to.flush_l2 = !ta.no_flush;
  to.jobs = ta.jobs;
  to.compile_processes = !ta.compile_in_process;
  to.device = gpu;
  to.verify = ta.verify == "host" ? cuda::TimingOptions::Verify::host : cuda::TimingOptions::Verify::device;
  to.draw_on_device = ta.inputs_on == "gpu";
  to.repeat_check = ta.narrow.deterministic;  // the verified run is repeated and must give the same bytes
  to.observe = !ta.no_observe;
  if (!ta.metrics.empty()) to.metrics = cuda::resolve_metrics(ta.metrics);
  to.energy_ms = ta.energy_ms >= 0 ? ta.energy_ms : (needs_power(objective_from_string(ta.objective)) ? 100.0 : 0.0);
  if (!ta.binary_cache.empty()) lb.cache_db = db::Database::open(ta.binary_cache);
  else if (!cache_into) lb.cache_db = db::Database::open(":memory:");
  // A connection of the cache's own (cache_into is one too): the binaries are written in the background.
  lb.cache =
      std::make_unique<DbBinaryCache>(lb.cache_db ? *lb.cache_db : *cache_into, DbBinaryCache::Writes::in_background);
  lb.backend = std::make_unique<cuda::CudaBackend>(adapter, to, lb.cache.get());
  return lb;
}

/// The spec's tuning defaults (a T1 file's Budget and Search) where the command line gives no limit or strategy;
/// a budget fraction becomes a count of the valid space on this device. Says which were taken.
TuneArgs with_spec_tuning(const TuneArgs& ta, const TuningSpec& spec, const Backend& backend, const std::string& tag) {
  TuneArgs a = ta;
  const TuningDefaults& d = spec.tuning;
  if (d.empty()) return a;
  std::string taken;
  if (ta.budget == 0 && ta.time_limit == 0) {
    if (d.budget) a.budget = *d.budget;
    if (d.budget_fraction) {
      const std::size_t valid = spec.space(ta.pf.problem_key(spec), backend.device(), ta.pf.workload(spec)).size();
      const auto share = static_cast<std::size_t>(std::ceil(*d.budget_fraction * static_cast<double>(valid)));
      a.budget = a.budget ? std::min(a.budget, std::max<std::size_t>(1, share)) : std::max<std::size_t>(1, share);
    }
    if (d.time_limit_s) a.time_limit = *d.time_limit_s;
    if (a.budget) taken += "budget " + std::to_string(a.budget);
    if (a.time_limit > 0) taken += (taken.empty() ? "" : ", ") + std::string("time limit ") + fmt("%g s", a.time_limit);
  }
  if (ta.strategy.empty() && d.strategy) {
    a.strategy = *d.strategy;
    for (const auto& [k, v] : d.strategy_options) a.strategy_options.push_back(k + "=" + v);
    taken += (taken.empty() ? "" : ", ") + ("strategy " + a.strategy);
  }
  if (!taken.empty())
    std::cerr << tag << "from the spec (its \"tuning\"; a T1 file's Budget and Search): " << taken
              << " (the command line's --budget, --time-limit and --strategy override them)\n";
  return a;
}

int tune_with(const TuneArgs& ta, const TuningSpec& spec, const std::shared_ptr<const KernelAdapter>& adapter,
              Backend& backend, db::Database& db, const std::string& db_path, const TuneOutput& o) {
  const TuneArgs effective = with_spec_tuning(ta, spec, backend, o.label);
  TuneRun run(effective, spec, adapter, backend, db, db_path, o);
  return run.run();
}

std::shared_ptr<const KernelAdapter> tune_adapter(const TuneArgs& ta, const TuningSpec& spec) {
  // A spec stub (an imported kernel) has no adapter: it can only be replayed, and its GB/s stays unknown.
  if (ta.simulate && spec.is_stub()) return nullptr;
  std::shared_ptr<const KernelAdapter> adapter = kernels::make_adapter(spec);
  // The files of a user kernel's inputs are checked before a GPU is looked for: a wrong one is a spec error.
  if (!ta.simulate) adapter->validate_inputs(ta.pf.workload(spec), ta.pf.problem_key(spec));
  return adapter;
}

TuningSpec load_tune_spec(const TuneArgs& ta, const std::string& db_path) {
  std::vector<std::string> notes;
  TuningSpec spec = interop::resolve_kernel(ta.kernel, {ta.from, db_path}, &notes);
  for (const std::string& n : notes) std::cerr << ta.kernel << ": " << n << "\n";
  ta.narrow.apply(spec);
  ta.pf.apply_inputs(spec);
  spec.check_workload(ta.pf.workload(spec));
  if (ta.screen > 0 && !(ta.time_limit > 0))
    throw UsageError("--screen needs --time-limit (the screening gets a share of it)");
  if (ta.screen > 0) session::screening_problem(spec, ta.pf.problem_key(spec), ta.screen);  // fails before a GPU starts
  return spec;
}

}  // namespace autotune::cli
