// Adapter of the reduction family: workloads int32/float32/float64 x sum/min/max plus custom operators from
// the spec's family_options, seeded inputs, CPU reference, launch plans built from the spec's launch
// expressions, verification with an n-scaled tolerance for floating-point sums. See docs/reduction.md. Its parts:
// the workloads and custom operators (reduction_kind.cpp), the launch plans (reduction_plan.cpp), the inputs and
// references (reduction_reference.cpp).
#include "tuner/kernels/reduction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tuner/core/error.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/reduction_kind.hpp"
#include "tuner/kernels/registry.hpp"

namespace autotune::kernels {

namespace reduction {

float maxmag_norm2(Float3 v) {
  // Each intermediate is stored in a float so that every operation rounds to single precision.
  const float xx = v.x * v.x;
  const float yy = v.y * v.y;
  const float zz = v.z * v.z;
  const float xy = xx + yy;
  return xy + zz;
}

Float3 maxmag_combine(Float3 a, Float3 b) {
  const float na = maxmag_norm2(a), nb = maxmag_norm2(b);
  const bool take_b =
      nb > na || (nb == na && (b.x > a.x || (b.x == a.x && (b.y > a.y || (b.y == a.y && b.z > a.z)))));
  return take_b ? b : a;
}

double sum_tolerance(double factor, double eps, std::int64_t n, double max_abs) {
  return factor * eps * std::sqrt(static_cast<double>(std::max<std::int64_t>(n, 1))) * max_abs;
}

double dtype_epsilon(const std::string& dtype) {
  if (dtype == "float32") return static_cast<double>(std::numeric_limits<float>::epsilon());
  if (dtype == "float64") return std::numeric_limits<double>::epsilon();
  return 0;
}

}  // namespace reduction

namespace {

using reduction::Float3;
using reduction::detail::Elem;
using reduction::detail::Kind;
using reduction::detail::Op;

const char* const kRequiredParams[] = {"VARIANT", "BLOCK_SIZE", "ITEMS_PER_THREAD", "VEC",
                                       "BLOCKS_PER_SM", "FINAL", "KAHAN"};
const char* const kRequiredLaunches[] = {"reduce_pass", "reduce_final", "reduce_init", "reduce_reference_chunks",
                                         "reduce_reference_final"};

static_assert(sizeof(Float3) == 12, "Float3 must match CUDA's float3");

/// The reduction family's adapter. Immutable after construction: every method is const and thread-safe.
class ReductionAdapter : public KernelAdapter {
 public:
  explicit ReductionAdapter(TuningSpec s) : KernelAdapter(std::move(s)) {
    require_params(spec_, "reduction", kRequiredParams);
    for (const char* name : kRequiredLaunches)
      if (spec_.find_launch(name) == nullptr)
        throw SpecError("/launch", std::string("the reduction family needs a launch step named ") + name);
    if (spec_.problem_dims != std::vector<std::string>{"n"})
      throw SpecError("/problem/dims", "the reduction family has exactly one dimension, n");
    custom_ops_ = reduction::detail::parse_custom_ops(spec_.family_options_json);
    check_workloads(spec_, [this](const Workload& w) { kind(w); });
  }

  std::vector<std::string> compile_options(const Workload& w) const override {
    const Kind k = kind(w);
    std::vector<std::string> out;
    out.push_back("-DDTYPE_ID=" + std::to_string(static_cast<int>(k.elem)));
    out.push_back("-DOP_ID=" + std::to_string(static_cast<int>(k.op)));
    if (k.custom != nullptr) {
      if (k.elem == Elem::vector) out.push_back("-DCUSTOM_T=" + k.custom->dtype);
      out.push_back("-DCUSTOM_COMBINE(a,b)=" + k.custom->combine);
      out.push_back("-DCUSTOM_IDENTITY=" + k.custom->identity);
      if (!k.custom->prelude.empty()) out.push_back("-DCUSTOM_PRELUDE=" + k.custom->prelude);
    }
    return out;
  }

  LaunchPlan plan(const Config& c, const Workload& w, const ProblemKey& p, const DeviceInfo& d) const override {
    const Kind k = kind(w);
    const std::int64_t n = problem_n(p);
    return reduction::detail::reduction_plan(spec_, k, c, w, p, d, n);
  }

  HostBuffers make_inputs(const Workload& w, const ProblemKey& p, std::uint64_t seed) const override {
    const Kind k = kind(w);
    return reduction::detail::make_reduction_inputs(k, problem_n(p), seed);
  }

  /// The built-in operators' inputs (int32, float32, float64): their references need only the chunk summaries.
  std::vector<DrawRecipe> device_draws(const Workload& w, const ProblemKey& p, std::uint64_t seed) const override {
    const Kind k = kind(w);
    if (k.custom != nullptr || k.elem == Elem::vector) return {};
    return reduction::detail::reduction_draws(k, problem_n(p), seed);
  }

  std::optional<HostBuffers> reference_of_draws(const DrawSummaries& summaries, const Workload& w,
                                                const ProblemKey& p) const override {
    const Kind k = kind(w);
    const auto count = static_cast<std::size_t>(problem_n(p));
    auto it = summaries.find("in");
    if (k.custom != nullptr || k.elem == Elem::vector) return std::nullopt;
    if (it == summaries.end() || it->second.size() != (count + kChunkElements - 1) / kChunkElements)
      throw UsageError("reduction reference: the summaries of input 'in' do not cover n elements");
    return reduction::detail::reference_from_draws(k, it->second, count, w, spec_.tolerance);
  }

  std::optional<HostBuffers> reference(const HostBuffers& inputs, const Workload& w,
                                       const ProblemKey& p) const override {
    const Kind k = kind(w);
    const std::int64_t n = problem_n(p);
    if (k.custom != nullptr && k.custom->cpu_reference.empty()) return std::nullopt;  // reference kernels
    auto it = inputs.find("in");
    if (it == inputs.end() || it->second.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(k.size))
      throw UsageError("reduction reference: input buffer 'in' is missing or does not hold n elements");
    return reduction::detail::cpu_reference(k, it->second, static_cast<std::size_t>(n), w, spec_.tolerance);
  }

  std::optional<LaunchPlan> reference_plan(const Workload& w, const ProblemKey& p,
                                           const DeviceInfo& d) const override {
    const Kind k = kind(w);
    if (k.custom == nullptr || !k.custom->cpu_reference.empty()) return std::nullopt;
    return reduction::detail::reference_kernels_plan(spec_, k, w, p, d, problem_n(p));
  }

  /// The kernel source with AUTOTUNE_REFERENCE_ONLY defined, so that strict mode does not ask for the
  /// tunable macros (the reference kernels read none; the tuned ones compile at their defaults).
  std::string reference_source() const override {
    return "#define AUTOTUNE_REFERENCE_ONLY 1\n" + spec_.source_text;
  }

  std::string verify(const HostBuffers& outputs, const HostBuffers& expected, const Workload& w,
                     const ProblemKey& p) const override {
    const Kind k = kind(w);
    auto got_it = outputs.find("out");
    if (got_it == outputs.end()) return "output 'out' is missing";
    const std::vector<unsigned char>& got = got_it->second;
    if (got.size() != static_cast<std::size_t>(k.size))
      return "output 'out' has " + std::to_string(got.size()) + " bytes, expected " + std::to_string(k.size);
    const std::string where = " (" + w.key() + ", " + p.key() + ")";

    if (k.float_sum() && k.custom == nullptr) {
      auto ref_it = expected.find("reference");
      auto tol_it = expected.find("tolerance");
      if (ref_it == expected.end() || tol_it == expected.end() || ref_it->second.size() != 8 ||
          tol_it->second.size() != 8)
        return "expected values lack the float-sum reference and tolerance";
      const double ref = load_element<double>(ref_it->second, 0);
      const double tol = load_element<double>(tol_it->second, 0);
      const double value = k.elem == Elem::float32 ? static_cast<double>(load_element<float>(got, 0))
                                                   : load_element<double>(got, 0);
      const double err = std::fabs(value - ref);
      if (err <= tol) return "";  // false for NaN
      return "sum = " + format_number(value) + " but expected " + format_number(ref) + " (|error| " +
             format_number(err) + " > tolerance " + format_number(tol) + ")" + where;
    }

    auto exp_it = expected.find("out");
    if (exp_it == expected.end() || exp_it->second.size() != got.size()) return "expected value 'out' is missing";
    if (got == exp_it->second) return "";
    return "result " + reduction::detail::describe(k, got) + " but expected " +
           reduction::detail::describe(k, exp_it->second) + where;
  }

  /// The same comparisons as verify(), for the comparison kernels: the float sum within the n-scaled
  /// tolerance, every other result (selections, integer sums, custom operators) bit-exact.
  std::vector<OutputCheck> checks(const HostBuffers&, const Workload& w, const ProblemKey&) const override {
    const Kind k = kind(w);
    OutputCheck c;
    c.output = "out";
    c.count = 1;
    c.floating = k.elem == Elem::float32 || k.elem == Elem::float64;
    if (k.float_sum() && k.custom == nullptr) {
      c.kind = OutputCheck::Kind::abs_tolerance;
      c.expected = "reference";
      c.tolerance = "tolerance";
      c.element_bytes = static_cast<std::uint32_t>(k.size);
    } else {
      c.kind = OutputCheck::Kind::bits;
      c.expected = "out";
      c.element_bytes = static_cast<std::uint32_t>(k.size);
    }
    return {c};
  }

  double bytes_moved(const Workload& w, const ProblemKey& p) const override {
    const Kind k = kind(w);
    const std::int64_t n = problem_n(p);
    if (spec_.bytes_moved) {
      return static_cast<double>(eval_expr(*spec_.bytes_moved, spec_.default_config(), p, DeviceInfo{}, w));
    }
    return static_cast<double>(n) * k.size;
  }

 private:
  std::vector<reduction::detail::CustomOp> custom_ops_;

  /// Classifies a workload; throws UsageError if the spec does not list it or it is not supported.
  Kind kind(const Workload& w) const { return reduction::detail::classify(spec_, custom_ops_, w); }

  /// n from the problem; UsageError unless n >= 1.
  std::int64_t problem_n(const ProblemKey& p) const {
    spec_.check_problem(p);
    const std::int64_t n = p.at("n");
    if (n < 1) throw UsageError("n must be at least 1");
    return n;
  }
};

}  // namespace

std::shared_ptr<const KernelAdapter> make_reduction_adapter(const TuningSpec& spec) {
  return std::make_shared<ReductionAdapter>(spec);
}

}  // namespace autotune::kernels
