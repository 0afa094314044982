#include "tuner/cuda/messages.hpp"

#include <algorithm>

namespace autotune::cuda::detail {

namespace {

/// An enum stored as one byte; get() refuses values above max.
template <typename E>
void put_enum(Writer& w, E e) {
  w.u8(static_cast<std::uint8_t>(e));
}
template <typename E>
void get_enum(Reader& r, E& e, E max, const char* what) {
  const std::uint8_t v = r.u8();
  if (v > static_cast<std::uint8_t>(max)) throw UsageError(std::string("unknown ") + what + " " + std::to_string(v));
  e = static_cast<E>(v);
}

// The fields of the plan's parts, in message order (one list for put and get).
template <typename S, typename F>
void buffer_fields(S& b, F&& f) {
  f(b.name);
  f(b.bytes);
  f(b.initial);
}
template <typename S, typename F>
void arg_fields(S& a, F&& f) {
  f(a.buffer);
  f(a.i);
  f(a.f);
  f(a.offset_bytes);
}
template <typename S, typename F>
void step_fields(S& s, F&& f) {
  f(s.kernel);
  for (auto& v : s.grid) f(v);
  for (auto& v : s.block) f(v);
  f(s.shared_bytes);
  f(s.buffer);
  f(s.value);
  f(s.count);
  f(s.offset_bytes);
}
template <typename S, typename F>
void check_fields(S& c, F&& f) {
  f(c.output);
  f(c.expected);
  f(c.tolerance);
  f(c.kernel);
  f(c.element_bytes);
  f(c.count);
  f(c.relative);
  f(c.absolute);
  f(c.max_mismatches);
  f(c.floating);
  f(c.reference_bytes);
}

template <typename S, typename F>
void recipe_fields(S& d, F&& f) {
  f(d.name);
  f(d.seed);
  f(d.count);
  f(d.chunk);
  f(d.lo);
  f(d.hi);
  f(d.sum);
}

template <typename S, typename F>
void prefix_fields(S& p, F&& f) {
  f(p.input);
  f(p.values);
  f(p.tolerance);
  f(p.max);
  f(p.exclusive);
  f(p.scale);
  f(p.count);
  f(p.chunk);
}

template <typename S, typename F>
void chunk_fields(S& c, F&& f) {
  f(c.sum);
  f(c.comp);
  f(c.max_abs);
  f(c.min);
  f(c.max);
  f(c.hash);
  f(c.wrapped);
}

template <typename S, typename F>
void mismatch_fields(S& m, F&& f) {
  f(m.index);
  f(m.got);
  f(m.expected);
  f(m.tolerance);
}
template <typename S, typename F>
void verdict_fields(S& v, F&& f) {
  f(v.mismatches);
  f(v.examples);
}
template <typename S, typename F>
void rule_fields(S& v, F&& f) {
  f(v.min_samples);
  f(v.max_samples);
  f(v.stable_ci);
  f(v.max_seconds);
  f(v.race_above_ms);
  f(v.race_after);
  f(v.race_probe_factor);
}

}  // namespace

void put(Writer& w, const std::string& v) { w.str(v); }
void get(Reader& r, std::string& v) { v = r.str(); }
void put(Writer& w, const std::vector<unsigned char>& v) { w.bytes(v.data(), v.size()); }
void get(Reader& r, std::vector<unsigned char>& v) { r.bytes_into(v); }
void put(Writer& w, bool v) { w.u8(v ? 1 : 0); }
void get(Reader& r, bool& v) { v = r.u8() != 0; }

void put(Writer& w, const LaunchPlan& plan) {
  auto out = [&w](const auto& v) { put(w, v); };
  w.u64(plan.buffers.size());
  for (const auto& b : plan.buffers) {
    buffer_fields(b, out);
    put_enum(w, b.role);
  }
  w.u64(plan.steps.size());
  for (const auto& s : plan.steps) {
    put_enum(w, s.kind);
    step_fields(s, out);
    w.u64(s.args.size());
    for (const auto& a : s.args) {
      put_enum(w, a.kind);
      arg_fields(a, out);
    }
  }
  w.u64(plan.constants.size());
  for (const auto& c : plan.constants) {
    put(w, c.symbol);
    put(w, c.buffer);
  }
}

void get(Reader& r, LaunchPlan& plan) {
  auto in = [&r](auto& v) { get(r, v); };
  plan.buffers.resize(r.count(9));
  for (auto& b : plan.buffers) {
    buffer_fields(b, in);
    get_enum(r, b.role, BufferRole::state, ("role of launch plan buffer '" + b.name + "':").c_str());
  }
  plan.steps.resize(r.count(1));
  for (auto& s : plan.steps) {
    get_enum(r, s.kind, LaunchStep::Kind::memset32, "launch step kind");
    step_fields(s, in);
    s.args.resize(r.count(1));
    for (auto& a : s.args) {
      get_enum(r, a.kind, KernelArg::Kind::f64, "kernel argument kind");
      arg_fields(a, in);
    }
  }
  plan.constants.resize(r.count(2));
  for (auto& c : plan.constants) {
    get(r, c.symbol);
    get(r, c.buffer);
  }
}

void put(Writer& w, const DeviceInfo& v) {
  DeviceInfo::for_each_field(v, [&w](const char*, const auto& f) { put(w, f); });
}
void get(Reader& r, DeviceInfo& v) {
  DeviceInfo::for_each_field(v, [&r](const char*, auto& f) { get(r, f); });
}

void put(Writer& w, const OutputCheck& c) {
  put_enum(w, c.kind);
  check_fields(c, [&w](const auto& v) { put(w, v); });
}
void get(Reader& r, OutputCheck& c) {
  get_enum(r, c.kind, OutputCheck::Kind::user_kernel, "comparison kind");
  check_fields(c, [&r](auto& v) { get(r, v); });
}

void put(Writer& w, const DrawRecipe& d) {
  put_enum(w, d.kind);
  recipe_fields(d, [&w](const auto& v) { put(w, v); });
}
void get(Reader& r, DrawRecipe& d) {
  get_enum(r, d.kind, DrawRecipe::Kind::float64_signed, "draw kind");
  recipe_fields(d, [&r](auto& v) { get(r, v); });
}
void put(Writer& w, const PrefixRecipe& p) {
  put_enum(w, p.elem);
  prefix_fields(p, [&w](const auto& v) { put(w, v); });
}
void get(Reader& r, PrefixRecipe& p) {
  get_enum(r, p.elem, PrefixRecipe::Elem::float64, "prefix element type");
  prefix_fields(p, [&r](auto& v) { get(r, v); });
}
void put(Writer& w, const DrawChunk& v) {
  chunk_fields(v, [&w](const auto& f) { put(w, f); });
}
void get(Reader& r, DrawChunk& v) {
  chunk_fields(v, [&r](auto& f) { get(r, f); });
}

void put(Writer& w, const Mismatch& v) { mismatch_fields(v, [&w](const auto& f) { put(w, f); }); }
void get(Reader& r, Mismatch& v) { mismatch_fields(v, [&r](auto& f) { get(r, f); }); }
void put(Writer& w, const CheckVerdict& v) { verdict_fields(v, [&w](const auto& f) { put(w, f); }); }
void get(Reader& r, CheckVerdict& v) { verdict_fields(v, [&r](auto& f) { get(r, f); }); }
void put(Writer& w, const SamplingRule& v) { rule_fields(v, [&w](const auto& f) { put(w, f); }); }
void get(Reader& r, SamplingRule& v) { rule_fields(v, [&r](auto& f) { get(r, f); }); }
void put(Writer& w, const Metric& v) {
  put(w, v.name);
  put(w, v.value);
  put(w, v.unit);
}
void get(Reader& r, Metric& v) {
  get(r, v.name);
  get(r, v.value);
  get(r, v.unit);
}
void put(Writer& w, const Observation& v) {
  Observation::for_each_field(v, [&w](const char*, const auto& f) { put(w, f); });
}
void get(Reader& r, Observation& v) {
  Observation::for_each_field(v, [&r](const char*, auto& f) { get(r, f); });
}

std::string encode_error(ReplyStatus status, const ErrorReply& e) {
  Writer w;
  w.u8(static_cast<std::uint8_t>(status));
  put(w, e);
  return std::move(w.buffer());
}

std::size_t output_region_bytes(const LaunchPlan& plan) {
  std::size_t total = 0;
  for (const auto& b : plan.buffers) {
    if (b.role == BufferRole::output) total += (b.bytes + 63) / 64 * 64;
  }
  return std::max<std::size_t>(total, 64);
}

}  // namespace autotune::cuda::detail
