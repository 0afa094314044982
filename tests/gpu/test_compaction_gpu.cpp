// The compaction family on a real GPU through CudaBackend: every variant, every workload, odd sizes
// (1, 1000, 2^20 + 3, 3 * 2^20 + 7) and selection ratios 0, 1, 50, 99, 100 %, verified against the CPU
// reference (count and every selected element); single_pass_bulk also on one tile and one element past it; the
// whole valid space at one size; a timing table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_support.hpp"
#include "tuner/core/compile.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using namespace autotune_test;

namespace {

ProblemKey problem(std::int64_t n, std::int64_t pct) {
  ProblemKey p;
  p.dims = {{"n", n}, {"select_pct", pct}};
  return p;
}

Config config(Value variant, Value block, Value items, Value stage, Value min_threads = 0, Value streaming = 0) {
  return Config({{"VARIANT", variant}, {"BLOCK_SIZE", block}, {"ITEMS_PER_THREAD", items}, {"STAGE_OUTPUT", stage},
                 {"LOOKBACK_DELAY", 0}, {"MIN_THREADS_PER_SM", min_threads}, {"STREAMING", streaming}, {"CLEAR_STATE", 0}});
}

Value tile_of(const Config& c) { return c.at("BLOCK_SIZE") * c.at("ITEMS_PER_THREAD"); }

/// single_pass_bulk (VARIANT 3), for each output mode: the smallest and the largest tile of the valid space, and
/// the tile of 256 threads x 8 items with the tightest register cap and the evict-first stores where valid.
std::vector<Config> bulk_configs(const ParameterSpace& space) {
  std::vector<Config> out;
  for (Value stage : {0, 1})
    append_tile_edges(out, space,
                      [&](const Config& c) { return c.at("VARIANT") == 3 && c.at("STAGE_OUTPUT") == stage; });
  return out;
}

}  // namespace

TEST_CASE("every compaction variant verifies for every workload, size and selection ratio", "[gpu][compaction]") {
  require_gpu();
  Verifier verifier("compaction");
  const TuningSpec& s = verifier.spec;
  std::vector<Config> configs;
  for (Value v : {0, 1, 2, 3}) {
    Config def = s.default_config();
    def.set("VARIANT", v);
    // The blocked and bulk variants: ITEMS_PER_THREAD % 4 == 0; the bulk variant's tile and its flags must fit
    // in 48 KiB of shared memory (512 x 16 the largest).
    const Value i1 = v >= 2 ? 4 : 1, i3 = v >= 2 ? 4 : 3, big = v == 3 ? 512 : 1024;
    for (const Config& c : {def, config(v, 64, i1, 0), config(v, 64, i1, 1), config(v, big, 16, 0),
                            config(v, 1024, 8, 1), config(v, 192, i3, 1), config(v, 768, 12, 0)})
      configs.push_back(c);
    if (v >= 1) {  // single pass with the register caps (spills included) of MIN_THREADS_PER_SM
      configs.push_back(config(v, 512, 16, 1, 2048));
      configs.push_back(config(v, 256, 8, 0, 1536));
      if (v >= 2) {  // evict-first hints, staged and direct output
        configs.push_back(config(v, 512, 16, 1, 2048, 1));
        configs.push_back(config(v, 256, 8, 0, 1536, 1));
      }
    }
  }
  for (const Workload& w : s.workloads) {
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, (std::int64_t{1} << 20) + 3,
                           3 * (std::int64_t{1} << 20) + 7}) {
      for (std::int64_t pct : {0, 1, 50, 99, 100}) verifier.check(w, problem(n, pct), 20240601, configs);
    }
  }
}

TEST_CASE("compaction single_pass_bulk verifies on odd sizes and on one tile and one element more",
          "[gpu][compaction]") {
  // 2^24 + 7: thousands of blocks whose bulk copies and look-backs overlap; one tile: the bulk path alone; tile + 1:
  // a full tile by bulk copies, then a partial one of one element loaded by the threads.
  require_gpu();
  Verifier verifier("compaction");
  for (const Workload& w : verifier.spec.workloads) {
    const std::vector<Config> configs = bulk_configs(verifier.space(problem(1, 50), w));
    REQUIRE(configs.size() >= 4);
    for (std::int64_t n : kOddSizes) {
      for (std::int64_t pct : {1, 50, 100}) {
        INFO(w.key() << " n=" << n << " " << pct << "%");
        verifier.check(w, problem(n, pct), 20261127, configs);
      }
    }
    for (const Config& c : configs) {
      INFO(w.key() << " one tile, and tile + 1");
      verifier.check(w, problem(tile_of(c), 50), 11, {c});
      verifier.check(w, problem(tile_of(c) + 1, 50), 7, {c});
    }
  }
}

TEST_CASE("every valid compaction configuration verifies", "[gpu][compaction]") {
  require_gpu();
  Verifier verifier("compaction");
  for (const char* wk : {"float32/flagged", "int32/if"}) {
    const Workload w = Workload::parse(wk);
    const ProblemKey p = problem(3 * (std::int64_t{1} << 20) + 7, 37);
    verifier.check(w, p, 3, all_configs(verifier.space(p, w)));
  }
}

// Hidden: small sizes for runs under compute-sanitizer.
TEST_CASE("compaction variants on small sizes", "[.][gpu][compaction][sanitize]") {
  require_gpu();
  Verifier verifier("compaction");
  const std::vector<Config> configs = {config(0, 64, 1, 0),  config(0, 256, 8, 1),  config(1, 64, 1, 0),
                                       config(1, 256, 8, 1), config(1, 192, 3, 0),  config(2, 64, 4, 0),
                                       config(2, 256, 8, 1), config(2, 192, 12, 0), config(3, 64, 4, 0),
                                       config(3, 256, 8, 1), config(3, 192, 12, 0)};
  for (const Workload& w : verifier.spec.workloads)
    for (std::int64_t pct : {0, 50, 100}) verifier.check(w, problem(70001, pct), 1, configs);
}

// A few configurations per variant at 2^26 elements (50 % and 10 % selected) for two workloads; prints
// the best configuration of each variant as a fraction of the device-to-device copy bandwidth.
TEST_CASE("compaction timings are sane against the copy bandwidth", "[gpu][compaction][timing]") {
  require_gpu();
  const std::string table =
      bandwidth_table("compaction", {"float32/flagged", "float32/if"}, 2,
                      [](const Workload&, const ProblemKey&, const ParameterSpace&) {
                        std::vector<Config> configs;
                        for (Value v : {0, 1, 2, 3})
                          for (const auto& [block, items, stage] : {std::tuple<Value, Value, Value>{256, 8, 1},
                                                                    {128, 8, 1},
                                                                    {256, 16, 0},
                                                                    {512, 4, 1},
                                                                    {256, 4, 0},
                                                                    {512, 12, 1}})
                            configs.push_back(config(v, block, items, stage));
                        return configs;
                      });
  WARN(table);
  std::printf("%s", table.c_str());
}
