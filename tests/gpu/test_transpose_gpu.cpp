// The transpose family on a real GPU through CudaBackend: every valid configuration of both specs
// (transpose, transpose_copy) and both element types verified bit-exactly against the CPU reference on
// odd shapes, and a timing sanity check at the default size.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu_support.hpp"
#include "tuner/core/compile.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using namespace autotune_test;

namespace {

ProblemKey dims(std::int64_t rows, std::int64_t cols) {
  ProblemKey p;
  p.dims = {{"rows", rows}, {"cols", cols}};
  return p;
}

// Evaluates every valid configuration of both specs and both element types on each problem (one
// verification run and one timed sample each) and checks that all verify.
void check_all_configs(const std::vector<ProblemKey>& problems) {
  for (const std::string name : {"transpose", "transpose_copy"}) {
    Verifier verifier(name);
    for (const Workload& w : verifier.spec.workloads) {
      for (const ProblemKey& p : problems) {
        const std::vector<Config> configs = all_configs(verifier.space(p, w));
        REQUIRE_FALSE(configs.empty());
        verifier.check(w, p, 20240601, configs);
      }
    }
  }
}

}  // namespace

TEST_CASE("every transpose configuration is bit-exact on odd shapes", "[gpu][transpose]") {
  require_gpu();
  check_all_configs({dims(4000, 4000), dims(4097, 1023), dims(1, 1), dims(33, 17), dims(1, 5000), dims(5000, 1),
                     dims(65, 129)});
}

// Small shapes only, for runs under compute-sanitizer (memcheck, racecheck), which slow kernels down a lot.
// Hidden: run it by name or with the tag [sanitize].
TEST_CASE("every transpose configuration is bit-exact on small shapes", "[.][gpu][transpose][sanitize]") {
  require_gpu();
  check_all_configs({dims(1, 1), dims(33, 17), dims(65, 129), dims(3, 200)});
}

// The whole space at 4096 x 4096 (64 or 128 MiB per matrix, more than the L2; the spec default 8192 x 8192
// takes four times as long for the same check).
TEST_CASE("transpose timings are sane against the tiled copy", "[gpu][transpose]") {
  require_gpu();
  const ProblemKey p = dims(4096, 4096);
  std::map<std::string, double> best_gbps;       // "dtype variant" -> GB/s of the fastest config
  std::map<std::string, std::string> best_config;  // "dtype variant" -> that config
  for (const std::string name : {"transpose", "transpose_copy"}) {
    const TuningSpec s = specs::builtin_spec(name);
    auto adapter = kernels::make_transpose_adapter(s);
    cuda::CudaBackend backend(adapter, cuda::TimingOptions{});
    for (const Workload& w : s.workloads) {
      const std::vector<Config> configs = all_configs(s.space(p, backend.device(), w));
      backend.prepare(w, p, 7);
      const std::vector<Measurement> results = backend.evaluate(configs);
      const double bytes = adapter->bytes_moved(w, p);
      for (std::size_t i = 0; i < configs.size(); ++i) {
        INFO(name << " " << w.key() << " " << configs[i].str(&s.params) << " " << results[i].log);
        REQUIRE(results[i].status == TrialStatus::ok);
        CHECK(results[i].median_ns > 0);
        CHECK(results[i].samples >= 7);
        const double gbps = bytes / results[i].median_ns;  // bytes per ns = GB/s
        const std::string key = w.dtype + " " + s.find_param("VARIANT")->label(configs[i].at("VARIANT"));
        if (gbps > best_gbps[key]) {
          best_gbps[key] = gbps;
          best_config[key] = configs[i].str(&s.params);
        }
      }
    }
  }
  std::string table;
  for (const std::string dtype : {"float32", "float64"}) {
    const double copy = best_gbps.at(dtype + " tiled_copy");
    const double tiled = best_gbps.at(dtype + " tiled");
    const double naive = best_gbps.at(dtype + " naive");
    char line[200];
    std::snprintf(line, sizeof line, "%s %s: tiled_copy %.0f GB/s, tiled %.0f GB/s (%.2f of copy), naive %.0f GB/s (%.2f)\n",
                  dtype.c_str(), p.key().c_str(), copy, tiled, tiled / copy, naive, naive / copy);
    table += line;
    for (const std::string v : {"tiled_copy", "tiled", "naive"}) {
      table += "  best " + v + ": " + best_config.at(dtype + " " + v) + "\n";
    }
    // Loose sanity bounds: nothing beats the copy by much, and staging through shared memory must not be
    // slower than the naive transpose.
    CHECK(tiled <= 1.1 * copy);
    CHECK(naive <= 1.1 * copy);
    CHECK(tiled >= naive);
  }
  WARN(table);
}
