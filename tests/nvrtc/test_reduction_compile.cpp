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

#include "tuner/core/error.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/specs/embedded.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

DeviceInfo device_132() {
  DeviceInfo d;
  d.name = "Fake H100";
  d.cc = 90;
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.max_shared_memory_per_block = 49152;
  d.warp_size = 32;
  return d;
}

bool contains_bytes(const std::vector<unsigned char>& hay, const std::string& needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

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

/// Default and corner configurations of every variant that are valid for the workload.
std::vector<Config> configs_for(const TuningSpec& s, const Workload& w) {
  const ParameterSpace space = s.space(s.problem_sizes.front(), device_132(), w);
  std::vector<Config> out;
  auto add = [&](Config c) {
    if (space.is_valid(c) && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
  };
  for (int v = 0; v < 8; ++v) {
    Config base = variant_default(s, v);
    add(base);
    Config small = base;  // smallest blocks, second-pass combination
    small.set("BLOCK_SIZE", 64);
    small.set("FINAL", 0);
    if (v >= 6) {
      small.set("ITEMS_PER_THREAD", 8);
      small.set("VEC", 2);
      small.set("BLOCKS_PER_SM", 32);
      small.set("KAHAN", 1);
      add(small);
      small.set("KAHAN", 0);
    }
    add(small);
    Config large = base;  // largest blocks, atomics
    large.set("BLOCK_SIZE", 1024);
    large.set("FINAL", 1);
    if (v >= 6) {
      large.set("ITEMS_PER_THREAD", 4);
      large.set("VEC", 4);
      large.set("BLOCKS_PER_SM", 2);
      large.set("KAHAN", 1);
      add(large);
      large.set("KAHAN", 0);
      add(large);
      large.set("FINAL", 0);  // for types without atomics
    } else {
      add(large);
      large.set("FINAL", 0);
    }
    add(large);
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

struct Job {
  std::string label;
  std::vector<std::string> options;
  std::string arch;
};

/// Compiles every job (a few threads: NVRTC compile is thread-safe) and returns the failures with their logs.
std::vector<std::string> compile_all(const std::string& source, const cuda::Headers& headers, const std::vector<Job>& jobs,
                                     const std::vector<std::string>& kernel_names) {
  std::vector<std::string> failures;
  std::mutex mu;
  std::atomic<std::size_t> next{0};
  const unsigned threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < jobs.size(); i = next++) {
        const Job& j = jobs[i];
        cuda::CompileResult r = cuda::compile(source, headers, "reduction.cu", j.options, j.arch);
        std::string problem;
        if (!r.ok) {
          problem = r.log.substr(0, 2000);
        } else {
          for (const auto& k : kernel_names)
            if (!contains_bytes(r.cubin, k)) problem += "entry point " + k + " missing from the CUBIN; ";
        }
        if (!problem.empty()) {
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back(j.label + " [" + j.arch + "]: " + problem);
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  return failures;
}

}  // namespace

TEST_CASE("reduction compiles for every workload, variant and corner in strict mode", "[nvrtc][reduction]") {
  const TuningSpec s = specs::builtin_spec("reduction");
  auto a = kernels::make_adapter(s);
  std::vector<Job> jobs;
  for (const auto& w : s.workloads) {
    const std::vector<Config> configs = configs_for(s, w);
    CHECK(configs.size() >= 8 * 2);
    for (const auto& c : configs) {
      std::vector<std::string> options = cuda::config_defines(c);
      for (const auto& o : a->compile_options(w)) options.push_back(o);
      for (const char* arch : {"sm_80", "sm_90"}) jobs.push_back({w.key() + " " + c.str(&s.params), options, arch});
    }
  }
  INFO(jobs.size() << " compilations");
  const std::vector<std::string> failures = compile_all(s.source_text, s.headers, jobs, s.kernels);
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
}

TEST_CASE("reduction compiles alone at its defaults", "[nvrtc][reduction]") {
  const TuningSpec s = specs::builtin_spec("reduction");
  const cuda::CompileResult r = cuda::compile(s.source_text, s.headers, "reduction.cu", {}, "sm_90");
  INFO(r.log);
  CHECK(r.ok);
}

TEST_CASE("reduction strict mode rejects a missing macro", "[nvrtc][reduction]") {
  const TuningSpec s = specs::builtin_spec("reduction");
  auto a = kernels::make_adapter(s);
  const Workload w = s.workloads.front();
  std::vector<std::string> all = cuda::config_defines(s.default_config());
  for (const auto& o : a->compile_options(w)) all.push_back(o);
  cuda::CompileResult ok = cuda::compile(s.source_text, s.headers, "reduction.cu", all, "sm_90");
  INFO(ok.log);
  REQUIRE(ok.ok);

  for (const std::string name : {"VEC", "BLOCK_SIZE", "KAHAN", "DTYPE_ID"}) {
    std::vector<std::string> missing;
    for (const auto& o : all)
      if (o.rfind("-D" + name + "=", 0) != 0) missing.push_back(o);
    REQUIRE(missing.size() + 1 == all.size());
    cuda::CompileResult r = cuda::compile(s.source_text, s.headers, "reduction.cu", missing, "sm_90");
    INFO(name << ": " << r.log);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.log, Catch::Contains(name + " is not defined"));
  }
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
    std::vector<std::string> tuned = cuda::config_defines(c);
    for (const auto& o : a->compile_options(w)) tuned.push_back(o);
    if (std::string(wk) == "int32/bitor") {
      cuda::CompileResult t = cuda::compile(s.source_text, s.headers, "reduction.cu", tuned, "sm_80");
      INFO(t.log);
      CHECK(t.ok);
    }
  }
}
