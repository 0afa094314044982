// The compaction kernel compiles with NVRTC to CUBIN for sm_80 and sm_90 in strict mode: every variant at
// their default and corner configurations (smallest and largest tile, both output modes, a block size that
// is not a power of two) for every workload of the shipped spec; single_pass_bulk also for sm_75, through its
// fallback without bulk copies; missing macros and invalid configurations fail. No GPU needed.
#include <catch2/catch.hpp>

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

Config config(Value variant, Value block, Value items, Value stage, Value min_threads = 0, Value streaming = 0) {
  return Config({{"VARIANT", variant}, {"BLOCK_SIZE", block}, {"ITEMS_PER_THREAD", items}, {"STAGE_OUTPUT", stage},
                 {"LOOKBACK_DELAY", 0}, {"MIN_THREADS_PER_SM", min_threads}, {"STREAMING", streaming}, {"CLEAR_STATE", 0}});
}

}  // namespace

TEST_CASE("compaction compiles for every workload, variant and corner in strict mode", "[nvrtc][compaction]") {
  const TuningSpec s = specs::builtin_spec("compaction");
  auto a = kernels::make_compaction_adapter(s);
  std::vector<CompileJob> jobs;
  for (const auto& w : s.workloads) {
    const ParameterSpace space = s.space(s.problem_sizes.front(), sim::SyntheticBackend::fake_device(), w);
    for (Value v : {0, 1, 2, 3}) {
      Config def = s.default_config();
      def.set("VARIANT", v);
      if (!space.is_valid(def)) def = config(v, 256, 8, 1);  // the default's 64 items: the bulk variant's only
      // Default, smallest tile, largest tile (direct and the largest staged one), odd shapes; the blocked and
      // bulk variants need ITEMS_PER_THREAD % 4 == 0 (sm_80: the bulk variant's fallback without bulk copies). Single
      // pass: also with the register caps of MIN_THREADS_PER_SM (2048: 32 registers per thread).
      const Value i1 = v >= 2 ? 4 : 1, i3 = v >= 2 ? 4 : 3, big = v == 3 ? 512 : 1024;
      std::vector<Config> configs = {def,
                                     config(v, 64, i1, 0),
                                     config(v, 64, i1, 1),
                                     config(v, big, 16, 0),
                                     config(v, 1024, 8, 1),
                                     config(v, 192, i3, 1),
                                     config(v, 768, 12, 0)};
      if (v >= 1) {
        configs.push_back(config(v, 512, 16, 1, 2048));
        configs.push_back(config(v, 256, 8, 0, 1536));
        if (v >= 2) {  // evict-first hints, staged and direct output
          configs.push_back(config(v, 512, 16, 1, 2048, 1));
          configs.push_back(config(v, 256, 8, 0, 1536, 1));
        }
      }
      if (v == 3) {  // tiles in dynamic shared memory beyond 48 KiB: 1024 threads with 32, 44 and 56 items (the
                     // largest tile, 224 KiB of values, its flags in registers), 768 with 60 and 64, 512 with 64, a
                     // capped 64 items
        configs.push_back(config(v, 1024, 32, 1));
        configs.push_back(config(v, 1024, 44, 0));
        configs.push_back(config(v, 1024, 56, 1));
        configs.push_back(config(v, 768, 60, 1));
        configs.push_back(config(v, 768, 64, 0));
        configs.push_back(config(v, 512, 64, 0));
        configs.push_back(config(v, 256, 64, 1, 2048, 1));
      }
      for (const Config& c : configs) {
        REQUIRE(space.is_valid(c));
        add_jobs(jobs, s, w, c, strict_options(*a, c, w));
      }
    }
  }
  check_all_compile(s, "compaction.cu", jobs);
}

TEST_CASE("compaction single_pass_bulk compiles for sm_75 without its bulk copies, every workload",
          "[nvrtc][compaction]") {
  // sm_75 has no bulk copies and no mbarrier (ptxas rejects them there): the variant compiles only if the threads
  // load the tile themselves. Each output mode at the smallest and largest tile and with a register cap.
  const TuningSpec s = specs::builtin_spec("compaction");
  auto a = kernels::make_compaction_adapter(s);
  std::vector<CompileJob> jobs;
  for (const auto& w : s.workloads) {
    const ParameterSpace space = s.space(s.problem_sizes.front(), sim::SyntheticBackend::fake_device(), w);
    for (const Config& c :
         {config(3, 64, 4, 0), config(3, 512, 16, 1), config(3, 256, 8, 0, 2048, 1), config(3, 512, 64, 1)}) {
      REQUIRE(space.is_valid(c));
      jobs.push_back({w.key() + " " + c.str(&s.params), strict_options(*a, c, w), "sm_75"});
    }
  }
  check_all_compile(s, "compaction.cu", jobs);
}

TEST_CASE("compaction single_pass_bulk rejects tiles of partial vectors and a look-back delay", "[nvrtc][compaction]") {
  const TuningSpec s = specs::builtin_spec("compaction");
  auto a = kernels::make_compaction_adapter(s);
  const Workload w = Workload::parse("int32/flagged");
  Config odd = config(3, 256, 6, 1);  // rows of 16-byte vectors: 4 int32 each
  const cuda::CompileResult items =
      cuda::compile(s.source_text, s.headers, "compaction.cu", strict_options(*a, odd, w), "sm_90");
  CHECK_FALSE(items.ok);
  CHECK_THAT(items.log, Catch::Contains("single_pass_bulk: ITEMS_PER_THREAD"));
  Config delayed = config(3, 256, 8, 1);
  delayed.set("LOOKBACK_DELAY", 64);
  const cuda::CompileResult delay =
      cuda::compile(s.source_text, s.headers, "compaction.cu", strict_options(*a, delayed, w), "sm_90");
  CHECK_FALSE(delay.ok);
  CHECK_THAT(delay.log, Catch::Contains("single_pass_bulk: LOOKBACK_DELAY"));
}

TEST_CASE("compaction compiles alone at its defaults", "[nvrtc][compaction]") {
  check_compiles_at_defaults(specs::builtin_spec("compaction"), "compaction.cu");
}

TEST_CASE("compaction strict mode rejects a missing macro", "[nvrtc][compaction]") {
  const TuningSpec s = specs::builtin_spec("compaction");
  auto a = kernels::make_compaction_adapter(s);
  const std::vector<std::string> all = strict_options(*a, s.default_config(), s.workloads.front());
  check_missing_macros(s, "compaction.cu", all,
                       {"VARIANT", "BLOCK_SIZE", "ITEMS_PER_THREAD", "STAGE_OUTPUT", "DTYPE_ID", "SELECT_IF"});
}
