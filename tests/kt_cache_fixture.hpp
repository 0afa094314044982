// A Kernel Tuner 1.4 cache file as `tune_kernel(..., cache=...)` writes it, generated for the tests and the
// README's import workflow: kernel "reduce_partial" (a reduction's first pass) over 270 configurations
// (block_size_x 6 x items_per_thread 5 x "variant" 3 strings x vector 3), with made-up but deterministic times
// (7 samples each), and RuntimeFailedConfig for the configurations that ask for more than 8192 items per block.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace autotune_test {

/// The cache's text for problem size n on `device` (a Kernel Tuner device_name). `time_scale` scales every time
/// (another run of the same size gives other numbers).
inline std::string kt_reduction_cache(std::int64_t n, const std::string& device = "NVIDIA H100 80GB HBM3",
                                      double time_scale = 1.0) {
  const int blocks[] = {32, 64, 128, 256, 512, 1024};
  const int items[] = {1, 2, 4, 8, 16};
  const char* variants[] = {"shared", "warp_shuffle", "atomic"};
  const int vectors[] = {1, 2, 4};
  std::string out = "{\n\"version\": \"1.0.0\",\n\"device_name\": \"" + device +
                    "\",\n\"kernel_name\": \"reduce_partial\",\n\"problem_size\": [" + std::to_string(n) +
                    "],\n\"tune_params_keys\": [\"block_size_x\", \"items_per_thread\", \"variant\", \"vector\"],\n"
                    "\"tune_params\": {\"block_size_x\": [32, 64, 128, 256, 512, 1024], \"items_per_thread\": [1, 2, 4, "
                    "8, 16], \"variant\": [\"shared\", \"warp_shuffle\", \"atomic\"], \"vector\": [1, 2, 4]},\n"
                    "\"objective\": \"time\",\n\"objective_higher_is_better\": false,\n\"cache\": {\n";
  bool first = true;
  char buf[512];
  for (int b : blocks)
    for (int it : items)
      for (int v = 0; v < 3; ++v)
        for (int vec : vectors) {
          const std::string key = std::to_string(b) + "," + std::to_string(it) + "," + variants[v] + "," + std::to_string(vec);
          std::string entry = "\"" + key + "\": {\"block_size_x\": " + std::to_string(b) +
                              ", \"items_per_thread\": " + std::to_string(it) + ", \"variant\": \"" + variants[v] +
                              "\", \"vector\": " + std::to_string(vec) + ", ";
          if (b * it * vec > 8192) {
            entry += "\"time\": \"RuntimeFailedConfig\", \"compile_time\": 410.5, \"verification_time\": 0, "
                     "\"benchmark_time\": 0, \"strategy_time\": 0, \"framework_time\": 0.8, \"timestamp\": "
                     "\"2025-01-20 10:00:00.000000+00:00\"}";
          } else {
            // Bandwidth-bound near 3 TB/s at the best shape, slower away from it (made up, smooth, one optimum).
            const double bytes = 4.0 * static_cast<double>(n);
            const double shape = 1.0 + 0.08 * std::fabs(std::log2(b / 256.0)) + 0.05 * std::fabs(std::log2(it / 4.0)) +
                                 0.04 * v + 0.03 * std::fabs(std::log2(vec / 2.0));
            const double ms = time_scale * (bytes / 3.0e12 * 1e3 * shape + 0.004);
            std::string times;
            for (int k = 0; k < 7; ++k) {
              std::snprintf(buf, sizeof buf, "%s%.6f", k ? ", " : "", ms * (1.0 + 0.002 * ((k * 5) % 7 - 3)));
              times += buf;
            }
            std::snprintf(buf, sizeof buf,
                          "\"time\": %.6f, \"times\": [%s], \"compile_time\": 512.25, \"verification_time\": 2.5, "
                          "\"benchmark_time\": %.3f, \"strategy_time\": 0, \"framework_time\": 1.1, "
                          "\"GB/s\": %.2f, \"timestamp\": \"2025-01-20 10:00:00.000000+00:00\"}",
                          ms, times.c_str(), 7 * ms, bytes / (ms * 1e6));
            entry += buf;
          }
          out += (first ? "" : ",\n") + entry;
          first = false;
        }
  out += "\n}\n}\n";
  return out;
}

}  // namespace autotune_test
