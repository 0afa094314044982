// Internal to tuner/cuda: the messages between the CUDA backend and its GPU executor (in a worker process or
// in-process), and the Writer/Reader they are made of (also used by the compile worker).
//
// Each request is one struct with an Op and a fields() list; encode() and decode() walk that list, so the
// order of a message's fields is written in exactly one place. A reply is a ReplyStatus byte, then for ok the
// fields of the request's Reply struct, else an error (ErrorReply). Native byte order: both ends are the same
// executable.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "tuner/core/check.hpp"
#include "tuner/core/draw.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/plan.hpp"
#include "tuner/core/sampling.hpp"
#include "tuner/core/trial.hpp"

namespace autotune::cuda::detail {

/// Appends plain values to a message.
class Writer {
 public:
  template <typename T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const char*>(&v);
    buf_.append(p, sizeof v);
  }
  void u8(std::uint8_t v) { pod(v); }
  void i32(std::int32_t v) { pod(v); }
  void u32(std::uint32_t v) { pod(v); }
  void i64(std::int64_t v) { pod(v); }
  void u64(std::uint64_t v) { pod(v); }
  void f64(double v) { pod(v); }
  void str(const std::string& s) { bytes(s.data(), s.size()); }
  void bytes(const void* data, std::size_t n) {
    u64(n);
    buf_.append(static_cast<const char*>(data), n);
  }
  std::string& buffer() { return buf_; }

 private:
  std::string buf_;
};

/// Reads what a Writer wrote; throws EnvironmentError on a truncated message.
class Reader {
 public:
  explicit Reader(const std::string& buf, std::size_t pos = 0) : buf_(buf), pos_(pos) {}
  template <typename T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T v;
    std::memcpy(&v, buf_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::uint8_t u8() { return pod<std::uint8_t>(); }
  std::int32_t i32() { return pod<std::int32_t>(); }
  std::uint32_t u32() { return pod<std::uint32_t>(); }
  std::int64_t i64() { return pod<std::int64_t>(); }
  std::uint64_t u64() { return pod<std::uint64_t>(); }
  double f64() { return pod<double>(); }
  std::string str() {
    const std::uint64_t n = u64();
    need(n);
    std::string s = buf_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  /// A byte string into an existing vector (its capacity is reused).
  void bytes_into(std::vector<unsigned char>& v) {
    const std::uint64_t n = u64();
    need(n);
    v.assign(buf_.begin() + static_cast<std::ptrdiff_t>(pos_), buf_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
  }
  /// A count of elements that are each at least min_bytes long: refuses counts the rest cannot hold.
  std::uint64_t count(std::size_t min_bytes) {
    const std::uint64_t n = u64();
    if (min_bytes > 0 && n > (buf_.size() - pos_) / min_bytes) truncated();
    return n;
  }

 private:
  void need(std::uint64_t n) const {
    if (n > buf_.size() - pos_) truncated();
  }
  [[noreturn]] static void truncated() {
    throw EnvironmentError("truncated message between the CUDA backend and its GPU worker");
  }
  const std::string& buf_;
  std::size_t pos_;
};

// ---- values ---------------------------------------------------------------------------------------------
// put()/get() for every type a message holds: arithmetic values, bool, strings, byte strings, vectors, the
// core types (plans, device properties, checks, draws, sampling rules) and the structs below (by their fields()).

void put(Writer& w, const std::string& v);
void get(Reader& r, std::string& v);
void put(Writer& w, const std::vector<unsigned char>& v);
void get(Reader& r, std::vector<unsigned char>& v);
void put(Writer& w, bool v);
void get(Reader& r, bool& v);
void put(Writer& w, const LaunchPlan& plan);
void get(Reader& r, LaunchPlan& plan);
void put(Writer& w, const DeviceInfo& v);
void get(Reader& r, DeviceInfo& v);
void put(Writer& w, const OutputCheck& c);
void get(Reader& r, OutputCheck& c);
void put(Writer& w, const DrawRecipe& d);
void get(Reader& r, DrawRecipe& d);
void put(Writer& w, const PrefixRecipe& p);
void get(Reader& r, PrefixRecipe& p);
void put(Writer& w, const DrawChunk& v);
void get(Reader& r, DrawChunk& v);
void put(Writer& w, const Mismatch& v);
void get(Reader& r, Mismatch& v);
void put(Writer& w, const CheckVerdict& v);
void get(Reader& r, CheckVerdict& v);
void put(Writer& w, const SamplingRule& v);
void get(Reader& r, SamplingRule& v);
void put(Writer& w, const Metric& v);
void get(Reader& r, Metric& v);
void put(Writer& w, const Observation& v);
void get(Reader& r, Observation& v);

/// Accepts any field: for detecting types with a fields() list.
struct AnyField {
  template <typename X>
  void operator()(X&) const {}
};

template <typename T>
std::enable_if_t<std::is_arithmetic_v<T>> put(Writer& w, T v) {
  w.pod(v);
}
template <typename T>
std::enable_if_t<std::is_arithmetic_v<T>> get(Reader& r, T& v) {
  v = r.pod<T>();
}
template <typename T>
auto put(Writer& w, const T& v) -> decltype(T::fields(std::declval<T&>(), AnyField{})) {
  T::fields(v, [&w](const auto& f) { put(w, f); });
}
template <typename T>
auto get(Reader& r, T& v) -> decltype(T::fields(std::declval<T&>(), AnyField{})) {
  T::fields(v, [&r](auto& f) { get(r, f); });
}
template <typename T>
void put(Writer& w, const std::vector<T>& v) {
  w.u64(v.size());
  for (const T& e : v) put(w, e);
}
template <typename T>
void get(Reader& r, std::vector<T>& v) {
  v.resize(r.count(1));
  for (T& e : v) get(r, e);
}

// ---- requests and replies -------------------------------------------------------------------------------

/// Request opcodes (first byte of a request).
enum class Op : std::uint8_t {
  init = 1,
  mem_info,
  release,
  upload,
  restore_inputs,
  load_run,
  time,
  unload,
  copy_bandwidth,
  quit,
  tool_kernels,
  compare_kernels,
  draw,
  prefix,
};

/// First byte of a reply.
enum class ReplyStatus : std::uint8_t {
  ok = 0,
  cuda_error = 1,         // ErrorReply with code and sticky
  usage_error = 2,        // ErrorReply message (a malformed plan, a problem that does not fit)
  environment_error = 3,  // ErrorReply message (no driver, context lost)
};

/// Reply body of a request without results.
struct NoReply {
  template <typename S, typename F>
  static void fields(S&, F&&) {}
};

/// Binds GPU `ordinal`: context, stream, events.
struct InitRequest {
  static constexpr Op kOp = Op::init;
  struct Reply {
    DeviceInfo device;
    template <typename S, typename F>
    static void fields(S& s, F&& f) { f(s.device); }
  };
  std::int32_t ordinal = 0;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.ordinal); }
};

/// Free and total device memory (cuMemGetInfo).
struct MemInfoRequest {
  static constexpr Op kOp = Op::mem_info;
  struct Reply {
    std::uint64_t free_bytes = 0, total_bytes = 0;
    template <typename S, typename F>
    static void fields(S& s, F&& f) { f(s.free_bytes); f(s.total_bytes); }
  };
  template <typename S, typename F>
  static void fields(S&, F&&) {}
};

/// Frees inputs, expected values, outputs, scratch and the loaded module.
struct ReleaseRequest {
  static constexpr Op kOp = Op::release;
  using Reply = NoReply;
  template <typename S, typename F>
  static void fields(S&, F&&) {}
};

/// A buffer from the shared region `fd` to the device: an input, which stays in the region until release
/// (restore_inputs copies it from there again), or expected values for the comparison kernels, which stay on
/// the device until release (the region may be reused at once).
struct UploadRequest {
  static constexpr Op kOp = Op::upload;
  using Reply = NoReply;
  std::string name;
  bool expected = false;
  std::int32_t fd = -1;
  std::uint64_t region_bytes = 0, offset = 0, bytes = 0;
  template <typename S, typename F>
  static void fields(S& s, F&& f) {
    f(s.name); f(s.expected); f(s.fd); f(s.region_bytes); f(s.offset); f(s.bytes);
  }
};

/// Draws an input on the device with the tool kernels' draw kernel (which must be loaded): it stays on the device
/// until release, and restore_inputs draws it again. Replies with the summary of each chunk of the draw.
struct DrawRequest {
  static constexpr Op kOp = Op::draw;
  struct Reply {
    std::vector<DrawChunk> chunks;
    template <typename S, typename F>
    static void fields(S& s, F&& f) {
      f(s.chunks);
    }
  };
  DrawRecipe recipe;
  template <typename S, typename F>
  static void fields(S& s, F&& f) {
    f(s.recipe);
  }
};

/// Makes the expected values of a PrefixRecipe on the device from its input there, with the tool kernels' prefix
/// kernels (which must be loaded); they stay on the device until release, like uploaded expected values. Replies
/// with a hash of each chunk's expected values.
struct PrefixRequest {
  static constexpr Op kOp = Op::prefix;
  struct Reply {
    std::vector<std::uint64_t> hashes;  // per chunk: the FNV-1a hash of its expected values (device_kernels.hpp)
    template <typename S, typename F>
    static void fields(S& s, F&& f) {
      f(s.hashes);
    }
  };
  PrefixRecipe recipe;
  template <typename S, typename F>
  static void fields(S& s, F&& f) {
    f(s.recipe);
  }
};

/// Uploads every input again from the shared region, or draws it again (after a wrong result, which may have
/// written them).
struct RestoreInputsRequest {
  static constexpr Op kOp = Op::restore_inputs;
  using Reply = NoReply;
  template <typename S, typename F>
  static void fields(S&, F&&) {}
};

/// Where a verification output was placed in the shared region.
struct OutputPlace {
  std::string name;
  std::uint64_t offset = 0, bytes = 0;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.name); f(s.offset); f(s.bytes); }
};

/// Loads `cubin`, poisons outputs and scratch, runs the plan once and synchronises. Then, with copy_outputs,
/// copies the outputs into the shared region fd from offset outputs_at on (after the inputs); and runs every
/// check as a comparison kernel against the expected values on the device, replying with its verdict.
struct LoadRunRequest {
  static constexpr Op kOp = Op::load_run;
  struct Reply {
    std::vector<OutputPlace> outputs;    // with copy_outputs
    std::vector<CheckVerdict> verdicts;  // one per check, in order
    /// With repeat: "" when a second run on the same inputs gave the same output bytes, else what differed.
    std::string repeat_mismatch;
    template <typename S, typename F>
    static void fields(S& s, F&& f) {
      f(s.outputs);
      f(s.verdicts);
      f(s.repeat_mismatch);
    }
  };
  LaunchPlan plan;
  std::vector<unsigned char> cubin;
  std::int32_t fd = -1;
  std::uint64_t region_bytes = 0, outputs_at = 0;
  bool copy_outputs = true;
  std::vector<OutputCheck> checks;
  /// Run the plan a second time on poisoned outputs and compare the output bytes of the two runs
  /// (TimingOptions::repeat_check).
  bool repeat = false;
  template <typename S, typename F>
  static void fields(S& s, F&& f) {
    f(s.plan);
    f(s.cubin);
    f(s.fd);
    f(s.region_bytes);
    f(s.outputs_at);
    f(s.copy_outputs);
    f(s.checks);
    f(s.repeat);
  }
};

/// Warm-up, then samples of the loaded plan between events (each after an L2 flush when flush_l2) until the
/// rule is satisfied; with observe (and NVML on the worker's side), NVML samples meanwhile and, for
/// energy_ms > 0, an energy window of back-to-back runs of about that long after the samples
/// (observer.hpp); with metrics (and CUPTI on the worker's side), a replay of the plan for the hardware counters
/// follows (counter_observer.hpp); unloads the module.
struct TimeRequest {
  static constexpr Op kOp = Op::time;
  struct Reply {
    std::vector<double> samples_ms;
    Observation observed;  // method "" when nothing was observed
    std::string observer_note;  // why an observer asked for observed nothing ("nvml: ..."), "" otherwise
    /// The configuration lost at the warm-up probe (SamplingRule::lost_probe): samples_ms holds the probe alone.
    bool lost_probe = false;
    template <typename S, typename F>
    static void fields(S& s, F&& f) {
      f(s.samples_ms);
      f(s.observed);
      f(s.observer_note);
      f(s.lost_probe);
    }
  };
  std::int32_t warmup = 0;
  bool flush_l2 = true;
  SamplingRule rule;
  bool observe = true;
  double energy_ms = 0;
  std::int32_t observe_interval_us = 2000;
  /// Hardware counters to take in a replay after the samples (counters.hpp: short or CUPTI names); none = no replay.
  std::vector<std::string> metrics;
  template <typename S, typename F>
  static void fields(S& s, F&& f) {
    f(s.warmup);
    f(s.flush_l2);
    f(s.rule);
    f(s.observe);
    f(s.energy_ms);
    f(s.observe_interval_us);
    f(s.metrics);
  }
};

/// Unloads the module of load_run.
struct UnloadRequest {
  static constexpr Op kOp = Op::unload;
  using Reply = NoReply;
  template <typename S, typename F>
  static void fields(S&, F&&) {}
};

/// Device-to-device copy bandwidth in GB/s (bytes read + written).
struct CopyBandwidthRequest {
  static constexpr Op kOp = Op::copy_bandwidth;
  struct Reply {
    double gbps = 0;
    template <typename S, typename F>
    static void fields(S& s, F&& f) { f(s.gbps); }
  };
  template <typename S, typename F>
  static void fields(S&, F&&) {}
};

/// The worker exits after replying.
struct QuitRequest {
  static constexpr Op kOp = Op::quit;
  using Reply = NoReply;
  template <typename S, typename F>
  static void fields(S&, F&&) {}
};

/// A module for the executor to keep loaded, compiled for this GPU; it replaces the previous module of its kind.
template <Op op>
struct ModuleRequest {
  static constexpr Op kOp = op;
  using Reply = NoReply;
  std::vector<unsigned char> cubin;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.cubin); }
};
/// The tuner's own kernels (device_kernels.hpp): the L2 flush, which time then uses instead of a memset, and the
/// comparison kernels of the checks.
using ToolKernelsRequest = ModuleRequest<Op::tool_kernels>;
/// The user's comparison kernels (OutputCheck::Kind::user_kernel), kept until the next such module.
using CompareKernelsRequest = ModuleRequest<Op::compare_kernels>;

/// The body of a failed reply.
struct ErrorReply {
  std::int32_t code = 0;  // CUresult (cuda_error)
  bool sticky = false;    // cuda_error: the context is lost
  std::string message;
  template <typename S, typename F>
  static void fields(S& s, F&& f) { f(s.code); f(s.sticky); f(s.message); }
};

/// A request as bytes: its Op, then its fields.
template <typename Request>
std::string encode(const Request& q) {
  Writer w;
  w.u8(static_cast<std::uint8_t>(Request::kOp));
  put(w, q);
  return std::move(w.buffer());
}

/// The fields of a request whose Op byte has been read.
template <typename Request>
Request decode(Reader& r) {
  Request q;
  get(r, q);
  return q;
}

/// An ok reply carrying body.
template <typename Body>
std::string encode_ok(const Body& body) {
  Writer w;
  w.u8(static_cast<std::uint8_t>(ReplyStatus::ok));
  put(w, body);
  return std::move(w.buffer());
}

/// A failed reply.
std::string encode_error(ReplyStatus status, const ErrorReply& e);

/// Bytes of a shared region that holds every output buffer of plan (each at a 64-byte aligned offset).
std::size_t output_region_bytes(const LaunchPlan& plan);

}  // namespace autotune::cuda::detail
