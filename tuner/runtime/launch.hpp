// Launch API for the built-in kernel families: looks up the best configuration for the current GPU and
// problem size in a tuning database, loads its CUBIN from the binary cache (or compiles it once with NVRTC
// and stores it), and launches it on the caller's stream.
//
//     autotune::Reduction<float> r("tune.db");
//     r.sum(d_in, n, d_out, stream);               // d_in, d_out from cudaMalloc; stream a cudaStream_t
//     autotune::Scan<int> s("tune.db");
//     s.exclusive_sum(d_in, n, d_out, stream);
//
// Installed with the runtime library (CMake target autotune::runtime); no CUDA header is needed: device
// pointers are any pointer or CUdeviceptr value, streams any CUstream / cudaStream_t (nullptr = the legacy
// default stream). The work runs in the device's primary context, the one the CUDA runtime API uses, so
// memory and streams of the runtime API can be passed directly. Documented in docs/lookup.md.
//
// Errors are exceptions (tuner/core/error.hpp): EnvironmentError with the CUDA or NVRTC message (no driver,
// launch refused, compilation failed), UsageError (a workload the kernel lacks, a size of 0).
// Thread-safety: one object may be used from several threads; its calls are serialised. Calls on different
// streams are ordered where they share temporary storage (an event, no host synchronisation).
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tuner/core/error.hpp"
#include "tuner/lookup/lookup.hpp"

namespace autotune {

/// A device address: a (typed or void) pointer from cudaMalloc, or a CUdeviceptr value.
class DevicePtr {
 public:
  DevicePtr() = default;
  DevicePtr(std::nullptr_t) {}
  template <class T>
  DevicePtr(T* p) : v_(reinterpret_cast<std::uintptr_t>(p)) {}
  /// CUdeviceptr (unsigned long long) or std::uintptr_t.
  template <class I, std::enable_if_t<std::is_integral_v<I> && std::is_unsigned_v<I> &&
                                          sizeof(I) == sizeof(std::uintptr_t), int> = 0>
  DevicePtr(I v) : v_(static_cast<std::uintptr_t>(v)) {}
  std::uintptr_t value() const { return v_; }

 private:
  std::uintptr_t v_ = 0;
};

/// A stream handle: CUstream or cudaStream_t (both pointers to an opaque struct), or nullptr for the legacy
/// default stream. cudaStreamPerThread works as well.
class Stream {
 public:
  Stream() = default;
  Stream(std::nullptr_t) {}
  template <class S>
  Stream(S* s) : h_(const_cast<void*>(static_cast<const void*>(s))) {}
  void* handle() const { return h_; }

 private:
  void* h_ = nullptr;
};

/// Where the binary of a launch came from.
enum class BinarySource {
  none,       // not prepared yet
  memory,     // already loaded by this object
  database,   // the tuning database's binary cache (filled by `autotune tune`)
  cache_dir,  // the cache directory beside the database
  compiled,   // compiled by NVRTC now (then stored, if possible)
};
const char* to_string(BinarySource s);

struct RuntimeOptions {
  /// GPU ordinal; -1: the device of the calling thread's current context (as set by cudaSetDevice), else 0.
  int device = -1;
  /// Where compiled binaries go when the database is not writable; "" = "<db_path>.cubin/" beside the
  /// database. Also read from on lookups.
  std::string cache_dir;
  /// Store binaries compiled at run time (in the database if it is writable, else in cache_dir).
  bool store_binaries = true;
  /// Serve only configurations whose results are the same bits run to run: the lookup passes over recorded ones the
  /// spec marks "nondeterministic" (the reduction's atomic final step for float sums), and where it falls back to
  /// the spec default that is not deterministic either, preparing a call throws UsageError. Also on where the
  /// environment variable AUTOTUNE_DETERMINISTIC is 1, true, yes or on. docs/lookup.md "Deterministic results".
  bool deterministic = false;
  /// Online tuning of kernels of your own (autotune::Kernel; docs/lookup.md "Online tuning"): where a problem has no
  /// exact answer in the database, the application's own launches try configurations (each verified against the
  /// looked-up one on a shadow of the outputs before its outputs are used), settle on the fastest and record it in
  /// the database. "" = the environment variable AUTOTUNE_ONLINE decides (off when unset); "on" for the defaults, or
  /// items such as "200" (launches), "30s" (seconds), "samples=3", "strategy=NAME", "record=0". A malformed value is
  /// a UsageError when the Kernel is made.
  std::string online;
};

/// What a call runs: the looked-up configuration with its match level and provenance, and its binary.
struct Choice {
  std::string kernel;          // spec name, e.g. "reduction"
  std::string workload;        // e.g. "float32/sum"
  std::string problem;         // e.g. "n=1000000"
  std::string device;          // GPU it runs on
  lookup::Answer answer;       // config, match level, provenance (see tuner/lookup/lookup.hpp)
  std::string config_text;     // "BLOCK_SIZE=256 VARIANT=warp_shuffle ..."
  std::string binary_key;      // key in the binary cache (cuda::compile_recipe)
  BinarySource binary = BinarySource::none;
  double compile_ms = 0;       // NVRTC time when compiled here
  double prepare_ms = 0;       // lookup + binary + module load + plan, the first time
  std::size_t scratch_bytes = 0;  // temporary device memory the plan needs
  std::string note;            // e.g. a corrupt cached binary that was recompiled
  /// autotune::Kernel with AUTOTUNE_CAPTURE naming the kernel: the capture written at the first launch of this
  /// problem, or "not captured: " and why; "" before that launch and when captures are off.
  std::string capture;
  /// Online tuning (RuntimeOptions::online) of this problem: "searching: ...", "settled on ...", "off: " and why;
  /// "" where it is not on or the problem has an exact answer.
  std::string online;
};

namespace detail {

class Family;

template <class T>
constexpr const char* dtype_name() {
  if constexpr (std::is_same_v<T, float>) return "float32";
  else if constexpr (std::is_same_v<T, double>) return "float64";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else static_assert(sizeof(T) == 0, "autotune runtime: element type must be float, double or std::int32_t");
}

/// Shared implementation of the family classes (tuner/runtime/family.cpp).
class FamilyHandle {
 public:
  /// kernel: built-in spec name; buffers: the plan buffer names the caller supplies, in call order.
  /// dims of launch()/choice() are given in the order of the spec's problem dimensions.
  FamilyHandle(const std::string& kernel, const std::string& db_path, const RuntimeOptions& o,
               std::initializer_list<const char*> buffers);
  /// A spec of the caller's (family "user"): buffers are the names of its buffer and constant arguments; from is
  /// the spec's file as the caller named it ("" for a spec made in code), recorded in its captures.
  FamilyHandle(TuningSpec spec, const std::string& db_path, const RuntimeOptions& o, std::vector<std::string> buffers,
               std::string from = {});
  ~FamilyHandle();
  FamilyHandle(FamilyHandle&&) noexcept;
  FamilyHandle& operator=(FamilyHandle&&) noexcept;

  /// Index of a workload of the spec, or -1 (then calls with it throw UsageError naming the supported ones).
  int workload(const std::string& dtype, const std::string& op) const;
  void launch(int workload, std::initializer_list<std::int64_t> dims, std::initializer_list<std::uintptr_t> buffers,
              void* stream);
  /// buffers: one address per buffer name; scalars: the scalar arguments' values (cuda::Launcher::run).
  void launch(int workload, const std::int64_t* dims, std::size_t ndims, const std::uintptr_t* buffers,
              const std::uint64_t* scalars, void* stream);
  Choice choice(int workload, std::initializer_list<std::int64_t> dims);
  Choice choice(int workload, const std::int64_t* dims, std::size_t ndims);
  const TuningSpec& spec() const;
  /// Workload key for messages when workload() returned -1.
  void require(int workload, const std::string& dtype, const std::string& op) const;
  /// require(), then launch() of a call from buffer in to buffer out over n elements (reductions, scans).
  void launch_in_out(int workload, const std::string& dtype, const std::string& op, std::size_t n, std::uintptr_t in,
                     std::uintptr_t out, void* stream) {
    require(workload, dtype, op);
    launch(workload, {static_cast<std::int64_t>(n)}, {in, out}, stream);
  }
  /// require(), then choice() for n elements.
  Choice choice_of(int workload, const std::string& dtype, const std::string& op, std::size_t n) {
    require(workload, dtype, op);
    return choice(workload, {static_cast<std::int64_t>(n)});
  }

 private:
  std::unique_ptr<Family> f_;
};

inline std::int64_t checked_size(std::size_t v) { return static_cast<std::int64_t>(v); }

/// The dtype name of a pointer's element type ("float32", "int32", "uint8", ...), or "" where it tells none
/// (void, structs, vector types): such pointers are taken for any buffer.
template <class T>
constexpr const char* pointee_dtype() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>)
    return "float32";
  else if constexpr (std::is_same_v<U, double>)
    return "float64";
  else if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool>) {
    if constexpr (std::is_signed_v<U>)
      return sizeof(U) == 1 ? "int8" : sizeof(U) == 2 ? "int16" : sizeof(U) == 4 ? "int32" : "int64";
    else
      return sizeof(U) == 1 ? "uint8" : sizeof(U) == 2 ? "uint16" : sizeof(U) == 4 ? "uint32" : "uint64";
  } else {
    return "";
  }
}

}  // namespace detail

/// One argument of Kernel::launch, in the order of the spec's `arguments`: a device pointer for a buffer or for
/// the data of a constant (copied into its __constant__ symbol before each launch), a number for a scalar.
/// A typed pointer (float*, const std::int32_t*) tells its element type, which must be the argument's dtype;
/// DevicePtr and void* are taken for any buffer. A CUdeviceptr value must be wrapped as DevicePtr(p) (a bare
/// unsigned long long is a number). Integers must fit the scalar's dtype; floats go to float scalars only.
class Arg {
 public:
  enum class Kind { pointer, integer, unsigned_integer, floating };
  Arg(DevicePtr p) : kind_(Kind::pointer), bits_(p.value()) {}
  Arg(std::nullptr_t) : kind_(Kind::pointer) {}
  template <class T>
  Arg(T* p) : kind_(Kind::pointer), bits_(reinterpret_cast<std::uintptr_t>(p)), dtype_(detail::pointee_dtype<T>()) {}
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Arg(I v)
      : kind_(std::is_signed_v<I> ? Kind::integer : Kind::unsigned_integer),
        bits_(static_cast<std::uint64_t>(v)),
        dtype_(detail::pointee_dtype<I>()) {}
  Arg(float v) : kind_(Kind::floating), f_(v), dtype_("float32") {}
  Arg(double v) : kind_(Kind::floating), f_(v), dtype_("float64") {}
  /// An argument made by a language binding (the C interface, tuner/capi/) from its own description: the kind,
  /// the bits (pointer, integer), the value (floating) and the dtype name it tells ("" for none). `dtype` must
  /// outlive the Arg (a string literal).
  static Arg raw(Kind kind, std::uint64_t bits, double f, const char* dtype) {
    Arg a(nullptr);
    a.kind_ = kind;
    a.bits_ = bits;
    a.f_ = f;
    a.dtype_ = dtype != nullptr ? dtype : "";
    return a;
  }

  Kind kind() const { return kind_; }
  /// pointer: the address; integer: the value's two's complement bits; unsigned_integer: the value.
  std::uint64_t bits() const { return bits_; }
  double floating() const { return f_; }
  /// The C++ type's dtype name ("" for an untyped pointer).
  const char* dtype() const { return dtype_; }

 private:
  Kind kind_;
  std::uint64_t bits_ = 0;
  double f_ = 0;
  const char* dtype_ = "";
};

/// A kernel of your own, from a spec (a `*.tune.json` with family "user", a Kernel Tuner T1 file, or a
/// TuningSpec made in code), launched with the best configuration recorded in a tuning database for this GPU
/// and problem (the levels of docs/lookup.md, down to the spec's default configuration):
///
///     autotune::Kernel saxpy("saxpy.tune.json", "tune.db");
///     saxpy.launch(stream, {n}, {d_x, d_y, 2.0f, n});   // problem dims, then the spec's arguments in order
///
/// Every launch step of the spec runs (grid, block and shared memory from its expressions at the chosen
/// configuration); the binary comes from memory, the database's binary cache, the cache directory, or NVRTC
/// (then stored), as for the built-in families. The arguments are checked against the spec on every launch: their
/// number, pointer or number, a typed pointer's element type, a number's kind and range; a mismatch is a UsageError
/// naming the argument, never a launch. The first launch of a problem prepares it (lookup, binary, plan); later
/// ones probe a hash map. Errors and thread-safety as for the family classes above.
///
/// Capture: where the environment variable AUTOTUNE_CAPTURE names the kernel (names or globs, comma-separated),
/// the first launch of each problem also writes a capture into AUTOTUNE_CAPTURE_DIR (default ./autotune-captures):
/// a spec with the launch's inputs, scalars and problem, and its outputs as the expected values, which `autotune
/// tune` tunes (docs/lookup.md "Capture"). That launch synchronizes its stream and copies the captured arguments to
/// the host once; what it computes is unchanged. AUTOTUNE_CAPTURE_MAX_BYTES (default 1G) bounds a capture's data.
/// Without the variable, launches do nothing more than shown above.
class Kernel {
 public:
  /// Loads the spec file (a native spec or a T1 file). Throws SpecError / UsageError for a bad spec.
  Kernel(const std::string& spec_path, const std::string& db_path, const RuntimeOptions& o = {});
  Kernel(TuningSpec spec, const std::string& db_path, const RuntimeOptions& o = {});
  ~Kernel();
  Kernel(Kernel&&) noexcept;
  Kernel& operator=(Kernel&&) noexcept;

  /// Launches on stream: `problem` holds the spec's problem dims in its order (`problem.dims`), `args` one
  /// Arg per spec argument.
  void launch(Stream stream, std::initializer_list<std::int64_t> problem, std::initializer_list<Arg> args);
  /// The same with the problem's dims and the arguments as arrays (for language bindings).
  void launch(Stream stream, const std::int64_t* problem, std::size_t problem_dims, const Arg* args,
              std::size_t arg_count);
  /// The configuration and binary a launch of this problem uses (prepares it).
  Choice choice(std::initializer_list<std::int64_t> problem);
  Choice choice(const std::int64_t* problem, std::size_t problem_dims);
  const TuningSpec& spec() const;

 private:
  Kernel(TuningSpec spec, const std::string& db_path, const RuntimeOptions& o, std::string from);
  struct Layout;
  std::unique_ptr<Layout> layout_;
  detail::FamilyHandle h_;
};

/// Sum, min or max of n elements into out[0] (one element).
template <class T>
class Reduction {
 public:
  explicit Reduction(const std::string& db_path, const RuntimeOptions& o = {})
      : h_("reduction", db_path, o, {"in", "out"}),
        sum_(h_.workload(detail::dtype_name<T>(), "sum")),
        min_(h_.workload(detail::dtype_name<T>(), "min")),
        max_(h_.workload(detail::dtype_name<T>(), "max")) {}
  void sum(DevicePtr in, std::size_t n, DevicePtr out, Stream s = {}) { run(sum_, "sum", in, n, out, s); }
  void min(DevicePtr in, std::size_t n, DevicePtr out, Stream s = {}) { run(min_, "min", in, n, out, s); }
  void max(DevicePtr in, std::size_t n, DevicePtr out, Stream s = {}) { run(max_, "max", in, n, out, s); }
  /// The configuration and binary a call with this n and op ("sum", "min", "max") uses (prepares it).
  Choice choice(std::size_t n, const std::string& op = "sum") {
    const int w = op == "sum" ? sum_ : op == "min" ? min_ : op == "max" ? max_ : -1;
    return h_.choice_of(w, detail::dtype_name<T>(), op, n);
  }

 private:
  void run(int w, const char* op, DevicePtr in, std::size_t n, DevicePtr out, Stream s) {
    h_.launch_in_out(w, detail::dtype_name<T>(), op, n, in.value(), out.value(), s.handle());
  }
  detail::FamilyHandle h_;
  int sum_, min_, max_;
};

/// Prefix scans of n elements from in to out (out may not alias in).
template <class T>
class Scan {
 public:
  explicit Scan(const std::string& db_path, const RuntimeOptions& o = {})
      : h_("scan", db_path, o, {"in", "out"}),
        inc_sum_(h_.workload(detail::dtype_name<T>(), "inclusive_sum")),
        exc_sum_(h_.workload(detail::dtype_name<T>(), "exclusive_sum")),
        inc_max_(h_.workload(detail::dtype_name<T>(), "inclusive_max")),
        exc_max_(h_.workload(detail::dtype_name<T>(), "exclusive_max")) {}
  void inclusive_sum(DevicePtr in, std::size_t n, DevicePtr out, Stream s = {}) {
    run(inc_sum_, "inclusive_sum", in, n, out, s);
  }
  void exclusive_sum(DevicePtr in, std::size_t n, DevicePtr out, Stream s = {}) {
    run(exc_sum_, "exclusive_sum", in, n, out, s);
  }
  void inclusive_max(DevicePtr in, std::size_t n, DevicePtr out, Stream s = {}) {
    run(inc_max_, "inclusive_max", in, n, out, s);
  }
  void exclusive_max(DevicePtr in, std::size_t n, DevicePtr out, Stream s = {}) {
    run(exc_max_, "exclusive_max", in, n, out, s);
  }
  /// op: "inclusive_sum", "exclusive_sum", "inclusive_max", "exclusive_max".
  Choice choice(std::size_t n, const std::string& op = "inclusive_sum") {
    return h_.choice_of(h_.workload(detail::dtype_name<T>(), op), detail::dtype_name<T>(), op, n);
  }

 private:
  void run(int w, const char* op, DevicePtr in, std::size_t n, DevicePtr out, Stream s) {
    h_.launch_in_out(w, detail::dtype_name<T>(), op, n, in.value(), out.value(), s.handle());
  }
  detail::FamilyHandle h_;
  int inc_sum_, exc_sum_, inc_max_, exc_max_;
};

/// Transpose of a row-major rows x cols matrix into a row-major cols x rows matrix.
template <class T>
class Transpose {
 public:
  explicit Transpose(const std::string& db_path, const RuntimeOptions& o = {})
      : h_("transpose", db_path, o, {"in", "out"}), w_(h_.workload(detail::dtype_name<T>(), "")) {}
  void transpose(DevicePtr in, std::size_t rows, std::size_t cols, DevicePtr out, Stream s = {}) {
    h_.require(w_, detail::dtype_name<T>(), "");
    h_.launch(w_, {detail::checked_size(rows), detail::checked_size(cols)}, {in.value(), out.value()}, s.handle());
  }
  Choice choice(std::size_t rows, std::size_t cols) {
    h_.require(w_, detail::dtype_name<T>(), "");
    return h_.choice(w_, {detail::checked_size(rows), detail::checked_size(cols)});
  }

 private:
  detail::FamilyHandle h_;
  int w_;
};

/// Stable stream compaction: the selected elements of in, in order, to out; their number (std::int32_t)
/// to *count (device memory). Configurations are looked up for the expected selected percentage given to
/// the constructor (the tuned problems have a select_pct dimension; 50 by default).
template <class T>
class Compaction {
 public:
  explicit Compaction(const std::string& db_path, const RuntimeOptions& o = {}, int expected_select_pct = 50)
      : h_("compaction", db_path, o, {"in", "flags", "out", "count"}),
        flagged_(h_.workload(detail::dtype_name<T>(), "flagged")),
        if_(h_.workload(detail::dtype_name<T>(), "if")),
        pct_(expected_select_pct) {}
  /// Selects in[i] where flags[i] != 0 (flags: one byte per element).
  void select_flagged(DevicePtr in, DevicePtr flags, std::size_t n, DevicePtr out, DevicePtr count, Stream s = {}) {
    h_.require(flagged_, detail::dtype_name<T>(), "flagged");
    h_.launch(flagged_, {detail::checked_size(n), pct_}, {in.value(), flags.value(), out.value(), count.value()},
              s.handle());
  }
  /// Selects in[i] > 0.
  void select_positive(DevicePtr in, std::size_t n, DevicePtr out, DevicePtr count, Stream s = {}) {
    h_.require(if_, detail::dtype_name<T>(), "if");
    h_.launch(if_, {detail::checked_size(n), pct_}, {in.value(), 0, out.value(), count.value()}, s.handle());
  }
  /// op: "flagged" or "if".
  Choice choice(std::size_t n, const std::string& op = "flagged") {
    const int w = op == "flagged" ? flagged_ : op == "if" ? if_ : -1;
    h_.require(w, detail::dtype_name<T>(), op);
    return h_.choice(w, {detail::checked_size(n), pct_});
  }

 private:
  detail::FamilyHandle h_;
  int flagged_, if_;
  std::int64_t pct_;
};

/// Device memory for programs that do not use the CUDA runtime API (tests, benchmarks, examples).
/// Allocated in the primary context of `device` (-1: as RuntimeOptions::device). Not copyable.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes, int device = -1);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::uintptr_t ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  /// Synchronous copies (they wait for the legacy default stream, and so for blocking streams).
  void upload(const void* src, std::size_t bytes);
  void download(void* dst, std::size_t bytes) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uintptr_t ptr_ = 0;
  std::size_t bytes_ = 0;
};

/// Waits for all work on stream (nullptr: the legacy default stream) of GPU `device` (-1: current/0).
void synchronize(Stream s = {}, int device = -1);

}  // namespace autotune
