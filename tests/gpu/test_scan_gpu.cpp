// The scan family on a real GPU through CudaBackend: every variant and every workload verified against the
// CPU reference on odd sizes (1, 1000, 2^20 + 3, 3 * 2^20 + 7), single_pass_async (VARIANT 9) with every STAGES
// value on 1, 7, 2^20 + 7, one element past a tile and 2^24 + 7, single_pass_bulk (VARIANT 10) on the same sizes
// and one whole tile, the whole valid space for two workloads, every
// variant at 2^28 + 5 elements, and a timing table at the default size.
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
#include "scan_support.hpp"
#include "tuner/core/compile.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using namespace autotune_test;

namespace {

Value tile_of(const Config& c) { return c.at("BLOCK_SIZE") * c.at("ITEMS_PER_THREAD"); }

/// Per variant and STAGES value (STAGES: VARIANT 9 only): the variant's default, the smallest and the largest
/// tile of the valid space, and one with PADDING=1.
std::vector<Config> variant_corners(const TuningSpec& s, const ParameterSpace& space) {
  std::vector<Config> out;
  auto add = [&](const Config& c) {
    if (space.is_valid(c) && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  for (Value v = 0; v <= 10; ++v) {
    Config def = s.default_config();
    def.set("VARIANT", v);
    add(def);
    for (Value stages = 1; stages <= 3; ++stages) {
      std::optional<Config> smallest, largest, padded;
      for (std::size_t i = 0; i < space.size(); ++i) {
        const Config c = space.config(i);
        if (c.at("VARIANT") != v || c.at("STAGES") != stages) continue;
        if (!smallest || tile_of(c) < tile_of(*smallest)) smallest = c;
        if (!largest || tile_of(c) > tile_of(*largest)) largest = c;
        if (!padded && c.at("PADDING") == 1 && c.at("ITEMS_PER_THREAD") >= 4) padded = c;
      }
      REQUIRE((smallest || stages > 1));  // every variant has STAGES 1
      if (!smallest) continue;
      add(*smallest);
      add(*largest);
      if (padded) add(*padded);
    }
  }
  return out;
}

/// A variant (VARIANT 9, single_pass_async, or 10, single_pass_bulk) for each of its STAGES values: the smallest
/// and the largest tile, and the tile of 256 threads x 8 items with the tightest register cap and the evict-first
/// hints where valid.
std::vector<Config> variant_configs(const ParameterSpace& space, Value variant) {
  std::vector<Config> out;
  for (Value stages = 1; stages <= (variant == 9 ? 3 : 1); ++stages)
    append_tile_edges(out, space,
                      [&](const Config& c) { return c.at("VARIANT") == variant && c.at("STAGES") == stages; });
  return out;
}

/// Verifies, for every workload, the configurations variant_configs() gives for `variant` (at least `min_configs`):
/// together at each of kOddSizes with inputs of `seed`, then each alone one element past its tile, after exactly
/// its tile where `whole_tile`.
void check_variant_sizes(Value variant, std::size_t min_configs, std::uint64_t seed, bool whole_tile) {
  Verifier verifier("scan");
  for (const Workload& w : verifier.spec.workloads) {
    const std::vector<Config> configs = variant_configs(verifier.space(size_n(1), w), variant);
    REQUIRE(configs.size() >= min_configs);
    for (std::int64_t n : kOddSizes) {
      INFO(w.key() << " n=" << n);
      verifier.check(w, size_n(n), seed, configs);
    }
    for (const Config& c : configs) {
      INFO(w.key() << (whole_tile ? " one tile, and tile + 1" : " tile + 1"));
      if (whole_tile) verifier.check(w, size_n(tile_of(c)), 11, {c});
      verifier.check(w, size_n(tile_of(c) + 1), 7, {c});
    }
  }
}

}  // namespace

TEST_CASE("every scan variant verifies for every workload on odd sizes", "[gpu][scan]") {
  require_gpu();
  Verifier verifier("scan");
  const TuningSpec& s = verifier.spec;
  for (const Workload& w : s.workloads) {
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, (std::int64_t{1} << 20) + 3,
                           3 * (std::int64_t{1} << 20) + 7}) {
      const ProblemKey p = size_n(n);
      verifier.check(w, p, 20240601, variant_corners(s, verifier.space(p, w)));
    }
  }
}

TEST_CASE("scan single_pass_async verifies every STAGES value on odd sizes and one element past a tile",
          "[gpu][scan]") {
  // 2^24 + 7: several tiles per persistent block (8193 tiles of 2048 for at most 132 x 8 blocks on an H100), so
  // that the buffers are refilled and the ring wraps around; tile + 1: a full tile, then a partial one of one
  // element that is loaded element by element.
  require_gpu();
  check_variant_sizes(9, 3, 20261126, false);
}

TEST_CASE("scan single_pass_bulk verifies on odd sizes and on one tile and one element more", "[gpu][scan]") {
  // 2^24 + 7: thousands of blocks whose bulk copies and look-backs overlap; one tile: the bulk path alone; tile + 1:
  // a full tile by bulk copies, then a partial one of one element loaded by the threads.
  require_gpu();
  check_variant_sizes(10, 2, 20261127, true);
}

TEST_CASE("every valid scan configuration verifies", "[gpu][scan]") {
  require_gpu();
  Verifier verifier("scan");
  for (const char* wk :
       {"float32/inclusive_sum", "float64/exclusive_sum", "int32/exclusive_max", "float32/inclusive_max"}) {
    const Workload w = Workload::parse(wk);
    const ProblemKey p = size_n(3 * (std::int64_t{1} << 20) + 7);
    verifier.check(w, p, 99, all_configs(verifier.space(p, w)));
  }
}

TEST_CASE("every scan variant handles 2^28 + 5 elements", "[gpu][scan][large]") {
  require_gpu();
  Verifier verifier("scan");
  const TuningSpec& s = verifier.spec;
  const ProblemKey p = size_n((std::int64_t{1} << 28) + 5);
  for (const char* wk : {"int32/inclusive_sum", "float32/exclusive_sum"}) {
    const Workload w = Workload::parse(wk);
    const ParameterSpace space = verifier.space(p, w);
    std::vector<Config> configs;
    for (Value v = 0; v <= 10; ++v) {
      Config c = s.default_config();
      c.set("VARIANT", v);
      if (v >= 8) c.set("VEC", 4);                           // VARIANT 8, 9, 10: VEC 4 only
      if (v == 9) c.set("STAGES", 3);                        // two tiles in flight
      if (v == 10) c.set("PADDING", 0);                      // rows of 16-byte vectors: no padding
      if (!space.is_valid(c)) c.set("ITEMS_PER_THREAD", 4);  // Kogge-Stone: at most 4 items
      if (!space.is_valid(c)) c.set("PADDING", 0);           // registers: no shared tile to pad
      REQUIRE(space.is_valid(c));
      configs.push_back(c);
    }
    configs.push_back(scan_config(2, 64, 2, 2, 1));
    // The single pass with the tightest register cap (32 per thread, with spills).
    configs.push_back(scan_config(4, 512, 16, 4, 1, 2048));
    configs.push_back(scan_config(6, 256, 16, 4, 1, 2048, 1));
    // single_pass_bulk's largest tile, two rows per lane in registers, a partial last tile of 5 elements.
    configs.push_back(scan_config(10, 1024, 64, 4, 0, 1024, 1, 1, 2));
    for (std::size_t i = configs.size() - 4; i < configs.size(); ++i) REQUIRE(space.is_valid(configs[i]));
    verifier.check(w, p, 5, configs);
  }
}

// Hidden: small sizes for runs under compute-sanitizer (memcheck, racecheck, synccheck).
TEST_CASE("scan variants on small sizes", "[.][gpu][scan][sanitize]") {
  require_gpu();
  Verifier verifier("scan");
  const TuningSpec& s = verifier.spec;
  for (const char* wk : {"float32/inclusive_sum", "int32/exclusive_sum", "float64/inclusive_sum"}) {
    const Workload w = Workload::parse(wk);
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{70000}}) {
      const ProblemKey p = size_n(n);
      verifier.check(w, p, 1, variant_corners(s, verifier.space(p, w)));
    }
  }
}

// A few configurations per variant at the default size (2^26; the whole space takes ~1 s per configuration,
// mostly the CPU verification): each verifies and is timed; prints the best configuration of each variant
// as a fraction of the device-to-device copy bandwidth.
TEST_CASE("scan timings are sane against the copy bandwidth", "[gpu][scan][timing]") {
  require_gpu();
  const std::string table = bandwidth_table(
      "scan", {"float32/inclusive_sum", "int32/exclusive_sum"}, 1,
      [](const Workload&, const ProblemKey&, const ParameterSpace& space) {
        std::vector<Config> configs;
        for (Value v = 0; v <= 10; ++v)
          for (const auto& [block, items, vec, padding] : {std::tuple<Value, Value, Value, Value>{256, 8, 2, 1},
                                                           {128, 4, 2, 0},
                                                           {256, 4, 4, 1},
                                                           {128, 8, 4, 0},
                                                           {256, 16, 4, 1},
                                                           {512, 16, 4, 1}}) {
            const Config c = scan_config(v, block, items, vec, padding, 0, 0, v == 9 ? 2 : 1);
            if (space.is_valid(c)) configs.push_back(c);
          }
        return configs;
      });
  WARN(table);
  std::printf("%s", table.c_str());
}
