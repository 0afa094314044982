// kernels_src/transpose/transpose.cu compiles with NVRTC (no GPU needed): every variant at its default and
// corner configurations, both element types, sm_80 and sm_90, strict mode; a missing or inconsistent
// macro is a compile error that names it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "compile_support.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using namespace autotune_test;

namespace {

// Default config plus every valid config whose BLOCK_ROWS is the smallest or largest allowed for its
// TILE_DIM (all variants, paddings and block orders), on the synthetic H100/H200-like device.
std::vector<Config> corner_configs(const TuningSpec& s, const Workload& w) {
  const ParameterSpace space = s.space(s.problem_sizes.front(), sim::SyntheticBackend::fake_device(), w);
  std::map<Value, std::pair<Value, Value>> rows_range;  // TILE_DIM -> (min, max) BLOCK_ROWS
  for (std::size_t i = 0; i < space.size(); ++i) {
    const Config c = space.config(i);
    auto it = rows_range.find(c.at("TILE_DIM"));
    if (it == rows_range.end()) {
      rows_range[c.at("TILE_DIM")] = {c.at("BLOCK_ROWS"), c.at("BLOCK_ROWS")};
    } else {
      it->second.first = std::min(it->second.first, c.at("BLOCK_ROWS"));
      it->second.second = std::max(it->second.second, c.at("BLOCK_ROWS"));
    }
  }
  std::vector<Config> out{s.default_config()};
  for (std::size_t i = 0; i < space.size(); ++i) {
    const Config c = space.config(i);
    const auto& [lo, hi] = rows_range.at(c.at("TILE_DIM"));
    if ((c.at("BLOCK_ROWS") == lo || c.at("BLOCK_ROWS") == hi) && c != out.front()) out.push_back(c);
  }
  return out;
}

}  // namespace

TEST_CASE("transpose kernels compile for sm_80 and sm_90 at default and corner configs", "[nvrtc][transpose]") {
  for (const std::string name : {"transpose", "transpose_copy"}) {
    const TuningSpec s = specs::builtin_spec(name);
    auto a = kernels::make_transpose_adapter(s);
    const std::string entry = s.launches.front().kernel;
    std::size_t compiled = 0;
    for (const Workload& w : s.workloads) {
      const std::vector<Config> configs = corner_configs(s, w);
      CHECK(configs.size() == (name == "transpose" ? 37u : 7u));  // default + corners
      for (const Config& c : configs) {
        for (const std::string arch : {"sm_80", "sm_90"}) {
          INFO(name << " " << w.key() << " " << c.str(&s.params) << " " << arch);
          const cuda::CompileResult r =
              cuda::compile(s.source_text, s.headers, "transpose.cu", strict_options(*a, c, w), arch);
          INFO(r.log);
          REQUIRE(r.ok);
          CHECK(contains_bytes(r.cubin, entry));
          ++compiled;
        }
      }
    }
    CHECK(compiled == (name == "transpose" ? 148u : 28u));
  }
}

TEST_CASE("only the selected entry point exists in a transpose binary", "[nvrtc][transpose]") {
  const TuningSpec s = specs::builtin_spec("transpose");
  auto a = kernels::make_transpose_adapter(s);
  const Workload w{"float32", ""};
  Config c = s.default_config();
  cuda::CompileResult r = cuda::compile(s.source_text, s.headers, "transpose.cu", strict_options(*a, c, w), "sm_90");
  REQUIRE(r.ok);
  CHECK(contains_bytes(r.cubin, "transpose"));
  CHECK_FALSE(contains_bytes(r.cubin, "tiled_copy"));
  c.set("VARIANT", 2);
  c.set("PADDING", 0);
  r = cuda::compile(s.source_text, s.headers, "transpose.cu", strict_options(*a, c, w), "sm_90");
  REQUIRE(r.ok);
  CHECK(contains_bytes(r.cubin, "tiled_copy"));
}

TEST_CASE("transpose.cu compiles alone at its defaults without strict mode", "[nvrtc][transpose]") {
  check_compiles_at_defaults(specs::builtin_spec("transpose"), "transpose.cu");
}

TEST_CASE("a missing transpose macro is an error in strict mode", "[nvrtc][transpose]") {
  const TuningSpec s = specs::builtin_spec("transpose");
  auto a = kernels::make_transpose_adapter(s);
  const Workload w{"float64", ""};
  const std::vector<std::string> all = strict_options(*a, s.default_config(), w);
  check_missing_macros(s, "transpose.cu", all,
                       {"DTYPE_ID", "VARIANT", "TILE_DIM", "BLOCK_ROWS", "PADDING", "DIAGONAL"});
}

TEST_CASE("inconsistent transpose macros fail to compile with a message", "[nvrtc][transpose]") {
  const TuningSpec s = specs::builtin_spec("transpose");
  auto a = kernels::make_transpose_adapter(s);
  const Workload w{"float32", ""};
  auto log_for = [&](const std::map<std::string, Value>& changes) {
    Config c = s.default_config();
    for (const auto& [name, v] : changes) c.set(name, v);
    const cuda::CompileResult r =
        cuda::compile(s.source_text, s.headers, "transpose.cu", strict_options(*a, c, w), "sm_90");
    CHECK_FALSE(r.ok);
    return r.log;
  };
  CHECK_THAT(log_for({{"BLOCK_ROWS", 3}}), Catch::Contains("BLOCK_ROWS must divide TILE_DIM"));
  CHECK_THAT(log_for({{"VARIANT", 3}}), Catch::Contains("VARIANT must be"));
  CHECK_THAT(log_for({{"PADDING", 2}}), Catch::Contains("PADDING must be 0 or 1"));
  CHECK_THAT(log_for({{"TILE_DIM", 64}, {"BLOCK_ROWS", 32}}), Catch::Contains("1024 threads"));
  std::vector<std::string> options = cuda::config_defines(s.default_config());
  options.push_back("-DDTYPE_ID=7");
  const cuda::CompileResult r = cuda::compile(s.source_text, s.headers, "transpose.cu", options, "sm_90");
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.log, Catch::Contains("DTYPE_ID must be 1"));
}
