// SQLite storage: validation on open, numbered migrations, prepared statements. Schema: docs/database.md.
#include "db/database.hpp"

#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <thread>
#include <utility>

#include "db/statement.hpp"
#include "tuner/core/error.hpp"

namespace autotune::db {
namespace {

using detail::exec_all;
using detail::fail;
using detail::kBusyTimeoutMs;
using detail::kNowSql;
using detail::query_int;
using detail::read_column;
using detail::Stmt;

namespace fs = std::filesystem;

/// "ATUN" in ASCII: PRAGMA application_id of every autotune database.
constexpr std::int32_t kApplicationId = 0x4154554e;


/// Migration i (0-based) brings a database from schema version i to i + 1. Append only: never edit a
/// script that has been released; a schema change is a new script (docs/database.md).
const char* const kMigrations[] = {
    // 1: initial schema.
    R"sql(
CREATE TABLE devices (
  id                                INTEGER PRIMARY KEY,
  name                              TEXT    NOT NULL,
  normalised_name                   TEXT    NOT NULL,
  cc                                INTEGER NOT NULL,
  sm_count                          INTEGER NOT NULL DEFAULT 0,
  max_threads_per_block             INTEGER NOT NULL DEFAULT 0,
  max_shared_memory_per_block       INTEGER NOT NULL DEFAULT 0,
  max_shared_memory_per_block_optin INTEGER NOT NULL DEFAULT 0,
  warp_size                         INTEGER NOT NULL DEFAULT 0,
  l2_bytes                          INTEGER NOT NULL DEFAULT 0,
  total_memory                      INTEGER NOT NULL DEFAULT 0,
  driver_version                    INTEGER NOT NULL DEFAULT 0,
  uuid                              TEXT    NOT NULL DEFAULT '',
  clock_khz                         INTEGER NOT NULL DEFAULT 0,
  memory_clock_khz                  INTEGER NOT NULL DEFAULT 0,
  memory_bus_width                  INTEGER NOT NULL DEFAULT 0,
  copy_gbps                         REAL    NOT NULL DEFAULT 0,
  first_seen_at                     TEXT    NOT NULL,
  last_seen_at                      TEXT    NOT NULL,
  UNIQUE (normalised_name, cc, uuid)
);

CREATE TABLE sessions (
  id               INTEGER PRIMARY KEY,
  kernel           TEXT    NOT NULL,
  source_hash      TEXT    NOT NULL DEFAULT '',
  spec_hash        TEXT    NOT NULL DEFAULT '',
  compiler_version TEXT    NOT NULL DEFAULT '',
  strategy         TEXT    NOT NULL DEFAULT '',
  seed             INTEGER NOT NULL DEFAULT 0,
  workload         TEXT    NOT NULL DEFAULT '',
  problem          TEXT    NOT NULL DEFAULT '',
  device_id        INTEGER REFERENCES devices(id),
  backend          TEXT    NOT NULL DEFAULT '',
  started_at       TEXT    NOT NULL,
  finished_at      TEXT,
  status           TEXT    NOT NULL DEFAULT 'running'
);
CREATE INDEX sessions_by_kernel ON sessions(kernel);

CREATE TABLE trials (
  id               INTEGER PRIMARY KEY,
  session_id       INTEGER REFERENCES sessions(id),
  device_id        INTEGER NOT NULL REFERENCES devices(id),
  kernel           TEXT    NOT NULL,
  source_hash      TEXT    NOT NULL,
  workload         TEXT    NOT NULL,
  problem          TEXT    NOT NULL,
  problem_elements REAL    NOT NULL DEFAULT 0,
  config_json      TEXT    NOT NULL,
  config_hash      TEXT    NOT NULL,
  status           TEXT    NOT NULL,
  median_ns        REAL,
  min_ns           REAL,
  spread           REAL,
  samples          INTEGER NOT NULL DEFAULT 0,
  compile_ms       REAL,
  verify_ms        REAL,
  log              TEXT    NOT NULL DEFAULT '',
  protocol         TEXT    NOT NULL DEFAULT '',
  gbps             REAL,
  created_at       TEXT    NOT NULL,
  UNIQUE (kernel, source_hash, device_id, workload, problem, config_hash)
);
CREATE INDEX trials_by_lookup ON trials(kernel, workload, device_id, problem);
CREATE INDEX trials_by_session ON trials(session_id);

CREATE TABLE binaries (
  key        TEXT    PRIMARY KEY,
  ok         INTEGER NOT NULL,
  log        TEXT    NOT NULL DEFAULT '',
  image      BLOB    NOT NULL DEFAULT x'',
  created_at TEXT    NOT NULL
);
)sql",
    // 2: provenance. trials.measured_by: where a trial was measured when that is not this process's one GPU
    // (an MPI rank: "host=node3 rank=2 gpu=1", or the file a merged trial came from); sessions.origin: where a
    // session was recorded (empty: here; "merged from PATH session N" after `autotune merge`).
    R"sql(
ALTER TABLE trials ADD COLUMN measured_by TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN origin TEXT NOT NULL DEFAULT '';
)sql",
    // 3: imports that lose nothing. trials.sample_ns: the individual timings (ns, comma-separated) where a
    // source keeps them (Kernel Tuner's "times"); kernel_specs: spec stubs (JSON) of kernels that an import
    // created from what the file holds, so that the kernel is addressable by name.
    R"sql(
ALTER TABLE trials ADD COLUMN sample_ns TEXT NOT NULL DEFAULT '';
CREATE TABLE kernel_specs (
  name       TEXT PRIMARY KEY,
  spec_json  TEXT NOT NULL,
  origin     TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
)sql",
    // 4: observers (NVML): clocks, power, energy, temperature and throttle reasons of each measured trial
    // (NULL where not observed); throttled = throttle_reasons has a power, thermal or slowdown bit; observer
    // says how the values were taken ('' = not observed). Self-contained, so it can be renumbered.
    R"sql(
ALTER TABLE trials ADD COLUMN sm_clock_mhz REAL;
ALTER TABLE trials ADD COLUMN sm_clock_min_mhz REAL;
ALTER TABLE trials ADD COLUMN mem_clock_mhz REAL;
ALTER TABLE trials ADD COLUMN mem_clock_min_mhz REAL;
ALTER TABLE trials ADD COLUMN power_w REAL;
ALTER TABLE trials ADD COLUMN energy_j REAL;
ALTER TABLE trials ADD COLUMN temperature_c REAL;
ALTER TABLE trials ADD COLUMN power_limit_w REAL;
ALTER TABLE trials ADD COLUMN throttle_reasons INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN throttled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN observer TEXT NOT NULL DEFAULT '';
)sql",
    // 5: kernel identities (docs/database.md "What invalidates trials"). source_identities: the code identity
    // (tuner/core/identity.hpp) of every kernel source text a session measured, so that trials of an older
    // text with the same code keep counting; trials.carried_from: "" for a measured trial, else where a trial
    // was carried forward from by `autotune revalidate` ("revalidated from SOURCE_HASH ...").
    R"sql(
CREATE TABLE source_identities (
  source_hash TEXT PRIMARY KEY,
  kernel      TEXT NOT NULL,
  identity    TEXT NOT NULL,
  recorded_at TEXT NOT NULL
);
CREATE INDEX source_identities_by_identity ON source_identities(kernel, identity);
ALTER TABLE trials ADD COLUMN carried_from TEXT NOT NULL DEFAULT '';
)sql",
    // 6: observers' named values (Observation::metrics: hardware counters and the like, docs/observers.md) as
    // one JSON array per trial, [{"name", "value", "unit"}, ...], '' where none was taken. A column rather than a
    // table of its own: the set is open, but a trial's metrics are read and written with the trial, always whole
    // (one field of the one field list, no second query per row); SQL still reaches each value through json_each.
    R"sql(
ALTER TABLE trials ADD COLUMN metrics TEXT NOT NULL DEFAULT '';
)sql",
    // 7: final picks (tuner/session/final_pick.hpp, docs/performance.md "Final pick"): the leaders of a cell
    // re-timed interleaved at the end of a tune, one row per candidate, the winner at rank 0, with its tie set.
    R"sql(
CREATE TABLE final_picks (
  id          INTEGER PRIMARY KEY,
  session_id  INTEGER NOT NULL,
  device_id   INTEGER NOT NULL,
  kernel      TEXT    NOT NULL,
  source_hash TEXT    NOT NULL,
  workload    TEXT    NOT NULL,
  problem     TEXT    NOT NULL,
  config_json TEXT    NOT NULL,
  config_hash TEXT    NOT NULL,
  rank        INTEGER NOT NULL,
  median_ns   REAL    NOT NULL,
  ratio       REAL    NOT NULL,
  in_tie_set  INTEGER NOT NULL,
  noise       REAL    NOT NULL,
  samples_ns  TEXT    NOT NULL DEFAULT '',
  created_at  TEXT    NOT NULL
);
CREATE INDEX final_picks_by_cell ON final_picks(kernel, workload, problem, device_id, session_id);
)sql",
    // 8: trials measured online by an application's own launches (tuner/online/, docs/lookup.md "Online tuning"): the
    // trials columns, kept apart so that they neither stand for nor block an offline trial of the same configuration
    // (no uniqueness key: every online session keeps its rows), and served only where a cell has no offline row.
    R"sql(
CREATE TABLE online_trials (
  id               INTEGER PRIMARY KEY,
  session_id       INTEGER REFERENCES sessions(id),
  device_id        INTEGER NOT NULL REFERENCES devices(id),
  kernel           TEXT    NOT NULL,
  source_hash      TEXT    NOT NULL,
  workload         TEXT    NOT NULL,
  problem          TEXT    NOT NULL,
  problem_elements REAL    NOT NULL DEFAULT 0,
  config_json      TEXT    NOT NULL,
  config_hash      TEXT    NOT NULL,
  status           TEXT    NOT NULL,
  median_ns        REAL,
  min_ns           REAL,
  spread           REAL,
  samples          INTEGER NOT NULL DEFAULT 0,
  compile_ms       REAL,
  verify_ms        REAL,
  log              TEXT    NOT NULL DEFAULT '',
  protocol         TEXT    NOT NULL DEFAULT '',
  gbps             REAL,
  created_at       TEXT    NOT NULL,
  measured_by      TEXT    NOT NULL DEFAULT '',
  sample_ns        TEXT    NOT NULL DEFAULT '',
  sm_clock_mhz     REAL,
  sm_clock_min_mhz REAL,
  mem_clock_mhz    REAL,
  mem_clock_min_mhz REAL,
  power_w          REAL,
  energy_j         REAL,
  temperature_c    REAL,
  power_limit_w    REAL,
  throttle_reasons INTEGER NOT NULL DEFAULT 0,
  throttled        INTEGER NOT NULL DEFAULT 0,
  observer         TEXT    NOT NULL DEFAULT '',
  carried_from     TEXT    NOT NULL DEFAULT '',
  metrics          TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX online_trials_by_lookup ON online_trials(kernel, workload, device_id, problem);
)sql",
};

constexpr int kSchemaVersion = static_cast<int>(sizeof(kMigrations) / sizeof(kMigrations[0]));


/// Reads the first bytes of an existing file; throws DbError unless it is empty or starts with the
/// SQLite header. Never writes.
void check_sqlite_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DbError("cannot read database " + path + " (permission denied?)");
  char header[16] = {};
  in.read(header, sizeof header);
  const std::streamsize n = in.gcount();
  if (n == 0) return;  // an empty file is a fresh database for SQLite
  static const char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                  'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  if (n < static_cast<std::streamsize>(sizeof header) || std::memcmp(header, kMagic, sizeof header) != 0)
    throw DbError(path + " is not an autotune database (file is not SQLite)");
}

// The columns of DeviceInfo's fields are named after them (DeviceInfo::for_each_field, in its order).
/// "id, <the fields>, copy_gbps": what read_device reads.
const std::string& device_columns() {
  static const std::string columns = "id, " + detail::field_columns<DeviceInfo>() + ", copy_gbps";
  return columns;
}

DeviceRow read_device(const Stmt& s) {
  DeviceRow r;
  r.id = s.int64(0);
  int c = 1;
  DeviceInfo::for_each_field(r.info, [&](const char*, auto& v) { read_column(s, c++, v); });
  r.copy_gbps = s.real(c);
  return r;
}

/// The upsert of a device: identity (normalised_name, cc, uuid); the other fields and last_seen_at follow the
/// newest report. Binds: the fields as ?1.. in for_each_field order, then normalised_name.
const std::string& upsert_device_sql() {
  static const std::string sql = [] {
    std::string values, updates;
    int n = 0;
    const DeviceInfo names_only;
    DeviceInfo::for_each_field(names_only, [&](const char* name, const auto&) {
      values += "?" + std::to_string(++n) + ", ";
      const std::string f = name;
      if (f != "cc" && f != "uuid") updates += f + " = excluded." + f + ", ";
    });
    return "INSERT INTO devices (" + detail::field_columns<DeviceInfo>() +
           ", normalised_name, first_seen_at, last_seen_at) " + "VALUES (" + values + "?" + std::to_string(n + 1) +
           ", " + kNowSql + ", " + kNowSql + ") ON CONFLICT (normalised_name, cc, uuid) DO UPDATE SET " + updates +
           "last_seen_at = excluded.last_seen_at";
  }();
  return sql;
}

SessionRow read_session(const Stmt& s) {
  SessionRow r;
  r.id = s.int64(0);
  r.kernel = s.text(1);
  r.source_hash = s.text(2);
  r.spec_hash = s.text(3);
  r.compiler_version = s.text(4);
  r.strategy = s.text(5);
  r.seed = static_cast<std::uint64_t>(s.int64(6));
  r.workload = s.text(7);
  r.problem = s.text(8);
  r.device_id = s.is_null(9) ? 0 : s.int64(9);
  r.backend = s.text(10);
  r.started_at = s.text(11);
  r.finished_at = s.text(12);
  r.status = s.text(13);
  r.origin = s.text(14);
  return r;
}
constexpr const char* kSessionColumns =
    "id, kernel, source_hash, spec_hash, compiler_version, strategy, seed, workload, problem, device_id, "
    "backend, started_at, finished_at, status, origin";

/// Parameters 1-10: kernel, source_hash, spec_hash, compiler_version, strategy, seed, workload, problem,
/// device_id, backend (the columns that say what a session was).
void bind_session_identity(Stmt& q, const SessionRow& s) {
  q.bind(1, s.kernel).bind(2, s.source_hash).bind(3, s.spec_hash).bind(4, s.compiler_version);
  q.bind(5, s.strategy).bind(6, s.seed).bind(7, s.workload).bind(8, s.problem).bind_id(9, s.device_id);
  q.bind(10, s.backend);
}

bool valid_final_status(const std::string& s) {
  return s == "finished" || s == "interrupted" || s == "failed" || s == "running";
}

/// Checks that need no SQLite connection: nothing is created or written before validation succeeds.
void check_file(const std::string& path, bool ro) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  const bool exists = fs::exists(st);
  if (exists && !fs::is_regular_file(st))
    throw DbError(path + " is not an autotune database (not a regular file)");
  if (!exists && ro) throw DbError("database " + path + " does not exist (read-only mode never creates it)");
  if (exists) check_sqlite_header(path);
}

/// Opens the connection into `handle` (which then owns it, also when this throws), with extended result
/// codes, the busy timeout and foreign keys.
void connect(const std::string& path, bool ro, sqlite3*& handle) {
  const int flags = ro ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const int rc = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = handle ? sqlite3_errmsg(handle) : sqlite3_errstr(rc);
    throw DbError((ro ? "cannot open database " : "cannot open or create database ") + path + " (" + msg + ")");
  }
  sqlite3_extended_result_codes(handle, 1);
  sqlite3_busy_timeout(handle, kBusyTimeoutMs);
  exec_all(handle, path, "PRAGMA foreign_keys = ON");  // per connection, writes nothing
}

/// What a file says it is: application id, schema version and how many schema objects it has.
struct FileIdentity {
  std::int32_t app_id = 0;
  int version = 0;
  std::int64_t objects = 0;
  bool fresh() const { return app_id == 0 && version == 0 && objects == 0; }
};

/// Identifies the file (reads only). One statement, so one snapshot: read one by one, the three values
/// could straddle another process's commit of the initial migration, and a file it just created would
/// look like another application's database (found by tests/cpu/test_concurrent_writers.cpp).
FileIdentity read_identity(sqlite3* db, const std::string& p) {
  FileIdentity f;
  Stmt id(db, p,
          "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM "
          "pragma_user_version), (SELECT count(*) FROM sqlite_master)");
  if (id.step()) {
    f.app_id = static_cast<std::int32_t>(id.int64(0));
    f.version = id.int32(1);
    f.objects = id.int64(2);
  }
  return f;
}

/// Throws DbError for another application's file, a newer schema, or a file that fails quick_check.
void validate(sqlite3* db, const std::string& path, const FileIdentity& f) {
  if (f.app_id != kApplicationId && !f.fresh())
    throw DbError(path + " is not an autotune database (SQLite database of another application)");
  if (f.version > kSchemaVersion)
    throw DbError("database " + path + " has schema version " + std::to_string(f.version) +
                  ", newer than this build supports (" + std::to_string(kSchemaVersion) + ")");
  if (f.fresh()) return;
  Stmt check(db, path, "PRAGMA quick_check");
  std::string first;
  int rows = 0;
  while (check.step()) {
    if (rows++ == 0) first = check.text(0);
  }
  if (rows != 1 || first != "ok")
    throw DbError("database " + path + " is corrupt (quick_check: " + first +
                  (rows > 1 ? " and " + std::to_string(rows - 1) + " more problems" : "") + ")");
}

/// Replaces the connection in `handle` by a copy of its file (WAL included) in memory, made through SQLite's
/// backup API and migrated from `version` to the current schema; writes to it fail as they would on a
/// read-only file.
void swap_for_memory_copy(sqlite3*& handle, const std::string& path, int version) {
  sqlite3* mem = nullptr;
  int brc = sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE, nullptr);
  sqlite3_backup* b = brc == SQLITE_OK ? sqlite3_backup_init(mem, "main", handle, "main") : nullptr;
  if (b) {
    brc = sqlite3_backup_step(b, -1);
    sqlite3_backup_finish(b);
    if (brc == SQLITE_DONE) brc = SQLITE_OK;
  } else if (brc == SQLITE_OK) {
    brc = sqlite3_errcode(mem);
  }
  if (brc != SQLITE_OK) {
    const std::string msg = mem ? sqlite3_errmsg(mem) : sqlite3_errstr(brc);
    sqlite3_close_v2(mem);
    throw DbError("database " + path + ": copying it into memory failed (" + msg + ")");
  }
  sqlite3_close_v2(handle);
  handle = mem;
  exec_all(mem, path, "PRAGMA foreign_keys = ON");
  for (int i = version; i < kSchemaVersion; ++i) exec_all(mem, path, kMigrations[i]);
  exec_all(mem, path, "PRAGMA user_version = " + std::to_string(kSchemaVersion));
  exec_all(mem, path, "PRAGMA query_only = ON");  // writes fail as they would on the read-only file
}

/// Throws DbError unless the file can be written; then WAL mode for a file.
void prepare_writes(sqlite3* db, const std::string& path, bool memory) {
  if (sqlite3_db_readonly(db, "main") == 1)
    throw DbError("database " + path + " is read-only (no write permission); open it in read-only mode");
  if (memory) return;
  // WAL lets readers run while one writer commits; NORMAL sync is durable across application crashes
  // in WAL mode (docs/database.md). If WAL is unavailable (e.g. network file system) SQLite keeps
  // its rollback journal, which is correct, only less concurrent.
  exec_all(db, path, "PRAGMA journal_mode = WAL");
  exec_all(db, path, "PRAGMA synchronous = NORMAL");
}

/// Runs the missing migrations; call inside a write transaction. Another process may be migrating
/// concurrently: the version is read again here, under the write lock.
void migrate(sqlite3* db, const std::string& path) {
  const int v = static_cast<int>(query_int(db, path, "PRAGMA user_version"));
  if (v > kSchemaVersion)
    throw DbError("database " + path + " has schema version " + std::to_string(v) +
                  ", newer than this build supports (" + std::to_string(kSchemaVersion) + ")");
  for (int i = v; i < kSchemaVersion; ++i) exec_all(db, path, kMigrations[i]);
  exec_all(db, path, "PRAGMA application_id = " + std::to_string(kApplicationId));
  exec_all(db, path, "PRAGMA user_version = " + std::to_string(kSchemaVersion));
}

}  // namespace

int current_schema_version() { return kSchemaVersion; }

std::unique_ptr<Database> Database::open(const std::string& path, Mode mode) {
  if (path.empty()) throw DbError("database path is empty");
  const bool memory = path == ":memory:";
  const bool ro = mode != Mode::read_write;  // read_only and snapshot never write the file
  if (!memory) check_file(path, ro);

  std::unique_ptr<Database> self(new Database());
  self->path_ = path;
  self->read_only_ = ro;
  connect(path, ro, self->db_);
  const FileIdentity f = read_identity(self->db_, path);
  validate(self->db_, path, f);
  if (ro && f.fresh())
    throw DbError("database " + path + " has no autotune schema; open it read-write once to create it");
  // An older file opened read-only is read through a migrated copy in memory (the file stays as it is), like a
  // snapshot; version 0 with tables of ours is a half-made file that only a read-write open may repair.
  if (mode == Mode::snapshot || (ro && f.version >= 1 && f.version < kSchemaVersion)) {
    swap_for_memory_copy(self->db_, path, f.version);
    return self;
  }
  if (ro) {
    if (f.version < kSchemaVersion)
      throw DbError("database " + path + " has schema version " + std::to_string(f.version) +
                    ", older than this build (" + std::to_string(kSchemaVersion) +
                    "); open it read-write once to migrate it");
    return self;
  }
  prepare_writes(self->db_, path, memory);
  if (f.version < kSchemaVersion) self->transaction([&] { migrate(self->db_, path); });
  return self;
}

Database::~Database() {
  stmts_.reset();  // finalized before the connection closes
  sqlite3_close_v2(db_);
}

detail::StatementCache& Database::statements() const {
  if (!stmts_) stmts_ = std::make_unique<detail::StatementCache>(db_);
  return *stmts_;
}

int Database::schema_version() const {
  return static_cast<int>(query_int(db_, path_, "PRAGMA user_version"));
}

void Database::exec(const std::string& sql) {
  try {
    exec_all(db_, path_, sql);
  } catch (const DbError&) {
    // A failed COMMIT leaves the transaction open; close it so the connection stays usable.
    if (sql == "COMMIT" && !sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

Database::Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Database::Transaction::~Transaction() {
  // Quietly: the exception that ended the scope is the one to report. SQLite may have rolled back already
  // (e.g. after SQLITE_FULL).
  if (open_ && !sqlite3_get_autocommit(db_.db_)) sqlite3_exec(db_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Database::Transaction::commit() {
  open_ = false;  // a failed COMMIT has rolled back (exec)
  db_.exec("COMMIT");
}

bool Database::integrity_ok() const {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db_, "PRAGMA integrity_check", -1, &s, nullptr);
  if (rc != SQLITE_OK) {
    if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) return false;
    fail(db_, path_, "integrity check", rc);
  }
  int rows = 0;
  bool ok = false;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    ok = rows++ == 0 && t && std::strcmp(t, "ok") == 0;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) {
    if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) return false;
    fail(db_, path_, "integrity check", rc);
  }
  return ok && rows == 1;
}

// ---- devices ----

std::int64_t Database::upsert_device(const DeviceInfo& d) {
  const std::string norm = d.normalised_name();
  {
    Stmt s(db_, path_, upsert_device_sql());
    int i = 0;
    DeviceInfo::for_each_field(d, [&](const char*, const auto& v) { s.bind(++i, v); });
    s.bind(i + 1, norm);
    s.run();
  }
  Stmt q(db_, path_, "SELECT id FROM devices WHERE normalised_name = ?1 AND cc = ?2 AND uuid = ?3");
  q.bind(1, norm).bind(2, d.cc).bind(3, d.uuid);
  if (!q.step()) throw DbError("database " + path_ + ": device '" + d.name + "' vanished after upsert");
  return q.int64(0);
}

void Database::set_copy_bandwidth(std::int64_t device_id, double gbps) {
  Stmt s(db_, path_, "UPDATE devices SET copy_gbps = ?1 WHERE id = ?2");
  s.bind(1, gbps).bind(2, device_id).run();
  if (sqlite3_changes(db_) == 0)
    throw DbError("database " + path_ + ": no device with id " + std::to_string(device_id));
}

std::optional<DeviceRow> Database::device(std::int64_t id) const {
  Stmt s(db_, path_, "SELECT " + device_columns() + " FROM devices WHERE id = ?1");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_device(s);
}

std::vector<DeviceRow> Database::devices() const {
  Stmt s(db_, path_, "SELECT " + device_columns() + " FROM devices ORDER BY id");
  std::vector<DeviceRow> out;
  while (s.step()) out.push_back(read_device(s));
  return out;
}

// ---- sessions ----

std::int64_t Database::begin_session(SessionRow& s) {
  {
    Stmt q(db_, path_,
           std::string("INSERT INTO sessions (kernel, source_hash, spec_hash, compiler_version, strategy, seed, "
                       "workload, problem, device_id, backend, started_at, status, origin) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ") +
               kNowSql + ", 'running', ?11)");
    bind_session_identity(q, s);
    q.bind(11, s.origin);
    q.run();
  }
  s.id = sqlite3_last_insert_rowid(db_);
  Stmt q(db_, path_, "SELECT started_at FROM sessions WHERE id = ?1");
  q.bind(1, s.id);
  if (q.step()) s.started_at = q.text(0);
  s.finished_at.clear();
  s.status = "running";
  return s.id;
}

void Database::finish_session(std::int64_t id, const std::string& status) {
  if (!valid_final_status(status))
    throw DbError("database " + path_ + ": unknown session status '" + status +
                  "' (expected finished, interrupted, failed or running)");
  Stmt q(db_, path_,
         std::string("UPDATE sessions SET status = ?1, finished_at = CASE WHEN ?1 = 'running' THEN NULL ELSE ") +
             kNowSql + " END WHERE id = ?2");
  q.bind(1, status).bind(2, id).run();
  if (sqlite3_changes(db_) == 0)
    throw DbError("database " + path_ + ": no session with id " + std::to_string(id));
}

std::optional<SessionRow> Database::session(std::int64_t id) const {
  Stmt s(db_, path_, std::string("SELECT ") + kSessionColumns + " FROM sessions WHERE id = ?1");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_session(s);
}

std::vector<SessionRow> Database::sessions(const std::optional<std::string>& kernel) const {
  std::string sql = std::string("SELECT ") + kSessionColumns + " FROM sessions";
  if (kernel) sql += " WHERE kernel = ?1";
  sql += " ORDER BY id";
  Stmt s(db_, path_, sql);
  if (kernel) s.bind(1, *kernel);
  std::vector<SessionRow> out;
  while (s.step()) out.push_back(read_session(s));
  return out;
}

std::int64_t Database::insert_session(SessionRow& s) {
  Stmt q(db_, path_,
         "INSERT INTO sessions (kernel, source_hash, spec_hash, compiler_version, strategy, seed, workload, problem, "
         "device_id, backend, started_at, finished_at, status, origin) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, NULLIF(?12, ''), ?13, ?14)");
  bind_session_identity(q, s);
  q.bind(11, s.started_at).bind(12, s.finished_at).bind(13, s.status).bind(14, s.origin);
  q.run();
  s.id = sqlite3_last_insert_rowid(db_);
  return s.id;
}

std::optional<std::int64_t> Database::find_session(const SessionRow& s) const {
  Stmt q(db_, path_,
         "SELECT id FROM sessions WHERE kernel = ?1 AND source_hash = ?2 AND spec_hash = ?3 AND compiler_version = ?4 "
         "AND strategy = ?5 AND seed = ?6 AND workload = ?7 AND problem = ?8 AND device_id IS ?9 AND backend = ?10 "
         "AND started_at = ?11 ORDER BY id LIMIT 1");
  bind_session_identity(q, s);
  q.bind(11, s.started_at);
  if (!q.step()) return std::nullopt;
  return q.int64(0);
}

// ---- binaries ----

std::optional<BinaryRow> Database::binary(const std::string& key) const {
  Stmt q(statements(), db_, path_, "SELECT key, ok, log, image FROM binaries WHERE key = ?1");
  q.bind(1, key);
  if (!q.step()) return std::nullopt;
  BinaryRow b;
  b.key = q.text(0);
  b.ok = q.int64(1) != 0;
  b.log = q.text(2);
  b.image = q.blob(3);
  return b;
}

void Database::put_binary(const BinaryRow& b) {
  Stmt q(statements(), db_, path_,
         std::string("INSERT INTO binaries (key, ok, log, image, created_at) VALUES (?1, ?2, ?3, ?4, ") + kNowSql +
             ") ON CONFLICT (key) DO UPDATE SET ok = excluded.ok, log = excluded.log, image = excluded.image, "
             "created_at = excluded.created_at");
  q.bind(1, b.key).bind(2, b.ok ? 1 : 0).bind(3, b.log).bind_blob(4, b.image);
  q.run();
}

std::vector<std::string> Database::binary_keys() const {
  Stmt q(db_, path_, "SELECT key FROM binaries ORDER BY key");
  std::vector<std::string> out;
  while (q.step()) out.push_back(q.text(0));
  return out;
}

// ---- kernel specs ----

void Database::put_kernel_spec(const std::string& name, const std::string& spec_json, const std::string& origin) {
  Stmt q(
      db_, path_,
      std::string("INSERT INTO kernel_specs (name, spec_json, origin, created_at, updated_at) VALUES (?1, ?2, ?3, ") +
          kNowSql + ", " + kNowSql +
          ") ON CONFLICT (name) DO UPDATE SET spec_json = excluded.spec_json, origin = excluded.origin, "
          "updated_at = excluded.updated_at");
  q.bind(1, name).bind(2, spec_json).bind(3, origin);
  q.run();
}

std::optional<KernelSpecRow> Database::kernel_spec(const std::string& name) const {
  Stmt q(db_, path_, "SELECT name, spec_json, origin, created_at, updated_at FROM kernel_specs WHERE name = ?1");
  q.bind(1, name);
  if (!q.step()) return std::nullopt;
  return KernelSpecRow{q.text(0), q.text(1), q.text(2), q.text(3), q.text(4)};
}

std::vector<std::string> Database::kernel_spec_names() const {
  Stmt q(db_, path_, "SELECT name FROM kernel_specs ORDER BY name");
  std::vector<std::string> out;
  while (q.step()) out.push_back(q.text(0));
  return out;
}

}  // namespace autotune::db
