// Lookup library: every fallback level on fixture databases of fictional devices, stale rows, validity on
// the target, the cache under many threads, unusable databases, the CLI's `best --json`, header hygiene.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "db/database.hpp"
#include "test_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/lookup/export.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/session/session.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
namespace fs = std::filesystem;

namespace {

std::string temp_db(const std::string& tag) {
  static std::atomic<int> counter{0};
  fs::path p = fs::temp_directory_path() /
               ("autotune_lookup_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".db");
  fs::remove(p);
  return p.string();
}

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& tag) : path(temp_db(tag)) {}
  ~TempFile() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix, ec);
  }
};

/// A fictional kernel: A threads-per-32 blocks limited by the device, B free.
TuningSpec fixture_spec() {
  TuningSpec s = TuningSpec::from_json_text(R"J({
    "name": "fixture_kernel", "family": "synthetic", "source": "fixture.cu", "kernels": ["k"],
    "parameters": [{"name": "A", "values": [1, 2, 4, 8], "default": 2},
                   {"name": "B", "values": [1, 2], "default": 1}],
    "constraints": ["A * 32 <= max_threads_per_block"],
    "problem": {"dims": ["n"]}, "workloads": ["float32/sum", "int32/sum"]})J", ".", false);
  s.source_text = "// fixture kernel v1";
  return s;
}

DeviceInfo board(const std::string& name, int cc, int max_threads = 1024) {
  DeviceInfo d;
  d.name = name;
  d.cc = cc;
  d.sm_count = 100;
  d.max_threads_per_block = max_threads;
  d.max_shared_memory_per_block = 49152;
  d.max_shared_memory_per_block_optin = 49152;
  d.warp_size = 32;
  d.uuid = "uuid-" + name;
  return d;
}

Config cfg(std::int64_t a, std::int64_t b = 1) { return Config({{"A", a}, {"B", b}}); }

/// Writes devices, sessions and trials of the fictional boards with chosen times.
class Fixture {
 public:
  explicit Fixture(const std::string& path, TuningSpec spec = fixture_spec())
      : spec_(std::move(spec)), db_(db::Database::open(path)) {}

  std::int64_t device(const DeviceInfo& d) { return db_->upsert_device(d); }

  std::int64_t session(std::int64_t device_id, const std::string& spec_hash = "") {
    db::SessionRow s;
    s.kernel = spec_.name;
    s.source_hash = spec_.source_hash();
    s.spec_hash = spec_hash.empty() ? spec_.spec_hash() : spec_hash;
    s.strategy = "fixture";
    s.workload = "float32/sum";
    s.device_id = device_id;
    s.backend = "synthetic";
    return db_->begin_session(s);
  }

  void trial(std::int64_t session_id, std::int64_t device_id, std::int64_t n, const Config& c, double ns,
             const std::string& source_hash = "", const std::string& workload = "float32/sum") {
    db::TrialRow t;
    t.session_id = session_id;
    t.device_id = device_id;
    t.kernel = spec_.name;
    t.source_hash = source_hash.empty() ? spec_.source_hash() : source_hash;
    t.workload = workload;
    ProblemKey p;
    p.dims["n"] = n;
    t.problem = p.key();
    t.problem_elements = p.elements();
    t.config_json = c.to_json();
    t.config_hash = c.hash();
    t.m.status = TrialStatus::ok;
    t.m.median_ns = ns;
    t.m.min_ns = ns;
    t.m.samples = 9;
    t.gbps = 1e3 / ns;
    REQUIRE(db_->insert_trial(t));
  }

  /// Records (device, n) with configs and times in one session.
  std::int64_t record(const DeviceInfo& d, std::int64_t n, const std::vector<std::pair<Config, double>>& rows) {
    const std::int64_t dev = device(d);
    const std::int64_t s = session(dev);
    for (const auto& [c, ns] : rows) trial(s, dev, n, c, ns);
    return s;
  }

  void close() { db_.reset(); }
  const TuningSpec& spec() const { return spec_; }

 private:
  TuningSpec spec_;
  std::unique_ptr<db::Database> db_;
};

ProblemKey n_of(std::int64_t n) {
  ProblemKey p;
  p.dims["n"] = n;
  return p;
}

const Workload kF32{"float32", "sum"};

Lookup::Options silent() {
  Lookup::Options o;
  o.warn = [](const std::string&) {};
  return o;
}

}  // namespace

TEST_CASE("lookup: exact and nearest size on the same device, with provenance", "[cpu][lookup]") {
  TempFile f("levels12");
  Fixture fx(f.path);
  const DeviceInfo x100 = board("Acme X100", 90);
  const std::int64_t s1 = fx.record(x100, 1 << 20, {{cfg(4), 100}, {cfg(8), 120}, {cfg(1), 150}});
  const std::int64_t s2 = fx.record(x100, 1 << 24, {{cfg(8), 900}, {cfg(4), 1000}});
  fx.close();

  Lookup lk(f.path, silent());
  lk.add_spec(fx.spec());
  REQUIRE(lk.available());
  const DeviceKey key("Acme X100", 90);

  auto exact = lk.best("fixture_kernel", kF32, key, n_of(1 << 20));
  CHECK(exact->match == lookup::Match::exact);
  CHECK(exact->config == cfg(4));
  CHECK(exact->device == "Acme X100");
  CHECK(exact->device_cc == 90);
  CHECK(exact->problem == "n=1048576");
  CHECK(exact->session_id == s1);
  CHECK(exact->median_ns == 100);
  CHECK(exact->stale_rows == 0);
  CHECK(exact->note.empty());

  // log2(3 Mi) = 21.6: 1 Mi (20) is closer than 16 Mi (24).
  auto near_small = lk.best("fixture_kernel", kF32, key, n_of(3 << 20));
  CHECK(near_small->match == lookup::Match::nearest_size);
  CHECK(near_small->problem == "n=1048576");
  CHECK(near_small->config == cfg(4));
  // log2(8 Mi) = 23: 16 Mi is closer.
  auto near_large = lk.best("fixture_kernel", kF32, key, n_of(8 << 20));
  CHECK(near_large->match == lookup::Match::nearest_size);
  CHECK(near_large->problem == "n=16777216");
  CHECK(near_large->config == cfg(8));
  CHECK(near_large->session_id == s2);
  // Equal log distance (4 Mi: 2 below 16 Mi, 2 above 1 Mi): the larger problem wins.
  auto tie = lk.best("fixture_kernel", kF32, key, n_of(4 << 20));
  CHECK(tie->problem == "n=16777216");

  // The name is normalised: "acme-x100" is the same board.
  CHECK(lk.best("fixture_kernel", kF32, DeviceKey("acme-x100", 90), n_of(1 << 20))->match == lookup::Match::exact);
  // Another workload has no rows at all: the float32 answer of this board, borrowed (level borrowed, after the
  // levels that keep the workload) and said so.
  auto other_workload = lk.best("fixture_kernel", Workload{"int32", "sum"}, key, n_of(1 << 20));
  CHECK(other_workload->match == lookup::Match::borrowed);
  CHECK(other_workload->borrowed_from == kF32.key());
  CHECK(other_workload->config == lk.best("fixture_kernel", kF32, key, n_of(1 << 20))->config);
}

TEST_CASE("lookup: same compute capability, other boards: group default at the closest size", "[cpu][lookup]") {
  TempFile f("level3");
  Fixture fx(f.path);
  const DeviceInfo x200 = board("Acme X200", 90), x300 = board("Acme X300", 90);
  // At 1 Mi: relative times A=2: (1.0 + 1.3) / 2 = 1.15, A=4: (1.1 + 1.0) / 2 = 1.05, A=8: 2.5.
  // A=1,B=2 is as fast as the best on X300 but measured in one cell only: coverage decides first.
  fx.record(x200, 1 << 20, {{cfg(2), 100}, {cfg(4), 110}, {cfg(8), 200}});
  const std::int64_t s300 = fx.record(x300, 1 << 20, {{cfg(4), 100}, {cfg(1, 2), 100}, {cfg(2), 130}, {cfg(8), 300}});
  // At 64 Mi only X200, with another winner.
  fx.record(x200, 1 << 26, {{cfg(8), 5000}, {cfg(4), 7000}});
  fx.record(board("Acme Z86", 86), 1 << 20, {{cfg(1), 10}});  // another cc: not part of this level
  fx.close();

  Lookup lk(f.path, silent());
  lk.add_spec(fx.spec());
  const DeviceKey x150("Acme X150", 90);  // never tuned

  auto a = lk.best("fixture_kernel", kF32, x150, n_of(2 << 20));
  CHECK(a->match == lookup::Match::same_cc);
  CHECK(a->config == cfg(4));
  CHECK(a->relative_time == Approx(1.05));
  CHECK(a->cells_covered == 2);
  CHECK(a->cells_total == 2);
  CHECK(a->device == "Acme X200, Acme X300");
  CHECK(a->problem == "n=1048576");
  CHECK(a->device_cc == 90);
  CHECK_THAT(a->note, Catch::Contains("acme_x150"));

  // Closest size 64 Mi: only X200 measured there, so its fastest configuration.
  auto big = lk.best("fixture_kernel", kF32, x150, n_of(1 << 27));
  CHECK(big->match == lookup::Match::same_cc);
  CHECK(big->config == cfg(8));
  CHECK(big->problem == "n=67108864");
  CHECK(big->device == "Acme X200");
  CHECK(big->relative_time == Approx(1.0));

  // A target whose properties forbid A=4 and A=8 (64 threads per block): the best valid group member.
  DeviceInfo small = board("Acme X150", 90, 64);
  auto limited = lk.best_on("fixture_kernel", kF32, small, n_of(2 << 20));
  CHECK(limited->match == lookup::Match::same_cc);
  CHECK(limited->config == cfg(2));  // coverage 2, mean 1.15 (A=1,B=2 has coverage 1)
  CHECK_THAT(limited->note, Catch::Contains("passed over"));
  (void)s300;
}

TEST_CASE("lookup: same major architecture: group default over every board and size", "[cpu][lookup]") {
  TempFile f("level4");
  Fixture fx(f.path);
  // Cells: (Z86, 1 Mi), (Z86, 16 Mi), (Z89, 4 Mi). Relative times:
  //   A=1: 1.0, 1.5, 1.2  -> 1.233;  A=2: 1.2, 1.0, 1.0 -> 1.067;  A=4: 1.1, -, 1.1 (coverage 2).
  fx.record(board("Acme Z86", 86), 1 << 20, {{cfg(1), 100}, {cfg(2), 120}, {cfg(4), 110}});
  fx.record(board("Acme Z86", 86), 1 << 24, {{cfg(2), 1000}, {cfg(1), 1500}});
  const std::int64_t s89 = fx.record(board("Acme Z89", 89), 1 << 22, {{cfg(2), 400}, {cfg(1), 480}, {cfg(4), 440}});
  fx.record(board("Acme X200", 90), 1 << 20, {{cfg(8), 1}});  // another major: never used for cc 8.x
  fx.close();

  Lookup lk(f.path, silent());
  lk.add_spec(fx.spec());
  auto a = lk.best("fixture_kernel", kF32, DeviceKey("Acme Y80", 80), n_of(4 << 20));
  CHECK(a->match == lookup::Match::same_arch);
  CHECK(a->config == cfg(2));
  CHECK(a->relative_time == Approx((1.2 + 1.0 + 1.0) / 3));
  CHECK(a->cells_covered == 3);
  CHECK(a->cells_total == 3);
  CHECK(a->device == "Acme Z86, Acme Z89");
  // Provenance: the measurement of the chosen config closest to the question (4 Mi on Z89).
  CHECK(a->problem == "n=4194304");
  CHECK(a->session_id == s89);
  CHECK(a->device_cc == 89);
  CHECK_THAT(a->note, Catch::Contains("no other board of cc 8.0"));

  // Nothing of architecture 7.x: the spec default, and the answer says why.
  auto none = lk.best("fixture_kernel", kF32, DeviceKey("Old V100", 70), n_of(1 << 20));
  CHECK(none->match == lookup::Match::spec_default);
  CHECK(none->config == fx.spec().default_config());
  CHECK(none->device.empty());
  CHECK(none->session_id == 0);
  CHECK_THAT(none->note, Catch::Contains("no board of architecture 7.x"));
  CHECK(lookup::level(none->match) == 5);
  CHECK(std::string(lookup::to_string(a->match)) == "same_arch");
}

TEST_CASE("lookup: rows of another source hash or with configurations invalid in the spec are never served",
          "[cpu][lookup]") {
  TempFile f("stale");
  TuningSpec spec = fixture_spec();
  Fixture fx(f.path, spec);
  const DeviceInfo x100 = board("Acme X100", 90), x200 = board("Acme X200", 90);
  const std::int64_t d100 = fx.device(x100);
  const std::int64_t s = fx.session(d100);
  fx.trial(s, d100, 1 << 20, cfg(8), 10, "0123456789abcdef");  // fastest, but measured with an older source
  fx.trial(s, d100, 1 << 20, Config({{"A", 16}, {"B", 1}}), 20);  // A=16 is not a value of the spec
  fx.trial(s, d100, 1 << 20, Config({{"A", 4}}), 30);             // B missing: another parameter set
  fx.trial(s, d100, 1 << 20, cfg(2), 50);
  fx.record(x200, 1 << 20, {{cfg(1), 70}});
  fx.close();

  Lookup lk(f.path, silent());
  lk.add_spec(spec);
  auto a = lk.best("fixture_kernel", kF32, DeviceKey::of(x100), n_of(1 << 20));
  CHECK(a->match == lookup::Match::exact);
  CHECK(a->config == cfg(2));
  CHECK(a->stale_rows == 3);
  CHECK_THAT(a->note, Catch::Contains("3 recorded rows were skipped") &&
                          Catch::Contains("1 measured with another kernel source") &&
                          Catch::Contains("2 with a configuration no longer valid"));

  // The kernel source changed: every row is stale; the board falls through to the next level, not to a
  // stale row.
  TuningSpec changed = spec;
  changed.source_text = "// fixture kernel v2";
  Lookup lk2(f.path, silent());
  lk2.add_spec(changed);
  auto b = lk2.best("fixture_kernel", kF32, DeviceKey::of(x100), n_of(1 << 20));
  CHECK(b->match == lookup::Match::spec_default);
  CHECK(b->stale_rows == 5);
  CHECK_THAT(b->note, Catch::Contains("skipped"));

  // A spec change that makes the recorded best invalid (A <= 1 now): the next valid row is served.
  TuningSpec narrowed = spec;
  narrowed.constraints.push_back(Expr::parse("A <= 1"));
  lk2.add_spec(narrowed);
  auto c = lk2.best("fixture_kernel", kF32, DeviceKey::of(x100), n_of(1 << 20));
  CHECK(c->match == lookup::Match::same_cc);  // X100's valid rows (A=2) are gone; X200 measured A=1
  CHECK(c->config == cfg(1));
}

TEST_CASE("lookup: a spec edited since the measurement is noted when its configuration is still valid",
          "[cpu][lookup]") {
  TempFile f("spechash");
  Fixture fx(f.path);
  const DeviceInfo x100 = board("Acme X100", 90);
  const std::int64_t d = fx.device(x100);
  const std::int64_t s = fx.session(d, "feedfacefeedface");
  fx.trial(s, d, 1 << 20, cfg(4), 10);
  fx.close();
  Lookup lk(f.path, silent());
  lk.add_spec(fx.spec());
  auto a = lk.best("fixture_kernel", kF32, DeviceKey::of(x100), n_of(1 << 20));
  CHECK(a->match == lookup::Match::exact);
  CHECK(a->config == cfg(4));
  CHECK_THAT(a->note, Catch::Contains("earlier version of the spec"));
}

TEST_CASE("lookup: \"blocks\": at another size, a configuration that would leave SMs idle there is passed over",
          "[cpu][lookup]") {
  // A tile of A * 1024 elements per block; the fixture boards have 100 SMs. Fills at n iff ceil(n / tile) >= 100.
  const auto with_blocks = [](bool blocks) {
    TuningSpec s =
        TuningSpec::from_json_text(std::string(R"J({
      "name": "fixture_kernel", "family": "synthetic", "source": "fixture.cu", "kernels": ["k"],
      "parameters": [{"name": "A", "values": [1, 2, 4, 8], "default": 2},
                     {"name": "B", "values": [1, 2], "default": 1}],
      "constraints": ["A * 32 <= max_threads_per_block"],
      "problem": {"dims": ["n"]}, "workloads": ["float32/sum", "int32/sum"])J") +
                                       (blocks ? R"J(, "blocks": "(n + A * 1024 - 1) / (A * 1024)"})J" : "}"),
                                   ".", false);
    s.source_text = "// fixture kernel v1";
    return s;
  };
  const TuningSpec spec = with_blocks(true), plain = with_blocks(false);
  REQUIRE(spec.blocks_dim() == "n");
  // A lookup hint: the trials of the spec without it count as this spec's (no "earlier version" note).
  CHECK(spec.spec_hash() == plain.spec_hash());
  CHECK(spec.spec_text != plain.spec_text);

  TempFile f("fill");
  Fixture fx(f.path, spec);
  const DeviceInfo x100 = board("Acme X100", 90);
  fx.record(x100, 1 << 24, {{cfg(8), 100}, {cfg(4), 110}, {cfg(2), 120}, {cfg(1), 130}});
  // At 1 Ki even the fastest left SMs idle where it was measured (1 block): the rule never applies there.
  fx.record(x100, 1 << 10, {{cfg(8), 10}, {cfg(1), 12}});
  fx.close();
  Lookup lk(f.path, silent());
  lk.add_spec(spec);
  const DeviceKey key = DeviceKey::of(x100);
  auto at = [&](std::int64_t n) { return lk.best("fixture_kernel", kF32, key, n_of(n)); };

  CHECK(at(1 << 24)->config == cfg(8));  // exact
  CHECK(at(1 << 20)->config == cfg(8));  // 128 blocks: fills
  CHECK(at(1 << 20)->note.empty());
  auto half = at(1 << 19);  // A=8: 64 blocks; A=4: 128
  CHECK(half->match == lookup::Match::nearest_size);
  CHECK(half->problem == "n=16777216");
  CHECK(half->config == cfg(4));
  CHECK(half->median_ns == 110);  // provenance: the served configuration's measurement
  CHECK_THAT(half->note, Catch::Contains("runs 64 blocks here for 100 SMs") && Catch::Contains("(128 blocks)"));
  CHECK(at(811009)->config == cfg(8));  // 99 * 8192 + 1: the smallest size A=8 fills
  CHECK(at(811008)->config == cfg(4));
  CHECK(at(1 << 18)->config == cfg(2));
  CHECK(at(1 << 17)->problem == "n=16777216");  // a tie of log distances: the larger problem
  CHECK(at(1 << 17)->config == cfg(1));
  // 2^16 is nearer 1 Ki, whose fastest never filled the SMs: served as measured.
  CHECK(at(1 << 16)->problem == "n=1024");
  CHECK(at(1 << 16)->config == cfg(8));
  CHECK(at(1 << 16)->note.empty());
  // Level same_cc (a board of the same cc that was not recorded) follows the same rule with the group default,
  // counted on the measuring board's SMs.
  const DeviceKey other("Acme X150", 90);
  auto group = lk.best("fixture_kernel", kF32, other, n_of(1 << 19));
  CHECK(group->match == lookup::Match::same_cc);
  CHECK(group->config == cfg(4));
  CHECK_THAT(group->note, Catch::Contains("the group default at n=16777216 runs 64 blocks here for 100 SMs"));
  CHECK(lk.best("fixture_kernel", kF32, other, n_of(1 << 20))->config == cfg(8));
  CHECK(lk.best("fixture_kernel", kF32, other, n_of(1 << 18))->config == cfg(2));
  // Without "blocks", the fastest at the nearest size, as before.
  {
    Lookup lp(f.path, silent());
    lp.add_spec(plain);
    CHECK(lp.best("fixture_kernel", kF32, key, n_of(1 << 19))->config == cfg(8));
  }
  // The target's own SM count decides: with 50 SMs, A=8's 64 blocks fill them.
  auto db = db::Database::open(f.path, db::Database::Mode::read_only);
  DeviceInfo half_board = x100;
  half_board.sm_count = 50;
  CHECK(lookup::best(*db, spec, kF32, half_board, n_of(1 << 19)).config == cfg(8));
  CHECK(lookup::best(*db, spec, kF32, x100, n_of(1 << 19)).config == cfg(4));
  // With 1000 SMs none fills them at 2^17 (A=1: 128 blocks): the fastest, as measured.
  DeviceInfo wide_board = x100;
  wide_board.sm_count = 1000;
  CHECK(lookup::best(*db, spec, kF32, wide_board, n_of(1 << 17)).config == cfg(8));

  // The compiled-in export carries the rule as thresholds: the smallest size each configuration fills
  // (99 * tile + 1), decreasing; none for the 1 Ki cell.
  const lookup::ExportKernel k = lookup::export_kernel(*db, spec);
  REQUIRE(k.workloads.front().boards.size() == 1);
  std::map<std::string, std::vector<std::pair<std::int64_t, Config>>> fills;
  for (const lookup::ExportEntry& e : k.workloads.front().boards.front().cells) {
    auto& list = fills[e.problem.key()];
    for (const auto& [from, ci] : e.fills) list.push_back({from, k.configs[ci]});
    if (!e.fills.empty()) CHECK(e.fill_dim == "n");
  }
  CHECK(fills["n=1024"].empty());
  const std::vector<std::pair<std::int64_t, Config>> expected = {
      {811009, cfg(8)}, {405505, cfg(4)}, {202753, cfg(2)}, {101377, cfg(1)}};
  CHECK(fills["n=16777216"] == expected);
  // The same thresholds for boards of cc 9.0 that were not recorded (level same_cc).
  REQUIRE(k.workloads.front().cc_groups.size() == 1);
  bool group_seen = false;
  for (const lookup::ExportEntry& e : k.workloads.front().cc_groups.front().entries) {
    if (e.problem.key() != "n=16777216") continue;
    std::vector<std::pair<std::int64_t, Config>> got;
    for (const auto& [from, ci] : e.fills) got.push_back({from, k.configs[ci]});
    CHECK(got == expected);
    group_seen = true;
  }
  CHECK(group_seen);
}

TEST_CASE("lookup: \"blocks\" in a spec: one problem dimension, known names", "[cpu][lookup]") {
  const std::string head = R"J({"name": "k2", "family": "synthetic", "source": "k.cu", "kernels": ["k"],
    "parameters": [{"name": "A", "values": [1, 2], "default": 1}],
    "problem": {"dims": ["rows", "cols"]}, "workloads": ["float32/sum"], )J";
  CHECK_THROWS_WITH(
      TuningSpec::from_json_text(head + R"J("blocks": "rows * cols / A"})J", ".", false),
      Catch::Contains("at /blocks") && Catch::Contains("'rows', 'cols'") && Catch::Contains("one dimension only"));
  const TuningSpec one = TuningSpec::from_json_text(head + R"J("blocks": "rows / A"})J", ".", false);
  CHECK(one.blocks_dim() == "rows");
  const TuningSpec typo = TuningSpec::from_json_text(head + R"J("blocks": "rows / AA"})J", ".", false);
  ProblemKey p;
  p.dims = {{"rows", 64}, {"cols", 64}};
  CHECK_THROWS_WITH(typo.space(p, board("Acme X100", 90), Workload{"float32", "sum"}),
                    Catch::Contains("/blocks") && Catch::Contains("unknown name 'AA'"));
  CHECK(!typo.blocks_at(Config({{"A", 1}}), p, board("Acme X100", 90), Workload{"float32", "sum"}));
  CHECK(*one.blocks_at(Config({{"A", 2}}), p, board("Acme X100", 90), Workload{"float32", "sum"}) == 32);
}

TEST_CASE("lookup: the one-shot function agrees with the cached class", "[cpu][lookup]") {
  TempFile f("oneshot");
  Fixture fx(f.path);
  fx.record(board("Acme X200", 90), 1 << 20, {{cfg(2), 100}, {cfg(4), 110}});
  fx.record(board("Acme X300", 90), 1 << 20, {{cfg(4), 100}, {cfg(2), 130}});
  fx.close();
  auto db = db::Database::open(f.path, db::Database::Mode::read_only);
  const DeviceInfo target = board("Acme X150", 90);
  lookup::Answer one = lookup::best(*db, fx.spec(), kF32, target, n_of(1 << 20));
  Lookup lk(f.path, silent());
  auto two = lk.best_on(fx.spec(), kF32, target, n_of(1 << 20));
  CHECK(one.match == lookup::Match::same_cc);
  CHECK(one.config == two->config);
  CHECK(one.match == two->match);
  CHECK(one.relative_time == Approx(two->relative_time));
  // Questions the spec cannot answer are usage errors, not misses.
  CHECK_THROWS_AS(lk.best(fx.spec(), Workload{"float64", "sum"}, DeviceKey::of(target), n_of(4)), UsageError);
  ProblemKey wrong;
  wrong.dims["rows"] = 4;
  CHECK_THROWS_AS(lk.best(fx.spec(), kF32, DeviceKey::of(target), wrong), UsageError);
  CHECK_THROWS_AS(lk.best("no_such_kernel", kF32, DeviceKey::of(target), n_of(4)), UsageError);
}

TEST_CASE("lookup: built-in kernels by name, against the shipped H200 recording", "[cpu][lookup]") {
  Lookup lk(autotune_test::data_dir() + "/recorded_h200.db", silent());
  REQUIRE(lk.available());
  const DeviceKey h200("NVIDIA H200", 90);
  auto exact = lk.best("reduction", kF32, h200, n_of(67108864));
  CHECK(exact->match == lookup::Match::exact);
  CHECK(exact->device == "NVIDIA H200");
  CHECK(exact->session_id > 0);
  auto near = lk.best("reduction", kF32, h200, n_of(100000000));
  CHECK(near->match == lookup::Match::nearest_size);
  CHECK(near->config == exact->config);
  auto h100 = lk.best("reduction", kF32, DeviceKey("NVIDIA H100 80GB HBM3", 90), n_of(100000000));
  CHECK(h100->match == lookup::Match::same_cc);
  CHECK(h100->config == exact->config);
  auto a100 = lk.best("reduction", kF32, DeviceKey("NVIDIA A100-SXM4-80GB", 80), n_of(100000000));
  CHECK(a100->match == lookup::Match::spec_default);
  CHECK(a100->config == specs::builtin_spec("reduction").default_config());
  REQUIRE(lk.devices().size() == 1);
  CHECK(lk.devices().front().name == "NVIDIA H200");
}

TEST_CASE("lookup: sessions of the synthetic backend, reload sees rows tuned after the first lookup",
          "[cpu][lookup]") {
  TempFile f("sessions");
  TuningSpec s = TuningSpec::from_json_text(R"J({
    "name": "k", "family": "synthetic", "source": "none.cu", "kernels": ["k"],
    "parameters": [{"name": "A", "values": [1, 2, 4, 8, 16], "default": 2},
                   {"name": "B", "values": [1, 2, 4, 8], "default": 1}],
    "problem": {"dims": ["n"]}, "workloads": ["float32"]})J", ".", false);
  const Workload w = s.workloads.front();
  const DeviceInfo dev = sim::SyntheticBackend::fake_device();
  {
    auto db = db::Database::open(f.path);
    sim::SyntheticBackend be;
    session::run(s, be, *db, w, ProblemKey::parse("n=1024"), {});
  }
  Lookup lk(f.path, silent());
  lk.add_spec(s);
  auto before = lk.best("k", w, DeviceKey::of(dev), ProblemKey::parse("n=1048576"));
  CHECK(before->match == lookup::Match::nearest_size);
  CHECK(before->problem == "n=1024");
  {
    auto db = db::Database::open(f.path);
    sim::SyntheticBackend be2(dev, [](const Config& c) { return 100.0 + c.at("A") * 10 + c.at("B"); });
    session::run(s, be2, *db, w, ProblemKey::parse("n=1048576"), {});
  }
  // Cached until reload().
  CHECK(lk.best("k", w, DeviceKey::of(dev), ProblemKey::parse("n=1048576"))->match == lookup::Match::nearest_size);
  lk.reload();
  auto after = lk.best("k", w, DeviceKey::of(dev), ProblemKey::parse("n=1048576"));
  CHECK(after->match == lookup::Match::exact);
  CHECK(after->config == Config({{"A", 1}, {"B", 1}}));
  // Another board of the same cc gets the group default of the synthetic board.
  auto other = lk.best("k", w, DeviceKey("Another GPU", 90), ProblemKey::parse("n=1048576"));
  CHECK(other->match == lookup::Match::same_cc);
  CHECK(other->config == Config({{"A", 1}, {"B", 1}}));
}

TEST_CASE("lookup: 16 threads x 10000 lookups give consistent answers", "[cpu][lookup][threads]") {
  TempFile f("threads");
  Fixture fx(f.path);
  fx.record(board("Acme X100", 90), 1 << 20, {{cfg(4), 100}, {cfg(8), 120}});
  fx.record(board("Acme X100", 90), 1 << 24, {{cfg(8), 900}, {cfg(4), 1000}});
  fx.record(board("Acme X200", 90), 1 << 20, {{cfg(2), 100}, {cfg(4), 110}});
  fx.record(board("Acme Z86", 86), 1 << 20, {{cfg(1), 100}, {cfg(2), 110}});
  fx.close();

  struct Q {
    DeviceKey device;
    std::int64_t n;
    lookup::Match match;
    Config config;
  };
  const std::vector<Q> questions = {
      {DeviceKey("Acme X100", 90), 1 << 20, lookup::Match::exact, cfg(4)},
      {DeviceKey("Acme X100", 90), 1 << 25, lookup::Match::nearest_size, cfg(8)},
      {DeviceKey("Acme X100", 90), 1 << 18, lookup::Match::nearest_size, cfg(4)},
      {DeviceKey("Acme X150", 90), 1 << 20, lookup::Match::same_cc, cfg(4)},
      {DeviceKey("Acme Y80", 80), 1 << 20, lookup::Match::same_arch, cfg(1)},
      {DeviceKey("Old V100", 70), 1 << 20, lookup::Match::spec_default, cfg(2)},
  };
  Lookup lk(f.path, silent());
  lk.add_spec(fx.spec());
  constexpr int kThreads = 16, kLookups = 10000;
  std::atomic<int> wrong{0};
  std::vector<std::vector<Lookup::AnswerPtr>> per_thread(kThreads);  // kept alive past the threads' end
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<Lookup::AnswerPtr> first(questions.size());
      for (int i = 0; i < kLookups; ++i) {
        const std::size_t qi = static_cast<std::size_t>(i + t) % questions.size();
        const Q& q = questions[qi];
        auto a = lk.best("fixture_kernel", kF32, q.device, n_of(q.n));
        if (a->match != q.match || a->config != q.config) ++wrong;
        if (first[qi] == nullptr) first[qi] = a;
        else if (first[qi] != a) ++wrong;  // within a thread a cached answer keeps its identity
      }
      per_thread[t] = first;
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong.load() == 0);
  for (std::size_t qi = 0; qi < questions.size(); ++qi) {
    // Each thread holds its own copy (no shared reference count on the fast path); the copies agree.
    std::set<const lookup::Answer*> ids;
    for (const auto& v : per_thread) {
      ids.insert(v[qi].get());
      REQUIRE(v[qi] != nullptr);
      CHECK(v[qi]->config == questions[qi].config);
      CHECK(v[qi]->match == questions[qi].match);
      CHECK(v[qi]->session_id == per_thread[0][qi]->session_id);
    }
    CHECK(ids.size() == static_cast<std::size_t>(kThreads));
  }
  // reload() drops every thread's copies: the next answer is a new object with the same content.
  auto before = lk.best("fixture_kernel", kF32, questions[0].device, n_of(questions[0].n));
  lk.reload();
  auto after = lk.best("fixture_kernel", kF32, questions[0].device, n_of(questions[0].n));
  CHECK(after.get() != before.get());
  CHECK(after->config == before->config);
}

TEST_CASE("lookup: a missing or unreadable database gives the spec default and one warning", "[cpu][lookup]") {
  const TuningSpec spec = fixture_spec();
  SECTION("missing, custom sink: one warning however many lookups") {
    std::vector<std::string> warnings;
    Lookup::Options o;
    o.warn = [&](const std::string& m) { warnings.push_back(m); };
    const std::string path = temp_db("missing");
    Lookup lk(path, o);
    lk.add_spec(spec);
    CHECK_FALSE(lk.available());
    CHECK_THAT(lk.error(), Catch::Contains("does not exist"));
    for (int i = 0; i < 5; ++i) {
      auto a = lk.best("fixture_kernel", kF32, DeviceKey("Acme X100", 90), n_of((1 << 20) + i));
      CHECK(a->match == lookup::Match::spec_default);
      CHECK(a->config == spec.default_config());
      CHECK_THAT(a->note, Catch::Contains("unavailable") && Catch::Contains(path));
    }
    CHECK(lk.devices().empty());
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings.front(), Catch::Contains(path));
    CHECK_FALSE(fs::exists(path));  // read-only: never created
  }
  SECTION("unreadable, default sink: one line on stderr per path and process") {
    TempFile garbage("garbage");
    { std::ofstream(garbage.path) << "not a database at all, just text\n"; }
    std::ostringstream captured;
    std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
    {
      Lookup a(garbage.path);
      a.add_spec(spec);
      Lookup b(garbage.path);  // a second object on the same path stays quiet
      b.add_spec(spec);
      CHECK(a.best("fixture_kernel", kF32, DeviceKey("Acme X100", 90), n_of(4))->match == lookup::Match::spec_default);
      CHECK(b.best("fixture_kernel", kF32, DeviceKey("Acme X100", 90), n_of(4))->match == lookup::Match::spec_default);
    }
    std::cerr.rdbuf(old);
    const std::string text = captured.str();
    INFO(text);
    CHECK_THAT(text, Catch::Contains("autotune: warning:") && Catch::Contains(garbage.path));
    std::size_t lines = 0;
    for (char ch : text) lines += ch == '\n';
    CHECK(lines == 1);
  }
  SECTION("shared() hands out one object per path") {
    const std::string path = temp_db("shared");
    std::ostringstream captured;
    std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
    auto a = Lookup::shared(path);
    auto b = Lookup::shared(path);
    std::cerr.rdbuf(old);
    CHECK(a.get() == b.get());
    CHECK_FALSE(a->available());
  }
}

TEST_CASE("lookup: `autotune best --json` prints the answer with its match level", "[cpu][lookup][cli]") {
  TempFile f("cli");
  {
    Fixture fx(f.path, specs::builtin_spec("reduction"));
    Config c = specs::builtin_spec("reduction").default_config();
    c.set("BLOCK_SIZE", 512);
    fx.record(board("Acme X200", 90), 1 << 20, {{c, 100}});
  }
  auto run = [](const std::string& args) {
    const std::string cmd = std::string(AUTOTUNE_BIN) + " " + args + " 2>&1";
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char buf[4096];
      std::size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
      ::pclose(p);
    }
    return out;
  };
  const std::string exact = run("--db " + f.path + " best reduction --n 1048576 --device 'Acme X200' --json");
  CHECK_THAT(exact, Catch::Contains("\"match\": \"exact\"") && Catch::Contains("\"match_level\": 0") &&
                        Catch::Contains("\"BLOCK_SIZE\": 512"));
  const std::string other = run("--db " + f.path + " best reduction --n 4000000 --device 'Acme X150' --cc 90 --json");
  CHECK_THAT(other, Catch::Contains("\"match\": \"same_cc\"") && Catch::Contains("\"device\": \"Acme X200\"") &&
                        Catch::Contains("\"problem\": \"n=1048576\"") && Catch::Contains("\"BLOCK_SIZE\": 512"));
  const std::string none = run("--db " + f.path + " best reduction --n 4000000 --device 'Acme Q1' --cc 75");
  CHECK_THAT(none, Catch::Contains("[spec_default]"));
}

TEST_CASE("lookup: the public header pulls in no NVRTC, CUDA, SQLite or search header", "[cpu][lookup]") {
  const fs::path root = fs::path(AUTOTUNE_TEST_DATA_DIR).parent_path().parent_path();
  const std::regex include_re("^\\s*#\\s*include\\s*[<\"]([^>\"]+)[>\"]");
  std::set<std::string> visited;
  std::vector<std::string> forbidden_hits;
  std::function<void(const std::string&)> visit = [&](const std::string& rel) {
    if (!visited.insert(rel).second) return;
    std::ifstream in(root / rel);
    REQUIRE(in);
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const std::string inc = m[1];
      if (inc == "nvrtc.h" || inc == "cuda.h" || inc == "cudaTypedefs.h" || inc == "cuda_runtime.h" ||
          inc == "sqlite3.h" || inc.rfind("search/", 0) == 0 || inc.rfind("tuner/cuda/", 0) == 0)
        forbidden_hits.push_back(rel + " includes " + inc);
      if (fs::exists(root / inc)) visit(inc);  // project headers; system headers are not followed
    }
  };
  visit("tuner/lookup/lookup.hpp");
  INFO("visited " << visited.size() << " headers");
  CHECK(visited.size() > 3);
  CHECK(forbidden_hits.empty());
  for (const auto& h : forbidden_hits) WARN(h);
}
