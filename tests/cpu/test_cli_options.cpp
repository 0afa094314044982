// What a new user trips over on the command line: global options on either side of the sub-command (every
// sub-command), refused values and misplaced options named in the command line's terms with exit code 2 (every
// numeric option of every sub-command, as --help lists them), labels in JSON output (best --json, --stats-json,
// export), and the protocol of a replayed recording in the replay's header.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_support.hpp"
#include "tests/kt_cache_fixture.hpp"
#include "tests/test_support.hpp"

namespace {

using autotune_test::Run;
using autotune_test::run_cli;
using autotune_test::slurp;

std::string tmp_path(const std::string& name) { return autotune_test::tmp_path("cli_options", name); }
using autotune_test::remove_db;

/// The sub-commands as `autotune --help` lists them.
std::vector<std::string> sub_commands() {
  const Run h = run_cli("--help");
  REQUIRE(h.code == 0);
  std::vector<std::string> out;
  std::istringstream in(h.out);
  bool listing = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "Subcommands:")
      listing = true;
    else if (listing && line.rfind("  ", 0) == 0)
      out.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return out;
}

/// One option of a sub-command as its --help shows it: the long name, the value type (INT, UINT, FLOAT, TEXT;
/// "" for a flag) and the range after the type (POSITIVE, NONNEGATIVE, "INT in [7 - 100000]", ...).
struct HelpOption {
  std::string name, type, range;
};

std::vector<HelpOption> options_of(const std::string& sub) {
  const Run h = run_cli(sub + " --help");
  REQUIRE(h.code == 0);
  // "  --name TYPE[:RANGE][=DEFAULT] ...": a range has spaces but a known shape.
  static const std::regex line_re(
      R"(^  (?:-\w,)?(--[\w-]+)(?: ([A-Z]+)(?::(POSITIVE|NONNEGATIVE|(?:INT|FLOAT) in \[\S+ - \S+\])"
      R"(|0 or FLOAT in \(\S+ - \S+\]|\{[^}]*\}))?)?(?:=\S*)?(?: .*)?$)");
  std::vector<HelpOption> out;
  std::istringstream in(h.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.rfind("  -", 0) != 0) continue;
    INFO(sub << ": " << line);
    REQUIRE(std::regex_match(line, m, line_re));
    if (m[1] != "--help") out.push_back({m[1], m[2], m[3]});
  }
  return out;
}

bool numeric(const HelpOption& o) { return o.type == "INT" || o.type == "UINT" || o.type == "FLOAT"; }

/// Whether the range that --help states takes 0: NONNEGATIVE, "0 or ...", or "... in [lo - hi]" with lo <= 0.
bool takes_zero(const std::string& range) {
  if (range == "NONNEGATIVE" || range.rfind("0 or ", 0) == 0) return true;
  if (range == "POSITIVE") return false;
  const std::size_t open = range.find(" in [");
  REQUIRE(open != std::string::npos);
  return std::stod(range.substr(open + 5)) <= 0;
}

/// CLI11's own wording, which the command line never shows.
void check_own_words(const Run& r) {
  for (const char* raw : {"not in range", "Could not convert", "not expected", "is required", "Run with --help",
                          "required but received", "not in {"})
    CHECK_THAT(r.out, !Catch::Contains(raw));
}

/// Command lines that are refused: exit code 2, "error: " and what the message must say.
struct Refusal {
  std::string args, says;
};

void check_refusals(const std::vector<Refusal>& refusals) {
  for (const Refusal& c : refusals) {
    const Run r = run_cli(c.args);
    INFO(c.args << "\n" << r.out);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::StartsWith("error: ") && Catch::Contains(c.says));
    check_own_words(r);
  }
}

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

TEST_CASE("cli options: every numeric option refuses 0 (unless it means off), -1 and words, by name, exit 2",
          "[cpu][cli][options]") {
  const std::vector<std::string> subs = sub_commands();
  REQUIRE(subs.size() >= 13);
  std::set<std::string> seen;  // "sub --name" of every numeric option
  for (const std::string& sub : subs) {
    for (const HelpOption& o : options_of(sub)) {
      if (!numeric(o)) continue;
      seen.insert(sub + " " + o.name);
      INFO(sub << " " << o.name << " " << o.type << ":" << o.range);
      REQUIRE(!o.range.empty());  // every numeric option states (and checks) its range
      for (const std::string value : {"0", "-1", "abc", "1e999"}) {
        const bool taken = value == "0" && takes_zero(o.range);
        // The value is checked before anything else (the kernel argument, or the GPU that tune would need):
        // with --help, a value that is taken shows the help.
        const Run r = run_cli(sub + " " + o.name + " " + value + (taken ? " --help" : ""));
        INFO(value << " -> " << r.code << "\n" << r.out);
        if (taken) {
          CHECK(r.code == 0);
          continue;
        }
        CHECK(r.code == 2);
        CHECK_THAT(r.out,
                   Catch::StartsWith("error: " + o.name + " must be ") && Catch::Contains("(got " + value + ")"));
        check_own_words(r);
      }
    }
  }
  // The options the issue named are among them.
  for (const char* known : {"tune --n", "tune --budget", "tune --time-limit", "tune --jobs", "tune --samples",
                            "tune --timeout", "tune --warm-start", "space --rows", "compare-strategies --repeats",
                            "explore --samples", "report --top", "best --cc", "import --cc"})
    CHECK(seen.count(known) == 1);
  // Values within a range pass, "007" is seven (not octal).
  for (const char* ok : {"tune --n 007", "tune --budget 1", "tune --time-limit 0.5", "tune --samples 7",
                         "tune --screen 2", "tune --warm-start 0", "compare-strategies --repeats 100000"}) {
    const Run r = run_cli(std::string(ok) + " --help");
    INFO(ok << "\n" << r.out);
    CHECK(r.code == 0);
  }
  check_refusals({
      {"tune reduction --screen 0.5", "--screen must be 0 (off) or a number above 1"},
      {"tune reduction --top 99999999999", "--top must be a positive integer up to 2147483647 (got 99999999999)"},
      {"tune reduction --verify gpu", "--verify must be one of device, host (got gpu)"},
      {"tune reduction --inputs-on device", "--inputs-on must be one of gpu, host (got device)"},
  });
}

TEST_CASE("cli options: an option on the wrong side of the sub-command, or of another one, is named as such",
          "[cpu][cli][options]") {
  std::size_t checked = 0;
  for (const std::string& sub : sub_commands()) {
    for (const HelpOption& o : options_of(sub)) {
      // Before the sub-command, where only the global options (--db) are read.
      const Run r = run_cli(o.name + (o.type.empty() ? "" : " 1") + " " + sub);
      INFO(r.out);
      CHECK(r.code == 2);
      CHECK_THAT(r.out, Catch::StartsWith("error: " + o.name + " is an option of ") &&
                            Catch::Contains("`" + sub + "`") && Catch::Contains(": put it after the sub-command"));
      check_own_words(r);
      ++checked;
    }
  }
  CHECK(checked > 80);
  check_refusals({
      {"--binary-cache x.db tune reduction", "--binary-cache is an option of `tune`: put it after the sub-command"},
      {"best reduction --binary-cache x.db", "--binary-cache is not an option of `best` (it is one of `tune`, `revalidate`)"},
      {"summary reduction --no-such-option 1", "unknown option --no-such-option of `summary`"},
      {"", "no sub-command given"},
      {"tuen reduction", "unknown sub-command 'tuen'"},
      {"tune", "`tune` needs its kernel argument"},
      {"report reduction", "`report` needs --html"},
      {"tune reduction --n", "--n needs a value"},
      {"tune reduction --n 1 --n 2", "--n is given more than once"},
      {"tune reduction extra", "unexpected argument 'extra' for `tune`"},
      {"best reduction --json=maybe", "--json is a flag"},
  });
}
