// Sums and scans an array with autotune's launch API in a program that otherwise uses the CUDA runtime API:
// cudaMalloc'd memory and a cudaStream_t go straight into the API. Prints the chosen configurations with
// their match level and binary source, checks the results on the CPU, exits 0 when they are right. With a spec
// of your own (the SAXPY example), also launches it through autotune::Kernel: out = 0.5 * in + scan.
//   sum_scan <tuning.db> [n=10000000] [examples/saxpy/saxpy.tune.json]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "tuner/runtime/launch.hpp"

namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void print_choice(const char* what, const autotune::Choice& c) {
  std::printf("%-14s %s %s on %s: %s\n", what, c.workload.c_str(), c.problem.c_str(), c.device.c_str(),
              c.config_text.c_str());
  std::printf("%-14s match %s (level %d)", "", autotune::lookup::to_string(c.answer.match),
              autotune::lookup::level(c.answer.match));
  if (c.answer.match != autotune::lookup::Match::spec_default)
    std::printf(", measured on %s at %s (session %lld)", c.answer.device.c_str(), c.answer.problem.c_str(),
                static_cast<long long>(c.answer.session_id));
  std::printf("; binary: %s", autotune::to_string(c.binary));
  if (c.binary == autotune::BinarySource::compiled) std::printf(" (NVRTC %.1f ms)", c.compile_ms);
  std::printf("\n");
  if (!c.note.empty()) std::printf("%-14s note: %s\n", "", c.note.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <tuning.db> [n] [saxpy.tune.json]\n", argv[0]);
    return 2;
  }
  const std::string db = argv[1];
  const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10000000;

  std::vector<float> host(n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& x : host) x = u(rng);

  float *d_in = nullptr, *d_sum = nullptr, *d_scan = nullptr;
  cudaStream_t stream = nullptr;
  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  check_cuda(cudaMalloc(&d_in, n * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMalloc(&d_sum, sizeof(float)), "cudaMalloc");
  check_cuda(cudaMalloc(&d_scan, n * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMemcpyAsync(d_in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");

  int status = 0;
  try {
    autotune::Reduction<float> reduce(db);
    autotune::Scan<float> scan(db);
    reduce.sum(d_in, n, d_sum, stream);
    scan.inclusive_sum(d_in, n, d_scan, stream);

    float sum = 0;
    std::vector<float> scanned(n);
    check_cuda(cudaMemcpyAsync(&sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check_cuda(cudaMemcpyAsync(scanned.data(), d_scan, n * sizeof(float), cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");

    print_choice("sum", reduce.choice(n));
    print_choice("inclusive scan", scan.choice(n, "inclusive_sum"));

    double acc = 0;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
      acc += host[i];
      if (std::fabs(scanned[i] - acc) > 1e-3 * (1.0 + std::sqrt(static_cast<double>(i)))) ++bad;
    }
    const double sum_err = std::fabs(sum - acc);
    const double sum_tol = 1e-4 * std::sqrt(static_cast<double>(n)) + 1e-4;
    std::printf("sum: %.6f (CPU %.6f, |error| %.2e, tolerance %.2e) %s\n", sum, acc, sum_err, sum_tol,
                sum_err <= sum_tol ? "ok" : "WRONG");
    std::printf("scan: %zu of %zu elements outside tolerance %s\n", bad, n, bad == 0 ? "ok" : "WRONG");
    status = (sum_err <= sum_tol && bad == 0) ? 0 : 1;

    if (argc > 3) {  // a kernel of your own: arguments x, y, out, a, n as its spec lists them
      autotune::Kernel saxpy(argv[3], db);
      float* d_out = nullptr;
      check_cuda(cudaMalloc(&d_out, n * sizeof(float)), "cudaMalloc");
      saxpy.launch(stream, {static_cast<std::int64_t>(n)}, {d_in, d_scan, d_out, 0.5f, static_cast<int>(n)});
      std::vector<float> out(n);
      check_cuda(cudaMemcpyAsync(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync");
      check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      cudaFree(d_out);
      print_choice("saxpy", saxpy.choice({static_cast<std::int64_t>(n)}));
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += out[i] == 0.5f * host[i] + scanned[i] ? 0 : 1;
      std::printf("saxpy: %zu of %zu elements differ from the CPU %s\n", wrong, n, wrong == 0 ? "ok" : "WRONG");
      if (wrong != 0) status = 1;
    }
  } catch (const autotune::Error& e) {
    std::fprintf(stderr, "autotune: %s\n", e.what());
    status = 1;
  }
  cudaFree(d_in);
  cudaFree(d_sum);
  cudaFree(d_scan);
  cudaStreamDestroy(stream);
  return status;
}
