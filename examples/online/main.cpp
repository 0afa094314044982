// An application that smooths a signal whose length it learns at run time, many times over (a solver's inner loop),
// with the moving average of smooth.tune.json launched through autotune::Kernel and online tuning on
// (RuntimeOptions::online; AUTOTUNE_ONLINE does the same for an application that sets nothing). It prints what each
// phase ran: the looked-up configuration, the search, what it settled on; a second run of the program finds the
// settled configuration in the database (match exact, measured online). Every output is checked on the CPU at the end.
//
//   smooth_app <tuning.db> <smooth.tune.json> [n=30000000] [launches=3000] [online="200"]
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tuner/runtime/launch.hpp"

namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void print(const char* when, const autotune::Choice& c) {
  std::printf("%s: %s (match %s%s)\n", when, c.config_text.c_str(), autotune::lookup::to_string(c.answer.match),
              c.answer.online ? ", measured online" : "");
  if (!c.online.empty()) std::printf("  online: %s\n", c.online.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <tuning.db> <smooth.tune.json> [n=30000000] [launches=3000] [online=200]\n",
                 argv[0]);
    return 2;
  }
  const long long n = argc > 3 ? std::atoll(argv[3]) : 30000000;
  const long long launches = argc > 4 ? std::atoll(argv[4]) : 3000;
  if (n < 17 || n > 0x7fffffff || launches < 1) {
    std::fprintf(stderr, "n must be in 17 .. 2^31-1 and launches at least 1\n");
    return 2;
  }
  const auto count = static_cast<std::size_t>(n);
  std::vector<float> x(count);
  for (std::size_t i = 0; i < count; ++i) x[i] = static_cast<float>(std::sin(0.01 * static_cast<double>(i)));

  float *d_x = nullptr, *d_out = nullptr;
  cudaStream_t stream = nullptr;
  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  check_cuda(cudaMalloc(&d_x, count * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMalloc(&d_out, count * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMemcpyAsync(d_x, x.data(), count * sizeof(float), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");

  int status = 0;
  try {
    autotune::RuntimeOptions o;
    o.online = argc > 5 ? argv[5] : "200";
    autotune::Kernel smooth(argv[2], argv[1], o);
    const auto dims = {static_cast<std::int64_t>(n)};
    print("first launch", smooth.choice(dims));
    const auto start = std::chrono::steady_clock::now();
    for (long long l = 0; l < launches; ++l) smooth.launch(stream, dims, {d_x, d_out, static_cast<int>(n)});
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("%lld launches in %.1f ms (%.3f ms each)\n", launches, ms, ms / static_cast<double>(launches));
    print("last launch", smooth.choice(dims));

    std::vector<float> out(count);
    check_cuda(cudaMemcpy(out.data(), d_out, count * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    std::size_t wrong = 0;
    for (long long i = 0; i < n; ++i) {
      float s = 0;  // the kernel's sum, in its order
      for (long long k = -8; k <= 8; ++k) s += (i + k >= 0 && i + k < n) ? x[static_cast<std::size_t>(i + k)] : 0.0f;
      const float want = s * (1.0f / 17);
      wrong += std::fabs(out[static_cast<std::size_t>(i)] - want) <= 1e-6f ? 0 : 1;
    }
    std::printf("smooth: %zu of %lld elements differ from the CPU %s\n", wrong, n, wrong == 0 ? "ok" : "WRONG");
    status = wrong == 0 ? 0 : 1;
  } catch (const autotune::Error& e) {
    std::fprintf(stderr, "autotune: %s\n", e.what());
    status = 1;
  }
  cudaFree(d_x);
  cudaFree(d_out);
  cudaStreamDestroy(stream);
  return status;
}
