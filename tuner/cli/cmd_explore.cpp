// `autotune explore`: a launch-geometry sweep (block size x grid size in multiples of the SM count) with the
// other parameters fixed, on the GPU, from recorded trials (--simulate), or as a plan only (tuner/explore/).
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db/sources.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/error.hpp"
#include "tuner/cuda/counters.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/explore/explore.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/replay.hpp"

namespace autotune::cli {

namespace {

/// What explore measures with and records into, kept alive while it runs (members destroyed in reverse).
struct Measuring {
  std::unique_ptr<db::Database> from_db;  // --simulate: the recording
  std::unique_ptr<db::Database> db;       // --db: where the session is recorded
  std::unique_ptr<DbBinaryCache> cache;   // the GPU's compiled kernels (in db)
  std::unique_ptr<Backend> backend;       // none with --plan-only
  std::int64_t replay_device_id = 0;      // --simulate: the replayed device in from_db
  DeviceInfo dev;
};

explore::SweepRequest sweep_request(const ExploreArgs& a, const TuningSpec& spec) {
  explore::SweepRequest req;
  if (!a.block_sizes.empty()) req.block_sizes = explore::parse_value_list(a.block_sizes, "--block-sizes");
  if (!a.blocks_per_sm.empty()) req.blocks_per_sm = explore::parse_value_list(a.blocks_per_sm, "--blocks-per-sm");
  for (const auto& f : a.fix) {
    auto [name, v] = explore::parse_fix(f, spec);
    req.fixed[name] = v;
  }
  return req;
}

/// --simulate: the replay of --from (default db_path) into m.from_db, m.backend, m.replay_device_id.
void open_replay(const ExploreArgs& a, const TuningSpec& spec, const Workload& w, const ProblemKey& p,
                 const std::string& db_path, Measuring& m) {
  std::string from = a.from.empty() ? db_path : a.from;
  m.from_db = db::Database::open(from, db::Database::Mode::read_only);
  auto replay = std::make_unique<sim::ReplayBackend>(*m.from_db, spec.name, a.device_name);
  const std::string recorded = replay->protocol_line(w, p);
  m.backend = std::move(replay);
  const DeviceInfo rd = m.backend->device();
  for (const auto& d : m.from_db->devices())
    if (d.info.normalised_name() == rd.normalised_name() && d.info.cc == rd.cc && d.info.uuid == rd.uuid)
      m.replay_device_id = d.id;
  std::cerr << "simulation: replaying trials recorded in " << from << " on " << rd.name << "\n";
  if (!recorded.empty()) std::cerr << recorded << "\n";
}

/// The CUDA backend on --gpu, its binary cache in m.db.
void open_gpu(const ExploreArgs& a, const std::shared_ptr<const KernelAdapter>& adapter, Measuring& m) {
  cuda::TimingOptions to;
  to.samples = a.samples;
  to.warmup = a.warmup;
  to.flush_l2 = !a.no_flush;
  to.device = a.gpu;
  to.timeout_seconds = a.timeout;
  if (!a.metrics.empty()) to.metrics = cuda::resolve_metrics(a.metrics);
  m.cache = std::make_unique<DbBinaryCache>(*m.db);
  m.backend = std::make_unique<cuda::CudaBackend>(adapter, to, m.cache.get());
}

/// The replay, the GPU, or (--plan-only) no backend and the GPU here or the reference device; the database
/// db_path. EnvironmentError for a run without a GPU.
Measuring open_measuring(const ExploreArgs& a, const TuningSpec& spec,
                         const std::shared_ptr<const KernelAdapter>& adapter, const Workload& w, const ProblemKey& p,
                         const std::string& db_path) {
  Measuring m;
  if (a.simulate) {
    open_replay(a, spec, w, p, db_path, m);
  } else if (!a.plan_only) {
    std::string why;
    if (!cuda::driver_available(&why)) throw EnvironmentError(why + no_gpu_hint("explore", a.kernel));
  }
  m.db = db::Database::open(db_path);
  if (a.simulate) {
    m.dev = m.backend->device();
  } else if (a.plan_only) {
    std::string why;
    if (cuda::driver_available(&why)) m.dev = cuda::list_devices().at(static_cast<std::size_t>(a.gpu));
    else m.dev = DeviceInfo{};
  } else {
    open_gpu(a, adapter, m);
    m.dev = m.backend->device();
  }
  if (m.dev.sm_count == 0) {
    // --plan-only without a GPU: plan for the reference device the recordings come from.
    m.dev.name = "assumed device (no GPU here): 132 SMs, sm_90";
    m.dev.cc = 90;
    m.dev.sm_count = 132;
    m.dev.max_shared_memory_per_block_optin = 232448;
  }
  return m;
}

/// Occupancy from the driver for the binary the session compiled (taken from the binary cache `bc`).
std::function<std::optional<int>(const explore::SweepPoint&)> driver_occupancy(
    const std::shared_ptr<const KernelAdapter>& adapter, const Workload& w, const DeviceInfo& dev, DbBinaryCache* bc,
    int ordinal) {
  const std::string arch = "sm_" + std::to_string(dev.cc);
  return [adapter, w, arch, bc, ordinal](const explore::SweepPoint& pt) -> std::optional<int> {
    const cuda::CompileRecipe recipe = cuda::compile_recipe(*adapter, w, pt.config, arch);
    std::optional<cuda::CompileResult> cr = bc->get(recipe.key);
    if (!cr)
      cr = cuda::compile(adapter->spec().source_text, adapter->spec().headers, adapter->spec().name + ".cu",
                         recipe.options, arch);
    if (!cr->ok) return std::nullopt;
    return cuda::max_active_blocks_per_sm(*cr, pt.kernel, static_cast<int>(pt.block_threads), pt.shared_bytes,
                                          ordinal);
  };
}

explore::ExploreOptions explore_options(const ExploreArgs& a, const TuningSpec& spec,
                                        const std::shared_ptr<const KernelAdapter>& adapter, const Workload& w,
                                        const ProblemKey& p, const Measuring& m) {
  explore::ExploreOptions opt;
  opt.tolerance = a.tolerance / 100.0;
  opt.seed = a.seed;
  opt.bytes_moved = adapter->bytes_moved(w, p);
  bool tty = isatty(STDERR_FILENO);
  opt.on_progress = [tty](const session::Progress& pr) {
    std::string line = "explore: " + std::to_string(pr.done) + "/" + std::to_string(pr.total) + " points";
    if (pr.failed) line += " (" + std::to_string(pr.failed) + " failed)";
    if (tty) std::cerr << "\r" << line << "\033[K" << (pr.done >= pr.total ? "\n" : "") << std::flush;
    else if (pr.done >= pr.total) std::cerr << line << "\n";
  };
  if (m.from_db) {
    const db::Database* fdb = m.from_db.get();
    const std::vector<std::string> sources = db::accepted_sources(*fdb, spec);
    opt.available = [fdb, replay_device_id = m.replay_device_id, sources, name = spec.name, w, p](const Config& c) {
      return fdb->find_trial(name, sources, replay_device_id, w.key(), p.key(), c.hash()).has_value();
    };
  }
  if (!a.simulate && !a.plan_only) opt.driver_occupancy = driver_occupancy(adapter, w, m.dev, m.cache.get(), a.gpu);
  return opt;
}

/// --plot and --power-plot.
void write_charts(const ExploreArgs& a, const explore::ExploreResult& r) {
  if (!a.plot.empty()) {
    write_file(a.plot, explore::explore_chart_svg(r));
    std::printf("chart written to %s\n", a.plot.c_str());
  }
  if (!a.power_plot.empty()) {
    const std::string svg = explore::power_chart_svg(r);
    if (svg.empty()) {
      std::printf("no power recorded for these points (NVML unavailable?): %s not written\n", a.power_plot.c_str());
    } else {
      write_file(a.power_plot, svg);
      std::printf("power chart written to %s\n", a.power_plot.c_str());
    }
  }
}

}  // namespace

int run_explore(const ExploreArgs& a, const std::string& db_path) {
  TuningSpec spec = interop::resolve_kernel(a.kernel, {a.from, db_path});
  a.pf.apply_inputs(spec);
  auto adapter = kernels::make_adapter(spec);
  ProblemKey p = a.pf.problem_key(spec);
  Workload w = a.pf.workload(spec);
  spec.check_workload(w);
  const explore::SweepRequest req = sweep_request(a, spec);
  Measuring m = open_measuring(a, spec, adapter, w, p, db_path);
  const DeviceInfo dev = m.dev;

  std::optional<Config> best;
  if (m.from_db) best = explore::best_known_config(*m.from_db, spec, dev, w, p);
  if (!best) best = explore::best_known_config(*m.db, spec, dev, w, p);
  explore::PlanFn plan_fn = [adapter, w, p, dev](const Config& c) { return adapter->plan(c, w, p, dev); };
  explore::SweepPlan plan = explore::plan_sweep(spec, p, dev, w, req, best, plan_fn);
  const explore::ExploreOptions opt = explore_options(a, spec, adapter, w, p, m);

  explore::ExploreResult r;
  if (a.plan_only) {
    r = explore::collect_results(spec, *m.db, 0, dev, 0, w, p, plan, opt);
    r.backend = "plan only";
  } else {
    r = explore::run_explore(spec, *m.backend, *m.db, w, p, plan, opt);
  }
  std::printf("%s", explore::format_report(r).c_str());
  write_charts(a, r);
  if (r.session_id) std::printf("session %lld recorded in %s\n", static_cast<long long>(r.session_id), db_path.c_str());
  return a.plan_only || r.verdict.measured > 0 ? 0 : 1;
}

}  // namespace autotune::cli
