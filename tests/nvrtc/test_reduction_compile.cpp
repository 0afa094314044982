// The reduction kernel compiles with NVRTC to CUBIN for sm_80 and sm_90 in strict mode: every variant at its
// default and at corner configurations, for every workload of the shipped spec (no GPU needed).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "compile_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/embedded.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using namespace autotune_test;

namespace {

/// The spec default with VARIANT = v and the parameters that the variant ignores at their fixed values.
Config variant_default(const TuningSpec& s, int v) {
  Config c = s.default_config();
  c.set("VARIANT", v);
  if (v < 6) {
    c.set("ITEMS_PER_THREAD", 1);
    c.set("VEC", 1);
    c.set("BLOCKS_PER_SM", 1);
    c.set("KAHAN", 0);
  }
  return c;
}

/// c with the parameters of `changes` set.
Config with(Config c, std::initializer_list<std::pair<const char*, Value>> changes) {
  for (const auto& [name, value] : changes) c.set(name, value);
  return c;
}

/// Default and corner configurations of every variant that are valid for the workload.
std::vector<Config> configs_for(const TuningSpec& s, const Workload& w) {
  const ParameterSpace space = s.space(s.problem_sizes.front(), sim::SyntheticBackend::fake_device(), w);
  std::vector<Config> out;
  auto add = [&](Config c) {
    if (space.is_valid(c) && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
  };
  for (int v = 0; v < 8; ++v) {
    Config base = variant_default(s, v);
    add(base);
    Config small = with(base, {{"BLOCK_SIZE", 64}, {"FINAL", 0}});  // smallest blocks, second-pass combination
    if (v >= 6) {
      small = with(small, {{"ITEMS_PER_THREAD", 8}, {"VEC", 2}, {"BLOCKS_PER_SM", 32}, {"KAHAN", 0}});
      add(with(small, {{"KAHAN", 1}}));
    }
    add(small);
    Config large = with(base, {{"BLOCK_SIZE", 1024}, {"FINAL", 1}});  // largest blocks, atomics
    if (v >= 6) {
      large = with(large, {{"ITEMS_PER_THREAD", 4}, {"VEC", 4}, {"BLOCKS_PER_SM", 2}, {"KAHAN", 0}});
      add(with(large, {{"KAHAN", 1}}));
    }
    add(large);
    add(with(large, {{"FINAL", 0}}));  // for types without atomics
    if (v >= 6) {
      Config scalar = base;  // scalar loads, one item
      scalar.set("ITEMS_PER_THREAD", 1);
      scalar.set("VEC", 1);
      scalar.set("BLOCK_SIZE", 128);
      add(scalar);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("reduction compiles for every workload, variant and corner in strict mode", "[nvrtc][reduction]") {
  const TuningSpec s = specs::builtin_spec("reduction");
  auto a = kernels::make_adapter(s);
  std::vector<CompileJob> jobs;
  for (const auto& w : s.workloads) {
    const std::vector<Config> configs = configs_for(s, w);
    CHECK(configs.size() >= 8 * 2);
    for (const auto& c : configs) add_jobs(jobs, s, w, c, strict_options(*a, c, w));
  }
  check_all_compile(s, "reduction.cu", jobs);
}

TEST_CASE("reduction compiles alone at its defaults", "[nvrtc][reduction]") {
  check_compiles_at_defaults(specs::builtin_spec("reduction"), "reduction.cu");
}

TEST_CASE("reduction strict mode rejects a missing macro", "[nvrtc][reduction]") {
  const TuningSpec s = specs::builtin_spec("reduction");
  auto a = kernels::make_adapter(s);
  const Workload w = s.workloads.front();
  const std::vector<std::string> all = strict_options(*a, s.default_config(), w);
  check_missing_macros(s, "reduction.cu", all, {"VEC", "BLOCK_SIZE", "KAHAN", "DTYPE_ID"});
  // A config that breaks a constraint is caught by the kernel's own checks, too.
  std::vector<std::string> bad = all;
  for (auto& o : bad)
    if (o == "-DVARIANT=7") o = "-DVARIANT=3";
  for (auto& o : bad)
    if (o == "-DKAHAN=0") o = "-DKAHAN=1";
  cuda::CompileResult r = cuda::compile(s.source_text, s.headers, "reduction.cu", bad, "sm_90");
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.log, Catch::Contains("KAHAN"));
}

TEST_CASE("reduction reference kernels compile from the reference source", "[nvrtc][reduction]") {
  auto text = embedded::find("reduction/reduction.tune.json");
  REQUIRE(text);
  nlohmann::json j = nlohmann::json::parse(std::string(*text));
  j["family_options"]["custom_ops"].push_back(
      {{"name", "bitor"}, {"dtype", "int32"}, {"combine", "(a | b)"}, {"identity", "0"}});
  j["workloads"].push_back("int32/bitor");
  TuningSpec s = TuningSpec::from_json_text(j.dump(), "", false);
  s.source_text = specs::builtin_spec("reduction").source_text;
  auto a = kernels::make_adapter(s);
  for (const char* wk : {"int32/bitor", "float3/maxmag"}) {
    const Workload w = Workload::parse(wk);
    // Strict mode without any tunable define: the reference source opts out of the tunable checks.
    std::vector<std::string> options = a->compile_options(w);
    options.push_back("-DAUTOTUNE_STRICT=1");
    cuda::CompileResult r = cuda::compile(a->reference_source(), {}, "reduction_reference.cu", options, "sm_90");
    INFO(wk << ": " << r.log);
    CHECK(r.ok);
    CHECK(contains_bytes(r.cubin, "reduce_reference_chunks"));
    CHECK(contains_bytes(r.cubin, "reduce_reference_final"));
    // And the tuned kernels with a custom 4-byte operator use compare-and-swap for FINAL=1.
    Config c = s.default_config();
    c.set("FINAL", 1);
    const std::vector<std::string> tuned = strict_options(*a, c, w);
    if (std::string(wk) == "int32/bitor") {
      cuda::CompileResult t = cuda::compile(s.source_text, s.headers, "reduction.cu", tuned, "sm_80");
      INFO(t.log);
      CHECK(t.ok);
    }
  }
}
