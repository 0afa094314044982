// Launch plans of the reduction family, from the spec's launch expressions: the tuned kernels' passes and the
// reference kernels. See tuner/kernels/reduction_kind.hpp and docs/reduction.md.
#include <limits>
#include <string>
#include <utility>

#include "tuner/core/error.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/reduction_kind.hpp"

namespace autotune::kernels::reduction::detail {

namespace {

/// Evaluates a launch spec into a step (geometry and shared memory; arguments are filled by the caller).
LaunchStep launch_step(const LaunchSpec& l, const Config& c, const ProblemKey& p, const DeviceInfo& d,
                       const Workload& w) {
  LaunchStep s;
  s.kind = LaunchStep::Kind::kernel;
  s.kernel = l.kernel;
  const Expr* dims[6] = {&l.grid_x, &l.grid_y, &l.grid_z, &l.block_x, &l.block_y, &l.block_z};
  for (int i = 0; i < 6; ++i) {
    const std::int64_t v = eval_expr(*dims[i], c, p, d, w);
    const std::int64_t limit = i == 0 ? 2147483647 : 65535;
    if (v < 1 || v > limit)
      throw UsageError("launch " + l.name + ": " + (i < 3 ? "grid" : "block") + " dimension " + dims[i]->text() +
                       " = " + std::to_string(v) + " is out of range (" + p.key() + ")");
    (i < 3 ? s.grid : s.block)[i % 3] = static_cast<std::uint32_t>(v);
  }
  const std::int64_t shared = eval_expr(l.shared_bytes, c, p, d, w);
  if (shared < 0 || shared > std::numeric_limits<std::uint32_t>::max())
    throw UsageError("launch " + l.name + ": shared memory " + std::to_string(shared) + " bytes is out of range");
  s.shared_bytes = static_cast<std::uint32_t>(shared);
  return s;
}

ProblemKey with_n(std::int64_t m) {
  ProblemKey p;
  p.dims["n"] = m;
  return p;
}

/// The steps of one config's plan: the spec's launch expressions evaluated for one workload and device.
class PassSteps {
 public:
  PassSteps(const TuningSpec& spec, const Config& c, const Workload& w, const DeviceInfo& d)
      : spec_(spec), c_(c), w_(w), d_(d) {}

  /// Blocks of reduce_pass over m elements (the spec's grid expression evaluated with n = m).
  std::int64_t grid(std::int64_t m) const {
    return launch_step(*spec_.find_launch("reduce_pass"), c_, with_n(m), d_, w_).grid[0];
  }

  LaunchStep pass(const std::string& src, std::size_t src_offset, const std::string& dst, std::size_t dst_offset,
                  std::int64_t m) const {
    LaunchStep s = launch_step(*spec_.find_launch("reduce_pass"), c_, with_n(m), d_, w_);
    s.args = {KernelArg::buf(src, src_offset), KernelArg::buf(dst, dst_offset), KernelArg::u64(m)};
    return s;
  }

  LaunchStep final_pass(const ProblemKey& p, std::int64_t count) const {
    LaunchStep s = launch_step(*spec_.find_launch("reduce_final"), c_, p, d_, w_);
    s.args = {KernelArg::buf("partials"), KernelArg::buf("out"), KernelArg::u64(count)};
    return s;
  }

  /// Sets out[0] to the operator's identity before atomic combination: a memset32 where the identity is one
  /// repeated 32-bit word (int32, float32, float64 sum: 0, +-inf, INT_MAX/INT_MIN), else reduce_init.
  LaunchStep init(const Kind& k, const ProblemKey& p) const {
    LaunchStep s = LaunchStep::fill32("out", 0, static_cast<std::size_t>(k.size) / 4);
    if (k.op == Op::sum && k.custom == nullptr) return s;
    if (k.custom == nullptr && k.elem == Elem::int32) {
      s.value = k.op == Op::min ? 0x7fffffffu : 0x80000000u;
      return s;
    }
    if (k.custom == nullptr && k.elem == Elem::float32) {
      s.value = k.op == Op::min ? 0x7f800000u : 0xff800000u;  // +inf, -inf
      return s;
    }
    LaunchStep init = launch_step(*spec_.find_launch("reduce_init"), c_, p, d_, w_);
    init.args = {KernelArg::buf("out")};
    return init;
  }

 private:
  const TuningSpec& spec_;
  const Config& c_;
  const Workload& w_;
  const DeviceInfo& d_;
};

/// Variants 0-5 (the lecture): reduce_pass again over the partials until one block remains. Partials alternate
/// between region A (offset 0, g0 elements) and region B (g1 elements).
void lecture_passes(const PassSteps& steps, std::size_t es, std::int64_t n, std::int64_t g0, LaunchPlan& plan) {
  const std::int64_t g1 = steps.grid(g0);
  const std::size_t offset_b = align_up(static_cast<std::size_t>(g0) * es, kRegionAlign);
  const std::size_t partial_bytes =
      g1 > 1 ? offset_b + static_cast<std::size_t>(g1) * es : static_cast<std::size_t>(g0) * es;
  plan.buffers.push_back({"partials", partial_bytes, BufferRole::scratch});
  std::string src = "in";
  std::size_t src_offset = 0;
  std::size_t region = 0;  // byte offset of the next destination region
  std::int64_t m = n;
  for (;;) {
    const std::int64_t g = steps.grid(m);
    if (g == 1) {
      plan.steps.push_back(steps.pass(src, src_offset, "out", 0, m));
      break;
    }
    if (g >= m)
      throw SpecError("/launch", "grid of reduce_pass does not shrink the problem (n=" + std::to_string(m) + " gives " +
                                     std::to_string(g) + " blocks)");
    plan.steps.push_back(steps.pass(src, src_offset, "partials", region, m));
    src = "partials";
    src_offset = region;
    region = region == 0 ? offset_b : 0;
    m = g;
  }
}

}  // namespace

LaunchPlan reduction_plan(const TuningSpec& spec, const Kind& k, const Config& c, const Workload& w,
                          const ProblemKey& p, const DeviceInfo& d, std::int64_t n) {
  const PassSteps steps(spec, c, w, d);
  const std::size_t es = static_cast<std::size_t>(k.size);
  const bool atomic = c.at("FINAL") != 0;
  const bool lecture = c.at("VARIANT") < 6;

  LaunchPlan plan;
  plan.buffers.push_back({"in", static_cast<std::size_t>(n) * es, BufferRole::input});
  plan.buffers.push_back({"out", es, BufferRole::output});

  if (atomic) {  // one pass; every block combines its result into out[0], initialised to the identity
    plan.steps.push_back(steps.init(k, p));
    plan.steps.push_back(steps.pass("in", 0, "out", 0, n));
    return plan;
  }

  const std::int64_t g0 = steps.grid(n);
  if (g0 == 1) {  // a single block reduces everything straight into out[0]
    plan.steps.push_back(steps.pass("in", 0, "out", 0, n));
    return plan;
  }
  if (!lecture) {  // variants 6, 7: one pass into g0 partials, then reduce_final with one block
    plan.buffers.push_back({"partials", static_cast<std::size_t>(g0) * es, BufferRole::scratch});
    plan.steps.push_back(steps.pass("in", 0, "partials", 0, n));
    plan.steps.push_back(steps.final_pass(p, g0));
    return plan;
  }
  lecture_passes(steps, es, n, g0, plan);
  return plan;
}

LaunchPlan reference_kernels_plan(const TuningSpec& spec, const Kind& k, const Workload& w, const ProblemKey& p,
                                  const DeviceInfo& d, std::int64_t n) {
  const std::size_t es = static_cast<std::size_t>(k.size);
  const Config c = spec.default_config();
  const LaunchSpec& chunks = *spec.find_launch("reduce_reference_chunks");
  const LaunchSpec& fin = *spec.find_launch("reduce_reference_final");
  LaunchStep s1 = launch_step(chunks, c, p, d, w);
  const std::int64_t threads =
      static_cast<std::int64_t>(s1.grid[0]) * s1.grid[1] * s1.grid[2] * s1.block[0] * s1.block[1] * s1.block[2];
  const std::int64_t chunk = (n + threads - 1) / threads;
  LaunchPlan plan;
  plan.buffers.push_back({"in", static_cast<std::size_t>(n) * es, BufferRole::input});
  plan.buffers.push_back({"ref_partials", static_cast<std::size_t>(threads) * es, BufferRole::scratch});
  plan.buffers.push_back({"out", es, BufferRole::output});
  s1.args = {KernelArg::buf("in"), KernelArg::buf("ref_partials"), KernelArg::u64(n), KernelArg::u64(chunk)};
  LaunchStep s2 = launch_step(fin, c, p, d, w);
  s2.args = {KernelArg::buf("ref_partials"), KernelArg::buf("out"), KernelArg::u64(threads)};
  plan.steps.push_back(std::move(s1));
  plan.steps.push_back(std::move(s2));
  return plan;
}

}  // namespace autotune::kernels::reduction::detail
