// `autotune tune` under mpirun (built with -DAUTOTUNE_MPI=ON): replayed sessions over several ranks record
// exactly the trials of a single-process run, a rank killed with SIGKILL mid-session does not end it, and ranks
// with different device models tune side by side. Runs Open MPI's mpirun with --oversubscribe (no GPU needed).
#ifdef AUTOTUNE_WITH_MPI
#include <catch2/catch.hpp>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "db/database.hpp"
#include "tests/tools/child_process.hpp"

namespace {

using autotune::db::Database;
namespace fs = std::filesystem;

const std::string kData = AUTOTUNE_TEST_DATA_DIR;

struct TempDir {
  std::string path = "/tmp/autotune_mpi_test_" + std::to_string(::getpid());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

/// mpirun may run as root here (CI containers); Open MPI wants that said.
void allow_root() {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
}

/// mpirun's path from PATH (the child is started with execv).
std::string mpirun_path() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && ::access((d + "/mpirun").c_str(), X_OK) == 0) return d + "/mpirun";
  return "/usr/bin/mpirun";
}

std::vector<std::string> mpirun(int ranks, const std::vector<std::string>& args, bool recovery = false) {
  std::vector<std::string> v = {mpirun_path(), "--oversubscribe", "-np", std::to_string(ranks)};
  if (recovery) v.insert(v.begin() + 1, "--enable-recovery");
  v.push_back(AUTOTUNE_BIN);
  v.insert(v.end(), args.begin(), args.end());
  return v;
}

std::vector<std::string> tune_args(const std::string& db, const std::string& recording,
                                   const std::vector<std::string>& more) {
  std::vector<std::string> v = {"--db", db, "tune", "reduction", "--n", "67108864", "--simulate", "--from", recording};
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

using TrialKey = std::tuple<std::string, std::string, std::string, double>;  // device, config, status, median

/// Every trial as (device name, config hash, status, median): what a run measured, whoever measured it.
std::vector<TrialKey> trials_of(const std::string& db_path) {
  auto db = Database::open(db_path, Database::Mode::read_only);
  std::map<std::int64_t, std::string> names;
  for (const auto& d : db->devices()) names[d.id] = d.info.name;
  std::vector<TrialKey> out;
  for (const auto& t : db->trials({}))
    out.emplace_back(names[t.device_id], t.config_hash, autotune::to_string(t.m.status), t.m.median_ns);
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, std::size_t> measured_by(const std::string& db_path) {
  std::map<std::string, std::size_t> out;
  for (const auto& t : Database::open(db_path, Database::Mode::read_only)->trials({})) ++out[t.m.measured_by];
  return out;
}

/// The pid of the process of MPI rank `rank` whose command line contains `needle`, or -1.
pid_t rank_pid(int rank, const std::string& needle) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream env(e.path() / "environ"), cmd(e.path() / "cmdline");
    std::stringstream es, cs;
    es << env.rdbuf();
    cs << cmd.rdbuf();
    std::string cmdline = cs.str();
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.rfind(std::string(AUTOTUNE_BIN), 0) != 0 || cmdline.find(needle) == std::string::npos) continue;
    const std::string environ = es.str();
    const std::string want = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
    for (std::size_t pos = 0; pos < environ.size();) {
      const std::size_t end = environ.find('\0', pos);
      if (environ.compare(pos, (end == std::string::npos ? environ.size() : end) - pos, want) == 0)
        return static_cast<pid_t>(std::stoi(name));
      if (end == std::string::npos) break;
      pos = end + 1;
    }
  }
  return -1;
}

}  // namespace

TEST_CASE("mpi: 4 ranks record exactly the trials of one process with the same seed and find the same best",
          "[cpu][mpi]") {
  allow_root();
  TempDir dir;
  const std::string recording = kData + "/recorded_h200.db";
  const std::vector<std::string> more = {"--budget", "300", "--seed", "7"};
  auto single = autotune_test::run_child(
      [&] { auto v = tune_args(dir / "single.db", recording, more); v.insert(v.begin(), AUTOTUNE_BIN); return v; }());
  INFO(single.out << single.err);
  REQUIRE(single.exit_code == 0);
  auto multi = autotune_test::run_child(mpirun(4, tune_args(dir / "mpi.db", recording, more)));
  INFO(multi.out << multi.err);
  REQUIRE(multi.exit_code == 0);
  CHECK_THAT(multi.err, Catch::Contains("mpi: 4 ranks"));
  // Ranks on one node share its cores instead of each taking all of them (bound ranks: their affinity set).
  const std::size_t online = std::max(1u, std::thread::hardware_concurrency());
  std::size_t shares = 0;
  for (std::size_t at = multi.err.find("its share "); at != std::string::npos;
       at = multi.err.find("its share ", at + 1)) {
    const std::size_t cores = std::stoul(multi.err.substr(at + 10));
    CHECK(cores >= 1);
    CHECK(cores <= std::max<std::size_t>(1, online / 2));  // 4 ranks: a quarter of the node, or a bound subset
    ++shares;
  }
  CHECK(shares == 4);
  CHECK_THAT(multi.err, Catch::Contains("4 ranks on its node"));

  const auto a = trials_of(dir / "single.db"), b = trials_of(dir / "mpi.db");
  REQUIRE(a.size() == 300);
  CHECK(a == b);
  // The same best configuration is reported first.
  auto first_row = [](const std::string& out) {
    const auto at = out.find("\n1 ");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at + 1) - at);
  };
  CHECK(first_row(single.out) == first_row(multi.out));
  CHECK_FALSE(first_row(multi.out).empty());
  // Rank 0's summary names what each rank measured and how long it took to prepare (inputs, reference, uploads).
  std::size_t prepared = 0;
  for (std::size_t at = multi.out.find(" s preparing"); at != std::string::npos;
       at = multi.out.find(" s preparing", at + 1))
    ++prepared;
  CHECK(prepared == 4);
  // Every rank measured a share, and each trial says which rank took it.
  const auto by = measured_by(dir / "mpi.db");
  CHECK(by.size() == 4);
  for (const auto& [who, n] : by) {
    CHECK_THAT(who, Catch::Contains("rank="));
    CHECK(n > 0);
  }
  // A second run of the same command resumes: nothing is measured twice.
  auto again = autotune_test::run_child(mpirun(2, tune_args(dir / "mpi.db", recording, more)));
  REQUIRE(again.exit_code == 0);
  CHECK_THAT(again.out, Catch::Contains("0 measured now, 300 from earlier sessions"));
}

TEST_CASE(
    "mpi: a rank without work left in its round measures the next round ahead, and the trials stay those of one "
    "process",
    "[cpu][mpi]") {
  allow_root();
  TempDir dir;
  const std::string recording = kData + "/recorded_h200.db";
  // Brute force names its next round exactly; 2 ms per replayed configuration gives rounds that end while one rank
  // still measures its last configurations.
  const std::vector<std::string> order = {"--strategy", "brute_force", "--budget", "1200"};
  std::vector<std::string> slow = order;
  slow.insert(slow.end(), {"--simulate-delay-ms", "2"});
  auto multi = autotune_test::run_child(mpirun(2, tune_args(dir / "mpi.db", recording, slow)));
  INFO(multi.out << multi.err);
  REQUIRE(multi.exit_code == 0);
  auto single = autotune_test::run_child([&] {
    auto v = tune_args(dir / "single.db", recording, order);
    v.insert(v.begin(), AUTOTUNE_BIN);
    return v;
  }());
  REQUIRE(single.exit_code == 0);
  const auto got = trials_of(dir / "mpi.db");
  CHECK(got.size() == 1200);
  CHECK(got == trials_of(dir / "single.db"));
  // Rank 0's summary: "rank R (...): N configurations (A ahead of their round), ...".
  std::size_t ahead = 0, ranks = 0;
  const std::regex line(R"(configurations \((\d+) ahead of their round\))");
  for (auto it = std::sregex_iterator(multi.out.begin(), multi.out.end(), line); it != std::sregex_iterator(); ++it) {
    ahead += std::stoul((*it)[1].str());
    ++ranks;
  }
  CHECK(ranks == 2);
  CHECK(ahead > 0);
  CHECK_THAT(multi.out, Catch::Contains("s between tasks") && Catch::Contains("waiting for binaries"));
}

TEST_CASE("mpi: a rank killed with SIGKILL mid-session is taken out and every configuration is still measured once",
          "[cpu][mpi][reliability]") {
  allow_root();
  TempDir dir;
  const std::string recording = kData + "/recorded_h200.db";
  const std::string db = dir / "killed.db";
  const std::vector<std::string> more = {"--budget", "200", "--seed", "3", "--simulate-delay-ms", "15",
                                         "--rank-timeout", "2"};
  auto child = autotune_test::spawn(mpirun(3, tune_args(db, recording, more), /*recovery=*/true));
  // Wait until the session is well under way, then kill rank 2.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::size_t seen = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (fs::exists(db)) seen = Database::open(db, Database::Mode::read_only)->trials({}).size();
    } catch (const std::exception&) {
    }
    if (seen >= 40) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(seen >= 40);
  const pid_t victim = rank_pid(2, db);
  REQUIRE(victim > 0);
  REQUIRE(::kill(victim, SIGKILL) == 0);
  auto done = autotune_test::finish(child);
  INFO(done.out << done.err);
  REQUIRE(done.exit_code == 0);
  CHECK_THAT(done.err, Catch::Contains("rank 2") && Catch::Contains("taken out"));

  // Exactly the trials of an undisturbed single-process run: none lost, none twice.
  const std::vector<std::string> plain = {"--budget", "200", "--seed", "3"};
  auto single = autotune_test::run_child(
      [&] { auto v = tune_args(dir / "single.db", recording, plain); v.insert(v.begin(), AUTOTUNE_BIN); return v; }());
  REQUIRE(single.exit_code == 0);
  const auto got = trials_of(db);
  CHECK(got.size() == 200);
  CHECK(got == trials_of(dir / "single.db"));
  const auto by = measured_by(db);
  CHECK(by.size() == 3);  // rank 2 measured some before it died; the others took over
}

TEST_CASE("mpi: ranks with different device models get one session each, a rank that cannot measure is reported",
          "[cpu][mpi]") {
  allow_root();
  TempDir dir;
  const std::string db = dir / "mixed.db";
  auto transpose = [&](const std::string& recording) {
    return std::vector<std::string>{"-np", "1", AUTOTUNE_BIN, "--db", db, "tune", "transpose", "--rows", "8192",
                                    "--cols", "8192", "--simulate", "--from", recording};
  };
  std::vector<std::string> argv = {mpirun_path(), "--oversubscribe"};
  for (const auto& part : {transpose(kData + "/recorded_h200.db"), transpose(kData + "/recorded_h200.db"),
                           transpose(kData + "/recorded_h100.db"), transpose(dir / "missing.db")}) {
    if (argv.size() > 2) argv.push_back(":");
    argv.insert(argv.end(), part.begin(), part.end());
  }
  auto r = autotune_test::run_child(argv);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("2 device models"));
  CHECK_THAT(r.err, Catch::Contains("rank 3") && Catch::Contains("not measuring") && Catch::Contains("missing.db"));

  // Each model's trials are those of a single-process run on its recording.
  for (const auto& [recording, name] : {std::pair<std::string, std::string>{"recorded_h200.db", "NVIDIA H200"},
                                        {"recorded_h100.db", "NVIDIA H100 80GB HBM3"}}) {
    const std::string one = dir / ("one_" + recording);
    auto s = autotune_test::run_child({AUTOTUNE_BIN, "--db", one, "tune", "transpose", "--rows", "8192", "--cols",
                                       "8192", "--simulate", "--from", kData + "/" + recording});
    REQUIRE(s.exit_code == 0);
    std::vector<TrialKey> mine;
    for (const auto& t : trials_of(db))
      if (std::get<0>(t) == name) mine.push_back(t);
    CHECK(mine.size() == 90);
    CHECK(mine == trials_of(one));
  }
}
#endif  // AUTOTUNE_WITH_MPI
