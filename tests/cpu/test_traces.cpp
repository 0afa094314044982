// External runs (tuner/compare/traces.*) on the published spaces shipped in tests/data/spaces: each imports
// (gzip-compressed) and replays through tune --simulate and compare-strategies --score time --traces. The reading,
// mapping and scoring of runs on a synthetic space: test_score.cpp.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "tests/cli_support.hpp"
#include "tuner/compare/traces.hpp"

using namespace autotune;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/autotune_traces_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("the shipped published spaces import gzip-compressed and replay", "[cpu][interop][score][cli]") {
  const std::string dir = autotune_test::data_dir() + "/spaces";
  const std::string db = "/tmp/autotune_spaces_test_" + std::to_string(::getpid()) + ".db";
  std::remove(db.c_str());
  const std::vector<std::pair<std::string, std::string>> gpus = {
      {"RTX_2080_Ti", "75"}, {"RTX_3090", "86"}, {"RTX_Titan", "75"}};  // the TITAN RTX needs --cc
  for (const auto& [gpu, cc] : gpus) {
    autotune_test::Run c = autotune_test::run_cli("--db " + db + " import --format kt-cache " + dir + "/convolution_" +
                                                  gpu + ".json.gz --spec " + dir + "/convolution.T1.json --cc " + cc);
    INFO(c.out);
    CHECK(c.code == 0);
    CHECK_THAT(c.out, Catch::Contains("imported 6768 of 6768 trials of convolution"));
    autotune_test::Run p = autotune_test::run_cli("--db " + db + " import --format kt-cache " + dir + "/pnpoly_" + gpu +
                                                  ".json.gz --cc " + cc);
    INFO(p.out);
    CHECK(p.code == 0);
    CHECK_THAT(p.out, Catch::Contains("imported 4092 of 4092 trials of cn_pnpoly"));
  }
  autotune_test::Run t = autotune_test::run_cli("--db " + db +
                                                " tune cn_pnpoly --simulate --budget 20 --device \"NVIDIA "
                                                "GeForce RTX 3090\"");
  INFO(t.out);
  CHECK(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("recorded with: import:kt-cache"));

  // Every space scored, one kernel through its T1 spec (restrictions), the other through its stub, with a run of
  // another tuner on one of them.
  const std::string traces = write_temp(
      "kt.jsonl", R"({"kernel": "cn_pnpoly", "device": "NVIDIA GeForce RTX 3090", "strategy": "kt:some", "run": 0, )"
                  R"("configs": [{"between_method": 0, "block_size_x": 64, "tile_size": 20, "use_method": 0}]})"
                  "\n");
  autotune_test::Run s = autotune_test::run_cli(
      "--db " + db + " compare-strategies " + dir + "/convolution.T1.json,cn_pnpoly --score time --from " + db +
      " --repeats 2 --resolution 20 --no-strategy-time --strategies broad_then_local --traces " + traces);
  INFO(s.out);
  CHECK(s.code == 0);
  CHECK_THAT(s.out, Catch::Contains("space 6: cn_pnpoly") && Catch::Contains("kt:some") &&
                        Catch::Contains("6768 valid configurations") && Catch::Contains("4092 valid configurations"));
  autotune_test::Run timed = autotune_test::run_cli(
      "--db " + db + " compare-strategies cn_pnpoly --score time --from " + db + " --repeats 1 --traces " + traces);
  CHECK(timed.code == 2);
  CHECK_THAT(timed.out, Catch::Contains("--no-strategy-time"));
  std::remove(db.c_str());
  std::remove(traces.c_str());
}
