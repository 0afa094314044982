// The launch API leaves no CUDA API error behind: an application that launches through autotune::Kernel
// (tests/tools/launch_app.cpp) runs under compute-sanitizer's memcheck, which also reports every driver call
// that returned an error, with 0 errors, once with a tuned database (the binary from the database) and once
// without one (the spec default compiled by NVRTC), for plain and templated entry points.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "launch_api_support.hpp"
#include "tools/child_process.hpp"
#include "tuner/specs/specs.hpp"

namespace fs = std::filesystem;

namespace {

/// launch_app beside this test binary (both built into build/tests/, carried together to the GPU machine), else
/// where this build put it.
std::string launch_app() {
  std::error_code ec;
  const fs::path here = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && fs::exists(here.parent_path() / "launch_app")) return (here.parent_path() / "launch_app").string();
  return LAUNCH_APP_BIN;
}

/// compute-sanitizer of the toolkit the GPU machine has (GPU.md), else the one on PATH.
std::string sanitizer() {
  for (const char* p : {"/usr/local/cuda/bin/compute-sanitizer", "/usr/local/cuda/compute-sanitizer/compute-sanitizer"})
    if (fs::exists(p)) return p;
  return "compute-sanitizer";
}

}  // namespace

TEST_CASE("launch API: an application under compute-sanitizer memcheck reports no error", "[gpu][sanitizer]") {
  const fs::path dir = fs::temp_directory_path() / ("autotune_sanitizer_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const std::string name : {"two_step", "two_step_template"}) {
    const std::string spec_path = autotune_test::data_dir() + "/launch_api/" + name + ".tune.json";
    const std::string tuned_db = (dir / (name + ".db")).string();
    const autotune::TuningSpec spec = autotune::specs::load_spec(spec_path);
    REQUIRE(autotune_test::tune_into(tuned_db, spec, spec.problem_sizes.front()).failed == 0);
    for (const std::string& db : {tuned_db, (dir / (name + "_empty.db")).string()}) {
      INFO(name << " with " << db);
      const autotune_test::Finished f = autotune_test::run_child(
          {sanitizer(), "--tool", "memcheck", "--error-exitcode", "99", launch_app(), spec_path, db, "100003"});
      INFO("stdout:\n" << f.out << "\nstderr:\n" << f.err);
      CHECK(f.exit_code == 0);
      CHECK(f.out.find("ERROR SUMMARY: 0 errors") != std::string::npos);
      CHECK(f.out.find(": 0 wrong elements") != std::string::npos);
    }
  }
  fs::remove_all(dir);
}
