// `autotune tune` in one process: the spec, the GPU (or a replay with --simulate) and its binary cache, then the
// run that tune.cpp shares with the MPI path; under mpirun/srun, cmd_tune_mpi.cpp instead.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/cli/tune.hpp"
#include "tuner/sim/replay.hpp"

namespace autotune::cli {

namespace {

/// `tune DIR`: every capture (*.tune.json) in DIR, in name order, one session each. A capture that is not a valid
/// spec is reported and the others still run (exit code 2 at the end); no GPU, or a database error, stops all.
int tune_directory(const TuneArgs& ta, const std::string& db_path) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(ta.kernel)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.size() > 10 && name.compare(name.size() - 10, 10, ".tune.json") == 0)
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw UsageError(ta.kernel +
                     " is a directory without captures (*.tune.json files, written by applications run "
                     "with AUTOTUNE_CAPTURE)");
  int status = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::printf("== capture %zu of %zu: %s\n", i + 1, files.size(), files[i].c_str());
    std::fflush(stdout);
    TuneArgs one = ta;
    one.kernel = files[i];
    try {
      status = std::max(status, run_tune(one, db_path));
    } catch (const SpecError& e) {
      std::fprintf(stderr, "error: invalid spec: %s\n", e.what());
      status = std::max(status, 2);
    } catch (const UsageError& e) {
      std::fprintf(stderr, "error: %s: %s\n", files[i].c_str(), e.what());
      status = std::max(status, 2);
    }
  }
  if (files.size() > 1) std::printf("== %zu captures tuned into %s\n", files.size(), db_path.c_str());
  return status;
}

/// The executable's `tune` under mpirun/srun (set_mpi_tune); null in a program that embeds the CLI library.
MpiTune mpi_tune = nullptr;

}  // namespace

void set_mpi_tune(MpiTune f) { mpi_tune = f; }

int run_tune(const TuneArgs& ta, const std::string& db_path) {
  std::error_code ec;
  if (std::filesystem::is_directory(ta.kernel, ec)) return tune_directory(ta, db_path);
  TuneOutput o;
  if (mpi_tune != nullptr)
    if (const std::optional<int> status = mpi_tune(ta, db_path)) return *status;
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
    if (auto only = lb.replay->space_limit(ta.pf.workload(spec), ta.pf.problem_key(spec)))
      std::cerr << "space: the " << only->size() << " recorded configurations (the stub knows no constraints)\n";
    db = db::Database::open(db_path);
  }
  return tune_with(ta, spec, adapter, *lb.backend, *db, db_path, o);
}

}  // namespace autotune::cli
