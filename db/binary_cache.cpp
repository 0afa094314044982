#include "db/binary_cache.hpp"

namespace autotune::db {

std::optional<CompileResult> DbBinaryCache::get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto b = db_.binary(key);
  if (!b) return std::nullopt;
  CompileResult r;
  r.ok = b->ok;
  r.log = b->log;
  r.cubin = b->image;
  r.cached = true;
  return r;
}

void DbBinaryCache::put(const std::string& key, const CompileResult& r) {
  std::lock_guard<std::mutex> lock(mu_);
  db_.put_binary({key, r.ok, r.log, r.cubin});
}

}  // namespace autotune::db
