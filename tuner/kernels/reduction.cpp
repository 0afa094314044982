// Adapter of the reduction family: workloads int32/float32/float64 x sum/min/max plus custom operators from
// the spec's family_options, seeded inputs, CPU reference, launch plans built from the spec's launch
// expressions, verification with an n-scaled tolerance for floating-point sums. See docs/reduction.md.
#include "tuner/kernels/reduction.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tuner/core/error.hpp"
#include "tuner/kernels/host_util.hpp"
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

using json = nlohmann::json;
using reduction::Float3;

static_assert(sizeof(Float3) == 12, "Float3 must match CUDA's float3");

enum class Op { sum, min, max, custom };
// Matches DTYPE_ID in reduction.cu (vector dtypes are DTYPE_ID 3 with CUSTOM_T).
enum class Elem { int32 = 0, float32 = 1, float64 = 2, vector = 3 };

/// A user-defined associative operator from family_options.custom_ops.
struct CustomOp {
  std::string name;
  std::string dtype;
  std::string combine;        // C++ expression over a and b
  std::string identity;       // C++ expression
  std::string prelude;        // device declarations (optional)
  std::string cpu_reference;  // "" = verified against the reference kernels; "maxmag" = CPU implementation
};

/// Everything the adapter needs to know about one workload.
struct Kind {
  Elem elem = Elem::float32;
  Op op = Op::sum;
  int size = 4;                     // bytes per element
  int components = 1;               // scalars per element (float2/3/4)
  const CustomOp* custom = nullptr;
  bool float_sum() const { return op == Op::sum && (elem == Elem::float32 || elem == Elem::float64); }
};

const char* const kRequiredParams[] = {"VARIANT", "BLOCK_SIZE", "ITEMS_PER_THREAD", "VEC",
                                       "BLOCKS_PER_SM", "FINAL", "KAHAN"};
const char* const kRequiredLaunches[] = {"reduce_pass", "reduce_final", "reduce_init", "reduce_reference_chunks",
                                         "reduce_reference_final"};

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string custom_string(const json& op, const std::string& ptr, const char* key, bool required) {
  if (!op.contains(key)) {
    if (required) throw SpecError(ptr, std::string("custom operator needs \"") + key + "\"");
    return {};
  }
  const json& v = op.at(key);
  if (!v.is_string()) throw SpecError(ptr + "/" + key, "expected a string");
  std::string s = v.get<std::string>();
  if (s.find_first_of("\n\r") != std::string::npos)
    throw SpecError(ptr + "/" + key, "must be a single line (it is passed to NVRTC as a -D macro)");
  if (required && s.find_first_not_of(" \t") == std::string::npos)
    throw SpecError(ptr + "/" + key, "must not be empty");
  return s;
}

std::vector<CustomOp> parse_custom_ops(const std::string& family_options_json) {
  json fo;
  try {
    fo = json::parse(family_options_json);
  } catch (const json::parse_error& e) {
    throw SpecError("/family_options", std::string("malformed JSON: ") + e.what());
  }
  std::vector<CustomOp> out;
  if (!fo.is_object()) throw SpecError("/family_options", "expected an object");
  for (auto it = fo.begin(); it != fo.end(); ++it)
    if (it.key() != "custom_ops" && it.key() != "$comment")
      throw SpecError("/family_options/" + it.key(), "unknown key (the reduction family knows \"custom_ops\")");
  if (!fo.contains("custom_ops")) return out;
  const json& ops = fo["custom_ops"];
  if (!ops.is_array()) throw SpecError("/family_options/custom_ops", "expected an array of operators");
  std::set<std::string> names;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string ptr = "/family_options/custom_ops/" + std::to_string(i);
    const json& o = ops[i];
    if (!o.is_object()) throw SpecError(ptr, "expected an object");
    for (auto it = o.begin(); it != o.end(); ++it) {
      static const std::set<std::string> known = {"name", "dtype", "combine", "identity", "prelude",
                                                  "cpu_reference", "description", "$comment"};
      if (!known.count(it.key())) throw SpecError(ptr + "/" + it.key(), "unknown key");
    }
    CustomOp op;
    op.name = custom_string(o, ptr, "name", true);
    if (!is_identifier(op.name)) throw SpecError(ptr + "/name", "'" + op.name + "' is not an identifier");
    if (op.name == "sum" || op.name == "min" || op.name == "max")
      throw SpecError(ptr + "/name", "'" + op.name + "' is a built-in operator");
    if (!names.insert(op.name).second) throw SpecError(ptr + "/name", "duplicate operator '" + op.name + "'");
    op.dtype = custom_string(o, ptr, "dtype", true);
    static const std::set<std::string> dtypes = {"int32", "float32", "float64", "float2", "float3", "float4"};
    if (!dtypes.count(op.dtype))
      throw SpecError(ptr + "/dtype", "unsupported dtype '" + op.dtype +
                                          "' (custom operators: int32, float32, float64, float2, float3, float4)");
    op.combine = custom_string(o, ptr, "combine", true);
    op.identity = custom_string(o, ptr, "identity", true);
    op.prelude = custom_string(o, ptr, "prelude", false);
    op.cpu_reference = custom_string(o, ptr, "cpu_reference", false);
    if (!op.cpu_reference.empty()) {
      if (op.cpu_reference != "maxmag")
        throw SpecError(ptr + "/cpu_reference", "unknown CPU reference '" + op.cpu_reference + "' (known: maxmag)");
      if (op.dtype != "float3") throw SpecError(ptr + "/cpu_reference", "the maxmag CPU reference needs dtype float3");
    }
    if (o.contains("description") && !o["description"].is_string())
      throw SpecError(ptr + "/description", "expected a string");
    out.push_back(std::move(op));
  }
  return out;
}

template <typename T>
T combine_builtin(Op op, T a, T b) {
  switch (op) {
    case Op::min: return b < a ? b : a;
    case Op::max: return a < b ? b : a;
    default: return a + b;
  }
}

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
    custom_ops_ = parse_custom_ops(spec_.family_options_json);
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
    const std::size_t es = static_cast<std::size_t>(k.size);
    const bool atomic = c.at("FINAL") != 0;
    const bool lecture = c.at("VARIANT") < 6;

    LaunchPlan plan;
    plan.buffers.push_back({"in", static_cast<std::size_t>(n) * es, BufferRole::input});
    plan.buffers.push_back({"out", es, BufferRole::output});

    if (atomic) {  // one pass; every block combines its result into out[0], initialised to the identity
      plan.steps.push_back(init_step(k, c, p, d, w));
      plan.steps.push_back(pass_step(c, w, d, "in", 0, "out", 0, n));
      return plan;
    }

    const std::int64_t g0 = pass_grid(c, w, d, n);
    if (g0 == 1) {  // a single block reduces everything straight into out[0]
      plan.steps.push_back(pass_step(c, w, d, "in", 0, "out", 0, n));
      return plan;
    }
    if (!lecture) {  // variants 6, 7: one pass into g0 partials, then reduce_final with one block
      plan.buffers.push_back({"partials", static_cast<std::size_t>(g0) * es, BufferRole::scratch});
      plan.steps.push_back(pass_step(c, w, d, "in", 0, "partials", 0, n));
      plan.steps.push_back(final_step(c, w, d, p, g0));
      return plan;
    }
    // Variants 0-5 (the lecture): the same kernel again over the partials until one block remains.
    // Partials alternate between region A (offset 0, g0 elements) and region B (g1 elements).
    const std::int64_t g1 = pass_grid(c, w, d, g0);
    const std::size_t offset_b = align_up(static_cast<std::size_t>(g0) * es, kRegionAlign);
    const std::size_t partial_bytes = g1 > 1 ? offset_b + static_cast<std::size_t>(g1) * es
                                             : static_cast<std::size_t>(g0) * es;
    plan.buffers.push_back({"partials", partial_bytes, BufferRole::scratch});
    std::string src = "in";
    std::size_t src_offset = 0;
    std::size_t region = 0;  // byte offset of the next destination region
    std::int64_t m = n;
    for (;;) {
      const std::int64_t g = pass_grid(c, w, d, m);
      if (g == 1) {
        plan.steps.push_back(pass_step(c, w, d, src, src_offset, "out", 0, m));
        break;
      }
      if (g >= m) throw SpecError("/launch", "grid of reduce_pass does not shrink the problem (n=" +
                                                 std::to_string(m) + " gives " + std::to_string(g) + " blocks)");
      plan.steps.push_back(pass_step(c, w, d, src, src_offset, "partials", region, m));
      src = "partials";
      src_offset = region;
      region = region == 0 ? offset_b : 0;
      m = g;
    }
    return plan;
  }

  HostBuffers make_inputs(const Workload& w, const ProblemKey& p, std::uint64_t seed) const override {
    const Kind k = kind(w);
    const std::int64_t n = problem_n(p);
    std::vector<unsigned char> bytes = host_bytes(static_cast<std::size_t>(n) * static_cast<std::size_t>(k.size));
    const std::size_t scalars = static_cast<std::size_t>(n) * static_cast<std::size_t>(k.components);
    const bool sum = k.op == Op::sum;
    for_each_chunk(scalars, seed, [&](Random& rng, std::size_t begin, std::size_t end) {
      switch (k.elem) {
        case Elem::int32:
          for (std::size_t i = begin; i < end; ++i) {
            // Sums: small values, so that typical sums stay far from overflow (they wrap exactly anyway).
            // min/max/custom: a wide range, so that the extreme value is (almost surely) unique.
            const auto v = static_cast<std::int32_t>(k.op == Op::sum ? uniform_nonzero_int(rng, -1000, 1000)
                                                                     : uniform_nonzero_int(rng, -(1 << 30), 1 << 30));
            store_element(bytes, i, v);
          }
          break;
        case Elem::float64:
          for (std::size_t i = begin; i < end; ++i) store_element(bytes, i, signed_input_value(rng, sum, 53));
          break;
        case Elem::float32:
        case Elem::vector:  // float2/3/4: every component random, non-zero
          for (std::size_t i = begin; i < end; ++i)
            store_element(bytes, i, static_cast<float>(signed_input_value(rng, sum, 24)));
          break;
      }
    });
    HostBuffers out;
    out["in"] = std::move(bytes);
    return out;
  }

  /// The built-in operators' inputs (int32, float32, float64): their references need only the chunk summaries.
  std::vector<DrawRecipe> device_draws(const Workload& w, const ProblemKey& p, std::uint64_t seed) const override {
    const Kind k = kind(w);
    if (k.custom != nullptr || k.elem == Elem::vector) return {};
    const DrawRecipe::Kind drawn = k.elem == Elem::int32     ? DrawRecipe::Kind::int32_nonzero
                                   : k.elem == Elem::float32 ? DrawRecipe::Kind::float32_signed
                                                             : DrawRecipe::Kind::float64_signed;
    // as make_inputs()
    return {signed_input_draw("in", seed, problem_n(p), drawn, k.op == Op::sum, k.op == Op::sum ? 1000 : 1 << 30)};
  }

  std::optional<HostBuffers> reference_of_draws(const DrawSummaries& summaries, const Workload& w,
                                                const ProblemKey& p) const override {
    const Kind k = kind(w);
    const auto count = static_cast<std::size_t>(problem_n(p));
    auto it = summaries.find("in");
    if (k.custom != nullptr || k.elem == Elem::vector) return std::nullopt;
    if (it == summaries.end() || it->second.size() != (count + kChunkElements - 1) / kChunkElements)
      throw UsageError("reduction reference: the summaries of input 'in' do not cover n elements");
    const std::vector<DrawChunk>& chunks = it->second;
    if (k.float_sum()) return float_sum_expected(chunks, count, w);
    HostBuffers out;
    if (k.elem == Elem::int32 && k.op == Op::sum) {
      std::uint32_t acc = 0;
      for (const DrawChunk& c : chunks) acc += c.wrapped;
      out["out"] = to_bytes(static_cast<std::int32_t>(acc));
      return out;
    }
    double acc = k.op == Op::min ? chunks.front().min : chunks.front().max;
    for (const DrawChunk& c : chunks) acc = combine_builtin(k.op, acc, k.op == Op::min ? c.min : c.max);
    if (k.elem == Elem::int32) out["out"] = to_bytes(static_cast<std::int32_t>(acc));
    if (k.elem == Elem::float32) out["out"] = to_bytes(static_cast<float>(acc));
    if (k.elem == Elem::float64) out["out"] = to_bytes(acc);
    return out;
  }

  std::optional<HostBuffers> reference(const HostBuffers& inputs, const Workload& w,
                                       const ProblemKey& p) const override {
    const Kind k = kind(w);
    const std::int64_t n = problem_n(p);
    if (k.custom != nullptr && k.custom->cpu_reference.empty()) return std::nullopt;  // reference kernels
    auto it = inputs.find("in");
    if (it == inputs.end() || it->second.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(k.size))
      throw UsageError("reduction reference: input buffer 'in' is missing or does not hold n elements");
    const std::vector<unsigned char>& in = it->second;
    const auto count = static_cast<std::size_t>(n);
    HostBuffers out;
    if (k.custom != nullptr) {  // maxmag, the only CPU-implemented custom operator
      Float3 acc{0.0f, 0.0f, 0.0f};
      for (std::size_t i = 0; i < count; ++i) acc = reduction::maxmag_combine(acc, load_element<Float3>(in, i));
      out["out"] = to_bytes(acc);
      return out;
    }
    switch (k.elem) {
      case Elem::int32: {
        if (k.op == Op::sum) {
          std::uint32_t acc = 0;  // wraps modulo 2^32 like the kernel's unsigned arithmetic
          for (std::size_t i = 0; i < count; ++i) acc += static_cast<std::uint32_t>(load_element<std::int32_t>(in, i));
          out["out"] = to_bytes(static_cast<std::int32_t>(acc));
        } else {
          std::int32_t acc = load_element<std::int32_t>(in, 0);
          for (std::size_t i = 1; i < count; ++i) acc = combine_builtin(k.op, acc, load_element<std::int32_t>(in, i));
          out["out"] = to_bytes(acc);
        }
        return out;
      }
      case Elem::float32:
        if (k.op == Op::sum) return float_sum_reference<float>(in, count, w);
        return selection_reference<float>(in, count, k.op);
      case Elem::float64:
        if (k.op == Op::sum) return float_sum_reference<double>(in, count, w);
        return selection_reference<double>(in, count, k.op);
      case Elem::vector: break;
    }
    throw UsageError("reduction reference: no CPU reference for workload " + w.key());
  }

  std::optional<LaunchPlan> reference_plan(const Workload& w, const ProblemKey& p,
                                           const DeviceInfo& d) const override {
    const Kind k = kind(w);
    if (k.custom == nullptr || !k.custom->cpu_reference.empty()) return std::nullopt;
    const std::int64_t n = problem_n(p);
    const std::size_t es = static_cast<std::size_t>(k.size);
    const Config c = spec_.default_config();
    const LaunchSpec& chunks = *spec_.find_launch("reduce_reference_chunks");
    const LaunchSpec& fin = *spec_.find_launch("reduce_reference_final");
    LaunchStep s1 = launch_step(chunks, c, p, d, w);
    const std::int64_t threads = static_cast<std::int64_t>(s1.grid[0]) * s1.grid[1] * s1.grid[2] * s1.block[0] *
                                 s1.block[1] * s1.block[2];
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
    return "result " + describe(k, got) + " but expected " + describe(k, exp_it->second) + where;
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
  std::vector<CustomOp> custom_ops_;

  /// Classifies a workload; throws UsageError if the spec does not list it or it is not supported.
  Kind kind(const Workload& w) const {
    spec_.check_workload(w);
    Kind k;
    const CustomOp* custom = nullptr;
    for (const auto& op : custom_ops_)
      if (op.name == w.op) custom = &op;
    if (custom != nullptr) {
      if (custom->dtype != w.dtype)
        throw UsageError("workload " + w.key() + ": custom operator '" + w.op + "' is defined for dtype " +
                         custom->dtype);
      k.op = Op::custom;
      k.custom = custom;
    } else if (w.op == "sum") {
      k.op = Op::sum;
    } else if (w.op == "min") {
      k.op = Op::min;
    } else if (w.op == "max") {
      k.op = Op::max;
    } else {
      throw UsageError("workload " + w.key() + ": unknown operator '" + w.op +
                       "' (built-in: sum, min, max; custom operators come from family_options.custom_ops)");
    }
    if (w.dtype == "int32") {
      k.elem = Elem::int32;
    } else if (w.dtype == "float32") {
      k.elem = Elem::float32;
    } else if (w.dtype == "float64") {
      k.elem = Elem::float64;
    } else if (custom != nullptr && (w.dtype == "float2" || w.dtype == "float3" || w.dtype == "float4")) {
      k.elem = Elem::vector;
      k.components = w.dtype[5] - '0';
    } else {
      throw UsageError("workload " + w.key() + ": unsupported dtype '" + w.dtype +
                       "' (int32, float32, float64; float2/3/4 with a custom operator)");
    }
    k.size = dtype_size(w.dtype);
    return k;
  }

  /// n from the problem; UsageError unless n >= 1.
  std::int64_t problem_n(const ProblemKey& p) const {
    spec_.check_problem(p);
    const std::int64_t n = p.at("n");
    if (n < 1) throw UsageError("n must be at least 1");
    return n;
  }

  template <typename T>
  HostBuffers float_sum_reference(const std::vector<unsigned char>& in, std::size_t count, const Workload& w) const {
    // Neumaier-compensated double sums of the chunks on all cores (as the draw kernel sums its chunks), then of
    // the chunk sums in chunk order: exact for the generated inputs, accurate for any others, and independent
    // of the number of threads.
    std::vector<DrawChunk> parts((count + kChunkElements - 1) / kChunkElements);
    parallel_chunks(count, [&](std::size_t c, std::size_t begin, std::size_t end) {
      DrawChunk p;
      for (std::size_t i = begin; i < end; ++i) {
        const double x = static_cast<double>(load_element<T>(in, i));
        neumaier_add(p.sum, p.comp, x);
        p.max_abs = std::max(p.max_abs, std::fabs(x));
      }
      parts[c] = p;
    });
    return float_sum_expected(parts, count, w);
  }

  /// The float sum's reference and tolerance from the compensated sums of its chunks (sum, comp, max_abs).
  HostBuffers float_sum_expected(const std::vector<DrawChunk>& parts, std::size_t count, const Workload& w) const {
    double sum = 0, comp = 0, max_abs = 0;
    for (const DrawChunk& p : parts) {
      neumaier_add(sum, comp, p.sum);
      neumaier_add(sum, comp, p.comp);
      max_abs = std::max(max_abs, p.max_abs);
    }
    const double tol = reduction::sum_tolerance(spec_.tolerance, reduction::dtype_epsilon(w.dtype),
                                                static_cast<std::int64_t>(count), max_abs);
    HostBuffers out;
    out["reference"] = to_bytes(sum + comp);
    out["tolerance"] = to_bytes(tol);
    return out;
  }

  template <typename T>
  static HostBuffers selection_reference(const std::vector<unsigned char>& in, std::size_t count, Op op) {
    T acc = load_element<T>(in, 0);
    for (std::size_t i = 1; i < count; ++i) acc = combine_builtin(op, acc, load_element<T>(in, i));
    HostBuffers out;
    out["out"] = to_bytes(acc);
    return out;
  }

  static std::string describe(const Kind& k, const std::vector<unsigned char>& v) {
    switch (k.elem) {
      case Elem::int32: return std::to_string(load_element<std::int32_t>(v, 0));
      case Elem::float32: return format_number(load_element<float>(v, 0));
      case Elem::float64: return format_number(load_element<double>(v, 0));
      case Elem::vector: {
        std::string s = "(";
        for (int i = 0; i < k.components; ++i)
          s += (i ? ", " : "") + format_number(load_element<float>(v, static_cast<std::size_t>(i)));
        return s + ")";
      }
    }
    return hex_bytes(v);
  }

  /// Evaluates a launch spec into a step (geometry and shared memory; arguments are filled by the caller).
  static LaunchStep launch_step(const LaunchSpec& l, const Config& c, const ProblemKey& p, const DeviceInfo& d,
                                const Workload& w) {
    LaunchStep s;
    s.kind = LaunchStep::Kind::kernel;
    s.kernel = l.kernel;
    const Expr* dims[6] = {&l.grid_x, &l.grid_y, &l.grid_z, &l.block_x, &l.block_y, &l.block_z};
    for (int i = 0; i < 6; ++i) {
      const std::int64_t v = eval_expr(*dims[i], c, p, d, w);
      const std::int64_t limit = i == 0 ? 2147483647 : 65535;
      if (v < 1 || v > limit)
        throw UsageError("launch " + l.name + ": " + (i < 3 ? "grid" : "block") + " dimension " +
                         dims[i]->text() + " = " + std::to_string(v) + " is out of range (" + p.key() + ")");
      (i < 3 ? s.grid : s.block)[i % 3] = static_cast<std::uint32_t>(v);
    }
    const std::int64_t shared = eval_expr(l.shared_bytes, c, p, d, w);
    if (shared < 0 || shared > std::numeric_limits<std::uint32_t>::max())
      throw UsageError("launch " + l.name + ": shared memory " + std::to_string(shared) + " bytes is out of range");
    s.shared_bytes = static_cast<std::uint32_t>(shared);
    return s;
  }

  static ProblemKey with_n(std::int64_t m) {
    ProblemKey p;
    p.dims["n"] = m;
    return p;
  }

  /// Blocks of reduce_pass over m elements (the spec's grid expression evaluated with n = m).
  std::int64_t pass_grid(const Config& c, const Workload& w, const DeviceInfo& d, std::int64_t m) const {
    return launch_step(*spec_.find_launch("reduce_pass"), c, with_n(m), d, w).grid[0];
  }

  LaunchStep pass_step(const Config& c, const Workload& w, const DeviceInfo& d, const std::string& src,
                       std::size_t src_offset, const std::string& dst, std::size_t dst_offset,
                       std::int64_t m) const {
    LaunchStep s = launch_step(*spec_.find_launch("reduce_pass"), c, with_n(m), d, w);
    s.args = {KernelArg::buf(src, src_offset), KernelArg::buf(dst, dst_offset), KernelArg::u64(m)};
    return s;
  }

  LaunchStep final_step(const Config& c, const Workload& w, const DeviceInfo& d, const ProblemKey& p,
                        std::int64_t count) const {
    LaunchStep s = launch_step(*spec_.find_launch("reduce_final"), c, p, d, w);
    s.args = {KernelArg::buf("partials"), KernelArg::buf("out"), KernelArg::u64(count)};
    return s;
  }

  /// Sets out[0] to the operator's identity before atomic combination: a memset32 where the identity is one
  /// repeated 32-bit word (int32, float32, float64 sum: 0, +-inf, INT_MAX/INT_MIN), else reduce_init.
  LaunchStep init_step(const Kind& k, const Config& c, const ProblemKey& p, const DeviceInfo& d,
                       const Workload& w) const {
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
    LaunchStep init = launch_step(*spec_.find_launch("reduce_init"), c, p, d, w);
    init.args = {KernelArg::buf("out")};
    return init;
  }
};

}  // namespace

std::shared_ptr<const KernelAdapter> make_reduction_adapter(const TuningSpec& spec) {
  return std::make_shared<ReductionAdapter>(spec);
}

}  // namespace autotune::kernels
