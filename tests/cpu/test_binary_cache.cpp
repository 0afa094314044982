// db::DbBinaryCache: the binaries a tune writes in the background are those put, readable before and after they
// reach the database, and a failed write is reported, not lost silently.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "db/binary_cache.hpp"
#include "db/database.hpp"

namespace {

using autotune::CompileResult;
using autotune::db::Database;
using autotune::db::DbBinaryCache;
namespace fs = std::filesystem;

struct TempFile {
  std::string path =
      (fs::temp_directory_path() / ("autotune_binary_cache_" + std::to_string(::getpid()) + ".db")).string();
  ~TempFile() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  }
};

CompileResult binary(int i, bool ok = true) {
  CompileResult r;
  r.ok = ok;
  r.log = ok ? "" : "error " + std::to_string(i);
  if (ok)
    for (int k = 0; k < 5000 + i; ++k) r.cubin.push_back(static_cast<unsigned char>(k * 7 + i));
  return r;
}

}  // namespace

TEST_CASE("binary cache: background writes store every binary put, readable at once and after", "[cpu][db]") {
  TempFile f;
  auto conn = Database::open(f.path);
  {
    DbBinaryCache cache(*conn, DbBinaryCache::Writes::in_background);
    // Several compile threads put at once.
    std::vector<std::thread> threads;
    threads.reserve(4);
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int i = t * 50; i < (t + 1) * 50; ++i) cache.put("k" + std::to_string(i), binary(i, i % 9 != 0));
      });
    for (auto& th : threads) th.join();
    // Readable at once, whether written yet or not.
    for (int i = 0; i < 200; i += 7) {
      auto r = cache.get("k" + std::to_string(i));
      REQUIRE(r);
      CHECK(r->cached);
      CHECK(r->ok == (i % 9 != 0));
      CHECK(r->cubin == binary(i, i % 9 != 0).cubin);
    }
    CHECK_FALSE(cache.get("missing"));
    cache.flush();
    CHECK(cache.stored() == 200);
    // A newer result for a key replaces the older one.
    cache.put("k3", binary(1000));
    cache.flush();
    CHECK(cache.get("k3")->cubin == binary(1000).cubin);
    // Queued at destruction: written before the cache goes.
    for (int i = 200; i < 230; ++i) cache.put("k" + std::to_string(i), binary(i));
  }
  auto other = Database::open(f.path, Database::Mode::read_only);  // another connection sees every row
  CHECK(other->binary_keys().size() == 230);
  CHECK(other->binary("k3")->image == binary(1000).cubin);
  CHECK(other->binary("k229")->image == binary(229).cubin);
  CHECK_FALSE(other->binary("k9")->ok);
  CHECK(other->binary("k9")->log == "error 9");
}

TEST_CASE("binary cache: a write that fails is thrown by the next call, not dropped silently", "[cpu][db]") {
  TempFile f;
  Database::open(f.path);  // create it
  auto read_only = Database::open(f.path, Database::Mode::read_only);
  DbBinaryCache cache(*read_only, DbBinaryCache::Writes::in_background);
  cache.put("k1", binary(1));
  CHECK_THROWS_WITH(cache.flush(), Catch::Contains("read-only"));
  // Said once; later writes fail again and say so again.
  cache.put("k2", binary(2));
  CHECK_THROWS_WITH(cache.flush(), Catch::Contains("read-only"));
}

TEST_CASE("binary cache: immediate writes (a shared connection) are in the database when put returns", "[cpu][db]") {
  auto conn = Database::open(":memory:");
  DbBinaryCache cache(*conn);
  cache.put("k1", binary(1));
  CHECK(conn->binary("k1")->image == binary(1).cubin);
  CHECK(cache.stored() == 1);
}
