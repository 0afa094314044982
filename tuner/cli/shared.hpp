// Small pieces the CLI's sub-commands (and the GPU tests that tune like the CLI) share.
#pragma once
#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>

#include "db/database.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/trial.hpp"
#include "tuner/cuda/runtime.hpp"

namespace autotune::cli {

/// One number through a printf format, e.g. fmt("%.2f s", 1.5) == "1.50 s".
inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// "72.67 us" or "1.234 ms" (format_time_ns).
inline std::string fmt_time(double ns) { return format_time_ns(ns); }

/// Writes (replaces) a file; UsageError when it cannot be written completely.
inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UsageError("cannot write " + path);
  out << text;
  out.close();
  if (!out) throw UsageError("cannot write " + path + " (disk full?)");
}

/// Binary cache over the database's binaries table: what `tune` fills and the launch API reads.
/// Thread-safe (compile threads call it); the Database must outlive it.
class DbBinaryCache : public cuda::BinaryCache {
 public:
  explicit DbBinaryCache(db::Database& db) : db_(db) {}
  std::optional<cuda::CompileResult> get(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto b = db_.binary(key);
    if (!b) return std::nullopt;
    cuda::CompileResult r;
    r.ok = b->ok;
    r.log = b->log;
    r.cubin = b->image;
    r.cached = true;
    return r;
  }
  void put(const std::string& key, const cuda::CompileResult& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    db_.put_binary({key, r.ok, r.log, r.cubin});
  }

 private:
  db::Database& db_;
  std::mutex mu_;
};

}  // namespace autotune::cli
