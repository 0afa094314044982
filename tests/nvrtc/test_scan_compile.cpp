// The scan kernel compiles with NVRTC to CUBIN for sm_80 and sm_90 in strict mode: every variant at its
// default and at corner configurations (smallest and largest tile, every VEC, PADDING and STAGES) for every
// workload of the shipped spec; single_pass_async (VARIANT 9) and single_pass_bulk (VARIANT 10) also for sm_75,
// through their fallbacks without cp.async and bulk copies; missing macros and invalid configurations fail. No GPU
// needed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "compile_support.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using namespace autotune_test;

namespace {

/// For each variant: the spec default moved to that variant (if valid) and the valid configurations with the
/// smallest and the largest tile for every (VEC, PADDING, STAGES, REG_ROWS) tuple.
std::vector<Config> corner_configs(const TuningSpec& s, const Workload& w) {
  const ParameterSpace space = s.space(s.problem_sizes.front(), sim::SyntheticBackend::fake_device(), w);
  std::vector<Config> out;
  auto add = [&](const Config& c) {
    if (space.is_valid(c) && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  std::vector<Value> variants;
  for (const Param& p : s.params) {
    if (p.name == "VARIANT") variants = p.values;
  }
  REQUIRE(variants.size() >= 10);
  for (Value v : variants) {
    Config def = s.default_config();
    def.set("VARIANT", v);
    if (!space.is_valid(def)) {  // the default's register cap is for the single-pass variants only: 256 x 8 uncapped
      def.set("ITEMS_PER_THREAD", 8);
      def.set("MIN_THREADS_PER_SM", 0);
    }
    add(def);
    if (v >= 4) {  // single pass with the register caps of MIN_THREADS_PER_SM, where the tile fits
      std::size_t capped = 0;
      for (Value mt : {1536, 2048})
        for (auto [block, items] : {std::pair<Value, Value>{512, 16}, {256, 8}}) {
          Config c = def;
          c.set("BLOCK_SIZE", block);
          c.set("ITEMS_PER_THREAD", items);
          c.set("PADDING", v == 5 || v == 10 ? 0 : 1);
          c.set("MIN_THREADS_PER_SM", mt);
          if (v >= 8) c.set("VEC", w.dtype == "float64" ? 2 : 4);  // VARIANT 8, 9, 10: 16-byte vectors only
          if (!space.is_valid(c)) continue;
          add(c);
          ++capped;
          Config streaming = c;  // the evict-first hints need VEC 4 (4-byte types)
          streaming.set("VEC", 4);
          streaming.set("STREAMING", 1);
          if (space.is_valid(streaming)) add(streaming);
          for (Value st : {0, 1}) {  // the L2 prefetch-size hint, with and without the evict-first one
            Config prefetch = streaming;
            prefetch.set("STREAMING", st);
            prefetch.set("L2_PREFETCH", 1);
            if (space.is_valid(prefetch)) add(prefetch);
          }
        }
      CHECK(capped >= 2);
    }
    // (VEC, PADDING, STAGES, REG_ROWS) -> (min, max)
    std::map<std::tuple<Value, Value, Value, Value>, std::pair<Config, Config>> extremes;
    auto tile = [](const Config& c) { return c.at("BLOCK_SIZE") * c.at("ITEMS_PER_THREAD"); };
    for (std::size_t i = 0; i < space.size(); ++i) {
      const Config c = space.config(i);
      if (c.at("VARIANT") != v) continue;
      const auto key = std::make_tuple(c.at("VEC"), c.at("PADDING"), c.at("STAGES"), c.at("REG_ROWS"));
      auto it = extremes.find(key);
      if (it == extremes.end()) {
        extremes.emplace(key, std::make_pair(c, c));
        continue;
      }
      if (tile(c) < tile(it->second.first)) it->second.first = c;
      if (tile(c) > tile(it->second.second)) it->second.second = c;
    }
    for (const auto& [key, mm] : extremes) {
      add(mm.first);
      add(mm.second);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("scan compiles for every workload, variant and corner in strict mode", "[nvrtc][scan]") {
  const TuningSpec s = specs::builtin_spec("scan");
  auto a = kernels::make_scan_adapter(s);
  std::vector<CompileJob> jobs;
  std::set<std::vector<std::string>> seen;  // inclusive and exclusive workloads share their binaries
  for (const auto& w : s.workloads) {
    const std::vector<Config> configs = corner_configs(s, w);
    CHECK(configs.size() >= 8 * 4);
    for (const auto& c : configs) {
      const std::vector<std::string> options = strict_options(*a, c, w);
      CHECK(std::count(options.begin(), options.end(), "-DAUTOTUNE_STRICT=1") == 1);
      if (seen.insert(options).second) add_jobs(jobs, s, w, c, options);
    }
  }
  check_all_compile(s, "scan.cu", jobs);
}

TEST_CASE("scan single_pass_async and single_pass_bulk compile for sm_75 without their copies, every workload",
          "[nvrtc][scan]") {
  // sm_75 has no cp.async and no bulk copies (ptxas rejects them there): the variants compile only if their copies
  // fall back to plain loads and stores. Each workload's smallest and largest tile of every STAGES value.
  const TuningSpec s = specs::builtin_spec("scan");
  auto a = kernels::make_scan_adapter(s);
  std::vector<CompileJob> jobs;
  std::set<std::vector<std::string>> seen;
  for (const auto& w : s.workloads) {
    std::set<Value> stages;
    for (const auto& c : corner_configs(s, w)) {
      if (c.at("VARIANT") != 9 && c.at("VARIANT") != 10) continue;
      if (c.at("VARIANT") == 9) stages.insert(c.at("STAGES"));
      const std::vector<std::string> options = strict_options(*a, c, w);
      if (seen.insert(options).second) jobs.push_back({w.key() + " " + c.str(&s.params), options, "sm_75"});
    }
    INFO(w.key());
    CHECK(stages == std::set<Value>{1, 2, 3});  // float64's 16 KiB tiles: 3 x 8 KiB
  }
  CHECK(jobs.size() >= 9 * 4);
  check_all_compile(s, "scan.cu", jobs);
}

TEST_CASE("scan compiles alone at its defaults", "[nvrtc][scan]") {
  check_compiles_at_defaults(specs::builtin_spec("scan"), "scan.cu");
}

TEST_CASE("scan strict mode rejects a missing macro and invalid configurations", "[nvrtc][scan]") {
  const TuningSpec s = specs::builtin_spec("scan");
  auto a = kernels::make_scan_adapter(s);
  const Workload w = s.workloads.front();
  const std::vector<std::string> all = strict_options(*a, s.default_config(), w);
  check_missing_macros(s, "scan.cu", all,
                       {"VARIANT", "BLOCK_SIZE", "ITEMS_PER_THREAD", "VEC", "PADDING", "STAGES", "DTYPE_ID", "OP_ID"});

  // Configurations outside the spec's constraints are caught by the kernel's own checks.
  auto with = [&](std::map<std::string, std::string> changes) {
    std::vector<std::string> out;
    for (const auto& o : all) {
      const std::string name = o.substr(2, o.find('=') - 2);
      auto it = changes.find(name);
      out.push_back(it == changes.end() ? o : "-D" + name + "=" + it->second);
    }
    return out;
  };
  const cuda::CompileResult bk = cuda::compile(s.source_text, s.headers, "scan.cu", with({{"VARIANT", "2"}, {"ITEMS_PER_THREAD", "12"}, {"VEC", "1"}}), "sm_90");
  CHECK_FALSE(bk.ok);
  CHECK_THAT(bk.log, Catch::Contains("power-of-two"));
  const cuda::CompileResult vec = cuda::compile(s.source_text, s.headers, "scan.cu", with({{"DTYPE_ID", "2"}, {"VEC", "4"}}), "sm_90");
  CHECK_FALSE(vec.ok);
  CHECK_THAT(vec.log, Catch::Contains("VEC"));
  const cuda::CompileResult op = cuda::compile(s.source_text, s.headers, "scan.cu", with({{"OP_ID", "1"}}), "sm_90");
  CHECK_FALSE(op.ok);
  CHECK_THAT(op.log, Catch::Contains("OP_ID"));
  // STAGES is VARIANT 9's alone; VARIANT 9 needs 16-byte vectors.
  const cuda::CompileResult stages =
      cuda::compile(s.source_text, s.headers, "scan.cu", with({{"STAGES", "2"}}), "sm_90");
  CHECK_FALSE(stages.ok);
  CHECK_THAT(stages.log, Catch::Contains("STAGES > 1 needs VARIANT 9"));
  const cuda::CompileResult narrow =
      cuda::compile(s.source_text, s.headers, "scan.cu", with({{"VARIANT", "9"}, {"VEC", "2"}}), "sm_90");
  CHECK_FALSE(narrow.ok);
  CHECK_THAT(narrow.log, Catch::Contains("single_pass_async: VEC"));
  // VARIANT 10 reads rows of 16-byte vectors without padding.
  const cuda::CompileResult bulk_padded = cuda::compile(
      s.source_text, s.headers, "scan.cu", with({{"VARIANT", "10"}, {"VEC", "4"}, {"PADDING", "1"}}), "sm_90");
  CHECK_FALSE(bulk_padded.ok);
  CHECK_THAT(bulk_padded.log, Catch::Contains("single_pass_bulk: PADDING"));
  const cuda::CompileResult bulk_narrow = cuda::compile(
      s.source_text, s.headers, "scan.cu", with({{"VARIANT", "10"}, {"VEC", "2"}, {"PADDING", "0"}}), "sm_90");
  CHECK_FALSE(bulk_narrow.ok);
  CHECK_THAT(bulk_narrow.log, Catch::Contains("single_pass_bulk: VEC"));
}
