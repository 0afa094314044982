// Internals of the reduction family's adapter (tuner/kernels/reduction*.cpp), not for other code: what a workload
// asks for (element type, operator, custom operators from family_options), its launch plans, inputs and references.
// All functions are pure and thread-safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/adapter.hpp"
#include "tuner/core/draw.hpp"
#include "tuner/core/plan.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::kernels::reduction::detail {

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
  int size = 4;        // bytes per element
  int components = 1;  // scalars per element (float2/3/4)
  const CustomOp* custom = nullptr;
  bool float_sum() const { return op == Op::sum && (elem == Elem::float32 || elem == Elem::float64); }
};

/// The custom operators of a spec's family_options JSON text; SpecError (with the JSON pointer under
/// /family_options) for malformed JSON, unknown keys, invalid names or dtypes, multi-line expressions.
std::vector<CustomOp> parse_custom_ops(const std::string& family_options_json);

/// Classifies workload w against the spec's workloads and the custom operators (the Kind points into
/// `custom_ops`); UsageError if the spec does not list it or it is not supported.
Kind classify(const TuningSpec& spec, const std::vector<CustomOp>& custom_ops, const Workload& w);

/// a combined with b by a built-in operator: min, max, else the sum.
template <typename T>
T combine_builtin(Op op, T a, T b) {
  switch (op) {
    case Op::min:
      return b < a ? b : a;
    case Op::max:
      return a < b ? b : a;
    default:
      return a + b;
  }
}

// Launch plans (reduction_plan.cpp): from the spec's launch expressions; UsageError for a geometry out of range,
// SpecError when reduce_pass's grid does not shrink the problem.

/// The plan of config c for n elements of kind k: one pass with atomics (FINAL), or passes of reduce_pass until
/// one block remains (variants 0-5) or one pass and reduce_final (variants 6, 7).
LaunchPlan reduction_plan(const TuningSpec& spec, const Kind& k, const Config& c, const Workload& w,
                          const ProblemKey& p, const DeviceInfo& d, std::int64_t n);
/// The plan of the reference kernels (reduce_reference_chunks, then reduce_reference_final) at the spec's default
/// config, for n elements of kind k.
LaunchPlan reference_kernels_plan(const TuningSpec& spec, const Kind& k, const Workload& w, const ProblemKey& p,
                                  const DeviceInfo& d, std::int64_t n);

// Inputs and references (reduction_reference.cpp).

/// Seeded inputs: buffer "in" of n elements of kind k (for_each_chunk, so independent of the thread count).
HostBuffers make_reduction_inputs(const Kind& k, std::int64_t n, std::uint64_t seed);
/// The draw recipe of make_reduction_inputs() for the built-in operators; none for custom ones.
std::vector<DrawRecipe> reduction_draws(const Kind& k, std::int64_t n, std::uint64_t seed);
/// The expected values from the chunk summaries of input "in" (`chunks`, of `count` elements); nullopt for custom
/// operators. `tolerance`: the spec's tolerance factor of float sums.
std::optional<HostBuffers> reference_from_draws(const Kind& k, const std::vector<DrawChunk>& chunks, std::size_t count,
                                                const Workload& w, double tolerance);
/// The expected values computed on the CPU from `in` (count elements of kind k): "out", or for a float sum
/// "reference" and "tolerance"; UsageError where there is no CPU reference.
HostBuffers cpu_reference(const Kind& k, const std::vector<unsigned char>& in, std::size_t count, const Workload& w,
                          double tolerance);
/// A result of kind k as text for messages: "3", "0.5", "(1, 2, 3)".
std::string describe(const Kind& k, const std::vector<unsigned char>& v);

}  // namespace autotune::kernels::reduction::detail
