// Capture of real launches on the GPU: an application's launch through autotune::Kernel with AUTOTUNE_CAPTURE set
// computes what it computes without, and writes a capture (once per problem); tuning the capture with the session
// verifies every configuration against the captured outputs; the application's next Kernel launches the tuned
// configuration (match exact, binary from the database) with correct results. A capture over
// AUTOTUNE_CAPTURE_MAX_BYTES is skipped with the reason, and the launch still runs.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "db/binary_cache.hpp"
#include "db/database.hpp"
#include "launch_api_support.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/runtime/launch.hpp"
#include "tuner/session/session.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using autotune_test::check_two_step_launch;
namespace fs = std::filesystem;

namespace {

const std::string kSpec = autotune_test::two_step_spec();

std::size_t captures_in(const fs::path& dir) {
  std::size_t n = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".json" ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("capture: an application's launch is captured, tuned, and launched tuned", "[gpu][capture]") {
  const fs::path dir = fs::temp_directory_path() / ("autotune_capture_gpu_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db_path = (dir / "tune.db").string();
  const fs::path caps = dir / "captures";
  const std::int64_t n = 300007;
  ::setenv("AUTOTUNE_CAPTURE", "other,two_*", 1);
  ::setenv("AUTOTUNE_CAPTURE_DIR", caps.c_str(), 1);

  std::string capture;
  {
    Kernel k(kSpec, db_path);  // no database yet: the spec default
    check_two_step_launch(k, n, -3, 11);
    const Choice c = k.choice({n});
    CHECK(c.answer.match == lookup::Match::spec_default);
    capture = c.capture;
    INFO(capture);
    REQUIRE(fs::is_regular_file(capture));
    CHECK(fs::path(capture).filename() == "two_step_n=300007.tune.json");
    check_two_step_launch(k, n, -3, 11);  // a later launch of the same problem: not captured again
    CHECK(captures_in(caps) == 1);
    Kernel again(kSpec, db_path);  // a new object (or process): the capture on disk is kept
    check_two_step_launch(again, n, -3, 11);
    CHECK_THAT(again.choice({n}).capture, Catch::StartsWith("not captured: ") && Catch::Contains("exists"));
  }
  ::setenv("AUTOTUNE_CAPTURE_MAX_BYTES", "1M", 1);
  {
    Kernel k(kSpec, db_path);
    check_two_step_launch(k, 400000, 2, 5);  // 4.8 MB of data: skipped, the launch runs
    CHECK_THAT(k.choice({400000}).capture, Catch::StartsWith("not captured: "));
    CHECK(captures_in(caps) == 1);
  }
  ::unsetenv("AUTOTUNE_CAPTURE");
  ::unsetenv("AUTOTUNE_CAPTURE_DIR");
  ::unsetenv("AUTOTUNE_CAPTURE_MAX_BYTES");

  // Tune the capture: every configuration is verified against the captured outputs.
  const TuningSpec spec = specs::load_spec(kSpec);
  const TuningSpec cap = specs::load_spec(capture);
  const ProblemKey p = cap.problem_sizes.front();
  lookup::Answer tuned;
  {
    const session::Result r = autotune_test::tune_into(db_path, cap, p);
    CHECK(r.evaluated == 12);
    CHECK(r.failed == 0);
    auto db = db::Database::open(db_path);
    const auto device = cuda::list_devices().front();
    tuned = lookup::best(*db, cap, cap.workloads.front(), device, p);
    CHECK(tuned.match == lookup::Match::exact);
    // The application's spec finds the capture's trials at the problem it asks for, as measured.
    const lookup::Answer app = lookup::best(*db, spec, spec.workloads.front(), device, p);
    CHECK(app.match == lookup::Match::exact);
    CHECK(app.config == tuned.config);
    CHECK(app.note.find("earlier version") == std::string::npos);
  }

  // The application's next run: the tuned configuration, from the database's binary cache, correct results.
  Kernel k(kSpec, db_path);
  const Choice c = k.choice({n});
  INFO(c.config_text << " " << c.answer.note << " " << c.note);
  CHECK(c.answer.match == lookup::Match::exact);
  CHECK(c.answer.config == tuned.config);
  CHECK(c.binary == BinarySource::database);
  CHECK(c.capture.empty());
  check_two_step_launch(k, n, -3, 11);
  check_two_step_launch(k, n, 4, -9);  // other scalars: the caller's are used
  fs::remove_all(dir);
}
