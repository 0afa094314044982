// The binary cache of compiled kernels over a database's binaries table: what `tune` fills and the launch API
// reads (db::Database::binary / put_binary).
#pragma once
#include <mutex>
#include <optional>
#include <string>

#include "db/database.hpp"
#include "tuner/core/compile.hpp"

namespace autotune::db {

/// A BinaryCache backed by the binaries table of `db`, failures included. Thread-safe (compile threads call
/// it; one mutex serialises them on the connection). The Database must outlive it. Throws DbError as the
/// Database does.
class DbBinaryCache : public BinaryCache {
 public:
  explicit DbBinaryCache(Database& db) : db_(db) {}
  std::optional<CompileResult> get(const std::string& key) override;
  void put(const std::string& key, const CompileResult& r) override;

 private:
  Database& db_;
  std::mutex mu_;
};

}  // namespace autotune::db
