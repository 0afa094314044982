// tuner/cli/cmd_explore.cpp and cmd_report.cpp: `autotune explore` and `autotune report` end to end through the real
// binary, on the shipped H200 recording (simulation; no GPU needed).
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "db/database.hpp"
#include "tests/cli_support.hpp"
#include "tests/test_support.hpp"
#include "tests/xml_check.hpp"

namespace {

using autotune_test::remove_db;
using autotune_test::Run;
using autotune_test::run_cli;
using autotune_test::slurp;

std::string tmp(const std::string& name) {
  return "/tmp/autotune_cli_explore_" + std::to_string(::getpid()) + "_" + name;
}

}  // namespace

TEST_CASE("cli explore: simulation from the H200 recording prints the table, the verdict and the chart", "[cpu][cli][explore]") {
  const std::string rec = autotune_test::data_dir() + "/recorded_h200.db";
  const std::string db = tmp("explore.db"), svg = tmp("explore.svg");
  remove_db(db);
  Run r = run_cli("--db " + db + " explore reduction --n 67108864 --dtype float32 --op sum --simulate --from " + rec +
              " --plot " + svg);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("explore reduction float32/sum n=67108864 on NVIDIA H200"));
  CHECK_THAT(r.out, Catch::Contains("VARIANT=grid_stride (best known)"));
  CHECK_THAT(r.out, Catch::Contains("excluded by constraint `BLOCKS_PER_SM * BLOCK_SIZE <= 2048`"));
  CHECK_THAT(r.out, Catch::Contains("at 256 threads: 2 x SMs reaches 96.8% of the best grid (8 x SMs, 3669.6 GB/s)"));
  CHECK_THAT(r.out, Catch::Contains("blocks_per_sm x block_size >= 768 threads per SM"));
  auto doc = autotune_test::parse_xml(slurp(svg));
  INFO(doc.error);
  CHECK(doc.ok);
  CHECK(doc.count_with("g", "class", "series") == 5);

  // The trials landed in --db as an "explore" session; a rerun reuses them.
  {
    auto d = autotune::db::Database::open(db, autotune::db::Database::Mode::read_only);
    auto sessions = d->sessions();
    REQUIRE(sessions.size() == 1);
    CHECK(sessions.front().strategy == "explore");
    CHECK(sessions.front().backend == "simulation");
    autotune::db::TrialFilter f;
    CHECK(d->trials(f).size() == 27);
  }
  Run again = run_cli("--db " + db + " explore reduction --simulate --from " + rec + " --block-sizes 256,1024 --blocks-per-sm 1,2,4 "
                  "--fix VARIANT=warp_shuffle --tolerance 1");
  INFO(again.out);
  CHECK(again.code == 0);
  CHECK_THAT(again.out, Catch::Contains("VARIANT=warp_shuffle (--fix)"));
  CHECK_THAT(again.out, Catch::Contains("within 1%"));

  // The report of the explore session.
  const std::string html = tmp("report.html");
  Run rep = run_cli("--db " + db + " report 1 --html " + html);
  INFO(rep.out);
  CHECK(rep.code == 0);
  CHECK_THAT(rep.out, Catch::Contains("session 1"));
  auto page = autotune_test::parse_xml(slurp(html));
  INFO(page.error);
  CHECK(page.ok);
  CHECK(page.by_id("best-table") != nullptr);
  remove_db(db);
  std::remove(svg.c_str());
  std::remove(html.c_str());
}

TEST_CASE("cli explore/report: errors are one clear line", "[cpu][cli][explore]") {
  const std::string rec = autotune_test::data_dir() + "/recorded_h200.db";
  const std::string db = tmp("err.db");
  Run fix = run_cli("--db " + db + " explore reduction --simulate --from " + rec + " --fix NOPE=1");
  CHECK(fix.code == 2);
  CHECK_THAT(fix.out, Catch::Contains("--fix NOPE: kernel reduction has no such parameter"));
  Run grid = run_cli("--db " + db + " explore scan --plan-only --blocks-per-sm 1,2");
  CHECK(grid.code == 2);
  CHECK_THAT(grid.out, Catch::Contains("--blocks-per-sm does not apply"));
  Run plan = run_cli("--db " + db + " explore reduction --plan-only --block-sizes 128,1024 --blocks-per-sm 2,4");
  INFO(plan.out);
  CHECK(plan.code == 0);
  CHECK_THAT(plan.out, Catch::Contains("excluded by constraint") && Catch::Contains("not run"));
  Run missing = run_cli("--db " + rec + " report 42 --html " + tmp("x.html"));
  CHECK(missing.code == 2);
  CHECK_THAT(missing.out, Catch::Contains("session 42 does not exist"));
  Run no_html = run_cli("--db " + rec + " report reduction");
  CHECK(no_html.code != 0);
  CHECK_THAT(no_html.out, Catch::Contains("--html"));
  remove_db(db);
}
