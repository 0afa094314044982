// `autotune tune` in one process: the spec, the GPU (or a replay with --simulate) and its binary cache, then the
// run that tune.cpp shares with the MPI path; under mpirun/srun, cmd_tune_mpi.cpp instead.
#include <iostream>
#include <memory>
#include <string>

#include "db/database.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/cli/tune.hpp"
#ifdef AUTOTUNE_WITH_MPI
#include "tuner/mpi/comm.hpp"
#endif
#include "tuner/sim/replay.hpp"

namespace autotune::cli {

int run_tune(const TuneArgs& ta, const std::string& db_path) {
  TuneOutput o;
#ifdef AUTOTUNE_WITH_MPI
  if (mpi::launched_by_mpi()) return run_tune_mpi(ta, db_path);
#endif
  const TuningSpec spec = load_tune_spec(ta, db_path);
  const std::shared_ptr<const KernelAdapter> adapter = tune_adapter(ta, spec);
  if (!ta.simulate) require_gpu(ta);
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

}  // namespace autotune::cli
