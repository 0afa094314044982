// Online tuning on the GPU (docs/lookup.md "Online tuning"): an application's own launches of a kernel of its own try
// configurations, and every launch's outputs stay those of the spec default, planted wrong configurations included;
// what the search settled on is recorded and served by the lookup at level exact; an in-place kernel too.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "test_support.hpp"
#include "tests/tools/temp_db_file.hpp"
#include "tuner/cuda/launcher.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/runtime/launch.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

std::string smooth_spec() { return autotune_test::data_dir() + "/../../examples/online/smooth.tune.json"; }

/// n floats drawn uniformly from [-bound, bound].
std::vector<float> random_floats(std::int64_t n, unsigned seed, float bound) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-bound, bound);
  for (float& x : v) x = dist(rng);
  return v;
}

bool searching(Kernel& k, std::int64_t n) { return k.choice({n}).online.rfind("searching", 0) == 0; }

/// Rows of the online trials with this status.
std::size_t online_rows(const std::string& db_path, TrialStatus s) {
  auto db = db::Database::open(db_path, db::Database::Mode::read_only);
  db::TrialFilter f;
  f.online = true;
  std::size_t count = 0;
  for (const auto& t : db->trials(f)) count += t.m.status == s ? 1 : 0;
  return count;
}

}  // namespace

TEST_CASE(
    "online gpu: every launch's outputs are the spec default's while the search tries configurations, planted "
    "wrong ones are rejected, and the settled answer is recorded and served at level exact",
    "[gpu][online]") {
  autotune_test::TempDbFile tmp("autotune_online_", "smooth.db");
  db::Database::open(tmp.path);  // an empty database to record into
  const std::int64_t n = 1000003;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  const std::vector<float> host = random_floats(n, 3, 2.0f);
  DeviceBuffer in(bytes), out(bytes);
  in.upload(host.data(), bytes);
  const auto launch = [&](Kernel& k) {
    k.launch(nullptr, {n}, {DevicePtr(in.ptr()), DevicePtr(out.ptr()), static_cast<int>(n)});
  };
  std::vector<float> expected(host.size()), got(host.size());
  {
    Kernel reference(smooth_spec(), "");  // no database: the spec default
    launch(reference);
    out.download(expected.data(), bytes);
  }
  RuntimeOptions o;
  o.online = "90, samples=2, seconds=120";
  Kernel k(smooth_spec(), tmp.path, o);
  REQUIRE(searching(k, n));
  std::size_t launches = 0, differing = 0;
  const auto start = std::chrono::steady_clock::now();
  while (searching(k, n) && std::chrono::steady_clock::now() - start < std::chrono::seconds(150)) {
    std::fill(got.begin(), got.end(), 0.0f);
    out.upload(got.data(), bytes);  // zeros: a launch that writes nothing shows
    launch(k);
    out.download(got.data(), bytes);
    if (std::memcmp(got.data(), expected.data(), bytes) != 0) ++differing;
    ++launches;
  }
  const Choice c = k.choice({n});
  INFO(c.online);
  REQUIRE(c.online.rfind("settled on", 0) == 0);
  CHECK(differing == 0);
  CHECK(launches >= 90);
  CHECK_THAT(c.online, Catch::Contains("recorded as online session"));
  CHECK(c.answer.config.at("PLANT") == 0);
  for (int l = 0; l < 20; ++l) {  // the settled configuration's launches
    launch(k);
  }
  out.download(got.data(), bytes);
  CHECK(std::memcmp(got.data(), expected.data(), bytes) == 0);
  // The planted configurations that were tried are recorded as wrong results; none is served.
  CHECK(online_rows(tmp.path, TrialStatus::wrong_result) >= 1);
  CHECK(online_rows(tmp.path, TrialStatus::ok) >= 10);
  auto db = db::Database::open(tmp.path, db::Database::Mode::read_only);
  const TuningSpec spec = specs::resolve_kernel(smooth_spec());
  const cuda::Launcher launcher(-1);
  const lookup::Answer a =
      lookup::best(*db, spec, spec.workloads.front(), launcher.device(), ProblemKey::parse("n=" + std::to_string(n)));
  CHECK(a.match == lookup::Match::exact);
  CHECK(a.online);
  CHECK(a.config == c.answer.config);
}

TEST_CASE("online gpu: an in-place kernel (its output is its input) keeps the spec default's results while tuned",
          "[gpu][online]") {
  autotune_test::TempDbFile tmp("autotune_online_", "inplace.db");
  db::Database::open(tmp.path);
  const std::string spec = autotune_test::data_dir() + "/specs/inplace.tune.json";
  const std::int64_t n = 300007;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  const std::vector<float> host = random_floats(n, 5, 100.0f);
  DeviceBuffer tuned(bytes), plain(bytes);
  tuned.upload(host.data(), bytes);
  plain.upload(host.data(), bytes);
  RuntimeOptions o;
  o.online = "60, samples=2, seconds=120";
  Kernel k(spec, tmp.path, o);
  Kernel reference(spec, "");
  std::vector<float> a(host.size()), b(host.size());
  std::size_t launches = 0, differing = 0;
  const auto start = std::chrono::steady_clock::now();
  while (searching(k, n) && std::chrono::steady_clock::now() - start < std::chrono::seconds(120)) {
    k.launch(nullptr, {n}, {DevicePtr(tuned.ptr()), static_cast<int>(n)});
    reference.launch(nullptr, {n}, {DevicePtr(plain.ptr()), static_cast<int>(n)});
    tuned.download(a.data(), bytes);
    plain.download(b.data(), bytes);
    if (std::memcmp(a.data(), b.data(), bytes) != 0) ++differing;
    ++launches;
  }
  const Choice c = k.choice({n});
  INFO(c.online);
  REQUIRE(c.online.rfind("settled on", 0) == 0);
  CHECK(differing == 0);
  CHECK(c.answer.config.at("PLANT") == 0);
  CHECK(online_rows(tmp.path, TrialStatus::wrong_result) >= 1);
}
