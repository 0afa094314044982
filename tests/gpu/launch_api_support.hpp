// The two-step launch-API spec (tests/data/launch_api/two_step.*) launched through autotune::Kernel with the
// application's own data, shared by the launch-API and capture tests of the gpu tier.
#pragma once
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "db/binary_cache.hpp"
#include "db/database.hpp"
#include "test_support.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/runtime/launch.hpp"
#include "tuner/session/session.hpp"

namespace autotune_test {

inline std::string two_step_spec() { return data_dir() + "/launch_api/two_step.tune.json"; }

/// Tunes spec at problem p into the database at db_path by brute force (7 samples), its binaries into the
/// database's binary cache, as `autotune tune` would.
inline autotune::session::Result tune_into(const std::string& db_path, const autotune::TuningSpec& spec,
                                           const autotune::ProblemKey& p) {
  using namespace autotune;
  auto db = db::Database::open(db_path);
  auto adapter = kernels::make_adapter(spec);
  cuda::TimingOptions to;
  to.samples = 7;
  db::DbBinaryCache cache(*db);
  cuda::CudaBackend backend(adapter, to, &cache);
  session::Options opt;
  opt.bytes_moved = adapter->bytes_moved(spec.workloads.front(), p);
  return session::run(spec, backend, *db, spec.workloads.front(), p, opt);
}

/// Runs n elements through k (the two-step spec) with scalars a and shift, the outputs poisoned first, and checks
/// tmp = a * x + bias[i % 4] and out = tmp + shift element by element (exact integers).
inline void check_two_step_launch(autotune::Kernel& k, std::int64_t n, int a, int shift) {
  using autotune::DeviceBuffer;
  using autotune::DevicePtr;
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
  autotune::synchronize();
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

}  // namespace autotune_test
