// Internal to the CLI: the pieces of `autotune tune` (tune.cpp) that the single-process path (cmd_tune.cpp) and
// the MPI path (cmd_tune_mpi.cpp) share.
#pragma once
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/adapter.hpp"
#include "tuner/core/backend.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::sim {
class ReplayBackend;
}

namespace autotune::cli {

/// A backend made in this process for `tune`, with what it needs kept alive (members destroyed in reverse).
struct LocalBackend {
  std::unique_ptr<db::Database> from_db, cache_db;
  std::unique_ptr<DbBinaryCache> cache;
  std::unique_ptr<Backend> backend;
  sim::ReplayBackend* replay = nullptr;  // the backend, when it is a replay
};

/// EnvironmentError where there is no NVIDIA driver, with what `autotune COMMAND` can do instead (no_gpu_hint).
void require_gpu(const TuneArgs& ta, const std::string& command = "tune");

/// --simulate: a replay of --from (default db_path); else the CUDA backend on GPU `gpu` with its binary cache
/// in --binary-cache, else in `cache_into` (a connection of the cache's own: it is written in the background),
/// else in memory. EnvironmentError without a GPU.
LocalBackend make_local_backend(const TuneArgs& ta, const TuningSpec& spec,
                                const std::shared_ptr<const KernelAdapter>& adapter, const std::string& db_path,
                                int gpu, db::Database* cache_into);

/// Where tune_with writes: its report (stdout by default), a label before its progress lines (several device
/// models at once), and when the command started.
struct TuneOutput {
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::FILE* out = nullptr;
  std::string label;
};

/// Warm start, optional screening, the session on `backend`, the report. Returns the exit code.
int tune_with(const TuneArgs& ta, const TuningSpec& spec, const std::shared_ptr<const KernelAdapter>& adapter,
              Backend& backend, db::Database& db, const std::string& db_path, const TuneOutput& o);

/// The spec of ta.kernel (built-in, .json file, or a stub an import stored in --from/db_path) with the
/// narrowing flags applied; checks the workload and the flag combination.
TuningSpec load_tune_spec(const TuneArgs& ta, const std::string& db_path);
/// The kernel's adapter; null for a spec stub replayed with --simulate (no launch plan, no bytes moved). Unless
/// simulating, the files the inputs come from are checked for the problem of ta first (SpecError).
std::shared_ptr<const KernelAdapter> tune_adapter(const TuneArgs& ta, const TuningSpec& spec);

/// `tune` under mpirun/srun: its exit code, or nullopt where this process was not started by mpirun/srun. Only
/// the `autotune` executable built with MPI has one (cmd_tune_mpi.cpp) and registers it from main(); the CLI
/// library run in another program (tuner/capi/) has none and tunes in its own process.
using MpiTune = std::optional<int> (*)(const TuneArgs& ta, const std::string& db_path);
void set_mpi_tune(MpiTune f);

#ifdef AUTOTUNE_WITH_MPI
/// `tune` under mpirun/srun (tuner/cli/cmd_tune_mpi.cpp).
int run_tune_mpi(const TuneArgs& ta, const std::string& db_path);
/// run_tune_mpi where mpi::launched_by_mpi(), else nullopt: the MpiTune of the executable.
std::optional<int> run_tune_if_mpi(const TuneArgs& ta, const std::string& db_path);
#endif

}  // namespace autotune::cli
