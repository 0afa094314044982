// A tuning spec: what to tune, over which values, under which constraints, and how to launch it.
// JSON format documented in docs/spec-format.md. Errors are SpecError with the JSON pointer of the field.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/data_file.hpp"
#include "tuner/core/expr/expr.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/expr/pyexpr.hpp"

namespace autotune {

/// One kernel launch described by expressions over parameters, problem dims, device variables
/// and sizeof_t (bytes of the workload dtype).
struct LaunchSpec {
  std::string name;    // step name (defaults to the kernel name)
  std::string kernel;  // entry point
  Expr grid_x, grid_y, grid_z;
  Expr block_x, block_y, block_z;
  Expr shared_bytes;
};

/// What counts as correct for an output of a user kernel (spec "verification", per output or for all):
/// floating elements within absolute + relative x |expected|, and at most a fraction of the elements differing.
/// Unset fields fall back to the spec-wide policy, then to the spec's "tolerance" (relative), 0 absolute, 0
/// mismatches. The trial log keeps the mismatch count and the first mismatches either way.
struct VerifyPolicy {
  std::optional<double> relative, absolute, max_mismatch_fraction;
  /// A comparison kernel of the user (an entry point of the reference's source) that decides which elements
  /// match, instead of relative/absolute; runs on the GPU only (OutputCheck::Kind::user_kernel).
  std::optional<std::string> compare;
  /// "callback": true (the spec's top-level policy only): the program that embeds the tuner decides on the host,
  /// through the hook of tuner/core/host_verify.hpp (the Python package's `verify` callable); every output is then
  /// copied back and handed to it, whatever --verify says.
  bool callback = false;
  /// This policy's fields where set, else `fallback`'s.
  VerifyPolicy over(const VerifyPolicy& fallback) const {
    return {relative ? relative : fallback.relative, absolute ? absolute : fallback.absolute,
            max_mismatch_fraction ? max_mismatch_fraction : fallback.max_mismatch_fraction,
            compare ? compare : fallback.compare, callback || fallback.callback};
  }
};

/// A number of a fill (a constant, the bounds of a uniform range): exact in `i` for integer dtypes, in `f` for
/// floating ones (f is also set for integers, as a double).
struct FillValue {
  std::int64_t i = 0;
  double f = 0;
};

/// Where the values of an input buffer or constant ("init"), a scalar ("value": {"file": ...}) or the expected
/// values of an output ("expected") come from; docs/spec-format.md "Inputs from files".
struct DataSource {
  enum class Kind { random, zero, ones, iota, constant, file, generator };
  Kind kind = Kind::random;
  /// random: a generator of its own seeded so; nullopt: the session's seed, one stream shared in argument order by
  /// every random input without a seed (the inputs of a spec without seeds are those of earlier versions).
  std::optional<std::uint64_t> seed;
  /// random: uniform in [min, max) for floating dtypes, in [min, max] for integers; nullopt: the default
  /// distribution (floats +-[0.5, 1.5) with a random sign, integers in [1, 1000], capped by the type's maximum).
  std::optional<FillValue> min, max;
  FillValue constant;  // constant: every element
  std::string file;    // file: as the spec names it
  std::string path;    // file: resolved against the spec's folder
  DataFormat format = DataFormat::npy;
  std::string pointer;  // file: JSON pointer of the field naming the file, for errors found when it is read
  /// generator: a Python expression of the element index `i` (and the problem dims), one value per element (T1's
  /// Generator fill).
  std::string generator;
};

/// What a spec suggests for a tuning run (T1's Budget and Search); the command line's flags win.
struct TuningDefaults {
  std::optional<std::size_t> budget;      // new evaluations
  std::optional<double> budget_fraction;  // of the valid space, in (0, 1]
  std::optional<double> time_limit_s;
  std::optional<std::string> strategy;
  std::map<std::string, std::string> strategy_options;
  bool empty() const { return !budget && !budget_fraction && !time_limit_s && !strategy && strategy_options.empty(); }
};

/// Argument of a user kernel (family "user").
struct ArgSpec {
  /// constant: a __constant__ symbol of the source (not a kernel parameter), filled with count elements of
  /// dtype made by init before the runs (Kernel Tuner's cmem_args).
  enum class Kind { buffer, scalar, constant };
  /// inout: a buffer the kernel reads and updates (T1's ReadWrite outputs): made from init like an input, it starts
  /// every verified run from those values and is verified like an output.
  enum class Role { input, output, inout };
  std::string name;
  Kind kind = Kind::buffer;
  std::string dtype;  // element type (buffer, constant) or scalar type: int8 ... uint64, float16/32/64
  Role role = Role::input;
  Expr count;          // elements (buffer)
  DataSource init;     // input buffer, constant: its values (default: random)
  std::string value;   // scalar: an integer expression, or a floating literal for float scalars
  /// scalar: the file "value" names (exactly one element); `value` then holds the number read from it, as text
  /// (empty when the spec was parsed without loading its files).
  std::optional<DataSource> value_file;
  /// output buffer: the expected values come from this file (kind file), or from this expression of the element
  /// index (kind generator: T1's Generator reference arguments), instead of the reference.
  std::optional<DataSource> expected;
  std::string symbol;  // constant: the symbol's name in the source (default: name)
  VerifyPolicy verification;  // output buffer: overrides the spec's "verification"
  /// An input the tuner makes and uploads: an input buffer or a constant.
  bool is_input() const { return kind == Kind::constant || (kind == Kind::buffer && role != Role::output); }
  bool is_output() const { return kind == Kind::buffer && role != Role::input; }
  /// The name of the input buffer an in-out argument starts from (make_inputs(), BufferDecl::initial).
  std::string initial_name() const { return name + ":initial"; }
};

/// What reads `d` of argument `a`, for messages: "argument 'x'", or "output 'y' (expected values)".
std::string data_reader(const ArgSpec& a, const DataSource& d);

/// SpecError (d.pointer, naming the argument and the file) unless the file of d exists and holds a.dtype; with
/// `count`, unless it holds exactly count elements. Reads no more than a .npy header.
void check_data_file(const ArgSpec& a, const DataSource& d, std::optional<std::uint64_t> count);

/// The value of a scalar of `dtype` (an integer type, float32 or float64) held in `bytes` (little-endian, the type's
/// size), as the text of a literal a spec's "value" takes: an integer, or a float printed to read back exactly;
/// nullopt for a uint64 above INT64_MAX (a scalar's value is a signed 64-bit expression).
std::optional<std::string> scalar_literal(const std::string& dtype, const void* bytes);

/// Reads `count` elements of the file of d into out (read_array_file); SpecError at d.pointer naming the argument
/// and the file where it does not hold them.
void read_data_file(const ArgSpec& a, const DataSource& d, std::uint64_t count, std::vector<unsigned char>& out);

/// Reference for user kernels: a kernel run once per problem whose outputs are the expected values.
struct ReferenceSpec {
  std::string source;  // path relative to the spec; empty = the spec's own source
  std::string source_text;
  LaunchSpec launch;
  /// "reference": {"configuration": ...}: the tuned kernel itself at this configuration (the spec's source and
  /// launch steps, the configuration's -D macros) is the reference; source, source_text and launch are unused.
  /// A user spec with neither a reference nor expected values for every output gets the default configuration.
  std::optional<Config> configuration;
};

/// Where a capture (tuner/runtime/capture.hpp, docs/lookup.md "Capture") came from: a capture is the application's
/// spec with the application's data at one launch, and its trials count as the captured spec's at the problem the
/// application asks for.
struct CaptureOrigin {
  std::string spec_hash;  // spec_hash() of the captured spec: the sessions tuned on the capture record it
  std::string data;       // data_tag() of the captured spec: the problem's data tag the application asks with
};

/// source_hash of trials imported for a kernel whose measured source is unknown (a user spec, a spec stub).
inline constexpr const char* kImportedSourceHash = "imported";

struct TuningSpec {
  std::string name;
  std::string description;
  std::string family;       // built-in adapter name ("reduction", ...) or "user"
  std::string source_path;  // as given in the spec
  std::string source_text;  // loaded source (embedded for built-ins)
  std::map<std::string, std::string> headers;  // kernel headers the source includes (include name -> text),
                                              // part of source_hash(); the kernel registry fills it
  std::vector<std::string> kernels;
  std::vector<Param> params;
  /// True when a parameter names its "default" (else each default is the parameter's first value). A stub without
  /// one has no default config (space()).
  bool default_named = false;
  std::vector<Expr> constraints;
  /// "nondeterministic": expressions over the names constraints see; a configuration for which one is non-zero
  /// gives results that are not bit-reproducible run to run (a float sum whose last step is an atomic add).
  std::vector<Expr> nondeterministic;
  /// Only configurations that no "nondeterministic" expression names are valid: space() adds the negation of each
  /// as a constraint (tune --deterministic, RuntimeOptions::deterministic), and the lookup serves none of the others.
  /// Like the other narrowings, not part of the hashes.
  bool deterministic = false;
  std::vector<LaunchSpec> launches;
  std::vector<std::string> problem_dims;        // e.g. {"n"} or {"rows","cols"}
  std::vector<ProblemKey> problem_sizes;        // sizes the spec suggests (first = default)
  std::vector<Workload> workloads;              // first = default
  double tolerance = 0;                         // relative tolerance for floats (adapter may scale it)
  std::optional<Expr> bytes_moved;              // bytes of one run, for GB/s
  /// "blocks": the thread blocks the kernel's widest launch runs at a problem (it reads at most one problem
  /// dimension, and must not decrease as that grows). The lookup, serving a size it did not measure, then passes
  /// over a configuration that filled the SMs where it was measured but would not fill them there (docs/lookup.md).
  std::optional<Expr> blocks;
  std::vector<ArgSpec> arguments;               // family "user"
  std::optional<ReferenceSpec> reference;       // family "user"
  VerifyPolicy verification;                    // family "user": what counts as correct (every output)
  std::map<std::string, std::string> defines;   // extra -D for every compile
  std::vector<std::string> compile_options;     // extra NVRTC options of every compile (user kernels)
  /// Expressions (constraints, launch, counts) are Python's ("expressions": "python", T1 files; typed parameters
  /// as their Python values), else the project's.
  bool python_expressions = false;
  TuningDefaults tuning;                        // "tuning": budget, time limit, strategy
  std::string family_options_json = "{}";       // raw JSON of "family_options", read by the adapter
  std::string spec_text;                        // canonical JSON of the spec (for hashing)
  /// spec_text without "blocks", where the spec has it: what spec_hash() hashes (a hint to the lookup changes no
  /// measurement, so trials stay those of the same spec); empty: spec_text.
  std::string hashed_text;
  /// "captured": the spec is a capture of an application's launch (spec_hash() and data_tag() are then those of
  /// the captured spec).
  std::optional<CaptureOrigin> captured;
  /// Source hashes of earlier texts of this kernel with the same code identity (built-in kernels: from
  /// kernels_src/source_history.json), whose trials count as this source's; filled by tuner/specs.
  std::vector<std::string> equivalent_sources;

  /// Parses JSON text. base_dir resolves "source"; load_sources=false leaves source_text empty.
  static TuningSpec from_json_text(const std::string& text, const std::string& base_dir = ".",
                                   bool load_sources = true);
  static TuningSpec from_file(const std::string& path);
  /// The Python values of the typed parameters (strings, floats, booleans), for Python expressions.
  PyDecoders python_decoders() const;
  /// An expression in this spec's language (Expr::parse, or Expr::python with python_decoders()).
  Expr parse_expression(const std::string& text) const;

  /// Hash of source_text, and of spec_text; together they decide whether stored configs are still valid.
  /// A stub's source hash is kImportedSourceHash, the source hash of the rows imported for it.
  std::string source_hash() const;
  /// The identity of the code (tuner/core/identity.hpp): what decides whether trials of another source text
  /// still measure this kernel.
  std::string code_identity() const;
  /// A spec stub (family "imported"): parameters, problem sizes and workloads as an imported file described them,
  /// no source or launch yet. Simulation, summary, best and compare-strategies use it; tuning needs the rest.
  bool is_stub() const { return family == "imported"; }
  std::string spec_hash() const;

  /// The value of "blocks" for c at problem p on device d (nullopt without "blocks" or where it cannot be
  /// evaluated there). Never throws.
  std::optional<std::int64_t> blocks_at(const Config& c, const ProblemKey& p, const DeviceInfo& d,
                                        const Workload& w) const;
  /// The problem dimension "blocks" reads ("" without "blocks" or where it reads none).
  std::string blocks_dim() const;

  const Param* find_param(const std::string& name) const;
  const LaunchSpec* find_launch(const std::string& name) const;
  Config default_config() const;
  /// The configuration whose -D macros the reference's source is compiled with: the reference's configuration,
  /// else the default one.
  Config reference_config() const {
    return reference && reference->configuration ? *reference->configuration : default_config();
  }
  /// What the expected values of a user kernel come from, for the verification line of `tune`: "the reference
  /// kernel ref_k", "the default configuration (B=128)", "the configuration B=64", "expected values from y.npy",
  /// or several of these joined by "; "; empty for other families.
  std::string reference_text() const;
  /// The comparison kernels the verification policies name (top level and outputs), each once, in spec order.
  std::vector<std::string> compare_kernels() const {
    std::vector<std::string> out;
    auto add = [&out](const VerifyPolicy& v) {
      if (v.compare && std::find(out.begin(), out.end(), *v.compare) == out.end()) out.push_back(*v.compare);
    };
    add(verification);
    for (const ArgSpec& a : arguments) add(a.verification);
    return out;
  }
  /// Checks that p has exactly the spec's dims; throws UsageError naming the missing/extra dim.
  void check_problem(const ProblemKey& p) const;
  /// Throws UsageError naming the supported workloads if w is not one of them.
  void check_workload(const Workload& w) const;

  /// Narrowing the space for one run (the CLI's --values, --restrict, --drop-constraint). Each throws UsageError
  /// naming what is wrong; source, spec_text and so the hashes stay those of the spec.
  /// Keeps only `values` of parameter `name` (numbers or labels, each one of its values, in the spec's order);
  /// the default moves to the first kept value when it is not kept.
  void restrict_values(const std::string& name, const std::vector<std::string>& values);
  /// Adds a constraint (expression syntax of docs/spec-format.md).
  void add_constraint(const std::string& text);
  /// Removes the constraint whose text equals `text` apart from white space.
  void drop_constraint(const std::string& text);

  /// The first "nondeterministic" expression that holds for c at p on d with w, or nullptr where c is deterministic.
  /// Throws ExprError naming the expression where it cannot be evaluated.
  const Expr* nondeterministic_reason(const Config& c, const ProblemKey& p, const DeviceInfo& d,
                                      const Workload& w) const;
  /// The "nondeterministic" expressions joined by " or ", for messages ("" without any).
  std::string nondeterministic_text() const;

  /// Builds the valid space for this problem, device and workload (constraints see dims, device
  /// variables and the workload variables of workload_bindings()); with `deterministic`, the configurations no
  /// "nondeterministic" expression names.
  ParameterSpace space(const ProblemKey& problem, const DeviceInfo& device, const Workload& w) const;
};

/// With s.deterministic: one line saying how many of the valid configurations at p on d with w the requirement kept
/// and why it left the others out; "" without it. Throws UsageError when it keeps none (the message names the
/// "nondeterministic" expressions).
std::string deterministic_summary(const TuningSpec& s, const ProblemKey& p, const DeviceInfo& d, const Workload& w);

/// Workload variables: sizeof_t (bytes of the dtype), is_float (1 for floating dtypes), is_sum (op == sum).
Bindings workload_bindings(const Workload& w);

/// Variables that constraints and launch expressions can see: config values, problem dims,
/// device bindings and workload bindings.
Bindings make_bindings(const Config& c, const ProblemKey& p, const DeviceInfo& d, const Workload& w);

/// Evaluates an expression over make_bindings(); throws ExprError naming the expression on failure.
std::int64_t eval_expr(const Expr& e, const Config& c, const ProblemKey& p, const DeviceInfo& d,
                       const Workload& w);

/// The tag of the data a spec's inputs come from (ProblemKey::data): a hash of the contents of every file an input,
/// a scalar or an expected output is read from, with the arguments' names; "" when no input comes from a file. A
/// capture has the tag of the spec it captured (CaptureOrigin::data), whatever its files hold.
/// Throws SpecError naming the argument when a file cannot be read.
std::string data_tag(const TuningSpec& spec);

/// The input `name` (a buffer or __constant__ argument) read from `file` instead (--input NAME=FILE): a .npy file,
/// else raw binary. Throws UsageError naming the inputs when there is no such input.
void replace_input(TuningSpec& spec, const std::string& name, const std::string& file);

}  // namespace autotune
