// The launch API for a spec of your own on the GPU (autotune::Kernel): a spec with two launch steps, a
// __constant__ table and three scalars is tuned into a database (trials and binaries), then launched through the
// API with the application's own data and scalars, at the tuned size and another; every output element is checked
// against the host's exact integer result, the configuration against the lookup, and the binary comes from the
// database. Wrong arguments are refused before anything runs.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <random>

#include "db/binary_cache.hpp"
#include "db/database.hpp"
#include "test_support.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/runtime/launch.hpp"
#include "tuner/session/session.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
namespace fs = std::filesystem;

namespace {

const std::string kSpec = autotune_test::data_dir() + "/launch_api/two_step.tune.json";

/// Runs n elements through the API with scalars a and shift and checks tmp and out element by element.
void check_launch(Kernel& k, std::int64_t n, int a, int shift) {
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(int);
  std::vector<int> x(static_cast<std::size_t>(n));
  std::mt19937 rng(static_cast<unsigned>(n));
  for (int& v : x) v = static_cast<int>(rng() % 20001) - 10000;
  const int bias[4] = {-40, 5, 1000, 77};
  DeviceBuffer dx(bytes), dtmp(bytes), dout(bytes), dbias(sizeof bias);
  dx.upload(x.data(), bytes);
  dbias.upload(bias, sizeof bias);
  std::vector<int> poison(static_cast<std::size_t>(n), 0x7f7f7f7f);
  dtmp.upload(poison.data(), bytes);
  dout.upload(poison.data(), bytes);
  k.launch(nullptr, {n},
           {DevicePtr(dx.ptr()), DevicePtr(dtmp.ptr()), DevicePtr(dout.ptr()), DevicePtr(dbias.ptr()), a, shift,
            static_cast<int>(n)});
  synchronize();
  std::vector<int> tmp(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  dtmp.download(tmp.data(), bytes);
  dout.download(out.data(), bytes);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const int want_tmp = a * x[i] + bias[i % 4];
    if (tmp[i] != want_tmp || out[i] != want_tmp + shift) {
      if (wrong++ < 3)
        FAIL_CHECK("element " << i << ": tmp " << tmp[i] << " out " << out[i] << ", expected " << want_tmp << " and "
                              << want_tmp + shift);
    }
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("launch API: a tuned kernel of your own runs with the application's data and scalars", "[gpu][launch_api]") {
  const fs::path dir = fs::temp_directory_path() / ("autotune_launch_api_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string db_path = (dir / "tune.db").string();
  const TuningSpec spec = specs::load_spec(kSpec);
  const ProblemKey tuned = spec.problem_sizes.front();
  {
    auto db = db::Database::open(db_path);
    auto adapter = kernels::make_adapter(spec);
    cuda::TimingOptions to;
    to.samples = 7;
    db::DbBinaryCache cache(*db);
    cuda::CudaBackend backend(adapter, to, &cache);
    session::Options opt;
    opt.bytes_moved = adapter->bytes_moved(spec.workloads.front(), tuned);
    const session::Result r = session::run(spec, backend, *db, spec.workloads.front(), tuned, opt);
    REQUIRE(r.evaluated == 12);
    REQUIRE(r.failed == 0);
  }

  Kernel k(kSpec, db_path);
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

  check_launch(k, tuned.at("n"), -3, 11);  // not the spec's scalars (3, 7): the caller's are used
  check_launch(k, 4099, 5, -2);            // another size: the nearest tuned one's configuration
  CHECK(k.choice({4099}).answer.match == lookup::Match::nearest_size);

  // Wrong arguments are refused before a launch.
  DeviceBuffer small(64);
  float* f = nullptr;
  CHECK_THROWS_WITH(
      k.launch(nullptr, {100}, {f, DevicePtr(small.ptr()), DevicePtr(small.ptr()), DevicePtr(small.ptr()), 1, 2, 100}),
      Catch::Contains("holds int32, but the pointer given points to float32"));
  CHECK_THROWS_WITH(k.launch(nullptr, {100, 2},
                             {DevicePtr(small.ptr()), DevicePtr(small.ptr()), DevicePtr(small.ptr()),
                              DevicePtr(small.ptr()), 1, 2, 100}),
                    Catch::Contains("expected 1 problem dimensions (n), got 2"));
  fs::remove_all(dir);
}
