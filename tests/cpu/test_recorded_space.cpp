// A recorded space is a space (docs/interop.md): a spec stub's valid space is its recorded configurations
// (ParameterSpace::restricted_to), so that caches whose spaces were restricted when recorded replay through
// `tune --simulate` and `compare-strategies`; `import --spec` checks the recorded configurations against a spec's
// constraints; a T4 file imports without --kernel (a stub inferred from its results) and round-trips.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tests/cli_support.hpp"
#include "tests/test_support.hpp"
#include "tuner/core/space.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;

namespace {

using autotune_test::remove_db;
using autotune_test::Run;
using autotune_test::run_cli;

std::string tmp_path(const std::string& name) { return autotune_test::tmp_path("recorded_space", name); }

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = tmp_path(name);
  std::ofstream(path) << text;
  return path;
}

/// A Kernel Tuner cache of kernel "restricted" over bx, by in {1, 2, 4, 8} recorded only where bx * by <= 8 (10 of
/// the 16 configurations; Kernel Tuner's restrictions leave the others out of the cache): (8, 1) failed to run,
/// the others take (1 + |log2(bx / by)|) x 0.01 ms.
std::string restricted_cache() {
  std::string cache;
  for (int bx : {1, 2, 4, 8})
    for (int by : {1, 2, 4, 8}) {
      if (bx * by > 8) continue;
      const std::string key = std::to_string(bx) + "," + std::to_string(by);
      std::string entry = "\"" + key + "\": {\"bx\": " + std::to_string(bx) + ", \"by\": " + std::to_string(by);
      if (bx == 8) {
        entry += ", \"time\": \"RuntimeFailedConfig\", \"compile_time\": 100}";
      } else {
        const double ratio = bx >= by ? static_cast<double>(bx) / by : static_cast<double>(by) / bx;
        int steps = 0;
        for (double r = ratio; r > 1; r /= 2) ++steps;
        entry += ", \"time\": " + std::to_string(0.01 * (1 + steps)) +
                 ", \"compile_time\": 120.5, "
                 "\"verification_time\": 1.5}";
      }
      cache += (cache.empty() ? "" : ",\n") + entry;
    }
  return "{\"device_name\": \"NVIDIA H100 80GB HBM3\", \"kernel_name\": \"restricted\", \"problem_size\": [4096],\n"
         "\"tune_params_keys\": [\"bx\", \"by\"],\n"
         "\"tune_params\": {\"bx\": [1, 2, 4, 8], \"by\": [1, 2, 4, 8]},\n\"cache\": {\n" +
         cache + "\n}}\n";
}

}  // namespace

TEST_CASE("recorded space: a space restricted to explicit configurations", "[cpu][space][recorded_space]") {
  std::vector<Param> params(2);
  params[0].name = "a";
  params[1].name = "b";
  params[0].values = params[1].values = {1, 2, 3, 4};
  params[0].default_value = params[1].default_value = 1;
  const ParameterSpace full(params, {}, {});
  std::vector<Config> recorded;
  for (Value a : {4, 1, 2, 3})
    for (Value b : {1, 2, 3, 4})
      if (a <= b) recorded.push_back(Config({{"a", a}, {"b", b}}));
  recorded.push_back(Config({{"a", 1}, {"b", 1}}));  // a duplicate
  recorded.push_back(Config({{"a", 9}, {"b", 1}}));  // not in the value lists
  const ParameterSpace s = full.restricted_to(recorded);
  CHECK(s.restricted());
  CHECK(s.size() == 10);
  CHECK(s.cartesian_size() == 16);
  REQUIRE(s.groups().size() == 1);
  CHECK(s.groups()[0].size == 10);
  CHECK(s.config(0) == Config({{"a", 1}, {"b", 1}}));  // lexicographic
  CHECK(s.config(9) == Config({{"a", 4}, {"b", 4}}));
  for (std::size_t i = 0; i < s.size(); ++i) CHECK(s.find(s.config(i)) == static_cast<std::ptrdiff_t>(i));
  CHECK(s.find(Config({{"a", 2}, {"b", 1}})) < 0);
  CHECK(!s.is_valid(Config({{"a", 2}, {"b", 1}})));
  CHECK(s.is_valid(Config({{"a", 2}, {"b", 3}})));
  CHECK(s.default_index() == 0);
  // Neighbours stay in the recorded set: (2, 2) -> (1, 2), (2, 3), (2, 4) (not (2, 1), (3, 2), (4, 2)).
  const std::ptrdiff_t at = s.find(Config({{"a", 2}, {"b", 2}}));
  REQUIRE(at >= 0);
  std::vector<Config> next;
  for (std::size_t i : s.neighbours(static_cast<std::size_t>(at))) next.push_back(s.config(i));
  CHECK(next ==
        std::vector<Config>{Config({{"a", 1}, {"b", 2}}), Config({{"a", 2}, {"b", 3}}), Config({{"a", 2}, {"b", 4}})});
  CHECK(full.restricted_to({}).empty());
}

TEST_CASE("recorded space: a restricted Kernel Tuner cache replays and compares",
          "[cpu][interop][recorded_space][cli]") {
  const std::string db = tmp_path("restricted.db");
  remove_db(db);
  const std::string cache = write_file("restricted.json", restricted_cache());
  Run r = run_cli("import --format kt-cache " + cache + " --db " + db);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("imported 10 of 10 trials of restricted"));

  Run t = run_cli("tune restricted --simulate --db " + db);
  INFO(t.out);
  CHECK(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("space: the 10 recorded configurations (the stub knows no constraints)") &&
                        Catch::Contains("10 valid configurations (cartesian 16)"));
  // A strategy that moves through neighbours, into a database of its own: every configuration it asks is recorded.
  const std::string out_db = tmp_path("restricted_out.db");
  remove_db(out_db);
  Run b = run_cli("tune restricted --simulate --strategy genetic_algorithm --budget 6 --seed 3 --from " + db +
                  " --db " + out_db);
  INFO(b.out);
  CHECK(b.code == 0);
  CHECK_THAT(b.out, Catch::Contains("6 measured now"));
  remove_db(out_db);

  Run c = run_cli("compare-strategies restricted --budgets 50% --repeats 4 --db " + db);
  INFO(c.out);
  CHECK(c.code == 0);
  CHECK_THAT(c.out, Catch::Contains("space: the 10 recorded configurations (the stub knows no constraints)") &&
                        Catch::Contains("10 valid configurations, 1 failed"));
  remove_db(db);
  std::remove(cache.c_str());
}

TEST_CASE("recorded space: import --spec checks the recorded configurations against the constraints",
          "[cpu][interop][recorded_space][cli]") {
  const std::string db = tmp_path("spec.db");
  remove_db(db);
  const std::string cache = write_file("spec_cache.json", restricted_cache());
  nlohmann::json spec = {
      {"name", "restricted"},
      {"family", "user"},
      {"source", autotune_test::data_dir() + "/specs/tiny.cu"},
      {"kernels", {"tiny_kernel"}},
      {"parameters",
       {{{"name", "bx"}, {"values", {1, 2, 4, 8}}, {"default", 1}},
        {{"name", "by"}, {"values", {1, 2, 4, 8}}, {"default", 1}}}},
      {"constraints", {"bx * by <= 4"}},
      {"launch", {{{"kernel", "tiny_kernel"}, {"grid", "ceil_div(n, bx)"}, {"block", "bx"}}}},
      {"problem", {{"dims", {"n"}}, {"sizes", {{{"n", 4096}}}}}},
      {"workloads", {"float32"}},
      {"arguments",
       {{{"name", "x"}, {"kind", "buffer"}, {"dtype", "float32"}, {"count", "n"}},
        {{"name", "y"}, {"kind", "buffer"}, {"dtype", "float32"}, {"count", "n"}, {"role", "output"}},
        {{"name", "n"}, {"kind", "scalar"}, {"dtype", "int32"}, {"value", "n"}}}},
      {"reference", {{"kernel", "tiny_reference"}, {"grid", "ceil_div(n, 64)"}, {"block", 64}}}};
  const std::string spec_path = write_file("restricted.tune.json", spec.dump(2));
  Run both = run_cli("import --format kt-cache " + cache + " --spec " + spec_path + " --kernel x --db " + db);
  CHECK(both.code != 0);  // --spec and --kernel exclude each other

  Run r = run_cli("import --format kt-cache " + cache + " --spec " + spec_path + " --db " + db);
  INFO(r.out);
  REQUIRE(r.code == 0);
  // (1, 8), (2, 4), (4, 2), (8, 1) are recorded but violate bx * by <= 4.
  CHECK_THAT(r.out, Catch::Contains("imported 6 of 6 trials of restricted") &&
                        Catch::Contains("warning: 4 recorded configurations violate the constraints of restricted "
                                        "and were not imported: bx=1 by=8"));
  {
    auto d = db::Database::open(db, db::Database::Mode::read_only);
    CHECK(d->trials({}).size() == 6);
    CHECK(!d->kernel_spec("restricted"));  // no stub: the spec was given
  }
  // The spec's space is exactly what was kept: the full spec replays without a restriction.
  Run c = run_cli("compare-strategies " + spec_path + " --budgets 50% --repeats 2 --db " + db);
  INFO(c.out);
  CHECK(c.code == 0);
  CHECK_THAT(c.out, Catch::Contains("6 valid configurations") && !Catch::Contains("recorded configurations ("));
  // A stub knows no constraints: refused as --spec.
  const std::string db2 = tmp_path("spec2.db");
  remove_db(db2);
  REQUIRE(run_cli("import --format kt-cache " + cache + " --db " + db2).code == 0);
  Run stub = run_cli("import --format kt-cache " + cache + " --spec restricted --db " + db2);
  CHECK(stub.code == 2);
  CHECK_THAT(stub.out, Catch::Contains("knows no constraints"));
  for (const auto& f : {db, db2}) remove_db(f);
  for (const auto& f : {cache, spec_path}) std::remove(f.c_str());
}

TEST_CASE("recorded space: a T4 file imports without --kernel and round-trips", "[cpu][interop][recorded_space][cli]") {
  // Results as another tool writes them: no "autotune" extension; an integer, a float, a string and a bool
  // parameter; ok, compile and runtime failures, with compile and validation times.
  nlohmann::json results = nlohmann::json::array();
  int k = 0;
  for (int block : {32, 64})
    for (double alpha : {0.5, 1.5})
      for (const char* variant : {"plain", "tiled"})
        for (bool unroll : {false, true}) {
          if (block == 64 && alpha == 1.5 && unroll) continue;  // not recorded
          nlohmann::json r;
          r["timestamp"] = "2025-02-01 10:00:00";
          r["configuration"] = {{"block", block}, {"alpha", alpha}, {"variant", variant}, {"unroll", unroll}};
          r["times"] = {{"compilation", 100.0 + k}, {"validation", 2.0}, {"runtimes", {0.01 * (k + 1)}}};
          const char* invalidity = k == 3 ? "compile" : k == 5 ? "runtime" : "correct";
          r["invalidity"] = invalidity;
          r["correctness"] = 1;
          r["measurements"] = nlohmann::json::array();
          if (std::string(invalidity) == "correct")
            r["measurements"].push_back({{"name", "time"}, {"value", 0.01 * (k + 1)}, {"unit", "ms"}});
          r["objectives"] = {"time"};
          results.push_back(r);
          ++k;
        }
  const std::string t4 =
      write_file("foreign.t4.json", nlohmann::json{{"schema_version", "1.0.0"}, {"results", results}}.dump(1));
  const std::string db1 = tmp_path("t4_one.db"), db2 = tmp_path("t4_two.db"), out = tmp_path("t4_out.json");
  remove_db(db1);
  remove_db(db2);
  Run noname = run_cli("import --format t4 " + t4 + " --device 'NVIDIA H100 80GB HBM3' --n 1024 --db " + db1);
  CHECK(noname.code == 2);
  CHECK_THAT(noname.out, Catch::Contains("--as NAME"));
  Run r = run_cli("import --format t4 " + t4 + " --as mixed --device 'NVIDIA H100 80GB HBM3' --n 1024 --db " + db1);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("imported 14 of 14 trials of mixed (float32 n=1024)") &&
                        Catch::Contains("compile_error 1") && Catch::Contains("runtime_fault 1") &&
                        Catch::Contains("spec stub stored"));
  std::vector<db::TrialRow> before;
  {
    auto d = db::Database::open(db1, db::Database::Mode::read_only);
    auto k1 = d->kernel_spec("mixed");
    REQUIRE(k1);
    const TuningSpec stub = TuningSpec::from_json_text(k1->spec_json, "", false);
    CHECK(stub.is_stub());
    REQUIRE(stub.params.size() == 4);
    const Param* alpha = stub.find_param("alpha");
    const Param* variant = stub.find_param("variant");
    const Param* unroll = stub.find_param("unroll");
    REQUIRE((alpha && variant && unroll));
    CHECK(stub.find_param("block")->values == std::vector<Value>{32, 64});
    CHECK(alpha->label(0) == "0.5");
    CHECK(alpha->label(1) == "1.5");
    CHECK(variant->label(1) == "tiled");
    CHECK(unroll->values == std::vector<Value>{0, 1});
    before = d->trials({});
    REQUIRE(before.size() == 14);
    CHECK(before[3].m.status == TrialStatus::compile_error);
    CHECK(before[3].m.compile_ms == Approx(103.0));
    CHECK(before[0].m.verify_ms == Approx(2.0));
    CHECK(before[0].m.median_ns == Approx(1e4));
  }
  Run t = run_cli("tune mixed --simulate --db " + db1);
  INFO(t.out);
  CHECK(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("space: the 14 recorded configurations"));

  Run ex = run_cli("export --format t4 --kernel mixed -o " + out + " --db " + db1);
  INFO(ex.out);
  REQUIRE(ex.code == 0);
  Run im = run_cli("import --format t4 " + out + " --db " + db2);
  INFO(im.out);
  REQUIRE(im.code == 0);
  CHECK_THAT(im.out, Catch::Contains("imported 14 of 14 trials of mixed"));
  {
    auto d = db::Database::open(db2, db::Database::Mode::read_only);
    const std::vector<db::TrialRow> after = d->trials({});
    REQUIRE(after.size() == before.size());
    for (std::size_t i = 0; i < after.size(); ++i) {
      INFO(before[i].config_json);
      CHECK(after[i].kernel == before[i].kernel);
      CHECK(after[i].problem == before[i].problem);
      CHECK(after[i].workload == before[i].workload);
      CHECK(after[i].config_json == before[i].config_json);
      CHECK(after[i].m.status == before[i].m.status);
      CHECK(after[i].m.median_ns == Approx(before[i].m.median_ns));
      CHECK(after[i].m.compile_ms == Approx(before[i].m.compile_ms));
      CHECK(after[i].m.verify_ms == Approx(before[i].m.verify_ms));
    }
    auto k2 = d->kernel_spec("mixed");
    REQUIRE(k2);
    CHECK(TuningSpec::from_json_text(k2->spec_json, "", false).find_param("alpha")->label(1) == "1.5");
  }
  Run again = run_cli("import --format t4 " + out + " --db " + db2);  // into the stored stub: all present
  INFO(again.out);
  CHECK(again.code == 0);
  CHECK_THAT(again.out, Catch::Contains("imported 0 of 14") && Catch::Contains("14 already present"));
  for (const auto& f : {db1, db2}) remove_db(f);
  for (const auto& f : {t4, out}) std::remove(f.c_str());
}

TEST_CASE("recorded space: import --spec with a T1 file's typed values and Python conditions",
          "[cpu][interop][recorded_space][cli]") {
  // Every configuration of tests/data/t1/blur.json's values (240), 144 of which satisfy its conditions.
  nlohmann::json cache = nlohmann::json::object();
  for (int bx : {16, 32, 64, 128})
    for (int by : {1, 2, 4, 8, 16})
      for (int ty : {1, 2, 4})
        for (const char* acc : {"float_acc", "double_acc"})
          for (double th : {0.5, 1.0}) {
            const std::string key = std::to_string(bx) + "," + std::to_string(by) + "," + std::to_string(ty) + ",5," +
                                    acc + "," + (th < 1 ? "0.5" : "1.0");
            cache[key] = {{"block_size_x", bx},
                          {"block_size_y", by},
                          {"tile_y", ty},
                          {"filter_width", 5},
                          {"accumulate", acc},
                          {"threshold", th},
                          {"time", 0.01 * (1 + bx * by / 1024.0 + ty * th)}};
          }
  const nlohmann::json root = {
      {"device_name", "NVIDIA H100 80GB HBM3"},
      {"kernel_name", "blur"},
      {"problem_size", {256, 192}},
      {"tune_params_keys", {"block_size_x", "block_size_y", "tile_y", "filter_width", "accumulate", "threshold"}},
      {"cache", cache}};
  const std::string file = write_file("blur_cache.json", root.dump());
  const std::string db = tmp_path("blur.db"), t1 = autotune_test::data_dir() + "/t1/blur.json";
  remove_db(db);
  Run r = run_cli("import --format kt-cache " + file + " --spec " + t1 + " --db " + db);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("imported 144 of 144 trials of t1_blur") &&
                        Catch::Contains("96 recorded configurations violate the constraints of t1_blur"));
  // The trials carry the spec's data tag (its inputs come from files), so the spec's own problem finds them.
  Run c = run_cli("compare-strategies " + t1 + " --budgets 10% --repeats 2 --db " + db);
  INFO(c.out);
  CHECK(c.code == 0);
  CHECK_THAT(c.out, Catch::Contains("144 valid configurations, 0 failed"));
  remove_db(db);
  std::remove(file.c_str());
}

TEST_CASE("recorded space: a stub's space has no default config unless a parameter names one",
          "[cpu][space][recorded_space]") {
  // A stub's defaults are its parameters' first values (an import writes none): no strategy may start from them as
  // from a kernel author's guess (broad_then_local measures a default first).
  const std::string stub = R"J({"name": "k", "family": "imported",
    "parameters": [{"name": "bx", "values": [32, 64, 128]}, {"name": "tile", "values": [1, 2]}],
    "problem": {"dims": ["n"], "sizes": [{"n": 1024}]}, "workloads": ["float32"]})J";
  ProblemKey p;
  p.dims["n"] = 1024;
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const Workload w = Workload::parse("float32");
  const TuningSpec plain = TuningSpec::from_json_text(stub, ".", false);
  REQUIRE(plain.is_stub());
  CHECK(plain.space(p, d, w).size() == 6);
  CHECK(plain.space(p, d, w).default_index() == -1);
  std::string named = stub;
  named.replace(named.find("[32, 64, 128]}"), 14, "[32, 64, 128], \"default\": 64}");
  const ParameterSpace with = TuningSpec::from_json_text(named, ".", false).space(p, d, w);
  REQUIRE(with.default_index() >= 0);
  CHECK(with.config(static_cast<std::size_t>(with.default_index())) == Config({{"bx", 64}, {"tile", 1}}));
}
