// The trials table: insert (idempotent on the uniqueness key), find, filter. Schema: docs/database.md.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <type_traits>

#include "db/database.hpp"
#include "db/statement.hpp"

namespace autotune::db {
namespace {

using detail::kNowSql;
using detail::read_column;
using detail::format_samples;
using detail::parse_samples;
using detail::Stmt;


// The trials columns are driven by TrialRow::for_each_field: names, insert and reads in its order.

/// "id, session_id, ...": the columns of TrialRow::for_each_field, in its order; what read_trial reads.
const std::string& trial_columns() {
  static const std::string columns = detail::field_columns<TrialRow>();
  return columns;
}

/// The insert of a trial. Binds: every column of TrialRow::for_each_field but id as ?1.. in its order (created_at
/// defaults to now where it is ""), then the derived throttled. ON CONFLICT DO NOTHING on the uniqueness key only:
/// unlike INSERT OR IGNORE it does not hide NOT NULL or foreign-key violations.
/// online: into online_trials, which has no uniqueness key (a plain insert).
const std::string& insert_trial_sql(bool online) {
  auto insert_into = [](const char* table) {
    std::string columns, values;
    int n = 0;
    const TrialRow names_only;
    TrialRow::for_each_field(names_only, [&](const char* name, const auto&) {
      const std::string column = name;
      if (column == "id") return;
      const std::string p = "?" + std::to_string(++n);
      columns += column + ", ";
      values += (column == "created_at" ? "COALESCE(NULLIF(" + p + ", ''), " + kNowSql + ")" : p) + ", ";
    });
    return std::string("INSERT INTO ") + table + " (" + columns + "throttled) VALUES (" + values + "?" +
           std::to_string(n + 1) + ")";
  };
  static const std::string offline =
      insert_into("trials") +
      " ON CONFLICT (kernel, source_hash, device_id, workload, problem, config_hash) DO NOTHING";
  static const std::string online_sql = insert_into("online_trials");
  return online ? online_sql : offline;
}

void bind_trial(Stmt& q, const TrialRow& t) {
  int i = 0;
  TrialRow::for_each_field(t, [&](const char* name, const auto& v) {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, TrialStatus>)
      q.bind(++i, to_string(v));
    else if constexpr (std::is_same_v<V, std::vector<double>>)
      q.bind(++i, format_samples(v));
    else if constexpr (std::is_same_v<V, std::vector<Metric>>)
      q.bind(++i, metrics_text(v));
    else if (std::strcmp(name, "id") == 0)
      return;
    else if (std::strcmp(name, "session_id") == 0)
      q.bind_id(++i, t.session_id);  // 0 = no session: NULL
    else
      q.bind(++i, v);
  });
  q.bind(++i, t.m.observed.throttled() ? 1 : 0);
}

TrialRow read_trial(const Stmt& s, const std::string& path) {
  TrialRow r;
  int c = 0;
  TrialRow::for_each_field(r, [&](const char*, auto& v) {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, TrialStatus>) {
      const std::string status = s.text(c);
      try {
        v = trial_status_from_string(status);
      } catch (const std::exception&) {
        throw DbError("database " + path + ": trial " + std::to_string(r.id) + " has unknown status '" + status + "'");
      }
    } else if constexpr (std::is_same_v<V, std::vector<double>>) {
      v = parse_samples(s.text(c));
    } else if constexpr (std::is_same_v<V, std::vector<Metric>>) {
      try {
        v = parse_metrics(s.text(c));
      } catch (const std::exception& e) {
        throw DbError("database " + path + ": trial " + std::to_string(r.id) + ": " + e.what());
      }
    } else {
      read_column(s, c, v);  // session_id: NULL reads as 0 (no session)
    }
    ++c;
  });
  return r;
}

}  // namespace

// ---- trials ----

void Database::insert_online_trial(TrialRow& t) {
  Stmt q(statements(), db_, path_, insert_trial_sql(true));
  bind_trial(q, t);
  q.run();
  t.id = sqlite3_last_insert_rowid(db_);
}

bool Database::insert_trial(TrialRow& t) {
  bool inserted = false;
  {
    Stmt q(statements(), db_, path_, insert_trial_sql(false));
    bind_trial(q, t);
    q.run();
    inserted = sqlite3_changes(db_) == 1;
  }
  if (inserted) {
    t.id = sqlite3_last_insert_rowid(db_);
    Stmt q(statements(), db_, path_, "SELECT created_at FROM trials WHERE id = ?1");
    q.bind(1, t.id);
    if (q.step()) t.created_at = q.text(0);
    return true;
  }
  Stmt q(db_, path_,
         "SELECT id FROM trials WHERE kernel = ?1 AND source_hash = ?2 AND device_id = ?3 AND workload = ?4 "
         "AND problem = ?5 AND config_hash = ?6");
  q.bind(1, t.kernel).bind(2, t.source_hash).bind(3, t.device_id).bind(4, t.workload).bind(5, t.problem);
  q.bind(6, t.config_hash);
  if (!q.step()) throw DbError("database " + path_ + ": trial was neither inserted nor found");
  t.id = q.int64(0);
  return false;
}

std::optional<TrialRow> Database::find_trial(const std::string& kernel, const std::string& source_hash,
                                             std::int64_t device_id, const std::string& workload,
                                             const std::string& problem, const std::string& config_hash) const {
  Stmt q(statements(), db_, path_,
         "SELECT " + trial_columns() +
             " FROM trials WHERE kernel = ?1 AND source_hash = ?2 AND device_id = ?3 AND workload = ?4 "
             "AND problem = ?5 AND config_hash = ?6");
  q.bind(1, kernel).bind(2, source_hash).bind(3, device_id).bind(4, workload).bind(5, problem);
  q.bind(6, config_hash);
  if (!q.step()) return std::nullopt;
  return read_trial(q, path_);
}

std::optional<TrialRow> Database::find_trial(const std::string& kernel, const std::vector<std::string>& sources,
                                             std::int64_t device_id, const std::string& workload,
                                             const std::string& problem, const std::string& config_hash) const {
  for (const std::string& source : sources)
    if (auto t = find_trial(kernel, source, device_id, workload, problem, config_hash)) return t;
  return std::nullopt;
}

std::vector<TrialRow> Database::trials(const TrialFilter& f) const {
  std::string sql = "SELECT " + trial_columns() + (f.online ? " FROM online_trials" : " FROM trials");
  std::vector<std::string> where;
  int n = 0;
  auto param = [&](const char* column) { where.push_back(std::string(column) + " = ?" + std::to_string(++n)); };
  if (f.kernel) param("kernel");
  if (f.source_hash) param("source_hash");
  if (!f.source_hashes.empty()) {
    std::string in = "source_hash IN (";
    for (std::size_t k = 0; k < f.source_hashes.size(); ++k) in += (k ? ", ?" : "?") + std::to_string(++n);
    where.push_back(in + ")");
  }
  if (f.device_id) param("device_id");
  if (f.workload) param("workload");
  if (f.problem) param("problem");
  if (f.session_id) param("session_id");
  if (f.ok_only) where.push_back("status = 'ok'");
  for (std::size_t i = 0; i < where.size(); ++i) sql += (i == 0 ? " WHERE " : " AND ") + where[i];
  sql += f.by_time ? " ORDER BY status <> 'ok', median_ns IS NULL, median_ns, id" : " ORDER BY id";
  if (f.limit > 0) sql += " LIMIT ?" + std::to_string(++n);

  Stmt q(db_, path_, sql);
  int i = 0;
  if (f.kernel) q.bind(++i, *f.kernel);
  if (f.source_hash) q.bind(++i, *f.source_hash);
  for (const std::string& h : f.source_hashes) q.bind(++i, h);
  if (f.device_id) q.bind(++i, *f.device_id);
  if (f.workload) q.bind(++i, *f.workload);
  if (f.problem) q.bind(++i, *f.problem);
  if (f.session_id) q.bind(++i, *f.session_id);
  if (f.limit > 0) {
    const auto limit = f.limit > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())
                           ? std::numeric_limits<std::int64_t>::max()
                           : static_cast<std::int64_t>(f.limit);
    q.bind(++i, limit);
  }
  std::vector<TrialRow> out;
  while (q.step()) out.push_back(read_trial(q, path_));
  if (f.source_hashes.size() > 1) {
    // One row per configuration of a cell: the one of the earliest listed source.
    auto rank = [&](const std::string& h) {
      return std::find(f.source_hashes.begin(), f.source_hashes.end(), h) - f.source_hashes.begin();
    };
    std::map<std::string, std::ptrdiff_t> best;  // cell + config -> rank of the source kept
    auto key = [](const TrialRow& t) {
      return std::to_string(t.device_id) + '\x1f' + t.workload + '\x1f' + t.problem + '\x1f' + t.config_hash;
    };
    for (const TrialRow& t : out) {
      auto [it, fresh] = best.emplace(key(t), rank(t.source_hash));
      if (!fresh) it->second = std::min(it->second, rank(t.source_hash));
    }
    out.erase(std::remove_if(out.begin(), out.end(), [&](const TrialRow& t) { return best.at(key(t)) != rank(t.source_hash); }),
              out.end());
  }
  return out;
}

void Database::put_source_identity(const std::string& kernel, const std::string& source_hash,
                                   const std::string& identity) {
  Stmt q(db_, path_,
         std::string("INSERT INTO source_identities (source_hash, kernel, identity, recorded_at) VALUES (?1, ?2, ?3, ") +
             kNowSql + ") ON CONFLICT (source_hash) DO NOTHING");
  q.bind(1, source_hash).bind(2, kernel).bind(3, identity);
  q.run();
}

std::vector<std::string> Database::sources_of_identity(const std::string& kernel, const std::string& identity) const {
  Stmt q(db_, path_, "SELECT source_hash FROM source_identities WHERE kernel = ?1 AND identity = ?2 ORDER BY source_hash");
  q.bind(1, kernel).bind(2, identity);
  std::vector<std::string> out;
  while (q.step()) out.push_back(q.text(0));
  return out;
}

std::optional<std::string> Database::identity_of_source(const std::string& source_hash) const {
  Stmt q(db_, path_, "SELECT identity FROM source_identities WHERE source_hash = ?1");
  q.bind(1, source_hash);
  if (!q.step()) return std::nullopt;
  return q.text(0);
}

std::map<std::string, std::pair<std::string, std::string>> Database::source_identities() const {
  Stmt q(db_, path_, "SELECT source_hash, kernel, identity FROM source_identities");
  std::map<std::string, std::pair<std::string, std::string>> out;
  while (q.step()) out[q.text(0)] = {q.text(1), q.text(2)};
  return out;
}

}  // namespace autotune::db
