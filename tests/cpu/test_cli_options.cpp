// What a new user trips over on the command line: global options on either side of the sub-command (every
// sub-command), labels in JSON output (best --json, --stats-json, export), and the protocol of a replayed
// recording in the replay's header.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_support.hpp"
#include "tests/kt_cache_fixture.hpp"
#include "tests/test_support.hpp"

namespace {

using autotune_test::Run;
using autotune_test::run_cli;
using autotune_test::slurp;

std::string tmp_path(const std::string& name) { return autotune_test::tmp_path("cli_options", name); }
using autotune_test::remove_db;

const std::string kNarrow =
    " --n 67108864 --dtype float32 --op sum --values VARIANT=grid_stride --values FINAL=second_pass --values KAHAN=0"
    " --values BLOCKS_PER_SM=1,2 --values ITEMS_PER_THREAD=1,2";

}  // namespace

TEST_CASE("cli options: --db is accepted after every sub-command, and before it", "[cpu][cli][options]") {
  const std::string db = tmp_path("after.db"), other = tmp_path("merged.db"), cache = tmp_path("kt.json"),
                    t4 = tmp_path("out.t4.json"), html = tmp_path("r.html");
  for (const auto& f : {db, other}) remove_db(f);
  {
    std::ofstream(cache) << autotune_test::kt_reduction_cache(1048576);
  }
  const std::string data = autotune_test::data_dir();
  const std::string n = " --n 1048576";
  const std::string h100 = " --device 'NVIDIA H100 80GB HBM3'";
  struct Case {
    std::string args;
    int code;
  };
  // In order: the import fills `db`, the later commands read it (so --db must have reached them).
  const Case cases[] = {
      {"import --format kt-cache " + cache, 0},
      {"list", 0},
      {"strategies", 0},
      {"space reduction --n 4096", 0},
      {"summary reduce_partial" + n, 0},
      {"best reduce_partial" + n + " --json", 0},
      {"compare-strategies reduce_partial" + n + " --budgets 10 --repeats 2 --strategies random_sample", 0},
      {"export --kernel reduce_partial -o " + t4, 0},
      {"explore reduction --n 1048576 --plan-only", 0},
      // Records a second device (the replayed H200) in `db`: the commands below name the H100.
      {"tune reduction" + kNarrow + " --simulate --from " + data + "/recorded_h200.db", 0},
      {"report reduce_partial" + n + h100 + " --html " + html, 0},
      {"merge " + other + " " + db, 0},
  };
  for (const Case& c : cases) {
    Run r = run_cli(c.args + " --db " + db);
    INFO(c.args << " --db " << db << "\n" << r.out);
    CHECK_THAT(r.out, !Catch::Contains("not expected"));
    CHECK(r.code == c.code);
  }
  // `devices` has no GPU here (exit 3), but the option is parsed.
  Run dev = run_cli("devices --db " + db);
  CHECK_THAT(dev.out, !Catch::Contains("not expected"));
  // Between the sub-command and its arguments, in the = form, and before the sub-command as always.
  Run mid = run_cli("summary --db " + db + " reduce_partial" + n + h100);
  INFO(mid.out);
  CHECK(mid.code == 0);
  Run eq = run_cli("best reduce_partial" + n + h100 + " --db=" + db);
  INFO(eq.out);
  CHECK(eq.code == 0);
  Run before = run_cli("--db " + db + " summary reduce_partial" + n + h100);
  CHECK(before.code == 0);
  CHECK_THAT(before.out, Catch::Contains("reduce_partial") && Catch::Contains("270 trials"));
  // An option no parser knows is still an error.
  Run bad = run_cli("summary reduce_partial --no-such-option 1 --db " + db);
  CHECK(bad.code != 0);
  CHECK_THAT(bad.out, Catch::Contains("--no-such-option"));
  for (const auto& f : {db, other}) remove_db(f);
  for (const auto& f : {cache, t4, html}) std::remove(f.c_str());
}

TEST_CASE("cli options: JSON output carries the labels of enumerated parameters", "[cpu][cli][options]") {
  const std::string data = autotune_test::data_dir();
  const std::string db = tmp_path("labels.db"), json = tmp_path("labels.json");
  remove_db(db);

  // --stats-json: labels under "config", the numbers the kernel sees under "config_values".
  Run t = run_cli("tune reduction" + kNarrow + " --simulate --from " + data + "/recorded_h200.db --stats-json " + json +
                  " --db " + db);
  INFO(t.out);
  REQUIRE(t.code == 0);
  const nlohmann::json s = nlohmann::json::parse(slurp(json));
  CHECK(s["best"]["config"]["VARIANT"] == "grid_stride");
  CHECK(s["best"]["config"]["FINAL"] == "second_pass");
  CHECK(s["best"]["config_values"]["VARIANT"].is_number_integer());
  CHECK(s["best"]["config"]["ITEMS_PER_THREAD"].is_number_integer());  // an unlabelled parameter stays a number

  // best --json answers from the tuned database with the same labels.
  Run b = run_cli("best reduction --n 67108864 --dtype float32 --op sum --json --db " + db);
  INFO(b.out);
  REQUIRE(b.code == 0);
  const nlohmann::json j = nlohmann::json::parse(b.out);
  CHECK(j["config"]["VARIANT"] == "grid_stride");
  CHECK(j["config"]["FINAL"] == "second_pass");
  CHECK(j["config_values"]["VARIANT"] == s["best"]["config_values"]["VARIANT"]);

  // export: a T4 configuration with labels, the numbers in the autotune extension; importing it back restores
  // the same configurations.
  const std::string t4 = tmp_path("labels.t4.json"), db2 = tmp_path("labels2.db");
  remove_db(db2);
  Run e = run_cli("export --kernel reduction -o " + t4 + " --db " + db);
  REQUIRE(e.code == 0);
  const nlohmann::json x = nlohmann::json::parse(slurp(t4));
  REQUIRE(!x["results"].empty());
  CHECK(x["results"][0]["configuration"]["VARIANT"] == "grid_stride");
  CHECK(x["results"][0]["autotune"]["config_values"]["VARIANT"].is_number_integer());
  Run i = run_cli("import --format t4 " + t4 + " --kernel reduction --db " + db2);
  INFO(i.out);
  CHECK(i.code == 0);
  CHECK_THAT(i.out, Catch::Contains("imported " + std::to_string(x["results"].size()) + " of"));
  for (const auto& f : {db, db2}) remove_db(f);
  for (const auto& f : {json, t4}) std::remove(f.c_str());
}

TEST_CASE("cli options: a replay names how the replayed trials were measured", "[cpu][cli][options]") {
  const std::string data = autotune_test::data_dir();
  const std::string db = tmp_path("replay.db");
  remove_db(db);
  Run t = run_cli("tune reduction" + kNarrow + " --simulate --from " + data + "/recorded_h200.db --db " + db);
  INFO(t.out);
  REQUIRE(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("recorded with: ") && Catch::Contains("events;") && Catch::Contains(" trials)"));
  remove_db(db);
}
