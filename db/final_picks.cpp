// The final_picks table (migration 7, docs/database.md): the interleaved re-timing of a cell's leaders at the end
// of a tune, one row per candidate (tuner/session/final_pick.hpp).
#include <cstdio>
#include <cstdlib>

#include "db/database.hpp"
#include "db/statement.hpp"

namespace autotune::db {

using detail::kNowSql;
using detail::Stmt;

void Database::insert_final_pick(const std::vector<FinalPickRow>& rows) {
  if (rows.empty()) return;
  transaction([&] {
    for (const FinalPickRow& r : rows) {
      Stmt q(db_, path_,
             std::string("INSERT INTO final_picks (session_id, device_id, kernel, source_hash, workload, problem, "
                         "config_json, config_hash, rank, median_ns, ratio, in_tie_set, noise, samples_ns, created_at) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ") +
                 kNowSql + ")");
      q.bind(1, r.session_id).bind(2, r.device_id).bind(3, r.kernel).bind(4, r.source_hash).bind(5, r.workload);
      q.bind(6, r.problem).bind(7, r.config_json).bind(8, r.config_hash).bind(9, r.rank).bind(10, r.median_ns);
      q.bind(11, r.ratio).bind(12, r.in_tie_set ? 1 : 0).bind(13, r.noise).bind(14, detail::format_samples(r.samples_ns));
      q.run();
    }
  });
}

std::vector<FinalPickRow> Database::final_picks(const std::string& kernel, const std::string& workload,
                                                const std::string& problem) const {
  Stmt q(db_, path_,
         "SELECT id, session_id, device_id, kernel, source_hash, workload, problem, config_json, config_hash, rank, "
         "median_ns, ratio, in_tie_set, noise, samples_ns, created_at FROM final_picks WHERE kernel = ?1 AND "
         "workload = ?2 AND (?3 = '' OR problem = ?3) ORDER BY session_id, rank, id");
  q.bind(1, kernel).bind(2, workload).bind(3, problem);
  std::vector<FinalPickRow> out;
  while (q.step()) {
    FinalPickRow r;
    r.id = q.int64(0);
    r.session_id = q.int64(1);
    r.device_id = q.int64(2);
    r.kernel = q.text(3);
    r.source_hash = q.text(4);
    r.workload = q.text(5);
    r.problem = q.text(6);
    r.config_json = q.text(7);
    r.config_hash = q.text(8);
    r.rank = q.int32(9);
    r.median_ns = q.real(10);
    r.ratio = q.real(11);
    r.in_tie_set = q.int32(12) != 0;
    r.noise = q.real(13);
    r.samples_ns = detail::parse_samples(q.text(14));
    r.created_at = q.text(15);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace autotune::db
