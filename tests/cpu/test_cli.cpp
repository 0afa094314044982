// The autotune binary on bad input: one-line errors that name the problem, non-zero exit codes, and
// nothing stored is lost. Runs the real executable (no GPU needed for these paths).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "db/database.hpp"
#include "tests/cli_support.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/child_process.hpp"

namespace {

using autotune_test::Run;
using autotune_test::run_cli;
using autotune_test::slurp;

std::string tmp_path(const std::string& name) {
  return "/tmp/autotune_cli_test_" + std::to_string(::getpid()) + "_" + name;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

const std::string kData = AUTOTUNE_TEST_DATA_DIR;

}  // namespace

TEST_CASE("cli: help and listing work without a GPU", "[cpu][cli]") {
  Run h = run_cli("--help");
  CHECK(h.code == 0);
  CHECK_THAT(h.out, Catch::Contains("tune") && Catch::Contains("best") && Catch::Contains("space"));
  Run th = run_cli("tune --help");
  CHECK(th.code == 0);
  CHECK_THAT(th.out, Catch::Contains("--strategy") && Catch::Contains("--budget"));
  Run l = run_cli("list");
  CHECK(l.code == 0);
  CHECK_THAT(l.out, Catch::Contains("reduction"));
  Run s = run_cli("space " + kData + "/specs/tiny.tune.json");
  CHECK(s.code == 0);
  CHECK_THAT(s.out, Catch::Contains("cartesian:   4") && Catch::Contains("valid:       4"));
}

TEST_CASE("cli: space reports the groups of a factorised space", "[cpu][cli][space]") {
  Run s = run_cli("space " + kData + "/specs/gemm_like_wide.tune.json");
  CHECK(s.code == 0);
  CHECK_THAT(s.out, Catch::Contains("cartesian:   10000000000") && Catch::Contains("groups:      2") &&
                        Catch::Contains("stored factorised") && Catch::Contains("55  SA SB") &&
                        Catch::Contains("MWG NWG KWG MDIMC NDIMC VWM VWN STAGES"));
}

TEST_CASE("cli: bad input gets a one-line error and a non-zero exit", "[cpu][cli]") {
  Run unknown = run_cli("space no_such_kernel");
  CHECK(unknown.code == 2);
  CHECK_THAT(unknown.out, Catch::Contains("unknown kernel 'no_such_kernel'"));

  std::string bad = tmp_path("bad.json");
  write(bad, "{\"name\": \"x\",");
  Run malformed = run_cli("space " + bad);
  std::remove(bad.c_str());
  CHECK(malformed.code == 2);
  CHECK_THAT(malformed.out, Catch::Contains("malformed JSON"));

  // The tiny spec with the first `what` replaced by `with`, written to a temporary file and given to `space`.
  const std::string spec = slurp(kData + "/specs/tiny.tune.json");
  auto space_of_edited = [&spec](const std::string& name, const std::string& what, const std::string& with) {
    std::string edited = spec;
    edited.replace(edited.find(what), what.size(), with);
    const std::string path = kData + "/specs/" + name;
    write(path, edited);
    Run r = run_cli("space " + path);
    std::remove(path.c_str());
    return r;
  };
  Run r1 = space_of_edited("tmp_wrong_type.tune.json", "[32, 64, 128, 256]", "[32, \"64\"]");
  CHECK(r1.code == 2);
  CHECK_THAT(r1.out, Catch::Contains("/parameters/0/values/1"));

  Run r2 = space_of_edited("tmp_unknown_param.tune.json", "\"parameters\"",
                           "\"constraints\": [\"BLOCK < 64\"], \"parameters\"");
  CHECK(r2.code == 2);
  CHECK_THAT(r2.out, Catch::Contains("unknown name 'BLOCK'"));

  Run r3 = space_of_edited("tmp_empty.tune.json", "\"parameters\"",
                           "\"constraints\": [\"BLOCK_SIZE > 4096\"], \"parameters\"");
  CHECK(r3.code != 0);
  CHECK_THAT(r3.out, Catch::Contains("valid:       0"));

  Run zero = run_cli("space reduction --n 0");
  CHECK(zero.code != 0);
  Run bad_dtype = run_cli("space reduction --dtype complex128");
  CHECK(bad_dtype.code == 2);
  CHECK_THAT(bad_dtype.out, Catch::Contains("does not support workload"));
}

TEST_CASE("cli: a user kernel's input file that does not fit is a spec error, found before the GPU",
          "[cpu][cli][data_file]") {
  // The file holds n = 4099 elements: another size is refused when the problem is known, before any GPU is looked
  // for (this machine may have none: the error is still the spec's, exit 2).
  const std::string db = tmp_path("filed.db");
  Run r = run_cli("tune " + kData + "/files/filed.tune.json --n 4000 --db " + db);
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("invalid spec") && Catch::Contains("/arguments/0/init/file") &&
                        Catch::Contains("argument 'x' needs 4000 elements of float32") && Catch::Contains("x.npy") &&
                        Catch::Contains("(4099,) = 4099 elements"));
  CHECK(slurp(db).empty());  // no database was made
  autotune_test::remove_db(db);
  // A missing file is found when the spec is loaded, by every command.
  std::string spec = slurp(kData + "/files/filed.tune.json");
  spec.replace(spec.find("\"bias.bin\""), 10, "\"gone.bin\"");
  const std::string path = kData + "/files/tmp_missing.tune.json";
  write(path, spec);
  Run m = run_cli("space " + path);
  std::remove(path.c_str());
  CHECK(m.code == 2);
  CHECK_THAT(m.out, Catch::Contains("/arguments/1/init/file") && Catch::Contains("argument 'bias'") &&
                        Catch::Contains("gone.bin") && Catch::Contains("No such file"));
}

TEST_CASE("cli: tune without a GPU says so, databases that are not ours are refused untouched", "[cpu][cli]") {
  std::string notdb = tmp_path("notdb.db");
  write(notdb, "this is not a database, just text that someone named .db\n");
  std::string before = slurp(notdb);
  Run r = run_cli("--db " + notdb + " best reduction --n 1024 --device x");
  CHECK(r.code == 4);
  CHECK_THAT(r.out, Catch::Contains("not SQLite") || Catch::Contains("not an autotune database"));
  CHECK(slurp(notdb) == before);

  std::string newer = tmp_path("newer.db");
  {
    auto db = autotune::db::Database::open(newer);
    db->exec("PRAGMA user_version = 999");
  }
  std::string nbefore = slurp(newer);
  Run r2 = run_cli("--db " + newer + " tune reduction --n 1024 --simulate");
  CHECK(r2.code == 4);
  CHECK_THAT(r2.out, Catch::Contains("newer"));
  CHECK(slurp(newer) == nbefore);

  Run nogpu = run_cli("--db " + tmp_path("x.db") + " tune reduction --n 1024");
  if (nogpu.out.find("no NVIDIA driver/GPU found") != std::string::npos) {
    CHECK(nogpu.code == 3);
    CHECK_THAT(nogpu.out, Catch::Contains("--simulate"));
  } else {
    CHECK(nogpu.code == 0);  // a GPU is present: the tune ran
  }
  // A user's kernel has no shipped recording: the way out is to tune it on a GPU machine and replay that database.
  const std::string x2 = tmp_path("x2.db");
  Run user = run_cli("--db " + x2 + " tune " + kData + "/t1/vector_add.json --budget 2");
  if (user.out.find("no NVIDIA driver/GPU found") != std::string::npos) {
    CHECK(user.code == 3);
    CHECK_THAT(user.out, Catch::Contains("tune it on a GPU machine") && Catch::Contains("--simulate --from tuned.db"));
    CHECK_THAT(user.out, !Catch::Contains("recorded_h100"));
  } else {
    CHECK(user.code == 0);
  }
  autotune_test::remove_db(x2);
  std::remove(notdb.c_str());
  autotune_test::remove_db(newer);
}

TEST_CASE("cli: corrupt, truncated and read-only databases get a clear error, exit 4, and stay untouched",
          "[cpu][cli][reliability]") {
  using autotune_test::Finished;
  using autotune_test::run_child;
  const std::string recorded = kData + "/recorded_h200.db";
  const std::string good = tmp_path("good.db");
  // A real tuner database: 300 replayed trials.
  Finished made = run_child({AUTOTUNE_BIN, "--db", good, "tune", "reduction", "--n", "67108864", "--simulate",
                             "--from", recorded, "--budget", "300"});
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  const std::string whole = slurp(good);
  REQUIRE(whole.size() > 16 * 4096);
  auto tune = [&](const std::string& db) {
    return std::vector<std::string>{AUTOTUNE_BIN, "--db", db, "tune", "reduction", "--n", "67108864",
                                    "--simulate", "--from", recorded};
  };
  auto best = [&](const std::string& db) {
    return std::vector<std::string>{AUTOTUNE_BIN, "--db", db, "best", "reduction", "--n", "67108864"};
  };

  // Writes `bytes` as the database `name`: tune and best both exit 4 with an error that names the path followed by
  // `after_path` and contains `also`, and leave the file as it was.
  auto check_refused = [&](const std::string& name, const std::string& bytes, const std::string& after_path,
                           const std::string& also) {
    const std::string bad = tmp_path(name);
    write(bad, bytes);
    for (const auto& argv : {tune(bad), best(bad)}) {
      Finished f = run_child(argv);
      INFO(argv[3] << ": " << f.err);
      CHECK(f.exit_code == 4);
      CHECK_THAT(f.err, Catch::Contains(bad + after_path) && Catch::Contains(also));
      CHECK(slurp(bad) == bytes);
    }
    autotune_test::remove_db(bad);
  };

  SECTION("corrupt pages") {
    std::string bytes = whole;
    for (std::size_t i = 4 * 4096; i < bytes.size() - 4096; ++i) bytes[i] = static_cast<char>(0x5A ^ (i & 0xff));
    check_refused("corrupt.db", bytes, " is corrupt", "");
  }
  SECTION("truncated to half") { check_refused("truncated.db", whole.substr(0, whole.size() / 2), "", "corrupt"); }
  SECTION("no write permission: tune refuses, best still reads") {
    const std::string ro = tmp_path("readonly.db");
    write(ro, whole);
    ::chmod(ro.c_str(), 0444);
    // Root ignores permissions: run the binary as 'nobody' then.
    autotune_test::SpawnOptions as_user;
    if (::geteuid() == 0) as_user.run_as_uid = 65534;
    Finished t = run_child(tune(ro), as_user);
    INFO("tune: " << t.err);
    CHECK(t.exit_code == 4);
    CHECK_THAT(t.err, Catch::Contains(ro + " is read-only"));
    Finished b = run_child(best(ro), as_user);
    INFO("best: " << b.out << b.err);
    CHECK(b.exit_code == 0);
    CHECK(slurp(ro) == whole);
    autotune_test::remove_db(ro);
  }
  autotune_test::remove_db(good);
}

TEST_CASE("cli: tune prints a time split and writes it as JSON, and --values and --drop-constraint narrow the space",
          "[cpu][cli]") {
  const std::string narrow =
      " --n 67108864 --dtype float32 --op sum --values VARIANT=grid_stride --values FINAL=second_pass --values KAHAN=0"
      " --values BLOCKS_PER_SM=1,2,4,8,16,32 --values ITEMS_PER_THREAD=1,2,4";
  Run sp = run_cli("space reduction" + narrow + " --drop-constraint 'BLOCKS_PER_SM * BLOCK_SIZE <= 2048'");
  CHECK(sp.code == 0);
  CHECK_THAT(sp.out, Catch::Contains("valid:       270"));
  Run bad = run_cli("space reduction --values VEC=3");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Catch::Contains("'3' is not a value of VEC"));

  const std::string db = tmp_path("stats.db"), json = tmp_path("stats.json");
  autotune_test::remove_db(db);
  Run r = run_cli("--db " + db + " tune reduction" + narrow + " --simulate --from " + kData +
              "/recorded_h200.db --stats-json " + json);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("time split: wall") && Catch::Contains("configs/s") &&
                        Catch::Contains("database"));
  const std::string text = slurp(json);
  CHECK_THAT(text, Catch::Contains("\"configs\": 180") && Catch::Contains("\"ok\": 180") &&
                       Catch::Contains("\"idle_gpu_s\"") && Catch::Contains("\"best\"") &&
                       Catch::Contains("VARIANT=grid_stride"));
  // Every verified trial's time by label, the best among them.
  const nlohmann::json j = nlohmann::json::parse(text);
  REQUIRE(j["ok_median_ns"].size() == 180);
  const std::string best = j["best"]["label"];
  CHECK(j["ok_median_ns"][best].get<double>() == j["best"]["median_ns"].get<double>());
  for (const auto& [label, ns] : j["ok_median_ns"].items()) CHECK(ns.get<double>() >= j["best"]["median_ns"].get<double>());
  autotune_test::remove_db(db);
  std::remove(json.c_str());
}

TEST_CASE("cli: the default strategy under a limit, warm starts from other sizes, screening", "[cpu][cli]") {
  const std::string db = tmp_path("default_strategy.db"), json = tmp_path("default_strategy.json");
  autotune_test::remove_db(db);
  const std::string from = " --simulate --from " + kData + "/recorded_h100.db --stats-json " + json;
  const std::string scan = " tune scan --dtype float32 --op inclusive_sum";

  // A limit and no strategy: broad_then_local, and the database knows nothing yet.
  Run small = run_cli("--db " + db + scan + " --n 16777216 --budget 40" + from);
  INFO(small.out);
  REQUIRE(small.code == 0);
  CHECK_THAT(small.out, Catch::Contains("with broad_then_local (the default under a limit)") &&
                            Catch::Contains("stopped by the budget after 40 of 2661"));
  CHECK_THAT(small.out, !Catch::Contains("warm start"));
  nlohmann::json j = nlohmann::json::parse(slurp(json));
  CHECK(j["strategy"] == "broad_then_local");
  CHECK(j["warm_start"]["used"] == 0);
  CHECK_FALSE(j["trace"].empty());

  // Another size: the best configurations of n=2^24 and the times of all 40 measured there, tested here. A budget
  // too small to measure any of them first; 10 evaluations are under climb_below (3) covering rounds, so the run
  // climbs from the spec default (after one covering config, climb_check), near the configs 2^24 measured: 6 of
  // them measured at both (one of the five suggested) give the rank correlation that sets the trust.
  Run large = run_cli("--db " + db + scan + " --n 268435456 --budget 10" + from);
  INFO(large.out);
  REQUIRE(large.code == 0);
  CHECK_THAT(large.out, Catch::Contains("warm start (n=268435456): 5 configurations, the best of n=16777216") &&
                            Catch::Contains("warm start from n=16777216: 5 of 5 suggested configurations valid "
                                            "here; trusted 0.94 (rank correlation 0.94 over 6 configurations "
                                            "measured at both (none measured first"));
  j = nlohmann::json::parse(slurp(json));
  CHECK(j["warm_start"]["used"] == 5);
  CHECK(j["warm_start"]["from"] == "n=16777216");
  CHECK(j["warm_start"]["distance"] == 4.0);
  CHECK(j["warm_start"]["source_values"] == 40);
  CHECK(j["warm_start"]["measured"] == 1);
  CHECK(j["warm_start"]["overlap"] == 6);
  CHECK(j["warm_start"]["trust"].get<double>() == Approx(0.9428571).epsilon(1e-6));

  Run off = run_cli("--db " + db + scan + " --n 268435456 --budget 10 --warm-start 0 --seed 3" + from);
  CHECK(off.code == 0);
  CHECK_THAT(off.out, !Catch::Contains("warm start"));

  // No limit: brute force, every configuration.
  Run all = run_cli("--db " + db + " tune transpose --rows 4096 --cols 4096" + from);
  INFO(all.out);
  CHECK(all.code == 0);
  CHECK_THAT(all.out, Catch::Contains("with brute_force (the default without a limit)") &&
                          Catch::Contains("90 measured now"));

  // Screening needs a time limit; with one it tunes the smaller problem first.
  Run bad = run_cli("--db " + db + scan + " --n 268435456 --screen 16" + from);
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Catch::Contains("--screen needs --time-limit"));
  autotune_test::remove_db(db);
  Run screened = run_cli("--db " + db + scan + " --n 268435456 --screen 16 --time-limit 5" + from);
  INFO(screened.out);
  CHECK(screened.code == 0);
  CHECK_THAT(screened.out, Catch::Contains("screening at n=16777216") &&
                               Catch::Contains("are measured first at n=268435456"));
  j = nlohmann::json::parse(slurp(json));
  CHECK(j["screen"]["problem"] == "n=16777216");
  CHECK(j["screen"]["configs"].get<int>() > 0);
  autotune_test::remove_db(db);
  std::remove(json.c_str());
}

TEST_CASE("cli: best and summary take --objective, a recording without NVML has no energy answer",
          "[cpu][cli][observer]") {
  const std::string rec = autotune_test::data_dir() + "/recorded_h200.db";
  const std::string cell = " reduction --n 67108864 --dtype float32 --op sum";
  autotune_test::Run t = autotune_test::run_cli("--db " + rec + " best" + cell + " --json");
  INFO(t.out);
  REQUIRE(t.code == 0);
  auto j = nlohmann::json::parse(t.out);
  CHECK(j["objective"] == "time");
  CHECK(j["objective_value"].get<double>() == j["median_ns"].get<double>());
  CHECK(j["observed"].is_null());

  autotune_test::Run e = autotune_test::run_cli("--db " + rec + " best" + cell + " --json --objective energy");
  INFO(e.out);
  REQUIRE(e.code == 0);
  auto k = nlohmann::json::parse(e.out);
  CHECK(k["objective"] == "energy");
  CHECK(k["match"] == "spec_default");
  CHECK_THAT(k["note"].get<std::string>(), Catch::Contains("lack the power or energy"));

  CHECK(autotune_test::run_cli("--db " + rec + " best" + cell + " --objective power").code != 0);
  autotune_test::Run s = autotune_test::run_cli("--db " + rec + " summary" + cell + " --by BLOCK_SIZE --objective edp");
  CHECK(s.code == 0);
  CHECK_THAT(s.out, Catch::Contains("ranked by edp"));
}

TEST_CASE("cli: tune DIR tunes the captures in it, one session each, and names those that are not specs",
          "[cpu][cli][capture]") {
  namespace fs = std::filesystem;
  const fs::path dir = tmp_path("captures");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = tmp_path("captures.db");
  Run empty = run_cli("--db " + db + " tune " + dir.string() + " --simulate");
  CHECK(empty.code == 2);
  CHECK_THAT(empty.out, Catch::Contains("is a directory without captures (*.tune.json"));

  // A broken capture is named and the next one still runs; without a GPU that one stops with the driver's reason.
  write((dir / "a_n=1.tune.json").string(), "{\"name\": \"a\"");
  fs::copy_file(autotune_test::data_dir() + "/launch_api/two_step.tune.json", dir / "b_n=2.tune.json");
  fs::copy_file(autotune_test::data_dir() + "/launch_api/two_step.cu", dir / "two_step.cu");
  Run r = run_cli("--db " + db + " tune " + dir.string() + " --n 1000");
  CHECK_THAT(r.out, Catch::Contains("== capture 1 of 2: " + (dir / "a_n=1.tune.json").string()));
  CHECK_THAT(r.out, Catch::Contains("a_n=1.tune.json") && Catch::Contains("invalid spec"));
  CHECK_THAT(r.out, Catch::Contains("== capture 2 of 2: " + (dir / "b_n=2.tune.json").string()));
  if (r.out.find("no NVIDIA driver/GPU found") != std::string::npos)
    CHECK(r.code == 3);
  else
    CHECK(r.code == 2);  // a GPU is present: b ran, a's error remains
  fs::remove_all(dir);
  autotune_test::remove_db(db);
}
