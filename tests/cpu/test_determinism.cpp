// Determinism on request: the spec's "nondeterministic" field, the deterministic narrowing of a space (tune and
// space --deterministic) on the built-in reduction and scan, and the lookup that serves only deterministic
// configurations when asked (docs/spec-format.md, docs/lookup.md "Deterministic results").
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "db/database.hpp"
#include "tests/cli_support.hpp"
#include "tests/test_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/request.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
namespace fs = std::filesystem;

namespace {

/// A fictional kernel whose B=2 combines its partial results in an order that varies run to run.
const char* kSpec = R"J({
  "name": "det_kernel", "family": "synthetic", "source": "det.cu", "kernels": ["k"],
  "parameters": [{"name": "A", "values": [1, 2, 4, 8], "default": 2},
                 {"name": "B", "values": [1, 2], "default": 1}],
  "constraints": ["A * 32 <= max_threads_per_block"],
  "nondeterministic": ["B == 2 && is_float"],
  "problem": {"dims": ["n"]}, "workloads": ["float32/sum", "int32/sum"]})J";

TuningSpec parse(const std::string& text) {
  TuningSpec s = TuningSpec::from_json_text(text, ".", false);
  s.source_text = "// det kernel v1";
  return s;
}

/// kSpec with one replacement applied.
std::string with(const std::string& from, const std::string& to) {
  std::string s = kSpec;
  const auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  s.replace(pos, from.size(), to);
  return s;
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "ok";
}

ProblemKey n_of(std::int64_t n) {
  ProblemKey p;
  p.dims["n"] = n;
  return p;
}

Config cfg(std::int64_t a, std::int64_t b) { return Config({{"A", a}, {"B", b}}); }

/// The valid configurations of s at p with w on the synthetic device: all, and those the deterministic requirement
/// keeps.
std::pair<std::size_t, std::size_t> sizes(TuningSpec s, const ProblemKey& p, const Workload& w) {
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  s.deterministic = false;
  const std::size_t all = s.space(p, d, w).size();
  s.deterministic = true;
  return {all, s.space(p, d, w).size()};
}

}  // namespace

TEST_CASE(
    "determinism: the \"nondeterministic\" field parses, stays out of the hash, and its errors name the "
    "pointer",
    "[cpu][determinism][spec]") {
  const TuningSpec s = parse(kSpec);
  REQUIRE(s.nondeterministic.size() == 1);
  CHECK(s.nondeterministic_text() == "B == 2 && is_float");
  CHECK_FALSE(s.deterministic);
  // Which configurations a deterministic run leaves out changes no measurement: the trials stay this spec's.
  CHECK(s.spec_hash() == parse(with(R"("nondeterministic": ["B == 2 && is_float"],)", "")).spec_hash());

  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const Workload f32{"float32", "sum"}, i32{"int32", "sum"};
  CHECK(s.nondeterministic_reason(cfg(2, 2), n_of(1000), d, f32) != nullptr);
  CHECK(s.nondeterministic_reason(cfg(2, 1), n_of(1000), d, f32) == nullptr);
  CHECK(s.nondeterministic_reason(cfg(2, 2), n_of(1000), d, i32) == nullptr);

  CHECK_THAT(error_of(with(R"(["B == 2 && is_float"])", R"("B == 2")")),
             Catch::Contains("at /nondeterministic:") && Catch::Contains("expected an array"));
  CHECK_THAT(error_of(with(R"(["B == 2 && is_float"])", "[42]")),
             Catch::Contains("/nondeterministic/0") && Catch::Contains("expected an expression string"));
  CHECK_THAT(error_of(with(R"(["B == 2 && is_float"])", R"(["B == 2", "B =="])")),
             Catch::Contains("/nondeterministic/1"));
  CHECK_THAT(error_of(with(R"(["B == 2 && is_float"])", R"(["C == 2"])")),
             Catch::Contains("/nondeterministic/0") && Catch::Contains("unknown name 'C'"));
  // Problem dims, device and workload variables are known names, as in constraints.
  CHECK(error_of(with(R"(["B == 2 && is_float"])", R"(["B == 2 && n > sm_count * warp_size && sizeof_t == 4"])")) ==
        "ok");
}

TEST_CASE("determinism: the narrowing leaves out the marked configurations, and says so - none left is an error",
          "[cpu][determinism][spec]") {
  TuningSpec s = parse(kSpec);
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const Workload f32{"float32", "sum"}, i32{"int32", "sum"};
  CHECK(sizes(s, n_of(1000), f32) == std::make_pair<std::size_t, std::size_t>(8, 4));
  CHECK(sizes(s, n_of(1000), i32) == std::make_pair<std::size_t, std::size_t>(8, 8));

  CHECK(deterministic_summary(s, n_of(1000), d, f32).empty());  // not asked for
  SpaceNarrowing narrow;
  narrow.deterministic = true;
  narrow.apply(s);
  REQUIRE(s.deterministic);
  const ParameterSpace sp = s.space(n_of(1000), d, f32);
  for (std::size_t i = 0; i < sp.size(); ++i) CHECK(sp.config(i).get("B") == 1);
  CHECK(deterministic_summary(s, n_of(1000), d, f32) ==
        "deterministic: 4 of 8 valid configurations kept, 4 left out (not bit-reproducible run to run where B == 2 "
        "&& is_float)");

  // Every configuration marked: a clear error, not an empty tune.
  TuningSpec all = parse(with(R"(["B == 2 && is_float"])", R"(["is_float", "B == 2"])"));
  all.deterministic = true;
  CHECK_THROWS_WITH(deterministic_summary(all, n_of(1000), d, f32),
                    Catch::Contains("none of the 8 valid configurations of det_kernel float32/sum n=1000") &&
                        Catch::Contains("is_float or B == 2"));
  // A kernel that marks nothing keeps everything.
  TuningSpec none = parse(with(R"("nondeterministic": ["B == 2 && is_float"],)", ""));
  none.deterministic = true;
  CHECK_THAT(deterministic_summary(none, n_of(1000), d, f32), Catch::Contains("every valid one is kept"));

  // Python expressions: the negation is Python's too.
  TuningSpec py = parse(with(R"("nondeterministic": ["B == 2 && is_float"],)",
                             R"("expressions": "python", "nondeterministic": ["B == 2 and is_float"],)"));
  CHECK(sizes(py, n_of(1000), f32) == std::make_pair<std::size_t, std::size_t>(8, 4));
}

TEST_CASE("determinism: the built-in reduction leaves out its atomic final step for float sums only",
          "[cpu][determinism][reduction]") {
  const TuningSpec s = specs::builtin_spec("reduction");
  REQUIRE(s.nondeterministic.size() == 1);
  const ProblemKey p = n_of(std::int64_t{1} << 28);
  for (const char* key : {"float32/sum", "float64/sum"}) {
    INFO(key);
    const Workload w = Workload::parse(key);
    const auto [all, kept] = sizes(s, p, w);
    // What is left out is exactly the configurations with FINAL=1 (atomic).
    TuningSpec copy = s;
    const ParameterSpace full = copy.space(p, sim::SyntheticBackend::fake_device(), w);
    std::size_t atomic = 0;
    for (std::size_t i = 0; i < full.size(); ++i) atomic += full.config(i).get("FINAL") == 1 ? 1 : 0;
    CHECK(atomic > 0);
    CHECK(kept == all - atomic);
    CHECK(all == 2436);
    CHECK(kept == 1218);
  }
  // Integer sums, minima and maxima (also of floats) combine atomically in any order to the same bits.
  for (const char* key : {"int32/sum", "float32/min", "float32/max", "float3/maxmag"}) {
    INFO(key);
    const auto [all, kept] = sizes(s, p, Workload::parse(key));
    CHECK(kept == all);
  }
  // The spec default is deterministic: the fallback of a deterministic lookup.
  CHECK(s.default_config().get("FINAL") == 0);
}

TEST_CASE(
    "determinism: the built-in scan keeps the hierarchical variants for floats (the look-back adds in an "
    "order that varies)",
    "[cpu][determinism][scan]") {
  const TuningSpec s = specs::builtin_spec("scan");
  const ProblemKey p = n_of(std::int64_t{1} << 24);
  const Workload f32 = Workload::parse("float32/inclusive_sum");
  // The hierarchical variants are all kept, the single-pass ones all left out.
  TuningSpec hierarchical = s;
  hierarchical.restrict_values("VARIANT", {"0", "1", "2", "3"});
  const auto [h_all, h_kept] = sizes(hierarchical, p, f32);
  CHECK(h_all > 0);
  CHECK(h_kept == h_all);
  TuningSpec single_pass = s;
  single_pass.restrict_values("VARIANT", {"4", "5", "6", "7", "8", "9", "10"});
  const auto [s_all, s_kept] = sizes(single_pass, p, f32);
  CHECK(s_all > 0);
  CHECK(s_kept == 0);
  // Integers add in any order to the same bits.
  const auto [all, kept] = sizes(s, p, Workload::parse("int32/inclusive_sum"));
  CHECK(kept == all);
  // Compaction moves values and counts integers: nothing to leave out.
  CHECK(specs::builtin_spec("compaction").nondeterministic.empty());
}

namespace {

std::string temp_db(const std::string& tag) {
  static std::atomic<int> counter{0};
  fs::path p = fs::temp_directory_path() / ("autotune_determinism_" + tag + "_" + std::to_string(::getpid()) + "_" +
                                            std::to_string(counter++) + ".db");
  fs::remove(p);
  return p.string();
}

DeviceInfo board() {
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  d.name = "Acme X100";
  return d;
}

/// Records one session of `spec` on board() at n with configurations and times.
void record(const std::string& path, const TuningSpec& spec, std::int64_t n,
            const std::vector<std::pair<Config, double>>& rows) {
  auto db = db::Database::open(path);
  const std::int64_t dev = db->upsert_device(board());
  db::SessionRow s;
  s.kernel = spec.name;
  s.source_hash = spec.source_hash();
  s.spec_hash = spec.spec_hash();
  s.strategy = "fixture";
  s.workload = "float32/sum";
  s.device_id = dev;
  s.backend = "synthetic";
  const std::int64_t sid = db->begin_session(s);
  for (const auto& [c, ns] : rows) {
    db::TrialRow t;
    t.session_id = sid;
    t.device_id = dev;
    t.kernel = spec.name;
    t.source_hash = spec.source_hash();
    t.workload = "float32/sum";
    t.problem = n_of(n).key();
    t.problem_elements = n_of(n).elements();
    t.config_json = c.to_json();
    t.config_hash = c.hash();
    t.m.status = TrialStatus::ok;
    t.m.median_ns = ns;
    t.m.min_ns = ns;
    t.m.samples = 9;
    t.gbps = 1e3 / ns;
    REQUIRE(db->insert_trial(t));
  }
}

Lookup::Options silent() {
  Lookup::Options o;
  o.warn = [](const std::string&) {};
  return o;
}

}  // namespace

TEST_CASE("determinism: asked for a deterministic configuration, the lookup passes over the marked rows",
          "[cpu][determinism][lookup]") {
  const std::string path = temp_db("lookup");
  const TuningSpec spec = parse(kSpec);
  // The fastest two are B=2 (nondeterministic for floats).
  record(path, spec, 1 << 20, {{cfg(8, 2), 10}, {cfg(4, 2), 12}, {cfg(4, 1), 20}, {cfg(2, 1), 30}});
  TuningSpec det = spec;
  det.deterministic = true;
  const Workload f32{"float32", "sum"};

  Lookup lk(path, silent());
  // One Lookup answers both questions, each from rows of its own (the cache keys differ).
  auto fast = lk.best_on(spec, f32, board(), n_of(1 << 20));
  auto a = lk.best_on(det, f32, board(), n_of(1 << 20));
  auto again = lk.best_on(spec, f32, board(), n_of(1 << 20));
  CHECK(fast->config == cfg(8, 2));
  CHECK(again->config == cfg(8, 2));
  CHECK(a->match == lookup::Match::exact);
  CHECK(a->config == cfg(4, 1));
  CHECK(a->stale_rows == 0);
  CHECK_THAT(a->note, Catch::Contains("2 recorded rows were not candidates") && Catch::Contains("B == 2 && is_float"));
  // The one-shot function agrees.
  {
    auto db = db::Database::open(path, db::Database::Mode::read_only);
    CHECK(lookup::best(*db, det, f32, board(), n_of(1 << 20)).config == cfg(4, 1));
  }

  // Only nondeterministic rows recorded, and a nondeterministic spec default: the default comes back with a note
  // (the runtime refuses it, tests/gpu/test_determinism_gpu.cpp).
  const std::string only = temp_db("only");
  TuningSpec bad_default = parse(with(R"("default": 1})", R"("default": 2})"));
  record(only, bad_default, 1 << 20, {{cfg(8, 2), 10}});
  bad_default.deterministic = true;
  Lookup lk2(only, silent());
  auto b = lk2.best_on(bad_default, f32, board(), n_of(1 << 20));
  CHECK(b->match == lookup::Match::spec_default);
  CHECK(b->config == cfg(2, 2));
  CHECK_THAT(b->note, Catch::Contains("the spec default is not deterministic"));
  for (const std::string& p : {path, only}) autotune_test::remove_db(p);
}

TEST_CASE("determinism: space and tune --deterministic on the built-in reduction (replayed)",
          "[cpu][determinism][cli]") {
  using autotune_test::Run;
  using autotune_test::run_cli;
  Run sp = run_cli("space reduction --n 268435456 --deterministic");
  INFO(sp.out);
  CHECK(sp.code == 0);
  CHECK_THAT(sp.out, Catch::Contains("deterministic: ") && Catch::Contains("left out (not bit-reproducible run to run "
                                                                           "where FINAL == 1 && is_float && is_sum)"));
  Run ints = run_cli("space reduction --n 268435456 --dtype int32 --deterministic");
  CHECK_THAT(ints.out, Catch::Contains(" 0 left out"));

  const std::string db = autotune_test::tmp_path("determinism", "tune.db");
  autotune_test::remove_db(db);
  Run t = run_cli("--db " + db + " tune reduction --n 67108864 --simulate --from " + autotune_test::data_dir() +
                  "/recorded_h200.db --deterministic --top 50");
  INFO(t.out);
  CHECK(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("deterministic: ") && Catch::Contains("left out"));
  const auto table = t.out.find("configuration");
  REQUIRE(table != std::string::npos);
  CHECK(t.out.find("FINAL=atomic", table) == std::string::npos);
  CHECK(t.out.find("FINAL=second_pass", table) != std::string::npos);
  autotune_test::remove_db(db);
}
