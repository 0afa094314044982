// explore (launch-geometry sweeps) and report (self-contained HTML page) sub-commands.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>

#include "db/database.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/kernel_resolver.hpp"
#include "tuner/cli/problem_flags.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/error.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/explore/explore.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/report/html_report.hpp"
#include "tuner/sim/replay.hpp"

namespace autotune::cli {

namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

void register_explore_commands(CLI::App& app, Globals& g) {
  // ---- explore
  struct ExploreArgs {
    std::string kernel;
    ProblemFlags pf;
    std::string block_sizes, blocks_per_sm;
    std::vector<std::string> fix;
    std::string plot, power_plot, from, device_name;
    bool simulate = false, plan_only = false, no_flush = false;
    double tolerance = 3.0, timeout = 0;
    std::uint64_t seed = 1;
    int samples = 15, warmup = 3, gpu = 0;
  };
  auto ea = std::make_shared<ExploreArgs>();
  auto* ex = app.add_subcommand("explore",
                                "sweep block size x grid size (in multiples of the SM count) with the other parameters "
                                "fixed; report GB/s, % of copy, occupancy, waves, threads per SM and a verdict");
  ex->add_option("kernel", ea->kernel, "built-in kernel name or path to a .json spec")->required();
  ea->pf.add(ex);
  ex->add_option("--block-sizes", ea->block_sizes, "threads per block to sweep, e.g. 64,128,256,512,1024 (default: the spec's)");
  ex->add_option("--blocks-per-sm", ea->blocks_per_sm, "grid sizes in multiples of the SM count, e.g. 1,2,3,4,6,8,16,32 (default: the spec's)");
  ex->add_option("--fix", ea->fix, "PARAM=VALUE for a parameter that is not swept (repeatable; default: the best known configuration, else the spec default)");
  ex->add_option("--tolerance", ea->tolerance, "percent of the best within which a point counts as peak")->capture_default_str()->check(CLI::Range(0.0, 50.0));
  ex->add_option("--plot", ea->plot, "write the chart (GB/s against blocks per SM, one line per block size) to this SVG file");
  ex->add_option("--power-plot", ea->power_plot,
                 "write GB/s against board power (one line per block size; needs NVML) to this SVG file");
  ex->add_flag("--plan-only", ea->plan_only, "print the planned points (validity, geometry, theoretical occupancy) without running them");
  ex->add_flag("--simulate", ea->simulate, "answer every point from recorded trials instead of the GPU");
  ex->add_option("--from", ea->from, "database to replay with --simulate (default: --db)");
  ex->add_option("--device", ea->device_name, "device to replay with --simulate (when several are recorded)");
  ex->add_option("--seed", ea->seed, "seed for the inputs")->capture_default_str();
  ex->add_option("--samples", ea->samples, "timed runs per point (>= 7)")->capture_default_str()->check(CLI::Range(7, 100000));
  ex->add_option("--warmup", ea->warmup, "untimed runs before sampling")->capture_default_str()->check(CLI::Range(0, 1000));
  ex->add_flag("--no-flush-l2", ea->no_flush, "do not flush the L2 cache before each sample");
  ex->add_option("--timeout", ea->timeout, kTimeoutHelp)->capture_default_str()->check(CLI::Range(0.0, 86400.0));
  ex->add_option("--gpu", ea->gpu, "GPU ordinal")->capture_default_str();
  ex->callback([&g, ea] {
    g.run = [&g, ea] {
      TuningSpec spec = resolve_kernel(ea->kernel, {ea->from, g.db_path});
      auto adapter = kernels::make_adapter(spec);
      ProblemKey p = ea->pf.problem_key(spec);
      Workload w = ea->pf.workload(spec);
      spec.check_workload(w);
      explore::SweepRequest req;
      if (!ea->block_sizes.empty()) req.block_sizes = explore::parse_value_list(ea->block_sizes, "--block-sizes");
      if (!ea->blocks_per_sm.empty()) req.blocks_per_sm = explore::parse_value_list(ea->blocks_per_sm, "--blocks-per-sm");
      for (const auto& f : ea->fix) {
        auto [name, v] = explore::parse_fix(f, spec);
        req.fixed[name] = v;
      }

      std::unique_ptr<db::Database> from_db, db;
      std::unique_ptr<Backend> backend;
      std::unique_ptr<DbBinaryCache> cache;
      std::int64_t replay_device_id = 0;
      if (ea->simulate) {
        std::string from = ea->from.empty() ? g.db_path : ea->from;
        from_db = db::Database::open(from, db::Database::Mode::read_only);
        auto replay = std::make_unique<sim::ReplayBackend>(*from_db, spec.name, ea->device_name);
        const std::string recorded = replay->protocol_line(w, p);
        backend = std::move(replay);
        const DeviceInfo rd = backend->device();
        for (const auto& d : from_db->devices())
          if (d.info.normalised_name() == rd.normalised_name() && d.info.cc == rd.cc && d.info.uuid == rd.uuid)
            replay_device_id = d.id;
        std::cerr << "simulation: replaying trials recorded in " << from << " on " << rd.name << "\n";
        if (!recorded.empty()) std::cerr << recorded << "\n";
      } else if (!ea->plan_only) {
        std::string why;
        if (!cuda::driver_available(&why))
          throw EnvironmentError(why + "\n  `autotune explore` needs an NVIDIA GPU. Without one, replay recorded trials: "
                                 "autotune explore " + ea->kernel + " --simulate --from tests/data/recorded_h200.db, "
                                 "or print the plan with --plan-only");
      }
      db = db::Database::open(g.db_path);
      DeviceInfo dev;
      if (ea->simulate) {
        dev = backend->device();
      } else if (ea->plan_only) {
        std::string why;
        if (cuda::driver_available(&why)) dev = cuda::list_devices().at(static_cast<std::size_t>(ea->gpu));
        else dev = DeviceInfo{};
      } else {
        cuda::TimingOptions to;
        to.samples = ea->samples;
        to.warmup = ea->warmup;
        to.flush_l2 = !ea->no_flush;
        to.device = ea->gpu;
        to.timeout_seconds = ea->timeout;
        cache = std::make_unique<DbBinaryCache>(*db);
        backend = std::make_unique<cuda::CudaBackend>(adapter, to, cache.get());
        dev = backend->device();
      }
      if (dev.sm_count == 0) {
        // --plan-only without a GPU: plan for the reference device the recordings come from.
        dev.name = "assumed device (no GPU here): 132 SMs, sm_90";
        dev.cc = 90;
        dev.sm_count = 132;
        dev.max_shared_memory_per_block_optin = 232448;
      }

      std::optional<Config> best;
      if (from_db) best = explore::best_known_config(*from_db, spec, dev, w, p);
      if (!best) best = explore::best_known_config(*db, spec, dev, w, p);
      explore::PlanFn plan_fn = [adapter, w, p, dev](const Config& c) { return adapter->plan(c, w, p, dev); };
      explore::SweepPlan plan = explore::plan_sweep(spec, p, dev, w, req, best, plan_fn);

      explore::ExploreOptions opt;
      opt.tolerance = ea->tolerance / 100.0;
      opt.seed = ea->seed;
      opt.bytes_moved = adapter->bytes_moved(w, p);
      bool tty = isatty(STDERR_FILENO);
      opt.on_progress = [tty](const session::Progress& pr) {
        std::string line = "explore: " + std::to_string(pr.done) + "/" + std::to_string(pr.total) + " points";
        if (pr.failed) line += " (" + std::to_string(pr.failed) + " failed)";
        if (tty) std::cerr << "\r" << line << "\033[K" << (pr.done >= pr.total ? "\n" : "") << std::flush;
        else if (pr.done >= pr.total) std::cerr << line << "\n";
      };
      if (from_db) {
        const db::Database* fdb = from_db.get();
        const std::string source_hash = spec.source_hash();
        opt.available = [fdb, replay_device_id, source_hash, name = spec.name, w, p](const Config& c) {
          return fdb->find_trial(name, source_hash, replay_device_id, w.key(), p.key(), c.hash()).has_value();
        };
      }
      if (!ea->simulate && !ea->plan_only) {
        // Occupancy from the driver for the binary the session compiled (taken from the binary cache).
        const std::string arch = "sm_" + std::to_string(dev.cc);
        DbBinaryCache* bc = cache.get();
        int ordinal = ea->gpu;
        opt.driver_occupancy = [adapter, w, arch, bc, ordinal](const explore::SweepPoint& pt) -> std::optional<int> {
          std::vector<std::string> o = adapter->compile_options(w);
          for (auto& s : cuda::config_defines(pt.config)) o.push_back(std::move(s));
          for (const auto& [name, value] : adapter->spec().defines)
            o.push_back(value.empty() ? "-D" + name : "-D" + name + "=" + value);
          const std::string& src = adapter->spec().source_text;
          std::optional<cuda::CompileResult> cr = bc->get(cuda::binary_key(src, o, arch));
          if (!cr) cr = cuda::compile(src, adapter->spec().name + ".cu", o, arch);
          if (!cr->ok) return std::nullopt;
          return cuda::max_active_blocks_per_sm(*cr, pt.kernel, static_cast<int>(pt.block_threads), pt.shared_bytes,
                                                ordinal);
        };
      }

      explore::ExploreResult r;
      if (ea->plan_only) {
        r = explore::collect_results(spec, *db, 0, dev, 0, w, p, plan, opt);
        r.backend = "plan only";
      } else {
        r = explore::run_explore(spec, *backend, *db, w, p, plan, opt);
      }
      std::printf("%s", explore::format_report(r).c_str());
      if (!ea->plot.empty()) {
        write_file(ea->plot, explore::explore_chart_svg(r));
        std::printf("chart written to %s\n", ea->plot.c_str());
      }
      if (!ea->power_plot.empty()) {
        const std::string svg = explore::power_chart_svg(r);
        if (svg.empty()) {
          std::printf("no power recorded for these points (NVML unavailable?): %s not written\n", ea->power_plot.c_str());
        } else {
          write_file(ea->power_plot, svg);
          std::printf("power chart written to %s\n", ea->power_plot.c_str());
        }
      }
      if (r.session_id) std::printf("session %lld recorded in %s\n", static_cast<long long>(r.session_id), g.db_path.c_str());
      return ea->plan_only || r.verdict.measured > 0 ? 0 : 1;
    };
  });

  // ---- report
  struct ReportArgs {
    std::string target, html, device_name;
    ProblemFlags pf;
    std::size_t top = 10;
  };
  auto ra = std::make_shared<ReportArgs>();
  auto* rep = app.add_subcommand("report", "write a self-contained HTML report of a kernel's (or a session's) recorded trials");
  rep->add_option("target", ra->target, "built-in kernel name, path to a .json spec, or a session id")->required();
  ra->pf.add(rep);
  rep->add_option("--html", ra->html, "output file (.html)")->required();
  rep->add_option("--device", ra->device_name, "device name (default: the only recorded one)");
  rep->add_option("--top", ra->top, "rows in the best-configurations table")->capture_default_str();
  rep->callback([&g, ra] {
    g.run = [&g, ra] {
      auto db = db::Database::open(g.db_path, db::Database::Mode::read_only);
      report::ReportQuery q;
      std::vector<Param> params;
      if (all_digits(ra->target)) {
        q.session_id = std::stoll(ra->target);
        if (auto s = db->session(*q.session_id)) {
          try {
            params = resolve_kernel(s->kernel, {g.db_path}).params;
          } catch (const std::exception&) {
            // A user spec not at hand: the page shows raw parameter values.
          }
        }
      } else {
        TuningSpec spec = resolve_kernel(ra->target, {g.db_path});
        q.kernel = spec.name;
        q.problem = ra->pf.problem_key(spec).key();
        q.workload = ra->pf.workload(spec).key();
        q.source_hash = spec.source_hash();
        params = spec.params;
      }
      q.device_name = ra->device_name;
      report::ReportData d = report::load_report_data(*db, q);
      d.params = params;
      d.top = ra->top;
      d.generated_at = utc_now();
      write_file(ra->html, report::render_html(d));
      std::printf("report of %s %s %s (%s, %zu trials) written to %s\n", d.kernel.c_str(), d.workload.c_str(),
                  d.problem.c_str(), d.scope.c_str(), d.trials.size(), ra->html.c_str());
      return 0;
    };
  });
}

}  // namespace autotune::cli
