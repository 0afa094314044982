// The compaction kernel compiles with NVRTC to CUBIN for sm_80 and sm_90 in strict mode: both variants at
// their default and corner configurations (smallest and largest tile, both output modes, a block size that
// is not a power of two) for every workload of the shipped spec; missing macros fail. No GPU needed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;

namespace {

bool contains_bytes(const std::vector<unsigned char>& hay, const std::string& needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

Config config(Value variant, Value block, Value items, Value stage, Value min_threads = 0, Value streaming = 0) {
  return Config({{"VARIANT", variant}, {"BLOCK_SIZE", block}, {"ITEMS_PER_THREAD", items}, {"STAGE_OUTPUT", stage},
                 {"LOOKBACK_DELAY", 0}, {"MIN_THREADS_PER_SM", min_threads}, {"STREAMING", streaming}, {"CLEAR_STATE", 0}});
}

std::vector<std::string> all_options(const KernelAdapter& a, const Config& c, const Workload& w) {
  std::vector<std::string> options = cuda::config_defines(c);
  for (const auto& o : a.compile_options(w)) options.push_back(o);
  return options;
}

}  // namespace

TEST_CASE("compaction compiles for every workload, variant and corner in strict mode", "[nvrtc][compaction]") {
  const TuningSpec s = specs::builtin_spec("compaction");
  auto a = kernels::make_compaction_adapter(s);
  struct Job {
    std::string label;
    std::vector<std::string> options;
    std::string arch;
  };
  std::vector<Job> jobs;
  for (const auto& w : s.workloads) {
    const ParameterSpace space = s.space(s.problem_sizes.front(), sim::SyntheticBackend::fake_device(), w);
    for (Value v : {0, 1, 2}) {
      Config def = s.default_config();
      def.set("VARIANT", v);
      // Default, smallest tile, largest tile (direct and the largest staged one), odd shapes; the blocked
      // variant needs ITEMS_PER_THREAD % 4 == 0. Single pass: also with the register caps of
      // MIN_THREADS_PER_SM (2048: 32 registers per thread).
      const Value i1 = v == 2 ? 4 : 1, i3 = v == 2 ? 4 : 3;
      std::vector<Config> configs = {def, config(v, 64, i1, 0), config(v, 64, i1, 1), config(v, 1024, 16, 0),
                                     config(v, 1024, 8, 1), config(v, 192, i3, 1), config(v, 768, 12, 0)};
      if (v >= 1) {
        configs.push_back(config(v, 512, 16, 1, 2048));
        configs.push_back(config(v, 256, 8, 0, 1536));
        if (v == 2) {  // evict-first hints, staged and direct output
          configs.push_back(config(v, 512, 16, 1, 2048, 1));
          configs.push_back(config(v, 256, 8, 0, 1536, 1));
        }
      }
      for (const Config& c : configs) {
        REQUIRE(space.is_valid(c));
        for (const char* arch : {"sm_80", "sm_90"})
          jobs.push_back({w.key() + " " + c.str(&s.params), all_options(*a, c, w), arch});
      }
    }
  }
  std::vector<std::string> failures;
  std::mutex mu;
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, std::min(4u, std::thread::hardware_concurrency())); ++t) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < jobs.size(); i = next++) {
        const cuda::CompileResult r = cuda::compile(s.source_text, s.headers, "compaction.cu", jobs[i].options, jobs[i].arch);
        std::string problem = r.ok ? "" : r.log.substr(0, 2000);
        for (const auto& k : s.kernels)
          if (r.ok && !contains_bytes(r.cubin, k)) problem += "entry point " + k + " missing; ";
        if (!problem.empty()) {
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back(jobs[i].label + " [" + jobs[i].arch + "]: " + problem);
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  INFO(jobs.size() << " compilations");
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
}

TEST_CASE("compaction compiles alone at its defaults", "[nvrtc][compaction]") {
  const TuningSpec s = specs::builtin_spec("compaction");
  const cuda::CompileResult r = cuda::compile(s.source_text, s.headers, "compaction.cu", {}, "sm_90");
  INFO(r.log);
  CHECK(r.ok);
}

TEST_CASE("compaction strict mode rejects a missing macro", "[nvrtc][compaction]") {
  const TuningSpec s = specs::builtin_spec("compaction");
  auto a = kernels::make_compaction_adapter(s);
  const std::vector<std::string> all = all_options(*a, s.default_config(), s.workloads.front());
  const cuda::CompileResult ok = cuda::compile(s.source_text, s.headers, "compaction.cu", all, "sm_90");
  INFO(ok.log);
  REQUIRE(ok.ok);
  for (const std::string name : {"VARIANT", "BLOCK_SIZE", "ITEMS_PER_THREAD", "STAGE_OUTPUT", "DTYPE_ID", "SELECT_IF"}) {
    std::vector<std::string> missing;
    for (const auto& o : all)
      if (o.rfind("-D" + name + "=", 0) != 0) missing.push_back(o);
    REQUIRE(missing.size() + 1 == all.size());
    const cuda::CompileResult r = cuda::compile(s.source_text, s.headers, "compaction.cu", missing, "sm_90");
    INFO(name << ": " << r.log);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.log, Catch::Contains(name + " is not defined"));
  }
}
