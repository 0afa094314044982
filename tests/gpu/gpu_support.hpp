// Helpers shared by the kernel-family tests of the gpu tier (tests/gpu/test_*_gpu.cpp): the GPU check, timing
// options for verification only, the verdict of a batch of measurements, a family's verifying backend and the
// per-variant bandwidth table.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tuner/core/compile.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/core/trial.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

namespace autotune_test {

/// Fails the test, with the driver's reason, when there is no usable GPU.
inline void require_gpu() {
  std::string reason;
  if (!autotune::cuda::driver_available(&reason)) FAIL("the gpu tier needs a GPU: " + reason);
}

/// Odd sizes of the single-pass tests: one element, a few, and sizes of several tiles per persistent block
/// (2^20 + 7) and of thousands of blocks whose ring of tile states wraps around (2^24 + 7).
inline constexpr std::int64_t kOddSizes[] = {1, 7, (std::int64_t{1} << 20) + 7, (std::int64_t{1} << 24) + 7};

/// Timing options that only verify: no warm-up, one sample, no L2 flush.
inline autotune::cuda::TimingOptions verify_only() {
  autotune::cuda::TimingOptions opt;
  opt.warmup = 0;
  opt.samples = 1;
  opt.flush_l2 = false;
  return opt;
}

/// Every configuration of the space, in its order.
inline std::vector<autotune::Config> all_configs(const autotune::ParameterSpace& space) {
  std::vector<autotune::Config> out;
  for (std::size_t i = 0; i < space.size(); ++i) out.push_back(space.config(i));
  return out;
}

/// Of the configurations of `space` that `pick` accepts: the smallest and the largest tile (BLOCK_SIZE x
/// ITEMS_PER_THREAD), and the tile of 256 threads x 8 items with the tightest register cap and the evict-first hint
/// where valid (the largest MIN_THREADS_PER_SM + STREAMING), each appended to `out` unless there already. Requires
/// that `pick` accepts at least one.
template <class Pick>
void append_tile_edges(std::vector<autotune::Config>& out, const autotune::ParameterSpace& space, Pick pick) {
  auto tile = [](const autotune::Config& c) { return c.at("BLOCK_SIZE") * c.at("ITEMS_PER_THREAD"); };
  auto tightness = [](const autotune::Config& c) { return c.at("MIN_THREADS_PER_SM") + c.at("STREAMING"); };
  std::optional<autotune::Config> smallest, largest, capped;
  for (std::size_t i = 0; i < space.size(); ++i) {
    const autotune::Config c = space.config(i);
    if (!pick(c)) continue;
    if (!smallest || tile(c) < tile(*smallest)) smallest = c;
    if (!largest || tile(c) > tile(*largest)) largest = c;
    if (c.at("BLOCK_SIZE") == 256 && c.at("ITEMS_PER_THREAD") == 8 && (!capped || tightness(c) > tightness(*capped)))
      capped = c;
  }
  REQUIRE(smallest);
  for (const auto& c : {*smallest, *largest, capped.value_or(*smallest)})
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
}

/// Checks that there is one result per configuration and that each is ok; a failure names `label` (the
/// family or spec), the workload, the problem and the configuration, with the result's log.
inline void check_ok(const std::string& label, const autotune::TuningSpec& s, const autotune::Workload& w,
                     const autotune::ProblemKey& p, const std::vector<autotune::Config>& configs,
                     const std::vector<autotune::Measurement>& results) {
  REQUIRE(results.size() == configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    INFO(label << " " << w.key() << " " << p.key() << " " << configs[i].str(&s.params));
    INFO(results[i].log);
    CHECK(results[i].status == autotune::TrialStatus::ok);
  }
}

/// A built-in kernel family on the GPU for verification: its spec, its adapter and a CudaBackend with
/// verify_only() timing and an in-memory binary cache. Call require_gpu() first.
struct Verifier {
  explicit Verifier(const std::string& spec_name)
      : spec(autotune::specs::builtin_spec(spec_name)),
        adapter(autotune::kernels::make_adapter(spec)),
        backend(adapter, verify_only(), &cache) {}

  /// The valid space of workload w at p on this GPU.
  autotune::ParameterSpace space(const autotune::ProblemKey& p, const autotune::Workload& w) const {
    return spec.space(p, backend.device(), w);
  }
  /// Prepares w at p with the inputs of `seed`, evaluates configs and checks that each verifies (check_ok,
  /// labelled with the spec's name).
  void check(const autotune::Workload& w, const autotune::ProblemKey& p, std::uint64_t seed,
             const std::vector<autotune::Config>& configs) {
    backend.prepare(w, p, seed);
    check_ok(spec.name, spec, w, p, configs, backend.evaluate(configs));
  }

  const autotune::TuningSpec spec;
  const std::shared_ptr<const autotune::KernelAdapter> adapter;
  autotune::MemoryBinaryCache cache;  // before backend, which keeps a pointer to it
  autotune::cuda::CudaBackend backend;
};

/// Appends to `table` one line per VARIANT: the fastest ok result's GB/s (`bytes` moved per run over its
/// median time) as a fraction of the copy bandwidth `copy_gbps`, and its configuration. Checks that every ok
/// result has a positive median and does not beat the copy by more than 15 %.
inline void append_best_per_variant(std::string& table, const autotune::TuningSpec& s, const std::string& workload,
                                    const autotune::ProblemKey& p, const std::vector<autotune::Config>& configs,
                                    const std::vector<autotune::Measurement>& results, double bytes, double copy_gbps) {
  std::map<autotune::Value, std::pair<double, std::string>> best;  // variant -> (GB/s, config)
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (!results[i].ok()) continue;
    CHECK(results[i].median_ns > 0);
    const double gbps = bytes / results[i].median_ns;
    CHECK(gbps < 1.15 * copy_gbps);  // nothing beats a copy by much
    auto& b = best[configs[i].at("VARIANT")];
    if (gbps > b.first) b = {gbps, configs[i].str(&s.params)};
  }
  for (const auto& [v, b] : best) {
    char line[400];
    std::snprintf(line, sizeof line, "  %s %s: %.0f GB/s (%.2f of copy)  %s\n", workload.c_str(), p.key().c_str(),
                  b.first, b.first / copy_gbps, b.second.c_str());
    table += line;
  }
}

/// Times configurations of the built-in family `spec_name` (nine samples each, inputs of seed 7) for each
/// workload of `workloads` at each of the spec's first `sizes` problem sizes, configs_for(workload, problem,
/// valid space) giving them; checks that each verifies (check_ok) and returns the per-variant table of
/// append_best_per_variant under a line naming the device and its copy bandwidth.
template <typename ConfigsFor>
std::string bandwidth_table(const std::string& spec_name, std::initializer_list<const char*> workloads,
                            std::size_t sizes, ConfigsFor configs_for) {
  const autotune::TuningSpec s = autotune::specs::builtin_spec(spec_name);
  const auto adapter = autotune::kernels::make_adapter(s);
  autotune::cuda::TimingOptions opt;
  opt.samples = 9;
  autotune::cuda::CudaBackend backend(adapter, opt);
  const double copy = backend.copy_bandwidth_gbps();
  std::string table =
      spec_name + " on " + backend.device().name + ", copy " + std::to_string(static_cast<int>(copy)) + " GB/s\n";
  for (const char* wk : workloads) {
    const autotune::Workload w = autotune::Workload::parse(wk);
    for (std::size_t i = 0; i < sizes; ++i) {
      const autotune::ProblemKey& p = s.problem_sizes.at(i);
      const std::vector<autotune::Config> configs = configs_for(w, p, s.space(p, backend.device(), w));
      backend.prepare(w, p, 7);
      const std::vector<autotune::Measurement> results = backend.evaluate(configs);
      check_ok(spec_name, s, w, p, configs, results);
      append_best_per_variant(table, s, wk, p, configs, results, adapter->bytes_moved(w, p), copy);
    }
  }
  return table;
}

}  // namespace autotune_test
