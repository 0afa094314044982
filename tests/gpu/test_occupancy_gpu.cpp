// tuner/cuda/occupancy.cpp on a real GPU: the driver's occupancy for the reduction's main kernel, checked
// against the static limits (the driver can only be stricter: registers and static shared memory count too),
// and a short `explore` sweep on the CUDA backend that reports driver occupancy. Needs a GPU.
#include <catch2/catch.hpp>

#include "tuner/core/error.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/explore/explore.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

std::vector<std::string> options_for(const KernelAdapter& a, const Workload& w, const Config& c) {
  std::vector<std::string> o = a.compile_options(w);
  for (auto& s : cuda::config_defines(c)) o.push_back(std::move(s));
  return o;
}

}  // namespace

TEST_CASE("occupancy: the driver's figure for reduce_pass is within the static limits", "[gpu][occupancy]") {
  DeviceInfo dev = cuda::list_devices().front();
  TuningSpec spec = specs::builtin_spec("reduction");
  auto adapter = kernels::make_adapter(spec);
  Workload w = Workload::parse("float32/sum");
  const std::string arch = "sm_" + std::to_string(dev.cc);
  for (Value bs : {64, 256, 1024}) {
    Config c = spec.default_config();
    c.set("BLOCK_SIZE", bs);
    c.set("BLOCKS_PER_SM", 1);
    cuda::CompileResult cr = cuda::compile(spec.source_text, spec.headers, "reduction.cu", options_for(*adapter, w, c), arch);
    INFO(cr.log);
    REQUIRE(cr.ok);
    const std::uint32_t smem = static_cast<std::uint32_t>(4 * bs / 32);
    int blocks = cuda::max_active_blocks_per_sm(cr, "reduce_pass", static_cast<int>(bs), smem);
    explore::Occupancy theory = explore::theoretical_occupancy(dev, bs, smem);
    INFO("block " << bs << ": driver " << blocks << ", theoretical " << theory.blocks_per_sm);
    CHECK(blocks >= 1);
    if (theory.source == explore::Occupancy::Source::theoretical) CHECK(blocks <= theory.blocks_per_sm);
  }
  Config c = spec.default_config();
  cuda::CompileResult cr = cuda::compile(spec.source_text, spec.headers, "reduction.cu", options_for(*adapter, w, c), arch);
  REQUIRE(cr.ok);
  CHECK_THROWS_AS(cuda::max_active_blocks_per_sm(cr, "no_such_kernel", 256, 0), UsageError);
  CHECK_THROWS_AS(cuda::max_active_blocks_per_sm(cr, "reduce_pass", 0, 0), UsageError);
  cuda::CompileResult failed;
  CHECK_THROWS_AS(cuda::max_active_blocks_per_sm(failed, "reduce_pass", 256, 0), UsageError);
}

TEST_CASE("occupancy: explore on the CUDA backend reports driver occupancy and stores trials", "[gpu][occupancy][explore]") {
  TuningSpec spec = specs::builtin_spec("reduction");
  auto adapter = kernels::make_adapter(spec);
  Workload w = Workload::parse("float32/sum");
  ProblemKey p = ProblemKey::parse("n=16777216");
  cuda::TimingOptions to;
  to.samples = 7;
  cuda::CudaBackend be(adapter, to);
  DeviceInfo dev = be.device();
  explore::SweepRequest req;
  req.block_sizes = {256, 1024};
  req.blocks_per_sm = {1, 2, 4};
  explore::SweepPlan plan = explore::plan_sweep(spec, p, dev, w, req, std::nullopt,
                                                [&](const Config& c) { return adapter->plan(c, w, p, dev); });
  auto db = db::Database::open(":memory:");
  explore::ExploreOptions opt;
  opt.bytes_moved = adapter->bytes_moved(w, p);
  const std::string arch = "sm_" + std::to_string(dev.cc);
  opt.driver_occupancy = [&](const explore::SweepPoint& pt) -> std::optional<int> {
    cuda::CompileResult cr = cuda::compile(spec.source_text, spec.headers, "reduction.cu", options_for(*adapter, w, pt.config), arch);
    if (!cr.ok) return std::nullopt;
    return cuda::max_active_blocks_per_sm(cr, pt.kernel, static_cast<int>(pt.block_threads), pt.shared_bytes);
  };
  explore::ExploreResult r = explore::run_explore(spec, be, *db, w, p, plan, opt);
  CHECK(r.evaluated == 5);  // 1024 x 4 is excluded by the spec
  CHECK(r.verdict.measured == 5);
  for (const auto& pr : r.points) {
    if (!pr.point.valid) continue;
    CHECK(pr.state == "ok");
    CHECK(pr.occupancy.source == explore::Occupancy::Source::driver);
    CHECK(pr.gbps > 0);
    CHECK(pr.pct_copy > 0);
  }
  WARN(explore::format_report(r));
}
