// The binary cache of compiled kernels over a database's binaries table: what `tune` fills and the launch API
// reads (db::Database::binary / put_binary).
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "db/database.hpp"
#include "tuner/core/compile.hpp"

namespace autotune::db {

/// A BinaryCache backed by the binaries table of `db`, failures included. Thread-safe: compile threads and the
/// thread that takes the binaries call it. The Database must outlive it.
///
/// Writes::now: put() writes at once, in the caller's thread (the connection may be shared with the caller's
/// other work). Writes::in_background, for a connection of its own that no other thread uses: put() only queues,
/// and a writer thread stores what is queued, each round in one transaction, so that the thread measuring on the
/// GPU never waits for SQLite (a binary in a transaction of its own cost that thread about 0.3 ms, longer while
/// the session's connection was writing). get() answers from the queue first. A failed write is thrown (DbError,
/// as the Database throws it) by the next put(), get() or flush(); the destructor writes what is still queued
/// and, if that fails, says so on stderr (a cache loses only time).
class DbBinaryCache : public BinaryCache {
 public:
  enum class Writes { now, in_background };
  explicit DbBinaryCache(Database& db, Writes writes = Writes::now);
  ~DbBinaryCache() override;
  DbBinaryCache(const DbBinaryCache&) = delete;
  DbBinaryCache& operator=(const DbBinaryCache&) = delete;

  std::optional<CompileResult> get(const std::string& key) override;
  void put(const std::string& key, const CompileResult& r) override;
  /// Returns when everything put so far is in the database (at once for Writes::now).
  void flush();
  /// Binaries stored so far (for tests and statistics).
  std::size_t stored() const;

 private:
  struct Pending {
    CompileResult result;
    std::uint64_t put = 0;  // which put() queued it: a key put again while its round is written stays queued
  };

  void run();
  void throw_failure_locked();
  /// The queued result of key, marked cached (mu_ held); nullopt when none is queued.
  std::optional<CompileResult> queued_locked(const std::string& key) const;

  Database& db_;
  mutable std::mutex mu_;                                   // the queue and counters
  std::mutex db_mu_;                                        // the connection: the writer's transaction, get()'s lookups
  std::condition_variable work_cv_;                         // something queued, or stopping
  std::condition_variable done_cv_;                         // a round was written
  std::deque<std::string> order_;                           // keys in the order queued
  std::unordered_map<std::string, Pending> pending_;        // queued, not yet written
  std::uint64_t puts_ = 0;                                  // put() calls so far
  std::size_t writing_ = 0;                                 // binaries in the round being written
  std::size_t stored_ = 0;
  std::exception_ptr failure_;
  bool stopping_ = false;
  std::thread writer_;  // Writes::in_background only
};

}  // namespace autotune::db
