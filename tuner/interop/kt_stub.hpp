// Kernel Tuner cache files as they are: the JSON (also of an interrupted run), what the cache says about itself
// (kernel, device, problem size), and spec stubs built from it, so that an import needs nothing but the file.
// docs/interop.md. No CUDA, no database.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/keys.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::interop {

/// Parses a Kernel Tuner cache file. A cache that an interrupted run left open (ends with "," and lacks the two
/// closing brackets) is read as Kernel Tuner reads it. Throws UsageError naming `origin` when it is not JSON or
/// has no "cache" object.
nlohmann::json read_kt_cache_json(const std::string& text, const std::string& origin);

/// What a Kernel Tuner cache says about itself.
struct KtCacheHeader {
  std::string kernel_name;                  // "kernel_name"; "" when absent
  std::string device_name;                  // "device_name"; "" when absent
  std::vector<std::int64_t> problem_size;   // "problem_size" (a number or a list); empty when absent or symbolic
  /// The names of tunable parameters that "problem_size" holds instead of numbers (e.g. "num_blocks": the grid is
  /// a parameter's value), in order; then the problem is not in the cache and problem_size is empty.
  std::vector<std::string> problem_size_names;
  /// Why the cache does not tell the problem, for messages ("" when it does).
  std::string no_problem_reason() const;
  std::vector<std::string> keys;            // "tune_params_keys"; empty when absent
};

/// Reads the header fields of a parsed cache. Throws UsageError for a field of the wrong type.
KtCacheHeader read_kt_header(const nlohmann::json& root, const std::string& origin);

/// The problem that a cache's problem_size gives in a spec's dims: positionally, in the order of the spec's
/// `problem.dims` (Kernel Tuner's order is x, y, z). nullopt when the cache has no problem size. Throws
/// UsageError when the number of values differs from the number of the spec's dims, or a value is below 1.
std::optional<ProblemKey> kt_problem(const KtCacheHeader& h, const TuningSpec& spec, const std::string& origin);

/// A spec stub (family "imported", JSON text) for kernel `name` from a cache: its parameters in
/// tune_params_keys order with the values of "tune_params" (else those the entries use): integral values as
/// integers, any other values (strings, fractions) as labels of 0, 1, 2, ...; problem dims `n` for a
/// one-dimensional problem size, else x, y, z; the cache's problem size; workload `w`. With `existing` (a stub
/// stored earlier for the same name) the stub is extended instead: the parameter names must be the same
/// (UsageError naming the difference); values, problem sizes and workloads are added to the existing ones.
/// Throws UsageError when the cache has no problem size (the caller passes `problem` from flags then), no
/// parameters, or a value that is neither a number, a bool nor a string.
std::string kt_stub_spec(const nlohmann::json& root, const std::string& name, const std::string& origin,
                         const Workload& w, const std::optional<ProblemKey>& problem,
                         const std::optional<std::string>& existing);

/// A spec stub (as kt_stub_spec) for kernel `name` from a T4 results file (import --format t4 without --kernel):
/// the parameters of the results of `file_kernel` (their "autotune" extension's kernel; "" = every result) with
/// the values their configurations hold (integral values as integers; floats, strings as labels; bools as 0/1),
/// a problem size and workload per group of results: `problem` / `workload` when given, else our extension's
/// "problem" / "workload" (workload float32 when absent). `existing` is extended as in kt_stub_spec. Throws
/// UsageError when no result is read, a result has no "configuration" object, or a result's problem is unknown.
std::string t4_stub_spec(const nlohmann::json& root, const std::string& file_kernel, const std::string& name,
                         const std::string& origin, const std::optional<Workload>& workload,
                         const std::optional<ProblemKey>& problem, const std::optional<std::string>& existing);

}  // namespace autotune::interop
