// Internal to db/: the SQLite error mapping, the prepared-statement wrapper and the samples' text, shared by the
// database's files (database.cpp, trials.cpp, final_picks.cpp, merge.cpp). Not installed; nothing outside db/
// includes it.
#pragma once
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tuner/core/error.hpp"

namespace autotune::db::detail {

/// ISO-8601 UTC with milliseconds, e.g. 2024-05-01T12:34:56.789Z.
constexpr const char* kNowSql = "strftime('%Y-%m-%dT%H:%M:%fZ','now')";

/// A list of samples as stored (trials.sample_ns, final_picks.samples_ns): "12.5,13,12.75" (ns, the shortest text
/// that reads back to the same double); "" = none.
inline std::string format_samples(const std::vector<double>& ns) {
  std::string out;
  char buf[32];
  for (double v : ns) {
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out += (out.empty() ? "" : ",") + std::string(buf);
  }
  return out;
}

/// The samples of format_samples' text; reading stops at the first entry that is not a number.
inline std::vector<double> parse_samples(const std::string& text) {
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

/// How long SQLite's busy handler waits for a lock before returning SQLITE_BUSY.
constexpr int kBusyTimeoutMs = 10000;
/// Extra attempts after the busy handler gave up (only where a retry is safe, see Stmt::step).
constexpr int kBusyRetries = 2;

/// Throws the DbError that describes rc for the database at path; `what` says what was being done.
[[noreturn]] inline void fail(sqlite3* db, const std::string& path, const std::string& what, int rc) {
  const std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      throw DbError(path + " is not an autotune database (file is not SQLite)");
    case SQLITE_CORRUPT:
      throw DbError("database " + path + " is corrupt (" + msg + ")");
    case SQLITE_READONLY:
      throw DbError("database " + path + " is read-only (" + what + ": " + msg + ")");
    case SQLITE_FULL:
      throw DbError("database " + path + ": disk full (" + what + ")");
    case SQLITE_IOERR: {
      // The operating system refused a read or write. SQLite reports a full disk or a file size limit
      // mostly as a failed write (often without errno, e.g. when fallocate failed), so say so.
      const int sys = db ? sqlite3_system_errno(db) : 0;
      const std::string detail = what + ": " + msg + (sys ? std::string(": ") + std::strerror(sys) : std::string());
      if (rc == SQLITE_IOERR_READ || rc == SQLITE_IOERR_SHORT_READ)
        throw DbError("database " + path + ": read error (" + detail + ")");
      throw DbError("database " + path + ": write failed; is the disk full? (" + detail + ")");
    }
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw DbError("database " + path + " is locked by another process (" + what + ": " + msg + ")");
    case SQLITE_CANTOPEN:
      throw DbError("cannot open database " + path + " (" + msg + ")");
    default:
      throw DbError("database " + path + ": " + what + " failed: " + msg);
  }
}

/// Prepared statements of one connection, kept for its lifetime, for the statements a session runs per trial
/// (insert, lookup; binaries): preparing one again for each use cost about as much as running it. A statement
/// that is in use when asked for again (a query inside another's loop, another thread on the same connection)
/// is prepared afresh for that use.
class StatementCache {
 public:
  explicit StatementCache(sqlite3* db) : db_(db) {}
  ~StatementCache() {
    for (auto& [sql, e] : map_) sqlite3_finalize(e.stmt);
  }
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  struct Entry {
    sqlite3_stmt* stmt;
    bool in_use;
  };

  /// The entry of sql's statement, marked in use; nullptr when it is in use already (the caller prepares its own).
  /// The entry stays where it is for the cache's lifetime (a node of the map).
  Entry* take(const std::string& sql, const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(sql);
    if (it == map_.end()) {
      sqlite3_stmt* s = nullptr;
      const int rc =
          sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &s, nullptr);
      if (rc != SQLITE_OK) fail(db_, path, "preparing a statement", rc);
      it = map_.emplace(sql, Entry{s, false}).first;
    }
    if (it->second.in_use) return nullptr;
    it->second.in_use = true;
    return &it->second;
  }
  /// After use: reset, bindings cleared, free for the next take().
  void give_back(Entry* e) {
    sqlite3_reset(e->stmt);
    sqlite3_clear_bindings(e->stmt);
    std::lock_guard<std::mutex> lock(mu_);
    e->in_use = false;
  }

 private:
  sqlite3* db_;
  std::mutex mu_;
  std::unordered_map<std::string, Entry> map_;
};

/// A prepared statement (RAII). Parameters are 1-based, columns 0-based.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& path, const std::string& sql) : db_(db), path_(path) { prepare(sql); }
  /// From the connection's cache (or prepared afresh when the cached one is in use).
  Stmt(StatementCache& cache, sqlite3* db, const std::string& path, const std::string& sql) : db_(db), path_(path) {
    entry_ = cache.take(sql, path);
    if (entry_) {
      cache_ = &cache;
      s_ = entry_->stmt;
    } else {
      prepare(sql);
    }
  }
  ~Stmt() {
    if (cache_)
      cache_->give_back(entry_);
    else
      sqlite3_finalize(s_);
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, std::int64_t v) { return check(sqlite3_bind_int64(s_, i, v)); }
  Stmt& bind(int i, int v) { return check(sqlite3_bind_int64(s_, i, v)); }
  Stmt& bind(int i, std::uint64_t v) { return bind(i, static_cast<std::int64_t>(v)); }
  /// NaN is stored as NULL (SQLite has no NaN) and read back as NaN by real().
  Stmt& bind(int i, double v) { return check(sqlite3_bind_double(s_, i, v)); }
  Stmt& bind(int i, const std::string& v) {
    return check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Stmt& bind(int i, const char* v) { return bind(i, std::string(v)); }
  Stmt& bind_null(int i) { return check(sqlite3_bind_null(s_, i)); }
  /// 0 binds NULL: the id columns use NULL for "none".
  Stmt& bind_id(int i, std::int64_t id) { return id == 0 ? bind_null(i) : bind(i, id); }
  Stmt& bind_blob(int i, const std::vector<unsigned char>& v) {
    static const unsigned char empty = 0;  // a null pointer would bind NULL, not an empty blob
    return check(sqlite3_bind_blob(s_, i, v.empty() ? &empty : v.data(), static_cast<int>(v.size()),
                                   SQLITE_TRANSIENT));
  }

  /// true: a row is available; false: done. A busy database is retried kBusyRetries times after the
  /// busy handler gave up, but only before any row was returned and only where a retry is safe: outside
  /// an explicit transaction, or for COMMIT (which SQLite documents as retryable).
  bool step() {
    for (int attempt = 0;; ++attempt) {
      const int rc = sqlite3_step(s_);
      if (rc == SQLITE_ROW) {
        rows_ = true;
        return true;
      }
      if (rc == SQLITE_DONE) return false;
      const int primary = rc & 0xff;
      if ((primary == SQLITE_BUSY || primary == SQLITE_LOCKED) && attempt < kBusyRetries && !rows_ &&
          retry_safe()) {
        sqlite3_reset(s_);
        std::this_thread::sleep_for(std::chrono::milliseconds(100 * (attempt + 1)));
        continue;
      }
      fail(db_, path_, describe(), rc);
    }
  }
  void run() {
    while (step()) {
    }
  }

  bool is_null(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::int64_t int64(int c) const { return sqlite3_column_int64(s_, c); }
  int int32(int c) const { return static_cast<int>(sqlite3_column_int64(s_, c)); }
  double real(int c) const {
    return is_null(c) ? std::numeric_limits<double>::quiet_NaN() : sqlite3_column_double(s_, c);
  }
  std::string text(int c) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, c))) : std::string();
  }
  std::vector<unsigned char> blob(int c) const {
    const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(s_, c));
    const int n = sqlite3_column_bytes(s_, c);
    return p ? std::vector<unsigned char>(p, p + n) : std::vector<unsigned char>();
  }

 private:
  Stmt& check(int rc) {
    if (rc != SQLITE_OK) fail(db_, path_, "binding a parameter", rc);
    return *this;
  }
  bool retry_safe() const {
    if (sqlite3_get_autocommit(db_)) return true;
    const char* sql = sqlite3_sql(s_);
    return sql && (sqlite3_strnicmp(sql, "COMMIT", 6) == 0 || sqlite3_strnicmp(sql, "END", 3) == 0);
  }
  std::string describe() const {
    const char* sql = sqlite3_sql(s_);
    std::string s = sql ? sql : "";
    const auto start = s.find_first_not_of(" \t\r\n");
    s = start == std::string::npos ? std::string() : s.substr(start);
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    for (char& ch : s)
      if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
    return "'" + s + "'";
  }

  void prepare(const std::string& sql) {
    const int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &s_, nullptr);
    if (rc != SQLITE_OK) fail(db_, path_, "preparing a statement", rc);
  }

  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* s_ = nullptr;
  StatementCache* cache_ = nullptr;         // where s_ goes back to; null: s_ is this object's own
  StatementCache::Entry* entry_ = nullptr;  // s_'s entry there
  bool rows_ = false;
};

/// Reads column c into a record's field by the field's type (the field visitors of DeviceInfo and TrialRow): TEXT,
/// INTEGER (NULL as 0) or REAL (NULL as NaN).
inline void read_column(const Stmt& s, int c, std::string& v) { v = s.text(c); }
inline void read_column(const Stmt& s, int c, int& v) { v = s.int32(c); }
inline void read_column(const Stmt& s, int c, std::int64_t& v) { v = s.int64(c); }
inline void read_column(const Stmt& s, int c, std::uint64_t& v) { v = static_cast<std::uint64_t>(s.int64(c)); }
inline void read_column(const Stmt& s, int c, double& v) { v = s.real(c); }

/// "a, b, c": the columns of a record R whose visitor R::for_each_field names them (DeviceInfo, TrialRow), in its
/// order.
template <typename R>
std::string field_columns() {
  std::string out;
  const R names_only;
  R::for_each_field(names_only,
                    [&](const char* name, const auto&) { out += (out.empty() ? "" : ", ") + std::string(name); });
  return out;
}

/// Runs every statement of sql (may hold several) through Stmt, so busy retries and error messages apply.
inline void exec_all(sqlite3* db, const std::string& path, const std::string& sql) {
  const char* p = sql.c_str();
  const char* end = p + sql.size();
  while (p < end) {
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    const int rc = sqlite3_prepare_v2(db, p, static_cast<int>(end - p), &raw, &tail);
    if (rc != SQLITE_OK) fail(db, path, "preparing a statement", rc);
    if (!raw) break;  // only whitespace or comments left
    const std::string one(p, static_cast<std::size_t>(tail - p));
    sqlite3_finalize(raw);
    Stmt(db, path, one).run();
    p = tail;
  }
}

inline std::int64_t query_int(sqlite3* db, const std::string& path, const std::string& sql) {
  Stmt s(db, path, sql);
  return s.step() ? s.int64(0) : 0;
}

}  // namespace autotune::db::detail
