// The launch API for a spec of your own on the GPU (autotune::Kernel): a spec with two launch steps, a
// __constant__ table and three scalars is tuned into a database (trials and binaries), then launched through the
// API with the application's own data and scalars, at the tuned size and another; every output element is checked
// against the host's exact integer result, the configuration against the lookup, and the binary comes from the
// database; once with plain entry points and once with templated ones. Wrong arguments are refused before anything
// runs.
#include <unistd.h>

#include <catch2/catch.hpp>
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
namespace fs = std::filesystem;

using autotune_test::check_two_step_launch;

namespace {

const std::string kSpec = autotune_test::two_step_spec();

}  // namespace

TEST_CASE("launch API: a tuned kernel of your own runs with the application's data and scalars", "[gpu][launch_api]") {
  // The two-step spec, and the same kernels as templated entry points ("stage1<BLOCK_SIZE, ITEMS>", C++ name
  // expressions): the looked-up configuration's binary must instantiate them, and the launch API must find it
  // under the key the tuner stored it with.
  for (const std::string& spec_path : {kSpec, autotune_test::data_dir() + "/launch_api/two_step_template.tune.json"}) {
    INFO(spec_path);
    const fs::path dir = fs::temp_directory_path() / ("autotune_launch_api_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string db_path = (dir / "tune.db").string();
    const TuningSpec spec = specs::load_spec(spec_path);
    const ProblemKey tuned = spec.problem_sizes.front();
    const session::Result r = autotune_test::tune_into(db_path, spec, tuned);
    REQUIRE(r.evaluated == 12);
    REQUIRE(r.failed == 0);

    Kernel k(spec_path, db_path);
    const Choice c = k.choice({tuned.at("n")});
    INFO(c.config_text << " " << c.answer.note << " " << c.note);
    CHECK(c.answer.match == lookup::Match::exact);
    {
      auto db = db::Database::open(db_path);
      auto device = cuda::list_devices().front();
      const lookup::Answer want = lookup::best(*db, spec, spec.workloads.front(), device, tuned);
      CHECK(c.answer.config == want.config);
    }
    CHECK(c.binary == BinarySource::database);  // tune stored it

    check_two_step_launch(k, tuned.at("n"), -3, 11);  // not the spec's scalars (3, 7): the caller's are used
    check_two_step_launch(k, 4099, 5, -2);            // another size: the nearest tuned one's configuration
    CHECK(k.choice({4099}).answer.match == lookup::Match::nearest_size);

    // Wrong arguments are refused before a launch.
    DeviceBuffer small(64);
    float* f = nullptr;
    CHECK_THROWS_WITH(k.launch(nullptr, {100},
                               {f, DevicePtr(small.ptr()), DevicePtr(small.ptr()), DevicePtr(small.ptr()), 1, 2, 100}),
                      Catch::Contains("holds int32, but the pointer given points to float32"));
    CHECK_THROWS_WITH(k.launch(nullptr, {100, 2},
                               {DevicePtr(small.ptr()), DevicePtr(small.ptr()), DevicePtr(small.ptr()),
                                DevicePtr(small.ptr()), 1, 2, 100}),
                      Catch::Contains("expected 1 problem dimensions (n), got 2"));
    fs::remove_all(dir);
  }
}
