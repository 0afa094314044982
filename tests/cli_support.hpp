// Running the autotune executable (AUTOTUNE_BIN, set by tests/CMakeLists.txt) from the cpu-tier tests, and
// reading back the files it writes.
#pragma once
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace autotune_test {

struct Run {
  int code = -1;     // exit status; -1 when the process did not exit normally
  std::string out;   // stdout + stderr
};

/// Runs `autotune ARGS` through the shell and collects its output and exit status.
inline Run run_cli(const std::string& args) {
  const std::string cmd = std::string(AUTOTUNE_BIN) + " " + args + " 2>&1";
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, got);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

/// "/tmp/autotune_<prefix>_<pid>_<name>": a file of this test process.
inline std::string tmp_path(const std::string& prefix, const std::string& name) {
  return "/tmp/autotune_" + prefix + "_" + std::to_string(::getpid()) + "_" + name;
}

/// Removes a database file with its WAL and shared-memory files.
inline void remove_db(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

/// The whole file ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace autotune_test
