// SQLite storage of devices, sessions, trials and compiled binaries. Knows no CUDA and no search.
// Schema and migrations: docs/database.md. Thread-safety: one Database per thread (SQLite handles
// concurrent processes through WAL and a busy timeout).
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/trial.hpp"

struct sqlite3;

namespace autotune::db {

namespace detail {
class StatementCache;
}

/// Newest schema version this build knows. A file with a newer version is refused (DbError).
int current_schema_version();

struct DeviceRow {
  std::int64_t id = 0;
  DeviceInfo info;
  double copy_gbps = 0;  // measured device-to-device copy bandwidth, 0 = unknown
};

struct SessionRow {
  std::int64_t id = 0;
  std::string kernel;
  std::string source_hash;
  std::string spec_hash;
  std::string compiler_version;
  std::string strategy;
  std::uint64_t seed = 0;
  std::string workload;  // Workload::key()
  std::string problem;   // ProblemKey::key()
  std::int64_t device_id = 0;
  std::string backend;   // "cuda", "simulation", "synthetic"
  std::string started_at;   // ISO-8601 UTC, set by begin_session
  std::string finished_at;  // empty while running
  std::string status;       // "running", "finished", "interrupted", "failed"
  std::string origin;       // "" = recorded here; "merged from PATH session N" after `autotune merge`
};

struct TrialRow {
  std::int64_t id = 0;
  std::int64_t session_id = 0;
  std::int64_t device_id = 0;
  std::string kernel;
  std::string source_hash;
  std::string workload;
  std::string problem;            // ProblemKey::key()
  double problem_elements = 0;    // ProblemKey::elements()
  std::string config_json;        // Config::to_json()
  std::string config_hash;        // Config::hash()
  Measurement m;
  double gbps = 0;                // bytes_moved / median, 0 for failures
  std::string created_at;
  /// "" for a trial measured with its source_hash; else where `autotune revalidate` carried it forward from
  /// ("revalidated from SOURCE_HASH in session N: ...").
  std::string carried_from;

  /// The one list of the trials table's columns: calls f(column, member) for each column that holds a field, the
  /// row's own ones and, through Measurement::for_each_field and Observation::for_each_field, the measurement's
  /// (flattened: the observation's fields are columns of their own). The column of Observation::method is
  /// "observer". Insert and reads are driven by it (db/trials.cpp); the one column it lacks is `throttled`, which
  /// is derived (Observation::throttled()) and written only. T is TrialRow or const TrialRow.
  template <typename T, typename F>
  static void for_each_field(T& t, F&& f) {
    f("id", t.id);
    f("session_id", t.session_id);
    f("device_id", t.device_id);
    f("kernel", t.kernel);
    f("source_hash", t.source_hash);
    f("workload", t.workload);
    f("problem", t.problem);
    f("problem_elements", t.problem_elements);
    f("config_json", t.config_json);
    f("config_hash", t.config_hash);
    Measurement::for_each_field(t.m, [&f](const char* name, auto& v) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Observation>)
        Observation::for_each_field(
            v, [&f](const char* field, auto& o) { f(std::strcmp(field, "method") == 0 ? "observer" : field, o); });
      else
        f(name, v);
    });
    f("gbps", t.gbps);
    f("created_at", t.created_at);
    f("carried_from", t.carried_from);
  }
};

struct TrialFilter {
  std::optional<std::string> kernel;
  std::optional<std::string> source_hash;
  /// Any of these sources (empty: no such condition), e.g. db::accepted_sources(): where the same configuration of
  /// a cell is recorded under several of them, only the row of the earliest listed one is returned.
  std::vector<std::string> source_hashes;
  std::optional<std::int64_t> device_id;
  std::optional<std::string> workload;
  std::optional<std::string> problem;
  std::optional<std::int64_t> session_id;
  bool ok_only = false;
  /// Order by median_ns ascending (ok rows first) when true, else by id.
  bool by_time = false;
  std::size_t limit = 0;  // 0 = no limit
  /// Read the trials measured online by applications (online_trials, insert_online_trial) instead of the trials
  /// table.
  bool online = false;

  /// The trials of one cell: a kernel source measured on one device for one workload and problem.
  static TrialFilter cell(std::string kernel, std::string source_hash, std::int64_t device_id, std::string workload,
                          std::string problem) {
    TrialFilter f = cell(std::move(kernel), std::vector<std::string>{}, device_id, std::move(workload), std::move(problem));
    f.source_hash = std::move(source_hash);
    return f;
  }
  /// The same over several equivalent sources (the first preferred).
  static TrialFilter cell(std::string kernel, std::vector<std::string> sources, std::int64_t device_id,
                          std::string workload, std::string problem) {
    TrialFilter f;
    f.kernel = std::move(kernel);
    f.source_hashes = std::move(sources);
    f.device_id = device_id;
    f.workload = std::move(workload);
    f.problem = std::move(problem);
    return f;
  }
};

/// One configuration of a final pick (tuner/session/final_pick.hpp; table final_picks, docs/database.md): the
/// candidates of one cell re-timed interleaved at the end of session_id, the winner at rank 0.
struct FinalPickRow {
  std::int64_t id = 0;
  std::int64_t session_id = 0;
  std::int64_t device_id = 0;
  std::string kernel;
  std::string source_hash;
  std::string workload;
  std::string problem;
  std::string config_json;
  std::string config_hash;
  int rank = 0;                    // 0 = the winner, then by paired ratio
  double median_ns = 0;            // median of its interleaved samples
  double ratio = 1;                // median over the rounds of its sample / the winner's
  bool in_tie_set = false;         // not distinguishable from the winner at the measured noise
  double noise = 0;                // the pick's tie threshold (relative), the same on every row of a pick
  std::vector<double> samples_ns;  // its interleaved samples, in round order
  std::string created_at;
};

struct BinaryRow {
  std::string key;       // hash of source + options + compiler version + arch
  bool ok = false;       // false = compile failure (cached too)
  std::string log;
  std::vector<unsigned char> image;  // CUBIN
};

/// A spec stub stored by an import (kernel_specs table): the kernel's parameters and problem sizes as the
/// imported file described them (family "imported"), completed later into a tunable spec.
struct KernelSpecRow {
  std::string name;
  std::string spec_json;
  std::string origin;  // the file it was created from, e.g. "kt-cache cache_h100.json"
  std::string created_at, updated_at;
};

class Database {
 public:
  /// read_only: never writes the file; a file of an older schema version is read through a migrated copy in
  /// memory. snapshot: always that copy (a consistent view however the file changes later; merge inputs).
  /// Both refuse writes through the API (DbError "read-only").
  enum class Mode { read_write, read_only, snapshot };
  /// Opens (and for read_write creates/migrates) the file; ":memory:" for tests. Throws DbError naming the
  /// file and the problem: not a database, corrupt, newer schema, read-only, cannot create.
  static std::unique_ptr<Database> open(const std::string& path, Mode mode = Mode::read_write);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  int schema_version() const;
  const std::string& path() const { return path_; }

  /// Inserts or updates (identity: normalised name, cc, uuid); returns the id.
  std::int64_t upsert_device(const DeviceInfo& d);
  void set_copy_bandwidth(std::int64_t device_id, double gbps);
  std::optional<DeviceRow> device(std::int64_t id) const;
  std::vector<DeviceRow> devices() const;

  /// Fills id and started_at, status "running".
  std::int64_t begin_session(SessionRow& s);
  void finish_session(std::int64_t id, const std::string& status);
  std::optional<SessionRow> session(std::int64_t id) const;
  std::vector<SessionRow> sessions(const std::optional<std::string>& kernel = std::nullopt) const;
  /// Inserts a session row as it is (started_at, finished_at, status and origin kept; id filled), e.g. a
  /// session copied from another database.
  std::int64_t insert_session(SessionRow& s);
  /// The id of a session equal to `s` in everything but id and origin (device_id compared as given), if any.
  std::optional<std::int64_t> find_session(const SessionRow& s) const;

  /// Inserts unless a trial with the same key (kernel, source_hash, device_id, workload, problem,
  /// config_hash) exists; returns true if inserted. Fills t.id.
  bool insert_trial(TrialRow& t);
  /// Inserts a trial measured online by an application's launches (tuner/online/, docs/lookup.md "Online tuning")
  /// into online_trials, kept apart from the trials table: every call adds a row. Fills t.id.
  void insert_online_trial(TrialRow& t);
  std::optional<TrialRow> find_trial(const std::string& kernel, const std::string& source_hash,
                                     std::int64_t device_id, const std::string& workload,
                                     const std::string& problem, const std::string& config_hash) const;
  /// The trial of any of `sources` (the earliest listed where several have one).
  std::optional<TrialRow> find_trial(const std::string& kernel, const std::vector<std::string>& sources,
                                     std::int64_t device_id, const std::string& workload,
                                     const std::string& problem, const std::string& config_hash) const;
  std::vector<TrialRow> trials(const TrialFilter& f) const;

  /// Stores the rows of one final pick (one transaction; created_at and ids filled by the database).
  void insert_final_pick(const std::vector<FinalPickRow>& rows);
  /// The final picks of a kernel and workload (every device and problem), by session then rank; problem "" = all.
  std::vector<FinalPickRow> final_picks(const std::string& kernel, const std::string& workload,
                                        const std::string& problem = "") const;

  std::optional<BinaryRow> binary(const std::string& key) const;
  void put_binary(const BinaryRow& b);
  /// Keys of every cached binary, sorted.
  std::vector<std::string> binary_keys() const;

  /// Records the code identity of a kernel source text (kept when already recorded: the identity of a text never
  /// changes under the same rules).
  void put_source_identity(const std::string& kernel, const std::string& source_hash, const std::string& identity);
  /// The source texts recorded with this identity for this kernel, sorted.
  std::vector<std::string> sources_of_identity(const std::string& kernel, const std::string& identity) const;
  /// The identity recorded for a source text, if any.
  std::optional<std::string> identity_of_source(const std::string& source_hash) const;
  /// Every recorded source text: source_hash -> (kernel, identity).
  std::map<std::string, std::pair<std::string, std::string>> source_identities() const;

  /// Stores (or replaces) the spec stub of kernel `name`.
  void put_kernel_spec(const std::string& name, const std::string& spec_json, const std::string& origin);
  std::optional<KernelSpecRow> kernel_spec(const std::string& name) const;
  /// Names of the stored spec stubs, sorted.
  std::vector<std::string> kernel_spec_names() const;

  /// A write transaction for the lifetime of a scope: BEGIN IMMEDIATE on construction (DbError when it cannot
  /// start), COMMIT by commit() (DbError when it fails, after rolling back), ROLLBACK when the scope ends
  /// without commit(). The rollback never throws: an exception that ends the scope is the one the caller sees,
  /// even when the ROLLBACK fails too. Not copyable; the Database must outlive it.
  class Transaction {
   public:
    explicit Transaction(Database& db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

   private:
    Database& db_;
    bool open_ = true;
  };

  /// Runs fn inside a Transaction: committed when fn returns, rolled back when it throws (fn's exception is
  /// rethrown, also when the rollback fails).
  template <class F>
  void transaction(F&& fn) {
    Transaction t(*this);
    fn();
    t.commit();
  }
  void exec(const std::string& sql);
  /// PRAGMA integrity_check == "ok".
  bool integrity_ok() const;

 private:
  Database() = default;
  /// The prepared statements kept for this connection (made on first use: open() may swap the connection).
  detail::StatementCache& statements() const;

  sqlite3* db_ = nullptr;
  std::string path_;
  bool read_only_ = false;
  mutable std::unique_ptr<detail::StatementCache> stmts_;
};

}  // namespace autotune::db
