// `autotune tune` under mpirun or srun (built with -DAUTOTUNE_MPI=ON): every rank makes its own backend (its
// GPU, or a replay); rank 0 also runs the strategy, owns the database and records every result with the rank
// that measured it. Ranks with different GPU models tune side by side: one session (one strategy) per model.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tuner/cli/tune.hpp"
#include "tuner/core/compile_concurrency.hpp"
#include "tuner/core/error.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/mpi/cluster.hpp"
#include "tuner/mpi/comm.hpp"
#include "tuner/mpi/rank_server.hpp"

namespace autotune::cli {

namespace {

/// A LocalBackend as a Backend that owns what it needs; every call goes to its backend.
class OwningBackend : public ForwardingBackend {
 public:
  OwningBackend(std::unique_ptr<db::Database> cache_conn, LocalBackend lb)
      : cache_conn_(std::move(cache_conn)), lb_(std::move(lb)) {
    forward_to(*lb_.backend);
  }

 private:
  std::unique_ptr<db::Database> cache_conn_;
  LocalBackend lb_;
};

/// "--stats-json out.json" for one of several device models: out-nvidia_h200.json.
std::string per_device_path(const std::string& path, const DeviceInfo& d) {
  std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + "-" + d.normalised_name() + p.extension().string())).string();
}

/// Several device models: one session (one strategy) per model, side by side; each report is printed once all
/// are done. Returns the highest exit code.
int tune_each_model(mpi::Cluster& cluster, const std::vector<std::vector<int>>& groups, const TuneArgs& ta,
                    const TuningSpec& spec, const std::shared_ptr<const KernelAdapter>& adapter,
                    const std::string& db_path, const TuneOutput& o) {
  std::cerr << "mpi: " << groups.size() << " device models: one session (one strategy) each\n";
  struct Part {
    std::unique_ptr<Backend> backend;
    TuneArgs args;
    char* text = nullptr;
    std::size_t size = 0;
    int code = 0;
    std::string error;
  };
  std::vector<Part> parts(groups.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    parts[i].backend = cluster.backend(groups[i]);
    parts[i].args = ta;
    if (!ta.stats_json.empty()) parts[i].args.stats_json = per_device_path(ta.stats_json, parts[i].backend->device());
    threads.emplace_back([&, i] {
      Part& part = parts[i];
      std::FILE* out = open_memstream(&part.text, &part.size);
      TuneOutput po = o;
      po.out = out;
      po.label = "[" + part.backend->device().name + "] ";
      try {
        auto db = db::Database::open(db_path);
        part.code = tune_with(part.args, spec, adapter, *part.backend, *db, db_path, po);
      } catch (const std::exception& e) {
        part.error = e.what();
        part.code = 1;
      }
      std::fclose(out);
    });
  }
  for (auto& t : threads) t.join();
  int code = 0;
  for (Part& part : parts) {
    std::fwrite(part.text, 1, part.size, stdout);
    std::free(part.text);
    if (!part.error.empty())
      std::fprintf(stdout, "%s: error: %s\n", part.backend->device().name.c_str(), part.error.c_str());
    code = std::max(code, part.code);
  }
  return code;
}

}  // namespace

int run_tune_mpi(const TuneArgs& ta, const std::string& db_path) {
  mpi::Comm comm(nullptr, nullptr);
  const TuneOutput o;
  const TuningSpec spec = load_tune_spec(ta, db_path);  // every rank: a bad spec fails everywhere alike
  const std::shared_ptr<const KernelAdapter> adapter = tune_adapter(ta, spec);
  int gpu = ta.device;
  if (!ta.simulate && !ta.device_given && cuda::driver_available(nullptr)) {
    const auto n = static_cast<int>(cuda::list_devices().size());
    if (n > 0) gpu = comm.local_rank() % n;
  }
  // Ranks that share a node share its cores: each compiles on at most its share unless --jobs says otherwise.
  const std::size_t cores = default_compile_jobs(static_cast<std::size_t>(std::max(comm.local_size(), 1)));
  TuneArgs rank_args = ta;
  if (rank_args.jobs <= 0) rank_args.jobs = static_cast<int>(cores);
  const std::string where = "host=" + comm.host() + " rank=" + std::to_string(comm.rank()) +
                            (ta.simulate ? std::string(" replay") : " gpu=" + std::to_string(gpu));
  const std::string share = std::to_string(cores) + " of " + std::to_string(std::thread::hardware_concurrency()) +
                            " cores (" + std::to_string(comm.local_size()) + " ranks on its node)";
  const std::string note = ta.simulate ? "its share " + share
                                       : "compile threads <= " + std::to_string(rank_args.jobs) +
                                             (ta.jobs > 0 ? std::string(" (--jobs)") : ": its share, " + share);
  // Rank 0 keeps compiled binaries in the database (its own connection); the other ranks, which may not reach
  // that file, in memory or in --binary-cache.
  auto make = [&]() -> std::unique_ptr<Backend> {
    std::unique_ptr<db::Database> cache_conn;
    if (comm.rank() == 0 && !ta.simulate && ta.binary_cache.empty()) cache_conn = db::Database::open(db_path);
    LocalBackend lb = make_local_backend(rank_args, spec, adapter, db_path, gpu, cache_conn.get());
    return std::make_unique<OwningBackend>(std::move(cache_conn), std::move(lb));
  };
  mpi::ServeOptions so;
  so.coordinator_timeout_s = std::max(600.0, 4 * ta.rank_timeout);
  so.note = note;
  if (comm.rank() != 0) return mpi::serve(comm, make, where, so);

  std::unique_ptr<mpi::RankServer> local;
  try {
    local = std::make_unique<mpi::RankServer>(make(), where);
  } catch (const std::exception& e) {
    local = std::make_unique<mpi::RankServer>(nullptr, where, e.what());
  }
  local->set_note(note);
  mpi::ClusterOptions co;
  co.rank_timeout_s = ta.rank_timeout;
  mpi::Cluster cluster(comm, std::move(local), co);
  const std::vector<mpi::RankInfo> ranks = cluster.ranks();
  std::cerr << "mpi: " << ranks.size() << " ranks\n";
  for (const mpi::RankInfo& r : ranks)
    std::cerr << "  rank " << r.rank << ": " << (r.where.empty() ? std::string("?") : r.where) << "  "
              << (r.usable ? r.device.name + " (" + r.kind + ")" : "not measuring: " + r.error)
              << (r.note.empty() ? std::string() : "; " + r.note) << "\n";
  const auto groups = cluster.groups();
  int code = 0;
  if (groups.size() == 1) {
    auto backend = cluster.backend(groups.front());
    auto db = db::Database::open(db_path);
    code = tune_with(ta, spec, adapter, *backend, *db, db_path, o);
  } else {
    code = tune_each_model(cluster, groups, ta, spec, adapter, db_path, o);
  }
  std::fflush(stdout);
  std::fprintf(stdout, "mpi: what each rank measured\n");
  for (const mpi::RankTally& t : cluster.tallies()) {
    const std::string& w = ranks[static_cast<std::size_t>(t.rank)].where;
    std::fprintf(stdout,
                 "  rank %d (%s): %zu configurations (%zu ahead of their round), %.2f s measuring (%.2f s of it "
                 "waiting for binaries), %.2f s between tasks, %.2f s preparing%s%s\n",
                 t.rank, w.c_str(), t.configs, t.ahead, t.eval_s, t.binary_wait_s, t.between_s, t.prepare_s,
                 t.lost ? "; taken out: " : "", t.lost ? t.lost_why.c_str() : "");
  }
  return code;
}

std::optional<int> run_tune_if_mpi(const TuneArgs& ta, const std::string& db_path) {
  if (!mpi::launched_by_mpi()) return std::nullopt;
  return run_tune_mpi(ta, db_path);
}

}  // namespace autotune::cli
