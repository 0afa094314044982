// Launch API on the GPU: a small tuning session fills a database (trials + binary cache); then Reduction and
// Scan sum and scan arrays through autotune::Reduction / autotune::Scan against it and the results are
// checked on the CPU. Also: damaged cached binaries are recompiled, a missing database still works.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <random>

#include "db/database.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/runtime/launch.hpp"
#include "db/binary_cache.hpp"
#include "tuner/session/session.hpp"

using namespace autotune;
namespace fs = std::filesystem;

namespace {


struct TempDir {
  fs::path path;
  TempDir() : path(fs::temp_directory_path() / ("autotune_runtime_gpu_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void tune(db::Database& db, const std::string& kernel, const Workload& w, std::int64_t n, std::size_t budget) {
  TuningSpec spec = specs::builtin_spec(kernel);
  auto adapter = kernels::make_adapter(spec);
  ProblemKey p;
  p.dims["n"] = n;
  cuda::TimingOptions to;
  to.samples = 7;
  to.warmup = 1;
  db::DbBinaryCache cache(db);
  cuda::CudaBackend backend(adapter, to, &cache);
  session::Options opt;
  opt.strategy = "random_sample";
  opt.seed = 7;
  opt.budget = budget;
  opt.bytes_moved = adapter->bytes_moved(w, p);
  session::Result r = session::run(spec, backend, db, w, p, opt);
  REQUIRE(r.evaluated > 0);
  REQUIRE_FALSE(r.top.empty());
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

/// The sum of `host` by `r` on the GPU: copied to device memory, summed, waited for and copied back.
template <typename T>
T device_sum(Reduction<T>& r, const std::vector<T>& host) {
  const std::size_t n = host.size();
  DeviceBuffer in(n * sizeof(T)), out(sizeof(T));
  in.upload(host.data(), n * sizeof(T));
  r.sum(in.ptr(), n, out.ptr());
  synchronize();
  T got = 0;
  out.download(&got, sizeof got);
  return got;
}

}  // namespace

TEST_CASE("runtime: Reduction and Scan against a database produced by tuning", "[gpu][runtime]") {
  TempDir dir;
  const std::string db_path = (dir.path / "tune.db").string();
  const std::int64_t tuned_n = 1 << 20;
  {
    auto db = db::Database::open(db_path);
    tune(*db, "reduction", Workload{"float32", "sum"}, tuned_n, 6);
    tune(*db, "scan", Workload{"float32", "inclusive_sum"}, tuned_n, 6);
  }

  SECTION("sum: exact match, binary from the tuning database, correct result") {
    Reduction<float> r(db_path);
    for (std::size_t n : {static_cast<std::size_t>(tuned_n), std::size_t{1000003}, std::size_t{1}, std::size_t{777}}) {
      const auto host = random_floats(n, n);
      const float got = device_sum(r, host);
      double want = 0, max_abs = 0;
      for (float x : host) {
        want += x;
        max_abs = std::max(max_abs, static_cast<double>(std::fabs(x)));
      }
      const Choice c = r.choice(n);
      INFO("n=" << n << " config " << c.config_text << " [" << lookup::to_string(c.answer.match) << "] binary "
                << to_string(c.binary) << " note " << c.note);
      CHECK(std::fabs(got - want) <= 1e-5 * std::sqrt(static_cast<double>(n)) * max_abs * 8 + 1e-6);
      CHECK(c.answer.match == (static_cast<std::int64_t>(n) == tuned_n ? lookup::Match::exact
                                                                       : lookup::Match::nearest_size));
      CHECK(c.answer.session_id > 0);
    }
    // The binary of the tuned best came from the cache that tuning filled.
    const Choice c = r.choice(static_cast<std::size_t>(tuned_n));
    CHECK((c.binary == BinarySource::database || c.binary == BinarySource::memory));
    CHECK(c.compile_ms == 0);
  }

  SECTION("scan: inclusive (tuned) and exclusive (borrowed from the inclusive tune, compiled and stored)") {
    Scan<float> s(db_path);
    const std::size_t n = 1000003;
    const auto host = random_floats(n, 3);
    DeviceBuffer in(n * sizeof(float)), out(n * sizeof(float));
    in.upload(host.data(), n * sizeof(float));
    std::vector<float> got(n);
    for (bool inclusive : {true, false}) {
      if (inclusive) s.inclusive_sum(in.ptr(), n, out.ptr());
      else s.exclusive_sum(in.ptr(), n, out.ptr());
      synchronize();
      out.download(got.data(), n * sizeof(float));
      double acc = 0;
      std::size_t bad = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double want = inclusive ? acc + host[i] : acc;
        acc += host[i];
        if (std::fabs(got[i] - want) > 1e-3 * (1 + std::sqrt(static_cast<double>(i)))) ++bad;
      }
      const Choice c = s.choice(n, inclusive ? "inclusive_sum" : "exclusive_sum");
      INFO((inclusive ? "inclusive" : "exclusive") << " config " << c.config_text << " ["
                                                   << lookup::to_string(c.answer.match) << "] " << c.note);
      CHECK(bad == 0);
      // The exclusive sum was not tuned: level borrowed serves the inclusive sum's configuration (docs/lookup.md).
      CHECK(c.answer.match == (inclusive ? lookup::Match::nearest_size : lookup::Match::borrowed));
      CHECK(c.answer.borrowed_from == (inclusive ? "" : "float32/inclusive_sum"));
    }
    // The exclusive scan was compiled here and stored in the (writable) database: a new object finds it.
    Scan<float> again(db_path);
    CHECK(again.choice(n, "exclusive_sum").binary == BinarySource::database);
  }

  SECTION("a damaged cached binary is detected and recompiled") {
    std::string key;
    {
      Reduction<float> r(db_path);
      key = r.choice(static_cast<std::size_t>(tuned_n)).binary_key;
    }
    {
      auto db = db::Database::open(db_path);
      std::vector<unsigned char> junk(4096, 0x5a);
      junk[0] = 0x7f, junk[1] = 'E', junk[2] = 'L', junk[3] = 'F';  // looks like ELF, does not load
      db->put_binary({key, true, "", junk});
    }
    Reduction<float> r(db_path);
    const Choice c = r.choice(static_cast<std::size_t>(tuned_n));
    INFO(c.note);
    CHECK(c.binary == BinarySource::compiled);
    CHECK_THAT(c.note, Catch::Contains("does not load"));
    CHECK(device_sum(r, std::vector<float>(4096, 1.0f)) == 4096.0f);
    // The recompiled image replaced the damaged one.
    Reduction<float> fresh(db_path);
    CHECK(fresh.choice(static_cast<std::size_t>(tuned_n)).binary == BinarySource::database);
  }

  SECTION("int32 scan and max reduction through the same API") {
    Scan<int> s(db_path);
    Reduction<int> r(db_path);
    const std::size_t n = 100001;
    std::vector<int> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<int>((i * 7919) % 1000) - 500;
    DeviceBuffer in(n * sizeof(int)), out(n * sizeof(int)), mx(sizeof(int));
    in.upload(host.data(), n * sizeof(int));
    s.exclusive_sum(in.ptr(), n, out.ptr());
    r.max(in.ptr(), n, mx.ptr());
    synchronize();
    std::vector<int> got(n);
    out.download(got.data(), n * sizeof(int));
    int got_max = 0;
    mx.download(&got_max, sizeof got_max);
    long long acc = 0;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (got[i] != static_cast<int>(acc)) ++bad;
      acc += host[i];
    }
    CHECK(bad == 0);
    CHECK(got_max == *std::max_element(host.begin(), host.end()));
  }
}

TEST_CASE("runtime: a missing database gives the spec default, compiled, and still correct", "[gpu][runtime]") {
  TempDir dir;
  const std::string db_path = (dir.path / "missing.db").string();
  Reduction<double> r(db_path);
  const std::size_t n = 12345;
  CHECK(device_sum(r, std::vector<double>(n, 0.5)) == 0.5 * n);
  const Choice c = r.choice(n);
  CHECK(c.answer.match == lookup::Match::spec_default);
  CHECK(c.binary == BinarySource::compiled);
  // No database file was created; the binary went to the cache directory beside the path.
  CHECK_FALSE(fs::exists(db_path));
  CHECK(fs::exists(db_path + ".cubin/" + c.binary_key + ".cubin"));
  Reduction<double> again(db_path);
  CHECK(again.choice(n).binary == BinarySource::cache_dir);
  DeviceBuffer in(n * sizeof(double)), out(sizeof(double));
  CHECK_THROWS_AS(r.sum(in.ptr(), 0, out.ptr()), UsageError);
}

// The single-pass scan and compaction keep their tile state in the object's scratch memory between calls
// (generation-tagged, no memset per call). Every call gets new data, so a status word of an earlier call taken
// for current would show as a wrong prefix; sizes and operations alternate, so plans take the scratch over
// from each other (it is zeroed whenever another plan used it last).
TEST_CASE("runtime: the single-pass scan and compaction keep their tile state between calls", "[gpu][runtime]") {
  TempDir dir;
  const std::string db_path = (dir.path / "none.db").string();  // spec defaults: the single-pass variants
  Scan<int> s(db_path);
  Compaction<int> c(db_path);
  CHECK_THAT(s.choice(1000003).config_text, Catch::Contains("VARIANT=single_pass"));
  CHECK_THAT(c.choice(1000003).config_text, Catch::Contains("VARIANT=single_pass"));
  const std::size_t max_n = 1000003;
  DeviceBuffer in(max_n * sizeof(int)), out(max_n * sizeof(int)), flags(max_n), count(sizeof(unsigned));
  std::vector<int> host(max_n), got(max_n);
  std::vector<unsigned char> host_flags(max_n);
  const std::size_t sizes[] = {1000003, 1000003, 1000003, 5000, 1000003, 70001, 70001, 1000003};
  for (std::size_t call = 0; call < std::size(sizes); ++call) {
    const std::size_t n = sizes[call];
    const bool exclusive = call == 2 || call == 6;
    std::mt19937_64 rng(100 + call);
    std::uniform_int_distribution<int> u(-1000, 1000);
    for (std::size_t i = 0; i < n; ++i) {
      host[i] = u(rng);
      host_flags[i] = static_cast<unsigned char>(rng() & 1);
    }
    in.upload(host.data(), n * sizeof(int));
    flags.upload(host_flags.data(), n);
    INFO("call " << call << " n=" << n << (exclusive ? " exclusive" : " inclusive"));
    if (exclusive) s.exclusive_sum(in.ptr(), n, out.ptr());
    else s.inclusive_sum(in.ptr(), n, out.ptr());
    synchronize();
    out.download(got.data(), n * sizeof(int));
    long long acc = 0;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!exclusive) acc += host[i];
      if (got[i] != static_cast<int>(acc)) ++bad;
      if (exclusive) acc += host[i];
    }
    CHECK(bad == 0);

    if (call % 2 == 0) c.select_flagged(in.ptr(), flags.ptr(), n, out.ptr(), count.ptr());
    else c.select_positive(in.ptr(), n, out.ptr(), count.ptr());
    synchronize();
    unsigned got_count = 0;
    count.download(&got_count, sizeof got_count);
    std::vector<int> want;
    for (std::size_t i = 0; i < n; ++i)
      if (call % 2 == 0 ? host_flags[i] != 0 : host[i] > 0) want.push_back(host[i]);
    REQUIRE(got_count == want.size());
    out.download(got.data(), want.size() * sizeof(int));
    CHECK(std::equal(want.begin(), want.end(), got.begin()));
  }
}
