// Import of Kernel Tuner cache files and T4 results, export as T4 (tuner/interop/interop.*), and the CLI
// commands import/export: status and unit mapping, parameter checks, open caches, round trips, and a
// simulation on imported data.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "db_support.hpp"
#include "test_support.hpp"
#include "tests/cli_support.hpp"
#include "tuner/compare/compare.hpp"
#include "tuner/core/error.hpp"
#include "tuner/interop/interop.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/session/session.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using interop::ImportedTrial;
using interop::ImportOptions;

namespace {

using autotune_test::Run;
using autotune_test::run_cli;

std::string fixture(const std::string& name) { return autotune_test::data_dir() + "/interop/" + name; }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string tmp_path(const std::string& name) {
  return "/tmp/autotune_interop_test_" + std::to_string(::getpid()) + "_" + name;
}

ImportOptions options_for(const TuningSpec& spec) {
  ImportOptions o;
  o.spec = &spec;
  o.source_hash = spec.source_hash();
  o.origin = "fixture";
  return o;
}

/// Index by configuration; the vector must outlive the map.
std::map<std::string, const ImportedTrial*> by_config(const std::vector<ImportedTrial>& v) {
  std::map<std::string, const ImportedTrial*> m;
  for (const auto& t : v) m[t.row.config_json] = &t;
  return m;
}
std::map<std::string, const ImportedTrial*> by_config(std::vector<ImportedTrial>&&) = delete;

const std::string kTiled32 = R"({"BLOCK_ROWS":8,"DIAGONAL":0,"PADDING":1,"TILE_DIM":32,"VARIANT":1})";

/// Every field a trial row carries apart from ids, session and source hash.
void check_same_trial(const db::TrialRow& a, const db::TrialRow& b) {
  INFO(a.config_json);
  CHECK(a.kernel == b.kernel);
  CHECK(a.workload == b.workload);
  CHECK(a.problem == b.problem);
  CHECK(a.problem_elements == b.problem_elements);
  CHECK(a.config_json == b.config_json);
  CHECK(a.config_hash == b.config_hash);
  CHECK(a.m.status == b.m.status);
  if (a.m.ok()) {
    CHECK(a.m.median_ns == Approx(b.m.median_ns).epsilon(1e-12));
    CHECK(a.m.min_ns == Approx(b.m.min_ns).epsilon(1e-12));
    CHECK(a.m.spread == Approx(b.m.spread).epsilon(1e-12));
    CHECK(a.m.samples == b.m.samples);
    CHECK(a.gbps == Approx(b.gbps).epsilon(1e-12));
  }
  CHECK(a.m.compile_ms == Approx(b.m.compile_ms).epsilon(1e-12));
  CHECK(a.m.verify_ms == Approx(b.m.verify_ms).epsilon(1e-12));
  CHECK(a.m.log == b.m.log);
  CHECK(a.m.protocol == b.m.protocol);
  CHECK(a.created_at == b.created_at);
}

}  // namespace

TEST_CASE("Kernel Tuner cache: values, units and error strings", "[cpu][interop]") {
  TuningSpec spec = specs::builtin_spec("transpose");
  auto trials = interop::parse_kt_cache(slurp(fixture("kt_transpose.json")), options_for(spec));
  REQUIRE(trials.size() == 6);
  auto m = by_config(trials);
  REQUIRE(m.count(kTiled32));
  const auto& ok = *m[kTiled32];
  CHECK(ok.device.name == "NVIDIA A100-PCIE-40GB");
  CHECK(ok.row.kernel == "transpose");
  CHECK(ok.row.source_hash == spec.source_hash());
  CHECK(ok.row.workload == "float32");  // the spec's first workload and problem size
  CHECK(ok.row.problem == "cols=8192,rows=8192");
  CHECK(ok.row.m.status == TrialStatus::ok);
  CHECK(ok.row.m.median_ns == Approx(512000.0));  // 0.512 ms
  CHECK(ok.row.m.min_ns == Approx(510000.0));
  CHECK(ok.row.m.samples == 7);
  CHECK(ok.row.m.spread > 0);
  CHECK(ok.row.m.compile_ms == Approx(812.4));
  CHECK(ok.row.m.verify_ms == Approx(3.5));
  CHECK(ok.row.gbps == Approx(1048.6));  // the cache's GB/s observer
  CHECK(ok.row.created_at == "2024-03-05T10:11:12.345678+00:00");
  CHECK_THAT(ok.row.m.protocol, Catch::StartsWith("import:kt-cache"));

  auto status_of = [&](const std::string& cfg) { return m.at(cfg)->row.m.status; };
  CHECK(status_of(R"({"BLOCK_ROWS":32,"DIAGONAL":0,"PADDING":1,"TILE_DIM":64,"VARIANT":1})") == TrialStatus::invalid);
  CHECK(status_of(R"({"BLOCK_ROWS":16,"DIAGONAL":1,"PADDING":1,"TILE_DIM":64,"VARIANT":1})") == TrialStatus::compile_error);
  CHECK(status_of(R"({"BLOCK_ROWS":2,"DIAGONAL":0,"PADDING":0,"TILE_DIM":16,"VARIANT":0})") == TrialStatus::launch_error);
  CHECK_THAT(m.at(R"({"BLOCK_ROWS":2,"DIAGONAL":0,"PADDING":0,"TILE_DIM":16,"VARIANT":0})")->row.m.log,
             Catch::Contains("RuntimeFailedConfig"));

  // Overrides: device, workload, problem; GB/s from the adapter when the cache has no observer.
  ImportOptions o = options_for(spec);
  o.device = "My GPU";
  o.cc = 80;
  o.workload = Workload::parse("float64");
  o.problem = ProblemKey::parse("rows=4000,cols=4000");
  o.bytes_moved = [](const Workload&, const ProblemKey&) { return 1e6; };
  auto over_trials = interop::parse_kt_cache(slurp(fixture("kt_transpose.json")), o);
  auto over = by_config(over_trials);
  const auto* diag = over.at(R"({"BLOCK_ROWS":8,"DIAGONAL":1,"PADDING":1,"TILE_DIM":32,"VARIANT":1})");
  CHECK(diag->device.name == "My GPU");
  CHECK(diag->device.cc == 80);
  CHECK(diag->row.workload == "float64");
  CHECK(diag->row.problem == "cols=4000,rows=4000");
  CHECK(diag->row.gbps == Approx(1e6 / 498000.0));
  o.workload = Workload::parse("int8");
  CHECK_THROWS_AS(interop::parse_kt_cache(slurp(fixture("kt_transpose.json")), o), UsageError);
}

TEST_CASE("Kernel Tuner cache left open by an interrupted run reads the same", "[cpu][interop]") {
  TuningSpec spec = specs::builtin_spec("transpose");
  auto closed = interop::parse_kt_cache(slurp(fixture("kt_transpose.json")), options_for(spec));
  auto open = interop::parse_kt_cache(slurp(fixture("kt_transpose_open.json")), options_for(spec));
  REQUIRE(open.size() == closed.size());
  for (std::size_t i = 0; i < open.size(); ++i) check_same_trial(open[i].row, closed[i].row);
  // A header only (no line appended yet) is an empty cache.
  std::string header = R"({
"device_name": "X",
"kernel_name": "transpose",
"tune_params_keys": ["VARIANT", "TILE_DIM", "BLOCK_ROWS", "PADDING", "DIAGONAL"],
"cache": {)";
  CHECK(interop::parse_kt_cache(header, options_for(spec)).empty());
  CHECK_THROWS_WITH(interop::parse_kt_cache("{\"cache\": {\"1\": [", options_for(spec)), Catch::Contains("fixture"));
}

TEST_CASE("Kernel Tuner cache: parameters must match the spec, values must be integers or labels", "[cpu][interop]") {
  TuningSpec spec = specs::builtin_spec("transpose");
  CHECK_THROWS_WITH(interop::parse_kt_cache(slurp(fixture("kt_extra_param.json")), options_for(spec)),
                    Catch::Contains("block_size_x") && Catch::Contains("not a parameter of kernel transpose"));
  std::string missing = R"({"device_name": "X", "tune_params_keys": ["VARIANT", "TILE_DIM", "BLOCK_ROWS", "PADDING"],
    "cache": {"1,32,8,1": {"VARIANT": 1, "TILE_DIM": 32, "BLOCK_ROWS": 8, "PADDING": 1, "time": 0.5}}})";
  CHECK_THROWS_WITH(interop::parse_kt_cache(missing, options_for(spec)),
                    Catch::Contains("DIAGONAL") && Catch::Contains("missing"));
  std::string label = R"({"device_name": "X", "tune_params_keys": ["VARIANT", "TILE_DIM", "BLOCK_ROWS", "PADDING", "DIAGONAL"],
    "cache": {"fancy,32,8,1,0": {"VARIANT": "fancy", "TILE_DIM": 32, "BLOCK_ROWS": 8, "PADDING": 1, "DIAGONAL": 0, "time": 0.5}}})";
  CHECK_THROWS_WITH(interop::parse_kt_cache(label, options_for(spec)),
                    Catch::Contains("\"fancy\"") && Catch::Contains("naive, tiled"));
  std::string fractional = R"({"device_name": "X", "tune_params_keys": ["VARIANT", "TILE_DIM", "BLOCK_ROWS", "PADDING", "DIAGONAL"],
    "cache": {"1,32.5,8,1,0": {"VARIANT": 1, "TILE_DIM": 32.5, "BLOCK_ROWS": 8, "PADDING": 1, "DIAGONAL": 0, "time": 0.5}}})";
  CHECK_THROWS_WITH(interop::parse_kt_cache(fractional, options_for(spec)), Catch::Contains("TILE_DIM"));
  // Values only in the key (older caches), floats with integral values and "1"-style strings are fine.
  std::string key_only = R"({"device_name": "X", "problem_size": [8192, 8192], "tune_params_keys": ["VARIANT", "TILE_DIM", "BLOCK_ROWS", "PADDING", "DIAGONAL"],
    "cache": {"tiled,32,8,1,0": {"TILE_DIM": 32.0, "PADDING": "1", "time": 0.5}}})";
  auto t = interop::parse_kt_cache(key_only, options_for(spec));
  REQUIRE(t.size() == 1);
  CHECK(t[0].row.config_json == kTiled32);
  std::string bad_time = R"({"device_name": "X", "tune_params_keys": ["VARIANT", "TILE_DIM", "BLOCK_ROWS", "PADDING", "DIAGONAL"],
    "cache": {"1,32,8,1,0": {"VARIANT": 1, "TILE_DIM": 32, "BLOCK_ROWS": 8, "PADDING": 1, "DIAGONAL": 0, "time": "Oops"}}})";
  CHECK_THROWS_WITH(interop::parse_kt_cache(bad_time, options_for(spec)), Catch::Contains("Oops"));
  std::string no_device = R"({"cache": {}})";
  CHECK_THROWS_WITH(interop::parse_kt_cache(no_device, options_for(spec)), Catch::Contains("--device"));
  CHECK_THROWS_WITH(interop::parse_kt_cache("[1, 2]", options_for(spec)), Catch::Contains("no \"cache\""));
}

TEST_CASE("T4 results written by Kernel Tuner", "[cpu][interop]") {
  TuningSpec spec = specs::builtin_spec("transpose");
  const std::string text = slurp(fixture("t4_transpose_kt.json"));
  CHECK_THROWS_WITH(interop::parse_t4(text, options_for(spec)), Catch::Contains("--device"));
  ImportOptions o = options_for(spec);
  o.device = "NVIDIA A100-PCIE-40GB";
  auto trials = interop::parse_t4(text, o);
  REQUIRE(trials.size() == 6);
  auto m = by_config(trials);
  const auto& ok = *m.at(kTiled32);
  CHECK(ok.row.m.status == TrialStatus::ok);
  CHECK(ok.row.m.median_ns == Approx(512000.0));
  CHECK(ok.row.m.min_ns == Approx(510000.0));
  CHECK(ok.row.m.samples == 7);
  CHECK(ok.row.m.compile_ms == Approx(812.4));
  CHECK(ok.row.m.verify_ms == Approx(3.5));
  CHECK(ok.row.gbps == Approx(1048.6));
  CHECK(m.at(R"({"BLOCK_ROWS":8,"DIAGONAL":1,"PADDING":1,"TILE_DIM":32,"VARIANT":1})")->row.m.median_ns ==
        Approx(498000.0));  // 498 us
  CHECK(m.at(R"({"BLOCK_ROWS":8,"DIAGONAL":0,"PADDING":0,"TILE_DIM":32,"VARIANT":0})")->row.m.median_ns ==
        Approx(1406000.0));  // median of times.runtimes
  CHECK(m.at(R"({"BLOCK_ROWS":32,"DIAGONAL":0,"PADDING":1,"TILE_DIM":64,"VARIANT":1})")->row.m.status == TrialStatus::invalid);
  CHECK(m.at(R"({"BLOCK_ROWS":16,"DIAGONAL":1,"PADDING":1,"TILE_DIM":64,"VARIANT":1})")->row.m.status ==
        TrialStatus::compile_error);
  CHECK(m.at(R"({"BLOCK_ROWS":2,"DIAGONAL":0,"PADDING":0,"TILE_DIM":16,"VARIANT":0})")->row.m.status ==
        TrialStatus::runtime_fault);

  // Kernel Tuner cache and T4 of the same run give the same times.
  auto kt_trials = interop::parse_kt_cache(slurp(fixture("kt_transpose.json")), options_for(spec));
  auto kt = by_config(kt_trials);
  CHECK(kt.at(kTiled32)->row.m.spread == Approx(ok.row.m.spread));

  CHECK_THROWS_WITH(interop::parse_t4(R"({"results": [{"configuration": {"VARIANT": 1}}]})", o),
                    Catch::Contains("TILE_DIM") && Catch::Contains("missing"));
  CHECK_THROWS_WITH(interop::parse_t4(R"({"results": [{"configuration": {"VARIANT": 1, "TILE_DIM": 32, "BLOCK_ROWS": 8,
      "PADDING": 1, "DIAGONAL": 0, "WARP": 2}}]})", o), Catch::Contains("WARP"));
  CHECK_THROWS_WITH(interop::parse_t4(R"({"results": [{"configuration": {"VARIANT": 1, "TILE_DIM": 32, "BLOCK_ROWS": 8,
      "PADDING": 1, "DIAGONAL": 0}, "invalidity": "correct", "measurements": []}]})", o),
                    Catch::Contains("no positive time"));
  CHECK_THROWS_WITH(interop::parse_t4(R"({"results": [{"configuration": {"VARIANT": 1, "TILE_DIM": 32, "BLOCK_ROWS": 8,
      "PADDING": 1, "DIAGONAL": 0}, "invalidity": "cosmic_ray"}]})", o), Catch::Contains("cosmic_ray"));
  CHECK_THROWS_WITH(interop::parse_t4("{\"results\": 3}", o), Catch::Contains("no \"results\""));
  CHECK_THROWS_WITH(interop::parse_t4("not json", o), Catch::Contains("not valid JSON"));
}

TEST_CASE("storing imported trials: devices, duplicates, report", "[cpu][interop]") {
  TuningSpec spec = specs::builtin_spec("transpose");
  auto db = db::Database::open(":memory:");
  auto trials = interop::parse_kt_cache(slurp(fixture("kt_transpose.json")), options_for(spec));
  interop::ImportReport r = interop::store_trials(*db, trials, &spec);
  CHECK(r.read == 6);
  CHECK(r.inserted == 6);
  CHECK(r.duplicates == 0);
  CHECK(r.by_status.at("ok") == 3);
  CHECK(r.by_status.at("invalid") == 1);
  CHECK(r.outside_spec == 0);
  CHECK(r.devices == std::vector<std::string>{"NVIDIA A100-PCIE-40GB"});
  CHECK(r.groups == std::vector<std::string>{"float32 cols=8192,rows=8192"});
  REQUIRE(db->devices().size() == 1);
  db::TrialFilter f;
  f.kernel = "transpose";
  auto rows = db->trials(f);
  REQUIRE(rows.size() == 6);
  for (const auto& row : rows) CHECK(row.session_id == 0);

  // Again: nothing new; the device is reused by its (normalised) name.
  interop::ImportReport again = interop::store_trials(*db, trials, &spec);
  CHECK(again.inserted == 0);
  CHECK(again.duplicates == 6);
  ImportOptions o = options_for(spec);
  o.device = "nvidia_a100_pcie_40gb";
  interop::store_trials(*db, interop::parse_kt_cache(slurp(fixture("kt_transpose.json")), o), &spec);
  CHECK(db->devices().size() == 1);

  // A value outside the spec's value lists is stored and reported.
  std::string odd = R"({"device_name": "NVIDIA A100-PCIE-40GB", "problem_size": [8192, 8192], "tune_params_keys": ["VARIANT", "TILE_DIM", "BLOCK_ROWS", "PADDING", "DIAGONAL"],
    "cache": {"1,48,8,1,0": {"VARIANT": 1, "TILE_DIM": 48, "BLOCK_ROWS": 8, "PADDING": 1, "DIAGONAL": 0, "time": 0.5}}})";
  CHECK(interop::store_trials(*db, interop::parse_kt_cache(odd, options_for(spec)), &spec).outside_spec == 1);
}

TEST_CASE("T4 export then import restores the recorded H200 trials", "[cpu][interop]") {
  auto rec = db::Database::open(autotune_test::data_dir() + "/recorded_h200.db", db::Database::Mode::read_only);
  std::size_t count = 0;
  const std::string text = interop::export_t4(*rec, {}, &count);
  CHECK(count == 2436 + 90);
  auto j = nlohmann::json::parse(text);
  CHECK(j["schema_version"] == "1.0.0");
  REQUIRE(j["results"].size() == count);
  const auto& first = j["results"][0];
  for (const char* key : {"configuration", "times", "invalidity", "correctness", "measurements", "objectives"})
    CHECK(first.contains(key));

  auto out = db::Database::open(":memory:");
  for (const char* kernel : {"reduction", "transpose"}) {
    TuningSpec spec = specs::builtin_spec(kernel);
    std::size_t skipped = 0;
    auto trials = interop::parse_t4(text, options_for(spec), &skipped);
    CHECK(skipped == count - trials.size());
    interop::store_trials(*out, trials, &spec);
    db::TrialFilter f;
    f.kernel = kernel;
    auto a = rec->trials(f);
    auto b = out->trials(f);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      check_same_trial(a[i], b[i]);
      CHECK(b[i].source_hash == spec.source_hash());
    }
  }
  // The device comes back whole (identity, limits, copy bandwidth).
  REQUIRE(out->devices().size() == 1);
  const auto d_in = rec->devices().front(), d_out = out->devices().front();
  CHECK(d_out.info.name == d_in.info.name);
  CHECK(d_out.info.cc == d_in.info.cc);
  CHECK(d_out.info.uuid == d_in.info.uuid);
  CHECK(d_out.info.sm_count == d_in.info.sm_count);
  CHECK(d_out.info.total_memory == d_in.info.total_memory);
  CHECK(d_out.copy_gbps == Approx(d_in.copy_gbps));

  // Filters.
  interop::ExportFilter only;
  only.kernel = "transpose";
  only.device = "nvidia_h200";
  interop::export_t4(*rec, only, &count);
  CHECK(count == 90);
  only.device = "NVIDIA A100";
  CHECK_THROWS_WITH(interop::export_t4(*rec, only), Catch::Contains("NVIDIA H200"));
}

TEST_CASE("T4 round trip keeps every failure status", "[cpu][interop]") {
  TuningSpec spec = TuningSpec::from_json_text(R"J({
    "name": "k", "family": "synthetic", "source": "none.cu", "kernels": ["k"],
    "parameters": [{"name": "A", "values": [1, 2, 4, 8, 16, 32, 64], "default": 2},
                   {"name": "B", "values": [1, 2], "default": 1}],
    "problem": {"dims": ["n"], "sizes": [{"n": 1000}]}, "workloads": ["float32"]})J", ".", false);
  auto db = db::Database::open(":memory:");
  sim::SyntheticBackend be;
  const TrialStatus failures[] = {TrialStatus::compile_error, TrialStatus::launch_error, TrialStatus::wrong_result,
                                  TrialStatus::runtime_fault, TrialStatus::timeout};
  Value a = 2;
  for (TrialStatus s : failures) {
    be.inject_failure_when("A", a, s);
    a *= 2;
  }
  session::run(spec, be, *db, spec.workloads.front(), spec.problem_sizes.front(), {});
  // Every field of the device has a value of its own, and comes back.
  db->upsert_device(autotune_test::distinct_device(sim::SyntheticBackend::fake_device()));
  std::string text = interop::export_t4(*db, {});
  auto back = db::Database::open(":memory:");
  ImportOptions o = options_for(spec);
  interop::store_trials(*back, interop::parse_t4(text, o), &spec);
  REQUIRE(back->devices().size() == 1);
  CHECK(autotune_test::differing_fields(back->devices()[0].info, db->devices()[0].info).empty());
  auto a_rows = db->trials({});
  auto b_rows = back->trials({});
  REQUIRE(a_rows.size() == 14);
  REQUIRE(b_rows.size() == 14);
  std::map<std::string, std::size_t> statuses;
  for (std::size_t i = 0; i < a_rows.size(); ++i) {
    check_same_trial(a_rows[i], b_rows[i]);
    ++statuses[to_string(b_rows[i].m.status)];
  }
  CHECK(statuses.size() == 6);
  // Without our extension the T4 invalidity decides: launch_error was written as "runtime".
  auto j = nlohmann::json::parse(text);
  for (auto& r : j["results"]) r.erase("autotune");
  auto plain = interop::parse_t4(j.dump(), [&] {
    ImportOptions p = o;
    p.device = "Synthetic GPU";
    return p;
  }());
  std::map<std::string, std::size_t> plain_statuses;
  for (const auto& t : plain) ++plain_statuses[to_string(t.row.m.status)];
  CHECK(plain_statuses.count("launch_error") == 0);
  CHECK(plain_statuses.at("runtime_fault") == 4);
}

TEST_CASE("a Kernel Tuner cache of a whole space simulates like the original recording", "[cpu][interop]") {
  auto rec = db::Database::open(autotune_test::data_dir() + "/recorded_h200.db", db::Database::Mode::read_only);
  TuningSpec spec = specs::builtin_spec("transpose");
  db::TrialFilter f;
  f.kernel = "transpose";
  // Write the recorded transpose space as a Kernel Tuner cache (labels for VARIANT, times in ms).
  nlohmann::json cache = nlohmann::json::object();
  const std::vector<std::string> keys{"VARIANT", "TILE_DIM", "BLOCK_ROWS", "PADDING", "DIAGONAL"};
  for (const auto& t : rec->trials(f)) {
    Config c = Config::from_json(t.config_json);
    nlohmann::json e;
    std::string key;
    for (const auto& k : keys) {
      nlohmann::json v = c.at(k);
      if (k == "VARIANT") v = c.at(k) ? "tiled" : "naive";
      e[k] = v;
      key += (key.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    e["time"] = t.m.median_ns / 1e6;
    e["compile_time"] = t.m.compile_ms;
    cache[key] = e;
  }
  nlohmann::json kt = {{"device_name", "Kernel Tuner GPU"}, {"kernel_name", "transpose"}, {"tune_params_keys", keys},
                       {"problem_size", {8192, 8192}}, {"objective", "time"}, {"cache", cache}};
  auto db = db::Database::open(":memory:");
  ImportOptions o = options_for(spec);
  o.cc = 90;  // a board name that does not tell its architecture
  interop::store_trials(*db, interop::parse_kt_cache(kt.dump(), o), &spec);

  const Workload w = Workload::parse("float32");
  const ProblemKey p = ProblemKey::parse("rows=8192,cols=8192");
  compare::Recording original = compare::load_recording(*rec, spec, w, p);
  compare::Recording imported = compare::load_recording(*db, spec, w, p, "Kernel Tuner GPU");
  REQUIRE(imported.space->size() == original.space->size());
  CHECK(imported.recorded.optimum == Approx(original.recorded.optimum).epsilon(1e-12));
  CHECK(imported.recorded.optimum_index == original.recorded.optimum_index);
  compare::CompareOptions opt;
  opt.strategies = {"greedy_local_search", "genetic_algorithm"};
  opt.budgets = compare::parse_budgets("10%,30%");
  opt.repeats = 5;
  auto a = compare::compare_strategies(*original.space, original.recorded, opt);
  auto b = compare::compare_strategies(*imported.space, imported.recorded, opt);
  REQUIRE(a.rows.size() == b.rows.size());
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    CHECK(a.rows[i].median == Approx(b.rows[i].median).epsilon(1e-9));
    CHECK(a.rows[i].found == b.rows[i].found);
  }
}

TEST_CASE("autotune import / export on the command line", "[cpu][interop][cli]") {
  const std::string db1 = tmp_path("one.db"), db2 = tmp_path("two.db"), t4 = tmp_path("out.t4.json");
  for (const auto& f : {db1, db2, t4}) std::remove(f.c_str());

  Run r = run_cli("--db " + db1 + " import --format kt-cache " + fixture("kt_transpose.json") + " --kernel transpose");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("imported 6 of 6 trials of transpose") &&
                        Catch::Contains("NVIDIA A100-PCIE-40GB") && Catch::Contains("compile_error 1"));
  CHECK_THAT(r.out, Catch::Contains(specs::builtin_spec("transpose").source_hash()));
  Run again = run_cli("--db " + db1 + " import --format kt-cache " + fixture("kt_transpose_open.json") +
                      " --kernel transpose");
  CHECK(again.code == 0);
  CHECK_THAT(again.out, Catch::Contains("imported 0 of 6") && Catch::Contains("6 already present"));

  Run ex = run_cli("--db " + db1 + " export --format t4 --kernel transpose -o " + t4);
  INFO(ex.out);
  REQUIRE(ex.code == 0);
  CHECK_THAT(ex.out, Catch::Contains("exported 6 trials"));
  Run im = run_cli("--db " + db2 + " import --format t4 " + t4 + " --kernel transpose");
  INFO(im.out);
  REQUIRE(im.code == 0);
  CHECK_THAT(im.out, Catch::Contains("imported 6 of 6") && Catch::Contains("NVIDIA A100-PCIE-40GB"));
  {
    auto a = db::Database::open(db1, db::Database::Mode::read_only);
    auto b = db::Database::open(db2, db::Database::Mode::read_only);
    auto ra = a->trials({}), rb = b->trials({});
    REQUIRE(ra.size() == rb.size());
    for (std::size_t i = 0; i < ra.size(); ++i) check_same_trial(ra[i], rb[i]);
  }
  Run stdout_export = run_cli("--db " + db1 + " export --format t4 --kernel transpose");
  CHECK(stdout_export.code == 0);
  CHECK_THAT(stdout_export.out, Catch::Contains("\"schema_version\": \"1.0.0\""));

  // Errors: unknown kernel, a T4 file without device, a parameter the spec lacks, a user spec's hash.
  Run unknown = run_cli("--db " + db2 + " import --format kt-cache " + fixture("kt_transpose.json") + " --kernel nope");
  CHECK(unknown.code == 2);
  Run nodev = run_cli("--db " + db2 + " import --format t4 " + fixture("t4_transpose_kt.json") + " --kernel transpose");
  CHECK(nodev.code == 2);
  CHECK_THAT(nodev.out, Catch::Contains("--device"));
  Run dev = run_cli("--db " + db2 + " import --format t4 " + fixture("t4_transpose_kt.json") +
                    " --kernel transpose --device 'NVIDIA A100-PCIE-40GB' --workload float64");
  CHECK(dev.code == 0);
  CHECK_THAT(dev.out, Catch::Contains("imported 6 of 6") && Catch::Contains("float64"));
  Run extra = run_cli("--db " + db2 + " import --format kt-cache " + fixture("kt_extra_param.json") + " --kernel transpose");
  CHECK(extra.code == 2);
  CHECK_THAT(extra.out, Catch::Contains("block_size_x"));
  Run badfmt = run_cli("--db " + db2 + " import --format csv " + fixture("kt_transpose.json") + " --kernel transpose");
  CHECK(badfmt.code != 0);
  Run missing = run_cli("--db " + db2 + " import --format t4 /nonexistent.json --kernel transpose --device X");
  CHECK(missing.code == 2);
  CHECK_THAT(missing.out, Catch::Contains("/nonexistent.json"));
  for (const auto& f : {db1, db2, t4}) {
    std::remove(f.c_str());
    std::remove((f + "-wal").c_str());
    std::remove((f + "-shm").c_str());
  }
}

TEST_CASE("a user spec's imported trials carry the source hash 'imported'", "[cpu][interop][cli]") {
  const std::string db = tmp_path("user.db"), cache = tmp_path("tiny.json");
  std::remove(db.c_str());
  {
    std::ofstream out(cache);
    out << R"({"device_name": "X", "problem_size": 1001, "tune_params_keys": ["BLOCK_SIZE"],
      "cache": {"64": {"BLOCK_SIZE": 64, "time": 0.01}, "128": {"BLOCK_SIZE": 128, "time": 0.02}}})";
  }
  Run r = run_cli("--db " + db + " import --format kt-cache " + cache + " --kernel " + autotune_test::data_dir() +
                  "/specs/tiny.tune.json --cc 80");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("source hash: imported") && Catch::Contains("n=1001"));
  for (const auto& f : {db, cache}) {
    std::remove(f.c_str());
    std::remove((f + "-wal").c_str());
    std::remove((f + "-shm").c_str());
  }
}

TEST_CASE("T4 export carries the observed quantities of a trial", "[cpu][interop][observer]") {
  TuningSpec spec = TuningSpec::from_json_text(R"J({
    "name": "k", "family": "synthetic", "source": "none.cu", "kernels": ["k"],
    "parameters": [{"name": "A", "values": [1, 2, 4], "default": 2}],
    "problem": {"dims": ["n"], "sizes": [{"n": 1000}]}, "workloads": ["float32"]})J", ".", false);
  auto db = db::Database::open(":memory:");
  sim::SyntheticBackend be;
  be.simulate_power([](const Config& c) { return 100.0 * static_cast<double>(c.at("A")); },
                    [](const Config& c) { return c.at("A") == 4; });
  session::Options opt;
  opt.bytes_moved = 4000;
  session::run(spec, be, *db, spec.workloads.front(), spec.problem_sizes.front(), opt);
  auto j = nlohmann::json::parse(interop::export_t4(*db, {}));
  REQUIRE(j["results"].size() == 3);
  for (const auto& r : j["results"]) {
    std::map<std::string, nlohmann::json> m;
    for (const auto& x : r["measurements"]) m[x["name"].get<std::string>()] = x;
    const double a = r["configuration"]["A"].get<double>();
    REQUIRE(m.count("nvml_power"));
    CHECK(m["nvml_power"]["value"].get<double>() == Approx(100 * a));
    CHECK(m["nvml_power"]["unit"] == "W");
    REQUIRE(m.count("nvml_energy"));
    CHECK(m["nvml_energy"]["unit"] == "J");
    CHECK(m["core_freq"]["value"].get<double>() == 1980);
    CHECK(m["mem_freq"]["unit"] == "MHz");
    CHECK(m["temperature"]["value"].get<double>() == 50);
    CHECK(m.count("GB/s/W"));
    CHECK(r["autotune"]["observer"] == "synthetic");
    CHECK(r["autotune"]["throttled"].get<bool>() == (a == 4));
  }
}
