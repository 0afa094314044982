// Adapter for user kernels described entirely by their spec (family "user"): buffers and scalars from
// "arguments", launches from "launch", expected outputs from the spec's reference kernel.
#include <cmath>
#include <cstring>
#include <random>

#include "tuner/core/check.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/registry.hpp"

namespace autotune::kernels {

namespace {

bool is_float(const std::string& d) { return d == "float32" || d == "float64"; }

class UserAdapter : public KernelAdapter {
 public:
  explicit UserAdapter(TuningSpec s) : KernelAdapter(std::move(s)) {}

  std::vector<std::string> compile_options(const Workload&) const override { return {}; }

  LaunchPlan plan(const Config& c, const Workload& w, const ProblemKey& p, const DeviceInfo& d) const override {
    LaunchPlan plan;
    declare_buffers(plan, c, w, p, d);
    for (const auto& l : spec_.launches) plan.steps.push_back(step(l, c, w, p, d));
    for (const auto& a : spec_.arguments)
      if (a.kind == ArgSpec::Kind::constant) plan.constants.push_back({a.symbol, a.name});
    return plan;
  }

  std::optional<LaunchPlan> reference_plan(const Workload& w, const ProblemKey& p, const DeviceInfo& d) const override {
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

  std::string reference_source() const override { return spec_.reference->source_text; }

  HostBuffers make_inputs(const Workload& w, const ProblemKey& p, std::uint64_t seed) const override {
    HostBuffers out;
    std::mt19937_64 rng(seed);
    DeviceInfo none;
    Config c = spec_.default_config();
    for (const auto& a : spec_.arguments) {
      if (!a.is_input()) continue;
      std::int64_t count = eval_expr(a.count, c, p, none, w);
      int es = dtype_size(a.dtype);
      std::vector<unsigned char> bytes(static_cast<std::size_t>(count) * es);
      for (std::int64_t i = 0; i < count; ++i) {
        double v = 0;
        if (a.init == "zero") v = 0;
        else if (a.init == "ones") v = 1;
        else if (a.init == "iota") v = static_cast<double>(i);
        else {
          // random, non-zero: floats in [0.5, 1.5) with a random sign, integers in [1, 1000]
          std::uint64_t r = rng();
          if (is_float(a.dtype)) v = (0.5 + static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0)) * ((r & 1) ? -1 : 1);
          else v = static_cast<double>(1 + r % 1000);
        }
        put(bytes.data() + i * es, a.dtype, v);
      }
      out[a.name] = std::move(bytes);
    }
    return out;
  }

  std::optional<HostBuffers> reference(const HostBuffers&, const Workload&, const ProblemKey&) const override {
    return std::nullopt;  // the reference kernel provides the expected outputs
  }

  /// The comparisons of checks(), on the host.
  std::string verify(const HostBuffers& outputs, const HostBuffers& expected, const Workload& w,
                     const ProblemKey& p) const override {
    for (const auto& a : spec_.arguments) {
      if (a.kind != ArgSpec::Kind::buffer || a.role != ArgSpec::Role::output) continue;
      if (!outputs.count(a.name) || !expected.count(a.name)) return "output '" + a.name + "' missing";
      if (outputs.at(a.name).size() != expected.at(a.name).size()) return "output '" + a.name + "' has the wrong size";
    }
    return verify_on_host(checks(expected, w, p), outputs, expected, "");
  }

  /// Each output against the reference kernel's: by the policy's comparison kernel where it names one; else
  /// integers bit-exact, floats bit-exact or within the verification policy's absolute + relative error (the
  /// spec's "tolerance" is the default relative one); and at most the policy's fraction of the elements differing.
  std::vector<OutputCheck> checks(const HostBuffers& expected, const Workload&, const ProblemKey&) const override {
    std::vector<OutputCheck> out;
    for (const auto& a : spec_.arguments) {
      if (a.kind != ArgSpec::Kind::buffer || a.role != ArgSpec::Role::output) continue;
      auto want = expected.find(a.name);
      if (want == expected.end()) return {};  // verify() reports it
      const VerifyPolicy policy = a.verification.over(spec_.verification);
      OutputCheck c;
      c.output = c.expected = a.name;
      c.element_bytes = static_cast<std::uint32_t>(dtype_size(a.dtype));
      c.count = want->second.size() / c.element_bytes;
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
      plan.buffers.push_back({a.name, static_cast<std::size_t>(count) * dtype_size(a.dtype),
                              a.role == ArgSpec::Role::input ? BufferRole::input : BufferRole::output});
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
    for (const auto& a : spec_.arguments) {
      if (a.kind == ArgSpec::Kind::constant) continue;  // a module symbol, not a parameter
      if (a.kind == ArgSpec::Kind::buffer) {
        s.args.push_back(KernelArg::buf(a.name));
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
    }
    return s;
  }

  static void put(unsigned char* dst, const std::string& dtype, double v) {
    if (dtype == "float32") { float f = static_cast<float>(v); std::memcpy(dst, &f, 4); }
    else if (dtype == "float64") { std::memcpy(dst, &v, 8); }
    else if (dtype == "int32" || dtype == "uint32") { auto x = static_cast<std::int32_t>(v); std::memcpy(dst, &x, 4); }
    else if (dtype == "int64" || dtype == "uint64") { auto x = static_cast<std::int64_t>(v); std::memcpy(dst, &x, 8); }
    else throw UsageError("user kernels support int32, uint32, int64, uint64, float32, float64 buffers, not " + dtype);
  }
  static double get(const unsigned char* src, const std::string& dtype) {
    if (dtype == "float32") { float f; std::memcpy(&f, src, 4); return f; }
    if (dtype == "float64") { double d; std::memcpy(&d, src, 8); return d; }
    if (dtype == "int32") { std::int32_t x; std::memcpy(&x, src, 4); return x; }
    if (dtype == "uint32") { std::uint32_t x; std::memcpy(&x, src, 4); return x; }
    if (dtype == "int64") { std::int64_t x; std::memcpy(&x, src, 8); return static_cast<double>(x); }
    std::uint64_t x; std::memcpy(&x, src, 8); return static_cast<double>(x);
  }
};

}  // namespace

std::shared_ptr<const KernelAdapter> make_user_adapter(const TuningSpec& spec) {
  return std::make_shared<UserAdapter>(spec);
}

}  // namespace autotune::kernels
