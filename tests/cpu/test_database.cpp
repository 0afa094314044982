// Tests of db/database.cpp: schema, round trips, uniqueness, filters, validation on open.
#include "db/database.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <grp.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db_support.hpp"
#include "test_support.hpp"
#include "tuner/core/error.hpp"

using namespace autotune;
using namespace autotune::db;
namespace fs = std::filesystem;

namespace {

using autotune_test::read_bytes;
using autotune_test::require_db_error;
using autotune_test::sample_device;
using autotune_test::sample_trial;
using autotune_test::TempPath;
using autotune_test::write_bytes;

/// A valid autotune database file at path with a device and a few trials (several pages).
void make_database(const std::string& path, int trials = 200) {
  auto db = Database::open(path);
  const auto dev = db->upsert_device(sample_device());
  db->transaction([&] {
    for (int i = 0; i < trials; ++i) {
      auto t = sample_trial(dev, "hash" + std::to_string(i));
      t.m.log = std::string(100, 'x');
      db->insert_trial(t);
    }
  });
}

bool is_iso_utc(const std::string& s) {
  // 2024-05-01T12:34:56.789Z
  return s.size() == 24 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' &&
         s[19] == '.' && s[23] == 'Z';
}

}  // namespace

TEST_CASE("database: fresh :memory: database has the current schema", "[cpu][db]") {
  auto db = Database::open(":memory:");
  CHECK(db->schema_version() == current_schema_version());
  CHECK(current_schema_version() >= 1);
  CHECK(db->path() == ":memory:");
  CHECK(db->integrity_ok());
  CHECK(db->devices().empty());
  CHECK(db->sessions().empty());
  CHECK(db->trials({}).empty());
}

TEST_CASE("database: every field of a device round-trips, and an upsert updates every field but the identity",
          "[cpu][db]") {
  using autotune_test::differing_fields;
  using autotune_test::distinct_device;
  auto db = Database::open(":memory:");
  const DeviceInfo d = distinct_device(sample_device());
  const auto id = db->upsert_device(d);
  CHECK(differing_fields(db->device(id)->info, d).empty());
  const DeviceInfo newer = distinct_device(sample_device(), 7);
  REQUIRE(!differing_fields(newer, d).empty());
  CHECK(db->upsert_device(newer) == id);
  CHECK(differing_fields(db->device(id)->info, newer).empty());
  CHECK(differing_fields(db->devices().at(0).info, newer).empty());
}

TEST_CASE("database: device round trip and upsert identity", "[cpu][db]") {
  auto db = Database::open(":memory:");
  const DeviceInfo d = sample_device();
  const auto id = db->upsert_device(d);
  CHECK(id > 0);
  auto row = db->device(id);
  REQUIRE(row);
  CHECK(row->id == id);
  CHECK(row->info.name == d.name);
  CHECK(row->info.cc == d.cc);
  CHECK(row->info.sm_count == d.sm_count);
  CHECK(row->info.max_threads_per_block == d.max_threads_per_block);
  CHECK(row->info.max_shared_memory_per_block == d.max_shared_memory_per_block);
  CHECK(row->info.max_shared_memory_per_block_optin == d.max_shared_memory_per_block_optin);
  CHECK(row->info.warp_size == d.warp_size);
  CHECK(row->info.l2_bytes == d.l2_bytes);
  CHECK(row->info.total_memory == d.total_memory);
  CHECK(row->info.driver_version == d.driver_version);
  CHECK(row->info.uuid == d.uuid);
  CHECK(row->info.clock_khz == d.clock_khz);
  CHECK(row->info.memory_clock_khz == d.memory_clock_khz);
  CHECK(row->info.memory_bus_width == d.memory_bus_width);
  CHECK(row->copy_gbps == 0);

  db->set_copy_bandwidth(id, 3850.5);
  CHECK(db->device(id)->copy_gbps == 3850.5);

  // Same identity (normalised name, cc, uuid): same row, provenance updated, bandwidth kept.
  DeviceInfo newer = d;
  newer.driver_version = 13010;
  newer.name = "NVIDIA  H200";  // same normalised name
  CHECK(db->upsert_device(newer) == id);
  CHECK(db->device(id)->info.driver_version == 13010);
  CHECK(db->device(id)->copy_gbps == 3850.5);
  CHECK(db->devices().size() == 1);

  // Another board of the same model is another row.
  const auto id2 = db->upsert_device(sample_device("GPU-other"));
  CHECK(id2 != id);
  CHECK(db->devices().size() == 2);
  CHECK(db->devices()[0].id == id);

  CHECK_FALSE(db->device(9999));
  CHECK_THROWS_AS(db->set_copy_bandwidth(9999, 1.0), DbError);
}

TEST_CASE("database: session round trip", "[cpu][db]") {
  auto db = Database::open(":memory:");
  const auto dev = db->upsert_device(sample_device());
  SessionRow s;
  s.kernel = "reduction";
  s.source_hash = "0011223344556677";
  s.spec_hash = "8899aabbccddeeff";
  s.compiler_version = "nvrtc 13.0";
  s.strategy = "random";
  s.seed = 0xfedcba9876543210ull;  // above INT64_MAX: stored as the same 64 bits
  s.workload = "float32/sum";
  s.problem = "n=1024";
  s.device_id = dev;
  s.backend = "synthetic";
  const auto id = db->begin_session(s);
  CHECK(id == s.id);
  CHECK(s.status == "running");
  CHECK(is_iso_utc(s.started_at));

  auto r = db->session(id);
  REQUIRE(r);
  CHECK(r->kernel == s.kernel);
  CHECK(r->source_hash == s.source_hash);
  CHECK(r->spec_hash == s.spec_hash);
  CHECK(r->compiler_version == s.compiler_version);
  CHECK(r->strategy == s.strategy);
  CHECK(r->seed == s.seed);
  CHECK(r->workload == s.workload);
  CHECK(r->problem == s.problem);
  CHECK(r->device_id == dev);
  CHECK(r->backend == s.backend);
  CHECK(r->started_at == s.started_at);
  CHECK(r->finished_at.empty());
  CHECK(r->status == "running");

  db->finish_session(id, "interrupted");
  r = db->session(id);
  CHECK(r->status == "interrupted");
  CHECK(is_iso_utc(r->finished_at));
  CHECK(r->finished_at >= r->started_at);
  CHECK_THROWS_AS(db->finish_session(id, "bogus"), DbError);
  CHECK_THROWS_AS(db->finish_session(4242, "finished"), DbError);

  SessionRow other;
  other.kernel = "scan";  // device_id 0 = none
  db->begin_session(other);
  CHECK(db->session(other.id)->device_id == 0);
  CHECK(db->sessions().size() == 2);
  CHECK(db->sessions(std::string("scan")).size() == 1);
  CHECK(db->sessions(std::string("scan"))[0].id == other.id);
  CHECK(db->sessions(std::string("nothing")).empty());
  CHECK_FALSE(db->session(777));
}

TEST_CASE("database: trial round trip of every field", "[cpu][db]") {
  auto db = Database::open(":memory:");
  const auto dev = db->upsert_device(sample_device());
  SessionRow s;
  s.kernel = "reduction";
  db->begin_session(s);

  TrialRow t = sample_trial(dev, "abcdef0123456789", TrialStatus::launch_error, 2500.75);
  t.session_id = s.id;
  REQUIRE(db->insert_trial(t));
  CHECK(t.id > 0);
  CHECK(is_iso_utc(t.created_at));

  auto r = db->find_trial(t.kernel, t.source_hash, dev, t.workload, t.problem, t.config_hash);
  REQUIRE(r);
  CHECK(r->id == t.id);
  CHECK(r->session_id == s.id);
  CHECK(r->device_id == dev);
  CHECK(r->kernel == t.kernel);
  CHECK(r->source_hash == t.source_hash);
  CHECK(r->workload == t.workload);
  CHECK(r->problem == t.problem);
  CHECK(r->problem_elements == t.problem_elements);
  CHECK(r->config_json == t.config_json);
  CHECK(r->config_hash == t.config_hash);
  CHECK(r->m.status == TrialStatus::launch_error);
  CHECK(r->m.median_ns == t.m.median_ns);
  CHECK(r->m.min_ns == t.m.min_ns);
  CHECK(r->m.spread == t.m.spread);
  CHECK(r->m.samples == t.m.samples);
  CHECK(r->m.compile_ms == t.m.compile_ms);
  CHECK(r->m.verify_ms == t.m.verify_ms);
  CHECK(r->m.log == t.m.log);
  CHECK(r->m.protocol == t.m.protocol);
  CHECK(r->gbps == t.gbps);
  CHECK(r->created_at == t.created_at);

  // Every status survives the text column.
  int i = 0;
  for (TrialStatus st : {TrialStatus::ok, TrialStatus::compile_error, TrialStatus::launch_error,
                         TrialStatus::wrong_result, TrialStatus::runtime_fault, TrialStatus::timeout,
                         TrialStatus::invalid}) {
    TrialRow u = sample_trial(dev, "status" + std::to_string(i++), st);
    REQUIRE(db->insert_trial(u));
    CHECK(db->find_trial(u.kernel, u.source_hash, dev, u.workload, u.problem, u.config_hash)->m.status == st);
  }

  // A given created_at is kept (imports); session 0 means none; NaN survives as NULL.
  TrialRow v = sample_trial(dev, "imported");
  v.created_at = "2020-01-02T03:04:05.000Z";
  v.m.spread = std::nan("");
  REQUIRE(db->insert_trial(v));
  auto rv = db->find_trial(v.kernel, v.source_hash, dev, v.workload, v.problem, v.config_hash);
  CHECK(rv->created_at == "2020-01-02T03:04:05.000Z");
  CHECK(rv->session_id == 0);
  CHECK(std::isnan(rv->m.spread));

  CHECK_FALSE(db->find_trial(t.kernel, t.source_hash, dev, t.workload, t.problem, "missing"));
}

TEST_CASE("database: uniqueness key makes sessions resumable", "[cpu][db]") {
  auto db = Database::open(":memory:");
  const auto dev = db->upsert_device(sample_device());
  TrialRow first = sample_trial(dev, "c0ffee", TrialStatus::ok, 1000);
  REQUIRE(db->insert_trial(first));

  TrialRow again = sample_trial(dev, "c0ffee", TrialStatus::timeout, 5);
  CHECK_FALSE(db->insert_trial(again));
  CHECK(again.id == first.id);
  auto rows = db->trials({});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].m.status == TrialStatus::ok);  // the first result is kept
  CHECK(rows[0].m.median_ns == 1000);

  // Any part of the key differing makes a new row.
  TrialRow other_source = sample_trial(dev, "c0ffee");
  other_source.source_hash = "ffffffffffffffff";
  CHECK(db->insert_trial(other_source));
  TrialRow other_problem = sample_trial(dev, "c0ffee");
  other_problem.problem = "n=1024";
  CHECK(db->insert_trial(other_problem));
  TrialRow other_workload = sample_trial(dev, "c0ffee");
  other_workload.workload = "int32/max";
  CHECK(db->insert_trial(other_workload));
  TrialRow other_kernel = sample_trial(dev, "c0ffee");
  other_kernel.kernel = "scan";
  CHECK(db->insert_trial(other_kernel));
  TrialRow other_device = sample_trial(db->upsert_device(sample_device("GPU-2")), "c0ffee");
  CHECK(db->insert_trial(other_device));
  CHECK(db->trials({}).size() == 6);

  // A trial must name an existing device.
  TrialRow orphan = sample_trial(12345, "orphan");
  CHECK_THROWS_AS(db->insert_trial(orphan), DbError);
}

TEST_CASE("database: trial filters", "[cpu][db]") {
  auto db = Database::open(":memory:");
  const auto d1 = db->upsert_device(sample_device("GPU-a"));
  const auto d2 = db->upsert_device(sample_device("GPU-b"));
  SessionRow s1, s2;
  s1.kernel = s2.kernel = "reduction";
  db->begin_session(s1);
  db->begin_session(s2);

  auto add = [&](std::int64_t dev, std::int64_t session, const std::string& kernel, const std::string& workload,
                 const std::string& problem, const std::string& source, const std::string& hash, TrialStatus st,
                 double median) {
    TrialRow t = sample_trial(dev, hash, st, median);
    t.session_id = session;
    t.kernel = kernel;
    t.workload = workload;
    t.problem = problem;
    t.source_hash = source;
    REQUIRE(db->insert_trial(t));
    return t.id;
  };
  const auto a = add(d1, s1.id, "reduction", "float32/sum", "n=1024", "src1", "h1", TrialStatus::ok, 300);
  const auto b = add(d1, s1.id, "reduction", "float32/sum", "n=1024", "src1", "h2", TrialStatus::compile_error, 0);
  const auto c = add(d1, s1.id, "reduction", "float32/sum", "n=1024", "src1", "h3", TrialStatus::ok, 100);
  const auto d = add(d1, s2.id, "reduction", "int32/max", "n=1024", "src1", "h1", TrialStatus::ok, 50);
  const auto e = add(d2, s2.id, "reduction", "float32/sum", "n=1024", "src1", "h1", TrialStatus::ok, 70);
  const auto f = add(d1, s2.id, "reduction", "float32/sum", "n=4096", "src1", "h1", TrialStatus::ok, 900);
  const auto g = add(d1, 0, "scan", "float32/sum", "n=1024", "src1", "h1", TrialStatus::ok, 10);
  const auto h = add(d1, 0, "reduction", "float32/sum", "n=1024", "src2", "h1", TrialStatus::ok, 20);

  auto ids = [&](const TrialFilter& flt) {
    std::vector<std::int64_t> out;
    for (const auto& t : db->trials(flt)) out.push_back(t.id);
    return out;
  };
  using V = std::vector<std::int64_t>;

  CHECK(ids({}) == V{a, b, c, d, e, f, g, h});
  TrialFilter flt;
  flt.kernel = "scan";
  CHECK(ids(flt) == V{g});
  flt = {};
  flt.source_hash = "src2";
  CHECK(ids(flt) == V{h});
  flt = {};
  flt.device_id = d2;
  CHECK(ids(flt) == V{e});
  flt = {};
  flt.workload = "int32/max";
  CHECK(ids(flt) == V{d});
  flt = {};
  flt.problem = "n=4096";
  CHECK(ids(flt) == V{f});
  flt = {};
  flt.session_id = s1.id;
  CHECK(ids(flt) == V{a, b, c});
  flt.ok_only = true;
  CHECK(ids(flt) == V{a, c});
  flt.ok_only = false;
  flt.by_time = true;
  CHECK(ids(flt) == V{c, a, b});  // ok rows by median, failures last

  // Combined: the lookup query of one (kernel, workload, device, problem, source).
  flt = {};
  flt.kernel = "reduction";
  flt.workload = "float32/sum";
  flt.device_id = d1;
  flt.problem = "n=1024";
  flt.source_hash = "src1";
  CHECK(ids(flt) == V{a, b, c});
  flt.by_time = true;
  flt.limit = 1;
  CHECK(ids(flt) == V{c});
  flt.limit = 2;
  flt.ok_only = true;
  CHECK(ids(flt) == V{c, a});

  flt = {};
  flt.limit = 3;
  CHECK(ids(flt) == V{a, b, c});
  flt = {};
  flt.kernel = "nothing";
  CHECK(ids(flt).empty());
}

TEST_CASE("database: binaries round trip", "[cpu][db]") {
  auto db = Database::open(":memory:");
  CHECK_FALSE(db->binary("k1"));

  BinaryRow b;
  b.key = "k1";
  b.ok = true;
  b.log = "warning: unused variable";
  for (int i = 0; i < 70000; ++i) b.image.push_back(static_cast<unsigned char>(i * 31));  // includes 0 bytes
  db->put_binary(b);
  auto r = db->binary("k1");
  REQUIRE(r);
  CHECK(r->key == "k1");
  CHECK(r->ok);
  CHECK(r->log == b.log);
  CHECK(r->image == b.image);

  // Compile failures are cached too, with an empty image.
  BinaryRow fail;
  fail.key = "k2";
  fail.ok = false;
  fail.log = "error: identifier \"BLOCK\" is undefined";
  db->put_binary(fail);
  r = db->binary("k2");
  REQUIRE(r);
  CHECK_FALSE(r->ok);
  CHECK(r->log == fail.log);
  CHECK(r->image.empty());

  // Putting the same key again replaces the entry.
  b.image = {1, 2, 3};
  b.log.clear();
  db->put_binary(b);
  r = db->binary("k1");
  CHECK(r->image == std::vector<unsigned char>{1, 2, 3});
  CHECK(r->log.empty());
}

TEST_CASE("database: strings with quotes and SQL round trip", "[cpu][db]") {
  auto db = Database::open(":memory:");
  DeviceInfo d = sample_device("'); DROP TABLE devices; --");
  d.name = "Robert'); DROP TABLE trials;-- \"GPU\"";
  const auto dev = db->upsert_device(d);
  CHECK(db->device(dev)->info.name == d.name);
  CHECK(db->device(dev)->info.uuid == d.uuid);

  const std::string nasty = "it's \"quoted\" ; DROP TABLE trials; -- % _ \\ \xce\xbb";
  const std::string with_nul = std::string("before\0after", 12);
  TrialRow t = sample_trial(dev, nasty);
  t.kernel = nasty;
  t.source_hash = "x' OR '1'='1";
  t.workload = nasty + "/sum";
  t.problem = "n=1'--";
  t.config_json = "{\"A'\":1}";
  t.m.log = with_nul + nasty;
  t.m.protocol = "events;'quoted'";
  REQUIRE(db->insert_trial(t));
  auto r = db->find_trial(t.kernel, t.source_hash, dev, t.workload, t.problem, t.config_hash);
  REQUIRE(r);
  CHECK(r->kernel == t.kernel);
  CHECK(r->source_hash == t.source_hash);
  CHECK(r->workload == t.workload);
  CHECK(r->problem == t.problem);
  CHECK(r->config_json == t.config_json);
  CHECK(r->config_hash == t.config_hash);
  CHECK(r->m.log == t.m.log);
  CHECK(r->m.protocol == t.m.protocol);
  // "' OR '1'='1" must not match everything.
  CHECK_FALSE(db->find_trial(t.kernel, "' OR '1'='1", dev, t.workload, t.problem, t.config_hash));
  TrialFilter f;
  f.kernel = nasty;
  CHECK(db->trials(f).size() == 1);

  SessionRow s;
  s.kernel = nasty;
  s.strategy = "a'b";
  db->begin_session(s);
  CHECK(db->session(s.id)->kernel == nasty);
  CHECK(db->sessions(nasty).size() == 1);

  BinaryRow b;
  b.key = nasty;
  b.log = with_nul;
  db->put_binary(b);
  CHECK(db->binary(nasty)->log == with_nul);
  CHECK(db->integrity_ok());
  CHECK(db->devices().size() == 1);
}

TEST_CASE("database: transaction commits or rolls back", "[cpu][db]") {
  auto db = Database::open(":memory:");
  const auto dev = db->upsert_device(sample_device());
  db->transaction([&] {
    TrialRow t = sample_trial(dev, "committed");
    db->insert_trial(t);
  });
  CHECK(db->trials({}).size() == 1);

  struct Boom {};
  CHECK_THROWS_AS(db->transaction([&] {
    TrialRow t = sample_trial(dev, "rolled_back");
    REQUIRE(db->insert_trial(t));
    CHECK(db->trials({}).size() == 2);  // visible inside the transaction
    throw Boom{};
  }),
                  Boom);
  CHECK(db->trials({}).size() == 1);
  CHECK(db->trials({})[0].config_hash == "committed");

  // A DbError inside (foreign key) rolls back too and the connection stays usable.
  CHECK_THROWS_AS(db->transaction([&] {
    TrialRow ok = sample_trial(dev, "x1");
    db->insert_trial(ok);
    TrialRow orphan = sample_trial(999, "x2");
    db->insert_trial(orphan);
  }),
                  DbError);
  CHECK(db->trials({}).size() == 1);
  TrialRow later = sample_trial(dev, "later");
  CHECK(db->insert_trial(later));
}

namespace {

/// While set, the connections opened under RefusedRollbacks refuse every ROLLBACK ("not authorized").
std::atomic<bool> deny_rollback{false};

int refuse_rollback(void*, int action, const char* operation, const char*, const char*, const char*) {
  const bool rollback = action == SQLITE_TRANSACTION && operation && std::string(operation) == "ROLLBACK";
  return rollback && deny_rollback ? SQLITE_DENY : SQLITE_OK;
}

int install_refusal(sqlite3* db, const char**, const sqlite3_api_routines*) {
  return sqlite3_set_authorizer(db, refuse_rollback, nullptr);
}

/// Every connection opened during its lifetime gets the authorizer above (SQLite's automatic extensions).
struct RefusedRollbacks {
  RefusedRollbacks() { sqlite3_auto_extension(reinterpret_cast<void (*)()>(install_refusal)); }
  ~RefusedRollbacks() {
    sqlite3_cancel_auto_extension(reinterpret_cast<void (*)()>(install_refusal));
    deny_rollback = false;
  }
};

}  // namespace

TEST_CASE("database: a failing transaction reports its own error when the rollback fails too", "[cpu][db]") {
  std::unique_ptr<Database> db;
  RefusedRollbacks refusal;
  db = Database::open(":memory:");
  const auto dev = db->upsert_device(sample_device());
  deny_rollback = true;
  CHECK_THROWS_WITH(db->transaction([&] {
    TrialRow t = sample_trial(dev, "first");
    REQUIRE(db->insert_trial(t));
    throw std::runtime_error("the body failed");
  }),
                    "the body failed");
  // The rollback was refused indeed: the transaction is still open.
  CHECK_THROWS_WITH(db->exec("ROLLBACK"), Catch::Contains("not authorized"));
  deny_rollback = false;
  db->exec("ROLLBACK");
  CHECK(db->trials({}).empty());

  // The same for a database error in the body (a trial of an unknown device): its own message comes out.
  deny_rollback = true;
  CHECK_THROWS_WITH(db->transaction([&] {
    TrialRow orphan = sample_trial(999, "orphan");
    db->insert_trial(orphan);
  }),
                    !Catch::Contains("not authorized"));
  deny_rollback = false;
  db->exec("ROLLBACK");
  TrialRow later = sample_trial(dev, "later");
  CHECK(db->insert_trial(later));
  CHECK(db->trials({}).size() == 1);
}

TEST_CASE("database: file database persists, uses WAL and is shared between connections", "[cpu][db]") {
  TempPath tmp("persist.db");
  {
    auto db = Database::open(tmp.path);
    CHECK(db->path() == tmp.path);
    const auto dev = db->upsert_device(sample_device());
    TrialRow t = sample_trial(dev, "h");
    REQUIRE(db->insert_trial(t));
    CHECK(fs::exists(tmp.path + "-wal"));

    // A second connection (as another process would) sees committed rows and respects the key.
    auto other = Database::open(tmp.path);
    CHECK(other->trials({}).size() == 1);
    TrialRow dup = sample_trial(dev, "h");
    CHECK_FALSE(other->insert_trial(dup));
    TrialRow fresh = sample_trial(dev, "h2");
    CHECK(other->insert_trial(fresh));
    CHECK(db->trials({}).size() == 2);
  }
  auto db = Database::open(tmp.path);
  CHECK(db->schema_version() == current_schema_version());
  CHECK(db->trials({}).size() == 2);
  CHECK(db->integrity_ok());

  auto ro = Database::open(tmp.path, Database::Mode::read_only);
  CHECK(ro->trials({}).size() == 2);
  CHECK(ro->devices().size() == 1);
}

TEST_CASE("database: read-only mode", "[cpu][db]") {
  SECTION("missing file is an error and is not created") {
    TempPath tmp("missing.db");
    require_db_error([&] { Database::open(tmp.path, Database::Mode::read_only); }, "does not exist");
    CHECK_FALSE(fs::exists(tmp.path));
  }
  SECTION("writes are refused") {
    TempPath tmp("ro.db");
    make_database(tmp.path, 3);
    const auto before = read_bytes(tmp.path);
    {
      auto db = Database::open(tmp.path, Database::Mode::read_only);
      CHECK(db->trials({}).size() == 3);
      CHECK(db->integrity_ok());
      require_db_error([&] { db->upsert_device(sample_device("GPU-new")); }, "read-only");
      BinaryRow b;
      b.key = "k";
      require_db_error([&] { db->put_binary(b); }, "read-only");
    }
    CHECK(read_bytes(tmp.path) == before);
  }
  SECTION("an older schema must be migrated read-write first") {
    TempPath tmp("old.db");
    make_database(tmp.path, 1);
    Database::open(tmp.path)->exec("PRAGMA user_version = 0");
    require_db_error([&] { Database::open(tmp.path, Database::Mode::read_only); }, "open it read-write once");
  }
  SECTION("read-write open of a file without write permission") {
    if (::geteuid() == 0) return;  // root ignores permissions
    TempPath tmp("noperm.db");
    make_database(tmp.path, 1);
    fs::permissions(tmp.path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    const auto before = read_bytes(tmp.path);
    require_db_error([&] { Database::open(tmp.path); }, "read-only");
    CHECK(read_bytes(tmp.path) == before);
    CHECK(Database::open(tmp.path, Database::Mode::read_only)->trials({}).size() == 1);
    fs::permissions(tmp.path, fs::perms::owner_read | fs::perms::owner_write);
  }
  SECTION("a file without write permission, opened by an unprivileged user") {
    // Root ignores file permissions, so as root the check runs in a child that drops to 'nobody'.
    if (::geteuid() != 0) return;  // the section above covers it
    TempPath tmp("noperm_nobody.db");
    make_database(tmp.path, 1);
    fs::permissions(tmp.path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                  fs::perms::others_read);
    const auto before = read_bytes(tmp.path);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(10);
      int code = 0;
      try {
        Database::open(tmp.path);
        code = 11;  // opened read-write: wrong
      } catch (const DbError& e) {
        code = std::string(e.what()).find("is read-only") != std::string::npos ? 0 : 12;
      } catch (...) {
        code = 13;
      }
      if (code == 0) {
        try {
          code = Database::open(tmp.path, Database::Mode::read_only)->trials({}).size() == 1 ? 0 : 14;
        } catch (...) {
          code = 15;
        }
      }
      ::_exit(code);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);  // 11: opened read-write, 12: other message, 14/15: read-only failed
    CHECK(read_bytes(tmp.path) == before);
  }
  SECTION("an empty file has no schema") {
    TempPath tmp("empty.db");
    write_bytes(tmp.path, {});
    require_db_error([&] { Database::open(tmp.path, Database::Mode::read_only); }, "no autotune schema");
    CHECK(fs::file_size(tmp.path) == 0);
  }
}

TEST_CASE("database: files that fail validation are refused and left unchanged", "[cpu][db]") {
  SECTION("not SQLite") {
    TempPath tmp("garbage.db");
    std::vector<char> garbage;
    for (int i = 0; i < 5000; ++i) garbage.push_back(static_cast<char>((i * 7919) % 251));
    write_bytes(tmp.path, garbage);
    require_db_error([&] { Database::open(tmp.path); }, tmp.path + " is not an autotune database (file is not SQLite)");
    require_db_error([&] { Database::open(tmp.path, Database::Mode::read_only); }, "file is not SQLite");
    CHECK(read_bytes(tmp.path) == garbage);
    CHECK_FALSE(fs::exists(tmp.path + "-wal"));
  }
  SECTION("short text file") {
    TempPath tmp("short.txt");
    const std::vector<char> text = {'h', 'e', 'l', 'l', 'o', '\n'};
    write_bytes(tmp.path, text);
    require_db_error([&] { Database::open(tmp.path); }, "file is not SQLite");
    CHECK(read_bytes(tmp.path) == text);
  }
  SECTION("newer schema version") {
    TempPath tmp("newer.db");
    make_database(tmp.path, 2);
    const std::string newer = std::to_string(current_schema_version() + 1);
    Database::open(tmp.path)->exec("PRAGMA user_version = " + newer);
    const auto before = read_bytes(tmp.path);
    REQUIRE_FALSE(fs::exists(tmp.path + "-wal"));  // checkpointed on close
    const std::string expected = "database " + tmp.path + " has schema version " + newer +
                                 ", newer than this build supports (" + std::to_string(current_schema_version()) + ")";
    require_db_error([&] { Database::open(tmp.path); }, expected);
    require_db_error([&] { Database::open(tmp.path, Database::Mode::read_only); }, expected);
    CHECK(read_bytes(tmp.path) == before);
  }
  SECTION("SQLite database of another application") {
    TempPath tmp("foreign.db");
    make_database(tmp.path, 1);
    Database::open(tmp.path)->exec("PRAGMA application_id = 12345");
    const auto before = read_bytes(tmp.path);
    require_db_error([&] { Database::open(tmp.path); }, "is not an autotune database");
    CHECK(read_bytes(tmp.path) == before);
  }
  SECTION("corrupt pages") {
    TempPath tmp("corrupt.db");
    make_database(tmp.path, 300);
    auto bytes = read_bytes(tmp.path);
    REQUIRE(bytes.size() > 5 * 4096);
    for (std::size_t i = 4096; i < bytes.size() - 4096; ++i) bytes[i] = static_cast<char>(0xA5 ^ (i & 0xff));
    write_bytes(tmp.path, bytes);
    require_db_error([&] { Database::open(tmp.path); }, "is corrupt");
    CHECK(read_bytes(tmp.path) == bytes);
  }
  SECTION("truncated file") {
    TempPath tmp("truncated.db");
    make_database(tmp.path, 300);
    const auto whole = read_bytes(tmp.path);
    REQUIRE(whole.size() > 8 * 4096);
    // Cut mid-file, at a page boundary, inside the first page and inside the 100-byte header.
    for (std::size_t size : {whole.size() / 2, std::size_t{3 * 4096}, std::size_t{4096}, std::size_t{1000},
                             std::size_t{60}, std::size_t{10}}) {
      INFO("truncated to " << size << " bytes");
      const std::vector<char> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(size));
      write_bytes(tmp.path, cut);
      try {
        Database::open(tmp.path);
        FAIL("a truncated database was accepted");
      } catch (const DbError& e) {
        const std::string what = e.what();
        INFO(what);
        CHECK((what.find("is corrupt") != std::string::npos || what.find("not an autotune database") != std::string::npos));
        CHECK(what.find(tmp.path) != std::string::npos);
      }
      CHECK_THROWS_AS(Database::open(tmp.path, Database::Mode::read_only), DbError);
      CHECK(read_bytes(tmp.path) == cut);
      // SQLite may leave an empty -wal next to a WAL-mode file it could not read; nothing is written to it.
      CHECK((!fs::exists(tmp.path + "-wal") || fs::file_size(tmp.path + "-wal") == 0));
      tmp.remove_all();
    }
  }
  SECTION("a directory") {
    require_db_error([&] { Database::open(fs::temp_directory_path().string()); }, "not a regular file");
  }
  SECTION("cannot create") {
    require_db_error([&] { Database::open("/nonexistent_dir_for_autotune_tests/x.db"); }, "cannot open");
  }
  SECTION("empty path") { CHECK_THROWS_AS(Database::open(""), DbError); }
}

TEST_CASE("database: an empty existing file is initialised", "[cpu][db]") {
  TempPath tmp("touched.db");
  write_bytes(tmp.path, {});
  auto db = Database::open(tmp.path);
  CHECK(db->schema_version() == current_schema_version());
  CHECK(db->integrity_ok());
}

