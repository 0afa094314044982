// `autotune revalidate`: cells recorded with an older kernel source re-measured on this GPU and carried forward
// where they agree (the workflow is tuner/session/revalidate.*); and `autotune identity`.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "db/database.hpp"
#include "db/sources.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/cli/tune.hpp"
#include "tuner/core/identity.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/session/revalidate.hpp"

namespace autotune::cli {

namespace {

void print_cell(const session::CellRevalidation& c) {
  std::printf("\n%s %s on %s (source %s): %s\n", c.workload.c_str(), c.problem.c_str(), c.device.c_str(),
              c.old_source.c_str(), c.verdict.c_str());
  if (!c.configs.empty()) {
    std::printf("  %12s %12s %8s  %s\n", "recorded", "now", "agrees", "configuration");
    for (const session::Remeasured& m : c.configs)
      std::printf("  %12s %12s %8s  %s\n", fmt_time(m.old_ns).c_str(), m.new_ns > 0 ? fmt_time(m.new_ns).c_str() : "failed",
                  m.agrees ? "yes" : "no", m.config.c_str());
  }
  if (c.carried)
    std::printf("  %zu recorded rows carried forward (session %lld)\n", c.rows_carried, static_cast<long long>(c.session_id));
}

}  // namespace

int run_revalidate(const RevalidateArgs& a, const std::string& db_path) {
  const TuneArgs& ta = a.t;
  const TuningSpec spec = load_tune_spec(ta, db_path);
  const std::shared_ptr<const KernelAdapter> adapter = tune_adapter(ta, spec);
  require_gpu(ta, "revalidate");
  auto db = db::Database::open(db_path);
  std::unique_ptr<db::Database> cache_conn;
  if (ta.binary_cache.empty()) cache_conn = db::Database::open(db_path);
  LocalBackend lb = make_local_backend(ta, spec, adapter, db_path, ta.device, cache_conn.get());

  session::RevalidateRequest q;
  if (ta.pf.has_workload()) q.workload = ta.pf.workload(spec);
  if (ta.pf.has_problem()) q.problem = ta.pf.problem_key(spec);
  q.top = a.top;
  q.tolerance = a.tolerance / 100;
  q.seed = ta.seed;
  if (adapter) q.bytes_moved = [adapter](const Workload& w, const ProblemKey& p) { return adapter->bytes_moved(w, p); };
  q.note = [](const std::string& line) { std::cerr << line << "\n"; };
  const session::RevalidateOutcome o = session::revalidate(spec, *lb.backend, *db, q);

  std::printf("%s: today's source %s (code %s); %zu recorded cells already current, %zu with older trials only\n",
              spec.name.c_str(), spec.source_hash().c_str(), spec.code_identity().c_str(), o.current_cells, o.cells.size());
  int code = 0;
  for (const session::CellRevalidation& c : o.cells) {
    print_cell(c);
    if (!c.carried) code = 1;
  }
  return code;
}

int run_identity(const IdentityArgs& a, const std::string& db_path) {
  nlohmann::json all = nlohmann::json::array();
  std::unique_ptr<db::Database> db;
  std::error_code ec;
  if (std::filesystem::is_regular_file(db_path, ec)) db = db::Database::open(db_path, db::Database::Mode::read_only);
  for (const std::string& k : a.kernels) {
    const TuningSpec spec = interop::resolve_kernel(k, {db_path});
    const std::vector<std::string> sources = db ? db::accepted_sources(*db, spec) : db::accepted_sources_without_db(spec);
    if (a.json) {
      all.push_back({{"kernel", spec.name}, {"source_hash", spec.source_hash()}, {"identity", spec.code_identity()},
                     {"same_code", sources}});
    } else {
      std::printf("%s  source %s  code %s", spec.name.c_str(), spec.source_hash().c_str(), spec.code_identity().c_str());
      if (sources.size() > 1) {
        std::printf("  (same code:");
        for (std::size_t i = 1; i < sources.size(); ++i) std::printf(" %s", sources[i].c_str());
        std::printf(")");
      }
      std::printf("\n");
    }
  }
  if (a.json) std::printf("%s\n", all.dump(2).c_str());
  return 0;
}

}  // namespace autotune::cli
