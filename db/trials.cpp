// The trials table: insert (idempotent on the uniqueness key), find, filter. Schema: docs/database.md.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>

#include "db/database.hpp"
#include "db/statement.hpp"

namespace autotune::db {
namespace {

using detail::kNowSql;
using detail::Stmt;

/// trials.sample_ns: "12.5,13,12.75" (ns, shortest round-trip text); "" = none kept.
std::string format_samples(const std::vector<double>& ns) {
  std::string out;
  char buf[32];
  for (double v : ns) {
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out += (out.empty() ? "" : ",") + std::string(buf);
  }
  return out;
}
std::vector<double> parse_samples(const std::string& text) {
  std::vector<double> out;
  const char* p = text.c_str();
  while (*p) {
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end == p) break;
    out.push_back(v);
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

TrialRow read_trial(const Stmt& s, const std::string& path) {
  TrialRow r;
  r.id = s.int64(0);
  r.session_id = s.is_null(1) ? 0 : s.int64(1);
  r.device_id = s.int64(2);
  r.kernel = s.text(3);
  r.source_hash = s.text(4);
  r.workload = s.text(5);
  r.problem = s.text(6);
  r.problem_elements = s.real(7);
  r.config_json = s.text(8);
  r.config_hash = s.text(9);
  const std::string status = s.text(10);
  try {
    r.m.status = trial_status_from_string(status);
  } catch (const std::exception&) {
    throw DbError("database " + path + ": trial " + std::to_string(r.id) + " has unknown status '" +
                  status + "'");
  }
  r.m.median_ns = s.real(11);
  r.m.min_ns = s.real(12);
  r.m.spread = s.real(13);
  r.m.samples = s.int32(14);
  r.m.compile_ms = s.real(15);
  r.m.verify_ms = s.real(16);
  r.m.log = s.text(17);
  r.m.protocol = s.text(18);
  r.gbps = s.real(19);
  r.created_at = s.text(20);
  r.m.measured_by = s.text(21);
  Observation& o = r.m.observed;
  o.sm_clock_mhz = s.real(22);
  o.sm_clock_min_mhz = s.real(23);
  o.mem_clock_mhz = s.real(24);
  o.mem_clock_min_mhz = s.real(25);
  o.power_w = s.real(26);
  o.energy_j = s.real(27);
  o.temperature_c = s.real(28);
  o.power_limit_w = s.real(29);
  o.throttle_reasons = static_cast<std::uint64_t>(s.int64(30));
  o.method = s.text(31);
  r.m.sample_ns = parse_samples(s.text(32));
  r.carried_from = s.text(33);
  return r;
}
constexpr const char* kTrialColumns =
    "id, session_id, device_id, kernel, source_hash, workload, problem, problem_elements, config_json, "
    "config_hash, status, median_ns, min_ns, spread, samples, compile_ms, verify_ms, log, protocol, gbps, "
    "created_at, measured_by, sm_clock_mhz, sm_clock_min_mhz, mem_clock_mhz, mem_clock_min_mhz, power_w, energy_j, "
    "temperature_c, power_limit_w, throttle_reasons, observer, sample_ns, carried_from";

}  // namespace

// ---- trials ----

bool Database::insert_trial(TrialRow& t) {
  bool inserted = false;
  {
    // ON CONFLICT DO NOTHING on the uniqueness key only: unlike INSERT OR IGNORE it does not hide
    // NOT NULL or foreign-key violations.
    Stmt q(statements(), db_, path_,
           std::string("INSERT INTO trials (session_id, device_id, kernel, source_hash, workload, problem, "
                       "problem_elements, config_json, config_hash, status, median_ns, min_ns, spread, samples, "
                       "compile_ms, verify_ms, log, protocol, gbps, created_at, measured_by, sm_clock_mhz, "
                       "sm_clock_min_mhz, mem_clock_mhz, mem_clock_min_mhz, power_w, energy_j, temperature_c, "
                       "power_limit_w, throttle_reasons, throttled, observer, sample_ns, carried_from) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
                       "?18, ?19, COALESCE(NULLIF(?20, ''), ") +
               kNowSql +
               "), ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34) ON CONFLICT (kernel, "
               "source_hash, device_id, workload, problem, config_hash) DO NOTHING");
    q.bind_id(1, t.session_id).bind(2, t.device_id).bind(3, t.kernel).bind(4, t.source_hash);
    q.bind(5, t.workload).bind(6, t.problem).bind(7, t.problem_elements).bind(8, t.config_json);
    q.bind(9, t.config_hash).bind(10, to_string(t.m.status)).bind(11, t.m.median_ns).bind(12, t.m.min_ns);
    q.bind(13, t.m.spread).bind(14, t.m.samples).bind(15, t.m.compile_ms).bind(16, t.m.verify_ms);
    q.bind(17, t.m.log).bind(18, t.m.protocol).bind(19, t.gbps).bind(20, t.created_at);
    q.bind(21, t.m.measured_by);
    const Observation& o = t.m.observed;
    q.bind(22, o.sm_clock_mhz).bind(23, o.sm_clock_min_mhz).bind(24, o.mem_clock_mhz).bind(25, o.mem_clock_min_mhz);
    q.bind(26, o.power_w).bind(27, o.energy_j).bind(28, o.temperature_c).bind(29, o.power_limit_w);
    q.bind(30, o.throttle_reasons).bind(31, o.throttled() ? 1 : 0).bind(32, o.method);
    q.bind(33, format_samples(t.m.sample_ns));
    q.bind(34, t.carried_from);
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
         std::string("SELECT ") + kTrialColumns +
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
  std::string sql = std::string("SELECT ") + kTrialColumns + " FROM trials";
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
