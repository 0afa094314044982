// An application with a kernel of its own: out = a * x + y over a signal it makes, launched through
// autotune::Kernel with the SAXPY spec (examples/saxpy/saxpy.tune.json). It prints the configuration the launch
// used (match level, where it was measured, the capture written, if any) and checks every element on the CPU.
//
// The round trip of docs/lookup.md "Capture" (scripts/capture_roundtrip.sh runs it):
//   AUTOTUNE_CAPTURE=saxpy AUTOTUNE_CAPTURE_DIR=captures saxpy_app tune.db saxpy.tune.json   # spec default, captured
//   autotune --db tune.db tune captures                                                       # tunes the capture
//   saxpy_app tune.db saxpy.tune.json                                                         # the tuned configuration
//
//   saxpy_app <tuning.db> <saxpy.tune.json> [n=4194304]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tuner/runtime/launch.hpp"

namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <tuning.db> <saxpy.tune.json> [n=4194304]\n", argv[0]);
    return 2;
  }
  const std::size_t n = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 4194304;
  if (n == 0 || n > 0x7fffffff) {
    std::fprintf(stderr, "n must be in 1 .. 2^31-1 (got %s)\n", argv[3]);
    return 2;
  }
  const float a = 2.5f;  // the spec's value of a, so that the capture can be compared with the spec tuned on files
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {  // the application's own data: a signal and its slow drift
    x[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)));
    y[i] = static_cast<float>(1.0 + 1e-7 * static_cast<double>(i));
  }

  float *d_x = nullptr, *d_y = nullptr, *d_out = nullptr;
  cudaStream_t stream = nullptr;
  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  for (float** p : {&d_x, &d_y, &d_out}) check_cuda(cudaMalloc(p, n * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMemcpyAsync(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  check_cuda(cudaMemcpyAsync(d_y, y.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");

  int status = 0;
  try {
    autotune::Kernel saxpy(argv[2], argv[1]);
    const auto dims = {static_cast<std::int64_t>(n)};
    saxpy.launch(stream, dims, {d_x, d_y, d_out, a, static_cast<int>(n)});
    std::vector<float> out(n);
    check_cuda(cudaMemcpyAsync(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");

    const autotune::Choice c = saxpy.choice(dims);
    std::printf("saxpy %s on %s: %s\n", c.problem.c_str(), c.device.c_str(), c.config_text.c_str());
    std::printf("  match %s (level %d)", autotune::lookup::to_string(c.answer.match),
                autotune::lookup::level(c.answer.match));
    if (c.answer.match != autotune::lookup::Match::spec_default)
      std::printf(", measured on %s at %s (session %lld, %.2f us)", c.answer.device.c_str(), c.answer.problem.c_str(),
                  static_cast<long long>(c.answer.session_id), c.answer.median_ns / 1e3);
    std::printf("; binary: %s\n", autotune::to_string(c.binary));
    if (!c.capture.empty()) std::printf("  capture: %s\n", c.capture.c_str());
    if (!c.answer.note.empty()) std::printf("  note: %s\n", c.answer.note.c_str());

    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const float want = a * x[i] + y[i];
      // The GPU may fuse the multiply-add: allow the product's rounding, relative to the terms' size.
      wrong += std::fabs(out[i] - want) <= 1e-6f * (std::fabs(a * x[i]) + std::fabs(y[i])) ? 0 : 1;
    }
    std::printf("saxpy: %zu of %zu elements differ from the CPU %s\n", wrong, n, wrong == 0 ? "ok" : "WRONG");
    status = wrong == 0 ? 0 : 1;
  } catch (const autotune::Error& e) {
    std::fprintf(stderr, "autotune: %s\n", e.what());
    status = 1;
  }
  for (float* p : {d_x, d_y, d_out}) cudaFree(p);
  cudaStreamDestroy(stream);
  return status;
}
