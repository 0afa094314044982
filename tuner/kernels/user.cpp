// Adapter for user kernels described entirely by their spec (family "user"): buffers and scalars from
// "arguments" (made, or read from files), launches from "launch", expected outputs from files ("expected") or from
// the spec's reference: a kernel of its own or a configuration of the tuned kernel.
#include <cmath>
#include <cstring>

#include "tuner/core/check.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/expr/pyexpr.hpp"
#include "tuner/core/host_verify.hpp"
#include "tuner/core/random.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/registry.hpp"

namespace autotune::kernels {

namespace {

bool is_float(const std::string& d) { return d == "float32" || d == "float64"; }
bool is_integer(const std::string& d) {
  return d == "int8" || d == "uint8" || d == "int16" || d == "uint16" || d == "int32" || d == "uint32" ||
         d == "int64" || d == "uint64";
}

class UserAdapter : public KernelAdapter {
 public:
  explicit UserAdapter(TuningSpec s) : KernelAdapter(std::move(s)) {}

  std::vector<std::string> compile_options(const Workload&) const override { return spec_.compile_options; }

  LaunchPlan plan(const Config& c, const Workload& w, const ProblemKey& p, const DeviceInfo& d) const override {
    LaunchPlan plan;
    declare_buffers(plan, c, w, p, d);
    for (const auto& l : spec_.launches) plan.steps.push_back(step(l, c, w, p, d));
    for (const auto& a : spec_.arguments)
      if (a.kind == ArgSpec::Kind::constant) plan.constants.push_back({a.symbol, a.name});
    return plan;
  }

  /// The reference kernel's plan, or the plan of the reference configuration (every launch step, every
  /// constant); none where every output has expected values from a file.
  std::optional<LaunchPlan> reference_plan(const Workload& w, const ProblemKey& p, const DeviceInfo& d) const override {
    if (!spec_.reference) return std::nullopt;
    if (spec_.reference->configuration) return plan(*spec_.reference->configuration, w, p, d);
    LaunchPlan plan;
    Config c = spec_.default_config();
    declare_buffers(plan, c, w, p, d);
    plan.steps.push_back(step(spec_.reference->launch, c, w, p, d));
    // The reference kernel reads the same constants where its source declares them.
    for (const auto& a : spec_.arguments)
      if (a.kind == ArgSpec::Kind::constant && spec_.reference->source_text.find(a.symbol) != std::string::npos)
        plan.constants.push_back({a.symbol, a.name});
    return plan;
  }

  /// The reference kernel's source; the spec's own where the reference is a configuration or there is none (the
  /// comparison kernels are then entry points of the spec's source).
  std::string reference_source() const override {
    return spec_.reference && !spec_.reference->configuration ? spec_.reference->source_text : spec_.source_text;
  }

  HostBuffers make_inputs(const Workload& w, const ProblemKey& p, std::uint64_t seed) const override {
    HostBuffers out;
    Random rng(seed);  // shared, in argument order, by the random inputs without a seed of their own
    for (const auto& a : spec_.arguments) {
      if (!a.is_input()) continue;
      const std::uint64_t count = element_count(a, w, p);
      std::vector<unsigned char>& bytes = out[a.role == ArgSpec::Role::inout ? a.initial_name() : a.name];
      if (a.init.kind == DataSource::Kind::file)
        read_data_file(a, a.init, count, bytes);
      else if (a.init.kind == DataSource::Kind::generator)
        generate(a, a.init, static_cast<std::size_t>(count), p, bytes);
      else
        fill(a, static_cast<std::size_t>(count), rng, bytes);
    }
    return out;
  }

  void validate_inputs(const Workload& w, const ProblemKey& p) const override {
    for (const auto& a : spec_.arguments) {
      if (a.is_input() && a.init.kind == DataSource::Kind::file) check_data_file(a, a.init, element_count(a, w, p));
      if (a.expected && a.expected->kind == DataSource::Kind::file)
        check_data_file(a, *a.expected, element_count(a, w, p));
      if (a.value_file && a.value.empty()) throw unread_scalar(a);
    }
  }

  /// The expected values of the outputs that name a file or a generator; nullopt when none does (the reference
  /// provides all).
  std::optional<HostBuffers> reference(const HostBuffers&, const Workload& w, const ProblemKey& p) const override {
    HostBuffers out;
    for (const auto& a : spec_.arguments) {
      if (!a.expected) continue;
      if (a.expected->kind == DataSource::Kind::generator)
        generate(a, *a.expected, static_cast<std::size_t>(element_count(a, w, p)), p, out[a.name]);
      else
        read_data_file(a, *a.expected, element_count(a, w, p), out[a.name]);
    }
    if (out.empty()) return std::nullopt;
    return out;
  }

  /// The comparisons of checks(), on the host.
  std::string verify(const HostBuffers& outputs, const HostBuffers& expected, const Workload& w,
                     const ProblemKey& p) const override {
    for (const auto& a : spec_.arguments) {
      if (!a.is_output()) continue;
      if (!outputs.count(a.name) || !expected.count(a.name)) return "output '" + a.name + "' missing";
      if (outputs.at(a.name).size() != expected.at(a.name).size()) return "output '" + a.name + "' has the wrong size";
    }
    if (spec_.verification.callback) return run_host_verify_hook(spec_.name, outputs, expected);
    return verify_on_host(checks(expected, w, p), outputs, expected, "");
  }

  /// Each output against the reference kernel's: by the policy's comparison kernel where it names one; else
  /// integers bit-exact, floats bit-exact or within the verification policy's absolute + relative error (the
  /// spec's "tolerance" is the default relative one); and at most the policy's fraction of the elements differing.
  std::vector<OutputCheck> checks(const HostBuffers& expected, const Workload& w, const ProblemKey& p) const override {
    std::map<std::string, std::size_t> bytes;
    for (const auto& [name, values] : expected) bytes[name] = values.size();
    return checks_of_sizes(bytes, w, p);
  }

  std::vector<OutputCheck> checks_of_sizes(const std::map<std::string, std::size_t>& expected_bytes, const Workload&,
                                           const ProblemKey&) const override {
    std::vector<OutputCheck> out;
    if (spec_.verification.callback) return out;  // the program's callback decides, on the host
    for (const auto& a : spec_.arguments) {
      if (!a.is_output()) continue;
      auto want = expected_bytes.find(a.name);
      if (want == expected_bytes.end()) return {};  // verify() reports it
      const VerifyPolicy policy = a.verification.over(spec_.verification);
      OutputCheck c;
      c.output = c.expected = a.name;
      c.element_bytes = static_cast<std::uint32_t>(dtype_size(a.dtype));
      c.count = want->second / c.element_bytes;
      c.floating = is_float(a.dtype);
      const double relative = policy.relative.value_or(spec_.tolerance), absolute = policy.absolute.value_or(0);
      if (policy.compare) {
        c.kind = OutputCheck::Kind::user_kernel;
        c.kernel = *policy.compare;
      } else if (is_float(a.dtype) && (relative != 0 || absolute != 0)) {
        c.kind = OutputCheck::Kind::rel_tolerance;
        c.relative = relative;
        c.absolute = absolute;
      }
      c.max_mismatches = static_cast<std::uint64_t>(
          std::floor(policy.max_mismatch_fraction.value_or(0) * static_cast<double>(c.count)));
      out.push_back(c);
    }
    return out;
  }

  double bytes_moved(const Workload& w, const ProblemKey& p) const override {
    DeviceInfo none;
    Config c = spec_.default_config();
    if (spec_.bytes_moved) return static_cast<double>(eval_expr(*spec_.bytes_moved, c, p, none, w));
    double total = 0;
    for (const auto& a : spec_.arguments)
      if (a.kind == ArgSpec::Kind::buffer)
        total += static_cast<double>(eval_expr(a.count, c, p, none, w)) * dtype_size(a.dtype);
    return total;
  }

 private:
  void declare_buffers(LaunchPlan& plan, const Config& c, const Workload& w, const ProblemKey& p,
                       const DeviceInfo& d) const {
    for (const auto& a : spec_.arguments) {
      if (a.kind == ArgSpec::Kind::scalar) continue;  // buffers, and the constants' input data
      std::int64_t count = eval_expr(a.count, c, p, d, w);
      if (count < 1) throw UsageError("buffer '" + a.name + "' would have " + std::to_string(count) + " elements");
      const std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(a.dtype);
      plan.buffers.push_back({a.name, bytes, a.is_output() ? BufferRole::output : BufferRole::input,
                              a.role == ArgSpec::Role::inout ? a.initial_name() : std::string()});
    }
  }

  LaunchStep step(const LaunchSpec& l, const Config& c, const Workload& w, const ProblemKey& p,
                  const DeviceInfo& d) const {
    LaunchStep s;
    s.kernel = c.substitute(l.kernel);  // a C++ entry point may name parameters: "scale<BLOCK_SIZE>"
    auto ev = [&](const Expr& e) {
      std::int64_t v = eval_expr(e, c, p, d, w);
      if (v < 0 || v > 0xffffffffll) throw UsageError("launch expression \"" + e.text() + "\" = " + std::to_string(v));
      return static_cast<std::uint32_t>(v);
    };
    s.grid = {ev(l.grid_x), ev(l.grid_y), ev(l.grid_z)};
    s.block = {ev(l.block_x), ev(l.block_y), ev(l.block_z)};
    s.shared_bytes = ev(l.shared_bytes);
    int scalar = 0;  // the scalars in spec order: the launch API's callers give theirs so
    for (const auto& a : spec_.arguments) {
      if (a.kind == ArgSpec::Kind::constant) continue;  // a module symbol, not a parameter
      if (a.kind == ArgSpec::Kind::buffer) {
        s.args.push_back(KernelArg::buf(a.name));
        continue;
      }
      if (a.value_file && a.value.empty()) {
        throw unread_scalar(a);
      } else if (a.dtype == "float32" || a.dtype == "float64") {
        double v = std::stod(a.value);
        s.args.push_back(a.dtype == "float32" ? KernelArg::f32(v) : KernelArg::f64(v));
      } else {
        std::int64_t v = eval_expr(Expr::parse(a.value), c, p, d, w);
        if (a.dtype == "int32") s.args.push_back(KernelArg::i32(v));
        else if (a.dtype == "uint32") s.args.push_back(KernelArg::u32(v));
        else if (a.dtype == "int64") s.args.push_back(KernelArg::i64(v));
        else s.args.push_back(KernelArg::u64(v));
      }
      s.args.back().scalar = scalar++;
    }
    return s;
  }

  /// Elements of argument a for this problem (the default configuration's count); UsageError below 1.
  std::uint64_t element_count(const ArgSpec& a, const Workload& w, const ProblemKey& p) const {
    const std::int64_t count = eval_expr(a.count, spec_.default_config(), p, DeviceInfo{}, w);
    if (count < 1) throw UsageError("argument '" + a.name + "' would have " + std::to_string(count) + " elements");
    return static_cast<std::uint64_t>(count);
  }

  static SpecError unread_scalar(const ArgSpec& a) {
    return SpecError(a.value_file->pointer, "scalar '" + a.name + "' takes its value from file '" + a.value_file->file +
                                                "', which was not read (the spec was loaded without its files)");
  }

  /// count elements of a (its values, or its expected values) from the generator of d: the Python expression
  /// evaluated for i = 0, 1, ... with the problem dims bound; an int or a float (a bool as 0/1) per element. Throws
  /// SpecError naming the argument and the expression's error.
  static void generate(const ArgSpec& a, const DataSource& d, std::size_t count, const ProblemKey& p,
                       std::vector<unsigned char>& bytes) {
    const auto es = static_cast<std::size_t>(dtype_size(a.dtype));
    bytes.assign(count * es, 0);
    const std::string ptr = d.pointer.empty() ? "/arguments" : d.pointer;
    struct Vars : PyVariableSource {
      std::vector<std::optional<PyValue>> values;  // by position in variables(); "i" is set per element
      std::size_t i_slot = static_cast<std::size_t>(-1);
      std::optional<PyValue> value(std::size_t index, const std::string&) const override { return values[index]; }
    } vars;
    try {
      const PyExpr e = PyExpr::parse(d.generator);
      std::size_t k = 0;
      for (const std::string& name : e.variables()) {
        if (name == "i") vars.i_slot = k;
        auto d = p.dims.find(name);
        vars.values.push_back(d != p.dims.end() ? std::optional<PyValue>(PyValue::integer(d->second)) : std::nullopt);
        ++k;
      }
      const bool floating = is_float(a.dtype);
      unsigned char* out = bytes.data();
      for (std::size_t i = 0; i < count; ++i, out += es) {
        if (vars.i_slot < vars.values.size()) vars.values[vars.i_slot] = PyValue::integer(static_cast<std::int64_t>(i));
        if (auto n = e.eval_int(vars)) {
          store(out, a.dtype, es, *n, static_cast<double>(*n));
          continue;
        }
        const PyValue v = e.eval(vars);
        double f = 0;
        if (const double* x = v.if_float())
          f = *x;
        else if (const std::int64_t* n = v.if_int())
          f = static_cast<double>(*n);
        else if (const bool* b = v.if_bool())
          f = *b ? 1 : 0;
        else
          throw PyExprError("the generator gives a " + std::string(v.type_name()) +
                            ", not a number, for i = " + std::to_string(i));
        if (!floating && f != std::floor(f))
          throw PyExprError("the generator gives " + v.repr() + " for i = " + std::to_string(i) +
                            ", not an integer for " + a.dtype);
        store(out, a.dtype, es, static_cast<std::int64_t>(f), f);
      }
    } catch (const PyExprError& e) {
      throw SpecError(ptr, data_reader(a, d) + ": " + e.what());
    }
  }

  /// count elements of a made by its init (not a file) into bytes: random from rng (the session's stream) or from
  /// a generator of the init's own seed, zero, ones, iota or a constant.
  static void fill(const ArgSpec& a, std::size_t count, Random& session_rng,
                   std::vector<unsigned char>& bytes) {
    const DataSource& d = a.init;
    const auto es = static_cast<std::size_t>(dtype_size(a.dtype));
    bytes.assign(count * es, 0);
    if (d.kind == DataSource::Kind::zero) return;
    const bool floating = is_float(a.dtype);
    if (!floating && !is_integer(a.dtype))
      throw UsageError("argument '" + a.name + "': the tuner makes int8 to uint64, float32 and float64 values, not " +
                       a.dtype + ": give its values in a file (\"init\": {\"file\": ...})");
    std::optional<Random> own;
    if (d.seed) own.emplace(*d.seed);
    Random& rng = own ? *own : session_rng;
    // The default distribution's integers: [1, 1000] (what every integer input was before typed fills), capped for
    // 1-byte types.
    const std::int64_t int_hi = es == 1 ? (a.dtype == "int8" ? 127 : 255) : 1000;
    unsigned char* out = bytes.data();
    for (std::size_t i = 0; i < count; ++i, out += es) {
      switch (d.kind) {
        case DataSource::Kind::ones:
          store(out, a.dtype, es, 1, 1.0);
          break;
        case DataSource::Kind::iota:
          store(out, a.dtype, es, static_cast<std::int64_t>(i), static_cast<double>(i));
          break;
        case DataSource::Kind::constant:
          store(out, a.dtype, es, d.constant.i, d.constant.f);
          break;
        case DataSource::Kind::random:
          if (d.min) {
            if (floating)
              store(out, a.dtype, es, 0, uniform_float(rng, a.dtype, d.min->f, d.max->f));
            else
              store(out, a.dtype, es, scaled_int(rng, d.min->i, d.max->i), 0);
          } else {
            // non-zero: floats in [0.5, 1.5) with a random sign, integers in [1, int_hi]
            const std::uint64_t r = rng.bits();
            if (floating)
              store(out, a.dtype, es, 0,
                    (0.5 + static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0)) *
                        (1.0 - 2.0 * static_cast<double>(r & 1)));  // sign without a branch
            else
              store(out, a.dtype, es, static_cast<std::int64_t>(1 + r % static_cast<std::uint64_t>(int_hi)), 0);
          }
          break;
        case DataSource::Kind::zero:
        case DataSource::Kind::file:
        case DataSource::Kind::generator:
          break;
      }
    }
  }

  /// An integer in [lo, hi] from one rng.uniform() scaled to the range (as the families' inputs are drawn).
  static std::int64_t scaled_int(Random& rng, std::int64_t lo, std::int64_t hi) {
    const double span = static_cast<double>(hi) - static_cast<double>(lo) + 1.0;
    auto k = static_cast<std::int64_t>(std::floor(rng.uniform() * span));
    if (k > hi - lo) k = hi - lo;  // rounding of span near 2^53
    return lo + k;
  }

  /// Uniform in [lo, hi) in the precision of dtype (a float32 that rounds up to hi is moved below it).
  static double uniform_float(Random& rng, const std::string& dtype, double lo, double hi) {
    const double v = lo + (hi - lo) * rng.uniform();
    if (dtype != "float32") return v < hi ? v : std::nextafter(hi, lo);
    const auto f = static_cast<float>(v), top = static_cast<float>(hi);
    return f < top ? f : std::nextafter(top, static_cast<float>(lo));
  }

  /// Writes one element: the integer i (its low es bytes, little-endian) for integer dtypes, f for float32/float64.
  static void store(unsigned char* dst, const std::string& dtype, std::size_t es, std::int64_t i, double f) {
    if (dtype == "float32") {
      const auto x = static_cast<float>(f);
      std::memcpy(dst, &x, 4);
    } else if (dtype == "float64") {
      std::memcpy(dst, &f, 8);
    } else {
      std::memcpy(dst, &i, es);
    }
  }
};

}  // namespace

std::shared_ptr<const KernelAdapter> make_user_adapter(const TuningSpec& spec) {
  return std::make_shared<UserAdapter>(spec);
}

}  // namespace autotune::kernels
