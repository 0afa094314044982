// What the session tests of the gpu tier (tests/gpu/test_session_gpu.cpp, test_user_kernels_gpu.cpp) set up for
// each spec they tune: the spec's adapter, a CUDA backend for it and an empty database to record into.
#pragma once
#include <memory>

#include "db/database.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"

namespace autotune_test {

/// The adapter made from a spec, a CUDA backend for it that times with `to`, and an empty in-memory database.
/// Constructing one needs a GPU, as the backend does. Not thread-safe.
struct CudaSession {
  CudaSession(const autotune::TuningSpec& spec, const autotune::cuda::TimingOptions& to)
      : adapter(autotune::kernels::make_adapter(spec)),
        backend(adapter, to),
        db(autotune::db::Database::open(":memory:")) {}

  std::shared_ptr<const autotune::KernelAdapter> adapter;
  autotune::cuda::CudaBackend backend;
  std::unique_ptr<autotune::db::Database> db;
};

}  // namespace autotune_test
