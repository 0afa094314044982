// Importing Kernel Tuner caches with nothing but the cache (tuner/interop/kt_stub.*, the import command): spec
// stubs addressable by name, problem sizes from the cache, two sizes in one database, conflicts that are not
// "already present", no file left behind by a failed import, the device's architecture, the individual timings;
// and the README's import-and-compare workflow end to end.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "db/database.hpp"
#include "tests/cli_support.hpp"
#include "tests/kt_cache_fixture.hpp"
#include "tests/test_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/interop/kt_stub.hpp"

using namespace autotune;

namespace {

using autotune_test::Run;
using autotune_test::run_cli;
using autotune_test::slurp;

std::string tmp_path(const std::string& name) { return autotune_test::tmp_path("kt_stub", name); }
using autotune_test::remove_db;

std::string write_cache(const std::string& name, const std::string& text) {
  const std::string path = tmp_path(name);
  std::ofstream(path) << text;
  return path;
}

bool exists(const std::string& path) { return std::filesystem::exists(path); }

// Imports `cache` into `db` twice: without a size flag, which must fail with an error matching `refused` and leave
// no file, then with `--n 4096`, which must succeed with output matching `imported`. Removes `db` afterwards.
template <typename Refused, typename Imported>
void check_import_needs_n(const std::string& cache, const std::string& db, const Refused& refused,
                          const Imported& imported) {
  Run without_n = run_cli("import --format kt-cache " + cache + " --db " + db);
  INFO(without_n.out);
  CHECK(without_n.code == 2);
  CHECK_THAT(without_n.out, refused);
  CHECK(!exists(db));
  Run with_n = run_cli("import --format kt-cache " + cache + " --n 4096 --db " + db);
  INFO(with_n.out);
  CHECK(with_n.code == 0);
  CHECK_THAT(with_n.out, imported);
  remove_db(db);
}

}  // namespace

TEST_CASE("kt stub: a spec stub from what the cache holds", "[cpu][interop][kt_stub]") {
  const nlohmann::json root = interop::read_kt_cache_json(autotune_test::kt_reduction_cache(4096), "cache.json");
  const interop::KtCacheHeader h = interop::read_kt_header(root, "cache.json");
  CHECK(h.kernel_name == "reduce_partial");
  CHECK(h.device_name == "NVIDIA H100 80GB HBM3");
  CHECK(h.problem_size == std::vector<std::int64_t>{4096});
  const std::string text = interop::kt_stub_spec(root, "reduce_partial", "cache.json", Workload{"float32", ""},
                                                 std::nullopt, std::nullopt);
  const TuningSpec s = TuningSpec::from_json_text(text, "", false);
  CHECK(s.is_stub());
  CHECK(s.source_hash() == kImportedSourceHash);
  REQUIRE(s.params.size() == 4);
  CHECK(s.params[0].name == "block_size_x");
  CHECK(s.params[0].values == std::vector<Value>{32, 64, 128, 256, 512, 1024});
  const Param* variant = s.find_param("variant");
  REQUIRE(variant);
  CHECK(variant->values == std::vector<Value>{0, 1, 2});
  CHECK(variant->label(1) == "warp_shuffle");
  CHECK(s.problem_dims == std::vector<std::string>{"n"});
  REQUIRE(s.problem_sizes.size() == 1);
  CHECK(s.problem_sizes[0].key() == "n=4096");
  CHECK(s.space(s.problem_sizes[0], DeviceInfo{}, s.workloads[0]).size() == 270);
  CHECK_THROWS_AS(kernels::make_adapter(s), UsageError);

  // Extending the stored stub: another size is added, other parameter names are refused.
  const std::string more = interop::kt_stub_spec(
      interop::read_kt_cache_json(autotune_test::kt_reduction_cache(8192), "b.json"), "reduce_partial", "b.json",
      Workload{"float32", ""}, std::nullopt, text);
  CHECK(TuningSpec::from_json_text(more, "", false).problem_sizes.size() == 2);
  nlohmann::json other = root;
  other["tune_params_keys"] = {"block_size_x", "items_per_thread", "variant", "vector", "unroll"};
  other["tune_params"]["unroll"] = {0, 1};
  CHECK_THROWS_WITH(interop::kt_stub_spec(other, "reduce_partial", "c.json", Workload{"float32", ""}, std::nullopt, text),
                    Catch::Contains("unroll") && Catch::Contains("--as"));
  // Multi-dimensional problem sizes become x, y (Kernel Tuner's order).
  nlohmann::json two = root;
  two["problem_size"] = {512, 256};
  const TuningSpec s2 = TuningSpec::from_json_text(
      interop::kt_stub_spec(two, "k2", "d.json", Workload{"float32", ""}, std::nullopt, std::nullopt), "", false);
  CHECK(s2.problem_sizes.at(0).key() == "x=512,y=256");
}

TEST_CASE("kt stub: the compute capability from a board's name", "[cpu][interop][kt_stub]") {
  CHECK(cc_from_board_name("NVIDIA A100-PCIE-40GB") == 80);
  CHECK(cc_from_board_name("NVIDIA H100 80GB HBM3") == 90);
  CHECK(cc_from_board_name("NVIDIA H200") == 90);
  CHECK(cc_from_board_name("NVIDIA GeForce RTX 4090") == 89);
  CHECK(cc_from_board_name("NVIDIA GeForce RTX 3090") == 86);
  CHECK(cc_from_board_name("NVIDIA A10") == 86);
  CHECK(cc_from_board_name("Tesla T4") == 75);
  CHECK(cc_from_board_name("Tesla V100-SXM2-16GB") == 70);
  CHECK(cc_from_board_name("NVIDIA RTX 6000 Ada Generation") == 89);
  CHECK(cc_from_board_name("NVIDIA B200") == 100);
  CHECK(cc_from_board_name("Mystery GPU") == 0);
}

TEST_CASE("kt import: no spec needed, the kernel is addressable by name", "[cpu][interop][kt_stub][cli]") {
  const std::string db = tmp_path("stub.db"), spec_out = tmp_path("stub.tune.json");
  remove_db(db);
  const std::string cache = write_cache("a.json", autotune_test::kt_reduction_cache(1048576));
  Run r = run_cli("import --format kt-cache " + cache + " --db " + db + " --write-spec " + spec_out);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("imported 270 of 270 trials of reduce_partial (float32 n=1048576)") &&
                        Catch::Contains("spec stub stored") && Catch::Contains("launch_error"));
  CHECK(TuningSpec::from_json_text(slurp(spec_out), "", false).name == "reduce_partial");
  {
    auto d = db::Database::open(db, db::Database::Mode::read_only);
    REQUIRE(d->devices().size() == 1);
    CHECK(d->devices()[0].info.cc == 90);  // from the board's name
    db::TrialFilter f;
    f.kernel = "reduce_partial";
    f.ok_only = true;
    auto rows = d->trials(f);
    REQUIRE(!rows.empty());
    CHECK(rows[0].m.sample_ns.size() == 7);  // the cache's individual timings are kept
  }
  Run s = run_cli("summary reduce_partial --by variant --db " + db);
  INFO(s.out);
  CHECK(s.code == 0);
  CHECK_THAT(s.out, Catch::Contains("270 trials") && Catch::Contains("warp_shuffle"));
  Run b = run_cli("best reduce_partial --json --db " + db);
  INFO(b.out);
  REQUIRE(b.code == 0);
  const nlohmann::json j = nlohmann::json::parse(b.out);
  CHECK(j["match"] == "exact");
  CHECK(j["config"]["variant"] == "shared");  // the made-up optimum: block 256, 4 items, shared, vector 2
  CHECK(j["config"]["block_size_x"] == 256);
  Run t = run_cli("tune reduce_partial --simulate --budget 20 --db " + db);
  INFO(t.out);
  CHECK(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("recorded with: import:kt-cache"));
  Run c = run_cli("compare-strategies reduce_partial --budgets 10% --repeats 3 --db " + db);
  INFO(c.out);
  CHECK(c.code == 0);
  CHECK_THAT(c.out, Catch::Contains("270 valid configurations"));
  Run e = run_cli("export --kernel reduce_partial --db " + db);
  REQUIRE(e.code == 0);
  const nlohmann::json x = nlohmann::json::parse(e.out);
  bool with_runtimes = false;
  for (const auto& res : x["results"]) with_runtimes = with_runtimes || res["times"]["runtimes"].size() == 7;
  CHECK(with_runtimes);
  // Tuning the stub on a GPU needs the rest of the spec: said plainly.
  Run g = run_cli("tune reduce_partial --db " + db);
  CHECK(g.code == 2);
  CHECK_THAT(g.out, Catch::Contains("spec stub"));
  remove_db(db);
  for (const auto& f : {cache, spec_out}) std::remove(f.c_str());
}

TEST_CASE("kt import: two sizes into one database, a different measurement is not 'already present'",
          "[cpu][interop][kt_stub][cli]") {
  const std::string db = tmp_path("sizes.db");
  remove_db(db);
  const std::string small = write_cache("small.json", autotune_test::kt_reduction_cache(1048576));
  const std::string large = write_cache("large.json", autotune_test::kt_reduction_cache(16777216));
  const std::string rerun = write_cache("rerun.json", autotune_test::kt_reduction_cache(1048576, "NVIDIA H100 80GB HBM3", 1.1));
  REQUIRE(run_cli("import --format kt-cache " + small + " --db " + db).code == 0);
  Run second = run_cli("import --format kt-cache " + large + " --db " + db);
  INFO(second.out);
  CHECK(second.code == 0);
  CHECK_THAT(second.out, Catch::Contains("imported 270 of 270") && Catch::Contains("n=16777216") &&
                             Catch::Contains("0 already present") && Catch::Contains("n=1048576, n=16777216"));
  for (const char* n : {"1048576", "16777216"}) {
    Run s = run_cli("summary reduce_partial --n " + std::string(n) + " --db " + db);
    INFO(s.out);
    CHECK(s.code == 0);
    CHECK_THAT(s.out, Catch::Contains("270 trials"));
  }
  Run same = run_cli("import --format kt-cache " + small + " --db " + db);
  CHECK(same.code == 0);
  CHECK_THAT(same.out, Catch::Contains("imported 0 of 270") && Catch::Contains("270 already present"));
  // Another run of the same size: other times under the same keys are conflicts, kept out, and an error.
  Run other = run_cli("import --format kt-cache " + rerun + " --db " + db);
  INFO(other.out);
  CHECK(other.code == 1);
  CHECK_THAT(other.out, Catch::Contains("0 already present") && Catch::Contains("another measurement"));
  remove_db(db);
  for (const auto& f : {small, large, rerun}) std::remove(f.c_str());
}

TEST_CASE("kt import: the size comes from the cache or a flag, never a default, failures leave no file",
          "[cpu][interop][kt_stub][cli]") {
  const std::string db = tmp_path("fail.db");
  remove_db(db);
  nlohmann::json no_size = nlohmann::json::parse(autotune_test::kt_reduction_cache(4096));
  no_size.erase("problem_size");
  const std::string cache = write_cache("nosize.json", no_size.dump());
  check_import_needs_n(cache, db, Catch::Contains("problem_size") && Catch::Contains("--n"), Catch::Contains("n=4096"));

  // A cache whose problem_size names a parameter (the grid is num_blocks' value) or mixes names and numbers: the
  // size must come from a flag, and the error says why.
  for (const nlohmann::json& symbolic : {nlohmann::json("num_blocks"), nlohmann::json::array({"num_blocks", 1})}) {
    nlohmann::json named = nlohmann::json::parse(autotune_test::kt_reduction_cache(4096));
    named["problem_size"] = symbolic;
    const std::string file = write_cache("named.json", named.dump());
    check_import_needs_n(file, db, Catch::Contains("names the parameter num_blocks") && Catch::Contains("--n"),
                         Catch::Contains("imported 270 of 270") && Catch::Contains("n=4096"));
    std::remove(file.c_str());
  }
  nlohmann::json bad = nlohmann::json::parse(autotune_test::kt_reduction_cache(4096));
  bad["problem_size"] = nlohmann::json::array({true});
  const std::string bad_file = write_cache("bad.json", bad.dump());
  Run wrong = run_cli("import --format kt-cache " + bad_file + " --n 4096 --db " + db);
  std::remove(bad_file.c_str());
  CHECK(wrong.code == 2);
  CHECK_THAT(wrong.out, Catch::Contains("neither an integer nor a parameter name"));
  remove_db(db);

  // A built-in spec: the cache's problem size in the spec's dims, and a flag still wins.
  const std::string transpose = autotune_test::data_dir() + "/interop/kt_transpose.json";
  Run flag = run_cli("import --format kt-cache " + transpose + " --kernel transpose --rows 4000 --cols 2000 --db " + db);
  INFO(flag.out);
  CHECK(flag.code == 0);
  CHECK_THAT(flag.out, Catch::Contains("cols=2000,rows=4000"));
  remove_db(db);

  // An unknown board without --cc: refused, and no database file is left behind.
  const std::string mystery = write_cache("mystery.json", autotune_test::kt_reduction_cache(4096, "Mystery GPU"));
  Run cc = run_cli("import --format kt-cache " + mystery + " --db " + db);
  INFO(cc.out);
  CHECK(cc.code == 2);
  CHECK_THAT(cc.out, Catch::Contains("--cc"));
  CHECK(!exists(db));
  CHECK(run_cli("import --format kt-cache " + mystery + " --cc 75 --db " + db).code == 0);
  remove_db(db);

  // Parameters that do not match a built-in spec: refused before the database is created.
  Run extra = run_cli("import --format kt-cache " + autotune_test::data_dir() + "/interop/kt_extra_param.json" +
                      " --kernel transpose --db " + db);
  CHECK(extra.code == 2);
  CHECK(!exists(db));
  // A cache named like a built-in kernel is not silently merged into it.
  nlohmann::json named = nlohmann::json::parse(autotune_test::kt_reduction_cache(4096));
  named["kernel_name"] = "reduction";
  const std::string clash = write_cache("clash.json", named.dump());
  Run c = run_cli("import --format kt-cache " + clash + " --db " + db);
  CHECK(c.code == 2);
  CHECK_THAT(c.out, Catch::Contains("--as"));
  CHECK(!exists(db));
  CHECK(run_cli("import --format kt-cache " + clash + " --as my_reduction --db " + db).code == 0);
  CHECK(run_cli("summary my_reduction --db " + db).code == 0);
  remove_db(db);
  for (const auto& f : {cache, mystery, clash}) std::remove(f.c_str());
}

TEST_CASE("kt import: a spec error names its JSON pointer once", "[cpu][interop][kt_stub][cli]") {
  const std::string spec = tmp_path("noref.tune.json"), source = tmp_path("k.cu");
  std::ofstream(spec) << R"({"name": "k", "family": "user", "source": ")" + source + R"(", "kernels": ["k"],
    "parameters": [{"name": "B", "values": [1, 2]}], "problem": {"dims": ["n"], "sizes": [{"n": 8}]},
    "workloads": ["float32"], "arguments": [{"name": "x", "kind": "buffer", "dtype": "float32", "count": "n"}],
    "launch": [{"kernel": "k", "grid": 1, "block": "B"}], "reference": {"configuration": {"C": 1}}})";
  std::ofstream(source) << "extern \"C\" __global__ void k(float* x) {}\n";
  Run r = run_cli("space " + spec);
  INFO(r.out);
  CHECK(r.code == 2);
  const auto first = r.out.find("/reference");
  REQUIRE(first != std::string::npos);
  CHECK(r.out.find("/reference", first + 1) == std::string::npos);
  std::remove(spec.c_str());
  std::remove(source.c_str());
}

TEST_CASE("README: the import-and-compare workflow on generated Kernel Tuner caches", "[cpu][interop][kt_stub][cli]") {
  // The caches the README uses, next to the autotune binary (build/kt_reduce_partial_n*.json).
  const std::string bin = AUTOTUNE_BIN;
  const std::string dir = bin.substr(0, bin.find_last_of('/'));
  const std::string small = dir + "/kt_reduce_partial_n1048576.json", large = dir + "/kt_reduce_partial_n16777216.json";
  std::ofstream(small) << autotune_test::kt_reduction_cache(1048576);
  std::ofstream(large) << autotune_test::kt_reduction_cache(16777216);
  const std::string db = tmp_path("readme.db");
  remove_db(db);
  // The README's commands, verbatim apart from the paths.
  const std::string steps[] = {
      "import --format kt-cache " + small + " --db " + db,
      "import --format kt-cache " + large + " --db " + db,
      "summary reduce_partial --n 16777216 --by variant --db " + db,
      "best reduce_partial --n 16777216 --json --db " + db,
      "tune reduce_partial --n 1048576 --simulate --budget 30 --db " + db,
      "compare-strategies reduce_partial --n 1048576 --budgets 5%,10% --repeats 20 --db " + db,
  };
  for (const auto& s : steps) {
    Run r = run_cli(s);
    INFO(s << "\n" << r.out);
    CHECK(r.code == 0);
  }
  remove_db(db);
}
