// versus_libraries: the tuned kernels of the launch API (autotune::Reduction, Scan, Compaction, Transpose,
// configurations from a tuning database) against NVIDIA's libraries and a device-to-device copy, in one run
// on one GPU. Libraries: cub::DeviceReduce::Sum, cub::DeviceScan::InclusiveSum, cub::DeviceSelect::Flagged
// and ::If (predicate x > 0, the one of Compaction::select_positive), cublasSgeam (transpose).
//
// Protocol (every implementation alike): random non-zero inputs; outputs poisoned, one run, checked against
// a CPU reference (exact for integers, compaction and transpose; a magnitude-scaled tolerance for float sums
// and prefix sums); then warm-up runs and timed samples between CUDA events on one stream, the L2 flushed
// before every sample; median of the samples. Ratios are speed ratios (> 1: ours faster).
//
// Bytes counted: reduction = bytes read; scan = read + written; compaction = values and flags read + selected
// values written (the 4-byte count is ignored); transpose = read + written. The copy is a cudaMemcpyAsync of
// the input's bytes, counted as read + written.
//
// Only bench/ is compiled with nvcc (CMake option AUTOTUNE_BENCH_LIBRARIES). Run on the GPU machine through
// bench/versus_libraries.sh (tunes the database first). Documented in docs/performance.md.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include <cub/cub.cuh>
#include <cuda/functional>

#include "tuner/lookup/lookup.hpp"
#include "tuner/runtime/launch.hpp"
#include "versus_options.hpp"

namespace {

using versus::Options;
using versus::parse_args;

// ---- errors ---------------------------------------------------------------------------------------------------

struct CudaFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The CUDA context is unusable (a sticky error): the remaining cases cannot run.
struct ContextLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check_cuda(cudaError_t e, const char* call, int line) {
  if (e == cudaSuccess) return;
  throw CudaFailure(std::string(call) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                    "), versus_libraries.cu:" + std::to_string(line));
}

void check_cublas(cublasStatus_t s, const char* call, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw CudaFailure(std::string(call) + " failed: " + cublasGetStatusName(s) + " (" + cublasGetStatusString(s) +
                    "), versus_libraries.cu:" + std::to_string(line));
}

#define CK(call) check_cuda((call), #call, __LINE__)
#define CKB(call) check_cublas((call), #call, __LINE__)

// A kernel that never finishes (a deadlocked look-back, say) cannot be stopped inside this process, and
// destructors would wait for it too: after kHangSeconds main's handler prints what was measured and exits.
constexpr double kHangSeconds = 30;
std::function<void(const std::string&)> g_on_hang;

/// Waits for `query` (cudaStreamQuery / cudaEventQuery) to stop answering cudaErrorNotReady.
template <class Query>
void wait_until_done(Query query, const char* what) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = query();
    if (e != cudaErrorNotReady) {
      check_cuda(e, what, __LINE__);
      return;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > kHangSeconds) {
      const std::string msg = std::string(what) + ": the GPU work did not finish within " +
                              std::to_string(static_cast<int>(kHangSeconds)) + " s (a hang)";
      if (g_on_hang) g_on_hang(msg);
      throw ContextLost(msg);
    }
    std::this_thread::yield();
  }
}

void wait_stream(cudaStream_t s) {
  wait_until_done([s] { return cudaStreamQuery(s); }, "waiting for the stream");
}

// ---- host helpers ---------------------------------------------------------------------------------------------

unsigned host_threads() {
  const unsigned t = std::thread::hardware_concurrency();
  return std::min(std::max(t, 1u), 32u);
}

/// f(chunk, begin, end) over [0, n) split into host_threads() chunks, in parallel.
template <class F>
void parallel_chunks(std::size_t n, F&& f) {
  const std::size_t threads = host_threads();
  const std::size_t chunk = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) {
    const std::size_t begin = t * chunk;
    if (begin >= n) break;
    const std::size_t end = std::min(n, begin + chunk);
    pool.emplace_back([&f, t, begin, end] { f(t, begin, end); });
  }
  for (auto& th : pool) th.join();
}

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Counter-based random bits: element i of stream `stream` (parallel generation, same inputs every run).
std::uint64_t random_bits(std::uint64_t stream, std::uint64_t i) { return splitmix(splitmix(i) ^ stream); }

std::uint64_t stream_of(std::uint64_t seed, const std::string& label) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : label) h = (h ^ c) * 1099511628211ull;
  return splitmix(seed ^ h);
}

/// Sum inputs: int32 in [-1000, -1] u [1, 1000]; float32 +-m/64 with m in [32, 63], so every partial sum of
/// fewer than 2^18 / 0.984 magnitude is exact in float32 (the tolerance still allows rounding).
template <class T>
T sum_value(std::uint64_t r) {
  if constexpr (std::is_same_v<T, std::int32_t>) {
    const auto v = static_cast<std::int32_t>(1 + (r >> 33) % 1000);
    return (r & 1) ? -v : v;
  } else {
    const float v = static_cast<float>(32 + (r >> 59)) / 64.0f;
    return (r & 1) ? -v : v;
  }
}

/// Compaction values: int32 magnitude in [1, 1e9], float32 in (0, 1] with 24 random bits; the sign is random
/// ("flagged") or positive exactly for the selected elements ("if").
template <class T>
T select_value(std::uint64_t r, bool negative) {
  if constexpr (std::is_same_v<T, std::int32_t>) {
    const auto v = static_cast<std::int32_t>(1 + (r >> 34) % 1000000000);
    return negative ? -v : v;
  } else {
    const float v = static_cast<float>((r >> 40) + 1) * 0x1p-24f;
    return negative ? -v : v;
  }
}

template <class T>
const char* dtype_name() {
  return std::is_same_v<T, std::int32_t> ? "int32" : "float32";
}

std::string pow2_text(std::int64_t n) {
  for (int k = 0; k < 63; ++k)
    if ((std::int64_t{1} << k) == n) return "2^" + std::to_string(k);
  return std::to_string(n);
}

std::string first_line(const std::string& s, std::size_t max_chars = 120) {
  std::string l = s.substr(0, s.find('\n'));
  if (l.size() > max_chars) l = l.substr(0, max_chars - 3) + "...";
  return l;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// ---- results --------------------------------------------------------------------------------------------------

struct Impl {
  std::string name;
  bool ok = false;
  double ms = 0, min_ms = 0, gbps = 0;
  int samples = 0;
  std::string status = "not run";  // "ok", "WRONG: ...", "error: ..."
};

struct Row {
  std::string family, label, dtype, op;
  std::int64_t n = 0, rows = 0, cols = 0, selected = -1;
  int pct = -1;
  double bytes = 0;  // counted for ours and the library (see the header comment)
  Impl ours{"ours"}, lib, copy{"copy"};
  // ours: what the launch API chose
  std::string match, config, binary, measured, note;
  int level = -1;
  double prepare_ms = 0, compile_ms = 0;
};

double ratio(const Impl& a, const Impl& b) { return a.ok && b.ok && a.gbps > 0 && b.gbps > 0 ? a.gbps / b.gbps : 0; }

void record_choice(Row& row, const autotune::Choice& c) {
  row.match = autotune::lookup::to_string(c.answer.match);
  row.level = autotune::lookup::level(c.answer.match);
  row.config = c.config_text;
  row.binary = autotune::to_string(c.binary);
  row.prepare_ms = c.prepare_ms;
  row.compile_ms = c.compile_ms;
  if (!c.answer.problem.empty())
    row.measured = c.answer.problem + (c.answer.median_ns > 0 ? " (" + fixed(c.answer.median_ns / 1e3, 1) + " us)" : "");
  std::string note = c.note;
  if (!c.answer.note.empty()) note += (note.empty() ? "" : "; ") + c.answer.note;
  row.note = note;
  std::fprintf(stderr, "  ours: %s (level %d) %s, binary from %s%s%s\n", row.match.c_str(), row.level,
               row.config.c_str(), row.binary.c_str(), note.empty() ? "" : "; ", note.c_str());
}

// ---- device memory --------------------------------------------------------------------------------------------

class DevBuf {
 public:
  DevBuf() = default;
  explicit DevBuf(std::size_t bytes) : bytes_(bytes) {
    if (bytes != 0) CK(cudaMalloc(&p_, bytes));
  }
  ~DevBuf() {
    if (p_ != nullptr) cudaFree(p_);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  DevBuf(DevBuf&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; o.bytes_ = 0; }
  DevBuf& operator=(DevBuf&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  template <class T = void>
  T* as() const {
    return static_cast<T*>(p_);
  }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Reads the flush buffer (zeros); the store never happens but keeps the loads. Clean lines replace the L2's
// content, so no write-back of the flush falls into the timed region (unlike a memset flush).
__global__ void flush_read_kernel(const uint4* __restrict__ p, std::size_t n4, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}

struct Positive {
  template <class T>
  __host__ __device__ bool operator()(const T& x) const {
    return x > T(0);
  }
};

// ---- the bench ------------------------------------------------------------------------------------------------

struct Timing {
  double median_ms = 0, min_ms = 0;
  int samples = 0;
};

class Bench {
 public:
  Bench(const Options& o, const cudaDeviceProp& prop) : opt_(o) {
    CK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CK(cudaEventCreate(&start_));
    CK(cudaEventCreate(&stop_));
    CKB(cublasCreate(&cublas_));
    CKB(cublasSetStream(cublas_, stream_));
    sm_count_ = prop.multiProcessorCount;
    flush_bytes_ = std::max<std::size_t>(2 * static_cast<std::size_t>(std::max(prop.l2CacheSize, 0)), 64u << 20);
    flush_bytes_ = (flush_bytes_ + 255) / 256 * 256;
    flush_ = DevBuf(flush_bytes_);
    sink_ = DevBuf(16);
    CK(cudaMemsetAsync(flush_.as(), 0, flush_bytes_, stream_));
    wait_stream(stream_);
    autotune::RuntimeOptions ro;
    ro.device = o.device;
    runtime_ = ro;
  }
  ~Bench() {
    cublasDestroy(cublas_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  std::size_t flush_bytes() const { return flush_bytes_; }
  const Options& opt() const { return opt_; }

  void flush_l2(int sample) {
    if (opt_.flush == "memset") {
      CK(cudaMemsetAsync(flush_.as(), sample & 0xFF, flush_bytes_, stream_));
    } else {
      flush_read_kernel<<<sm_count_ * 8, 256, 0, stream_>>>(flush_.as<const uint4>(), flush_bytes_ / 16,
                                                             sink_.as<unsigned>());
      CK(cudaGetLastError());
    }
  }

  Timing time(const std::function<void()>& op) {
    for (int i = 0; i < opt_.warmup; ++i) op();
    std::vector<double> ms;
    ms.reserve(static_cast<std::size_t>(opt_.reps));
    for (int i = 0; i < opt_.reps; ++i) {
      flush_l2(i);
      CK(cudaEventRecord(start_, stream_));
      op();
      CK(cudaEventRecord(stop_, stream_));
      wait_until_done([this] { return cudaEventQuery(stop_); }, "waiting for a sample");
      float t = 0;
      CK(cudaEventElapsedTime(&t, start_, stop_));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    Timing r;
    const std::size_t k = ms.size();
    r.median_ms = k % 2 ? ms[k / 2] : 0.5 * (ms[k / 2 - 1] + ms[k / 2]);
    r.min_ms = ms.front();
    r.samples = static_cast<int>(k);
    return r;
  }

  /// prepare (may throw), poison outputs, one run, verify (returns "" or what is wrong), then time. Errors and
  /// wrong results are recorded in `impl`; a CUDA context that no longer works throws ContextLost.
  void run(Impl& impl, double bytes, const std::function<void()>& prepare, const std::function<void()>& poison,
           const std::function<void()>& op, const std::function<std::string()>& verify) {
    try {
      if (prepare) prepare();
      if (poison) poison();
      op();
      wait_stream(stream_);
      CK(cudaGetLastError());
      if (verify) {
        const std::string wrong = verify();
        if (!wrong.empty()) {
          impl.status = "WRONG: " + wrong;
          std::fprintf(stderr, "  %s: WRONG: %s\n", impl.name.c_str(), wrong.c_str());
          return;
        }
      }
      const Timing t = time(op);
      impl.ms = t.median_ms;
      impl.min_ms = t.min_ms;
      impl.samples = t.samples;
      impl.gbps = t.median_ms > 0 ? bytes / (t.median_ms * 1e6) : 0;
      impl.ok = true;
      impl.status = "ok";
      std::fprintf(stderr, "  %s: %.4f ms (min %.4f), %.1f GB/s\n", impl.name.c_str(), impl.ms, impl.min_ms,
                   impl.gbps);
    } catch (const ContextLost&) {
      throw;
    } catch (const std::exception& e) {
      impl.ok = false;
      impl.status = std::string("error: ") + e.what();
      std::fprintf(stderr, "  %s: error: %s\n", impl.name.c_str(), e.what());
      ensure_context(impl.name);
    }
  }

  /// After an error: clears a non-sticky one; throws ContextLost if the context no longer works.
  void ensure_context(const std::string& who) {
    (void)cudaGetLastError();
    try {
      wait_stream(stream_);  // a hang throws ContextLost
    } catch (const CudaFailure&) {
      // examined below
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e == cudaSuccess) {
      void* probe = nullptr;
      e = cudaMalloc(&probe, 256);
      if (e == cudaSuccess) e = cudaMemsetAsync(probe, 0, 256, stream_);
      if (e == cudaSuccess) e = cudaStreamSynchronize(stream_);
      if (probe != nullptr) (void)cudaFree(probe);
    }
    if (e != cudaSuccess)
      throw ContextLost("the CUDA context is unusable after the failure of " + who + ": " + cudaGetErrorName(e) +
                        " (" + cudaGetErrorString(e) + ")");
  }

  /// The launch API objects, created on first use and kept for the whole run (as an application would).
  template <class T>
  autotune::Reduction<T>& reduction() {
    auto& p = std::get<Slot<autotune::Reduction<T>>>(reductions_).p;
    if (!p) p = std::make_unique<autotune::Reduction<T>>(opt_.db, runtime_);
    return *p;
  }
  template <class T>
  autotune::Scan<T>& scan() {
    auto& p = std::get<Slot<autotune::Scan<T>>>(scans_).p;
    if (!p) p = std::make_unique<autotune::Scan<T>>(opt_.db, runtime_);
    return *p;
  }
  template <class T>
  autotune::Compaction<T>& compaction(int pct) {
    auto& m = std::get<PctSlots<autotune::Compaction<T>>>(compactions_).m;
    auto& p = m[pct];
    if (!p) p = std::make_unique<autotune::Compaction<T>>(opt_.db, runtime_, pct);
    return *p;
  }
  autotune::Transpose<float>& transpose() {
    if (!transpose_) transpose_ = std::make_unique<autotune::Transpose<float>>(opt_.db, runtime_);
    return *transpose_;
  }

 private:
  template <class X>
  struct Slot {
    std::unique_ptr<X> p;
  };
  template <class X>
  struct PctSlots {
    std::map<int, std::unique_ptr<X>> m;
  };

  Options opt_;
  autotune::RuntimeOptions runtime_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  int sm_count_ = 1;
  std::size_t flush_bytes_ = 0;
  DevBuf flush_, sink_;
  std::tuple<Slot<autotune::Reduction<std::int32_t>>, Slot<autotune::Reduction<float>>> reductions_;
  std::tuple<Slot<autotune::Scan<std::int32_t>>, Slot<autotune::Scan<float>>> scans_;
  std::tuple<PctSlots<autotune::Compaction<std::int32_t>>, PctSlots<autotune::Compaction<float>>> compactions_;
  std::unique_ptr<autotune::Transpose<float>> transpose_;
};

// Copies go through the benchmark's stream and wait for it: the stream does not synchronise with the legacy
// default stream (cudaStreamNonBlocking), and a pageable cudaMemcpy may return before its DMA is done.
template <class T>
void upload(DevBuf& d, const std::vector<T>& h, cudaStream_t s) {
  CK(cudaMemcpyAsync(d.as(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s));
  wait_stream(s);
}

template <class T>
std::vector<T> download(const void* d, std::size_t count, cudaStream_t s) {
  std::vector<T> h(count);
  if (count != 0) CK(cudaMemcpyAsync(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost, s));
  wait_stream(s);
  return h;
}

/// Float poison is 0xFF bytes (NaN: fails every tolerance test); integer poison 0xA5 bytes (-1515870811,
/// outside every value and prefix the inputs can produce).
template <class T>
int poison_byte() {
  return std::is_same_v<T, float> ? 0xFF : 0xA5;
}

template <class T>
std::string value_text(T v) {
  if constexpr (std::is_same_v<T, float>) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    return buf;
  } else {
    return std::to_string(v);
  }
}

/// The library side of a CUB case: call(temp, temp_bytes) is the CUB device-wide function; it is sized first
/// (temp = nullptr), then run on temporary storage of that size.
template <class F>
void run_cub(Bench& b, Row& row, const std::function<void()>& poison, const std::function<std::string()>& verify,
             F call) {
  std::size_t temp_bytes = 0;
  DevBuf temp;
  b.run(
      row.lib, row.bytes,
      [&] {
        check_cuda(call(nullptr, temp_bytes), row.lib.name.c_str(), __LINE__);
        temp = DevBuf(std::max<std::size_t>(temp_bytes, 16));
      },
      poison, [&] { check_cuda(call(temp.as(), temp_bytes), row.lib.name.c_str(), __LINE__); }, verify);
}

/// The copy of a case: cudaMemcpyAsync of `bytes` (counted as read + written).
void run_copy(Bench& b, Row& row, void* dst, const void* src, std::size_t bytes) {
  b.run(row.copy, 2.0 * static_cast<double>(bytes), nullptr, nullptr,
        [&] { CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, b.stream())); }, nullptr);
}

/// Totals of each chunk of parallel_chunks over `in`: the integer sum modulo 2^32 (the kernels' wrap-around),
/// and in double the sum, the sum of |x| and the largest |x| (exact sums for the generated float inputs).
struct ChunkTotals {
  std::vector<std::uint32_t> isum;
  std::vector<double> fsum, abs_sum, abs_max;
};

template <class T>
ChunkTotals chunk_totals(const std::vector<T>& in) {
  const std::size_t chunks = host_threads();
  ChunkTotals t{std::vector<std::uint32_t>(chunks, 0), std::vector<double>(chunks, 0), std::vector<double>(chunks, 0),
                std::vector<double>(chunks, 0)};
  parallel_chunks(in.size(), [&](std::size_t c, std::size_t lo, std::size_t hi) {
    std::uint32_t a = 0;
    double f = 0, ab = 0, m = 0;
    for (std::size_t i = lo; i < hi; ++i) {
      if constexpr (std::is_same_v<T, std::int32_t>) {
        a += static_cast<std::uint32_t>(in[i]);
      } else {
        const double x = static_cast<double>(in[i]);
        f += x;
        ab += std::fabs(x);
        m = std::max(m, std::fabs(x));
      }
    }
    t.isum[c] = a;
    t.fsum[c] = f;
    t.abs_sum[c] = ab;
    t.abs_max[c] = m;
  });
  return t;
}

/// A case's row (announced on stderr); ours and the library are counted on `bytes`.
Row make_row(const std::string& family, const std::string& dtype, const std::string& op, std::int64_t n,
             const std::string& label, double bytes, const std::string& library) {
  Row row;
  row.family = family;
  row.dtype = dtype;
  row.op = op;
  row.n = n;
  row.label = label;
  row.bytes = bytes;
  row.lib.name = library;
  std::fprintf(stderr, "%s %s\n", family.c_str(), label.c_str());
  return row;
}

/// Inputs of the sums (reduction and scan): n values of sum_value<T>, from the stream of (seed, row label).
template <class T>
std::vector<T> sum_inputs(std::uint64_t seed, const Row& row) {
  std::vector<T> h(static_cast<std::size_t>(row.n));
  const std::uint64_t st = stream_of(seed, row.family + " " + row.label);
  parallel_chunks(h.size(), [&](std::size_t, std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) h[i] = sum_value<T>(random_bits(st, i));
  });
  return h;
}

// ---- reduction ------------------------------------------------------------------------------------------------

template <class T>
Row run_reduction(Bench& b, std::int64_t n64) {
  Row row = make_row("reduction", dtype_name<T>(), "sum", n64, std::string(dtype_name<T>()) + " n=" + pow2_text(n64),
                     static_cast<double>(n64) * sizeof(T), "cub::DeviceReduce::Sum");
  const auto n = static_cast<std::size_t>(n64);
  cudaStream_t s = b.stream();
  std::vector<T> h = sum_inputs<T>(b.opt().seed, row);
  // Reference: integers wrap modulo 2^32 like the kernels; floats in double (exact for these inputs).
  const ChunkTotals totals = chunk_totals(h);
  std::uint32_t iref = 0;
  double fref = 0, max_abs = 0;
  for (std::size_t c = 0; c < totals.isum.size(); ++c) {
    iref += totals.isum[c];
    fref += totals.fsum[c];
    max_abs = std::max(max_abs, totals.abs_max[c]);
  }
  const double tol = 4.0 * FLT_EPSILON * std::sqrt(static_cast<double>(n)) * max_abs;

  DevBuf d_in(n * sizeof(T)), d_out(sizeof(T)), d_copy(n * sizeof(T));
  upload(d_in, h, s);
  std::vector<T>().swap(h);
  const T* in = d_in.as<const T>();
  T* out = d_out.as<T>();

  auto poison = [&] { CK(cudaMemsetAsync(out, poison_byte<T>(), sizeof(T), s)); };
  auto verify = [&]() -> std::string {
    const T got = download<T>(out, 1, s)[0];
    if constexpr (std::is_same_v<T, std::int32_t>) {
      const auto want = static_cast<std::int32_t>(iref);
      return got == want ? "" : "sum " + value_text(got) + ", expected " + value_text(want);
    } else {
      const double err = std::fabs(static_cast<double>(got) - fref);
      return err <= tol ? ""
                        : "sum " + value_text(got) + ", expected " + fixed(fref, 6) + " (error " + fixed(err, 6) +
                              " > tolerance " + fixed(tol, 6) + ")";
    }
  };

  b.run(
      row.ours, row.bytes, [&] { record_choice(row, b.reduction<T>().choice(n, "sum")); }, poison,
      [&] { b.reduction<T>().sum(in, n, out, s); }, verify);

  run_cub(b, row, poison, verify, [&](void* temp, std::size_t& bytes) {
    return cub::DeviceReduce::Sum(temp, bytes, in, out, n64, s);
  });
  run_copy(b, row, d_copy.as(), in, n * sizeof(T));
  return row;
}

// ---- scan -----------------------------------------------------------------------------------------------------

/// Checks a scan (op: inclusive_sum, exclusive_sum, inclusive_max) against the CPU, in parallel (chunk totals
/// first, then each chunk from its offset). Integers and maxima exact (sums mod 2^32); float sums within
/// 2 eps (ceil(log2 n) + 16) sum_{j<=i} |x_j| of the double reference (the rounding bound of a summation tree of
/// that depth); an exclusive sum starts from 0 and leaves x_i out of element i.
template <class T>
std::string check_scan(const std::vector<T>& in, const std::vector<T>& got, const std::string& op) {
  const std::size_t n = in.size();
  const std::size_t chunks = host_threads();
  const bool exclusive = op == "exclusive_sum", max = op == "inclusive_max";
  const ChunkTotals totals = chunk_totals(in);
  std::vector<T> chunk_max(chunks, std::numeric_limits<T>::lowest());
  if (max)
    parallel_chunks(n, [&](std::size_t c, std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) chunk_max[c] = std::max(chunk_max[c], in[i]);
    });
  const double depth = std::ceil(std::log2(static_cast<double>(std::max<std::size_t>(n, 2)))) + 16;
  const double scale = 2.0 * FLT_EPSILON * depth;
  struct Bad {
    std::size_t count = 0, first = std::numeric_limits<std::size_t>::max();
    std::string what;
  };
  std::vector<Bad> bad(chunks);
  parallel_chunks(n, [&](std::size_t c, std::size_t lo, std::size_t hi) {
    std::uint32_t a = 0;
    double f = 0, ab = 0;
    T m = std::numeric_limits<T>::lowest();
    for (std::size_t k = 0; k < c; ++k) {
      a += totals.isum[k];
      f += totals.fsum[k];
      ab += totals.abs_sum[k];
      m = std::max(m, chunk_max[k]);
    }
    Bad& bd = bad[c];
    for (std::size_t i = lo; i < hi; ++i) {
      bool wrong;
      std::string what;
      if (max) {
        m = std::max(m, in[i]);
        wrong = !(got[i] == m);
        if (wrong && bd.count == 0) what = value_text(got[i]) + ", expected " + value_text(m);
      } else if constexpr (std::is_same_v<T, std::int32_t>) {
        const std::uint32_t before = a;
        a += static_cast<std::uint32_t>(in[i]);
        const auto want = static_cast<std::int32_t>(exclusive ? before : a);
        wrong = got[i] != want;
        if (wrong && bd.count == 0) what = value_text(got[i]) + ", expected " + value_text(want);
      } else {
        const double before = f, ab_before = ab;
        f += static_cast<double>(in[i]);
        ab += std::fabs(static_cast<double>(in[i]));
        const double want = exclusive ? before : f;
        const double tol = scale * (exclusive ? ab_before : ab);
        const double err = std::fabs(static_cast<double>(got[i]) - want);
        wrong = !(err <= tol);
        if (wrong && bd.count == 0)
          what = value_text(got[i]) + ", expected " + fixed(want, 6) + " (tolerance " + value_text(tol) + ")";
      }
      if (wrong) {
        if (bd.count == 0) {
          bd.first = i;
          bd.what = what;
        }
        ++bd.count;
      }
    }
  });
  std::size_t total = 0;
  const Bad* first = nullptr;
  for (const Bad& bd : bad) {
    total += bd.count;
    if (bd.count != 0 && (first == nullptr || bd.first < first->first)) first = &bd;
  }
  if (total == 0) return "";
  return std::to_string(total) + " of " + std::to_string(n) + " elements differ; first out[" +
         std::to_string(first->first) + "] = " + first->what;
}

/// The CUB call a scan operator is compared with.
const char* cub_scan_name(const std::string& op) {
  if (op == "exclusive_sum") return "cub::DeviceScan::ExclusiveSum";
  if (op == "inclusive_max") return "cub::DeviceScan::InclusiveScan(max)";
  return "cub::DeviceScan::InclusiveSum";
}

/// A scan case: `op` one of kScanOps; the label names the operator unless it is the inclusive sum (the labels of
/// earlier tables).
template <class T>
Row run_scan(Bench& b, std::int64_t n64, const std::string& op) {
  const std::string what = op == "inclusive_sum" ? "" : op + " ";
  Row row = make_row("scan", dtype_name<T>(), op, n64, std::string(dtype_name<T>()) + " " + what + "n=" + pow2_text(n64),
                     2.0 * static_cast<double>(n64) * sizeof(T), cub_scan_name(op));
  const auto n = static_cast<std::size_t>(n64);
  cudaStream_t s = b.stream();
  std::vector<T> h = sum_inputs<T>(b.opt().seed, row);
  DevBuf d_in(n * sizeof(T)), d_out(n * sizeof(T));
  upload(d_in, h, s);
  const T* in = d_in.as<const T>();
  T* out = d_out.as<T>();

  auto poison = [&] { CK(cudaMemsetAsync(out, poison_byte<T>(), n * sizeof(T), s)); };
  auto verify = [&]() { return check_scan(h, download<T>(out, n, s), op); };
  auto ours = [&] {
    if (op == "exclusive_sum") b.scan<T>().exclusive_sum(in, n, out, s);
    else if (op == "inclusive_max") b.scan<T>().inclusive_max(in, n, out, s);
    else b.scan<T>().inclusive_sum(in, n, out, s);
  };

  b.run(
      row.ours, row.bytes, [&] { record_choice(row, b.scan<T>().choice(n, op)); }, poison, ours, verify);

  run_cub(b, row, poison, verify, [&](void* temp, std::size_t& bytes) {
    if (op == "exclusive_sum") return cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, n64, s);
    if (op == "inclusive_max") return cub::DeviceScan::InclusiveScan(temp, bytes, in, out, cuda::maximum<>{}, n64, s);
    return cub::DeviceScan::InclusiveSum(temp, bytes, in, out, n64, s);
  });
  run_copy(b, row, out, in, n * sizeof(T));
  return row;
}

// ---- compaction -----------------------------------------------------------------------------------------------

/// Checks a stable compaction output (`got`: the selected count of elements) in parallel: chunk c of the input
/// writes from the number selected in the chunks before it (counts[c]: selected in chunk c of parallel_chunks,
/// whose chunks are the same for the same n). flags empty: "if" (x > 0).
template <class T>
std::string check_compaction(const std::vector<T>& in, const std::vector<unsigned char>& flags,
                             const std::vector<std::size_t>& counts, const std::vector<T>& got) {
  const bool flagged = !flags.empty();
  const std::size_t selected = got.size();
  std::vector<std::size_t> bad(counts.size(), 0), first(counts.size(), selected);
  parallel_chunks(in.size(), [&](std::size_t c, std::size_t lo, std::size_t hi) {
    std::size_t j = 0;
    for (std::size_t k = 0; k < c; ++k) j += counts[k];
    for (std::size_t i = lo; i < hi; ++i) {
      if (!(flagged ? flags[i] != 0 : in[i] > T(0))) continue;
      if ((j >= selected || std::memcmp(&got[j], &in[i], sizeof(T)) != 0) && bad[c]++ == 0) first[c] = j;
      ++j;
    }
  });
  std::size_t total = 0, f = selected;
  for (std::size_t c = 0; c < bad.size(); ++c) {
    total += bad[c];
    if (bad[c] != 0) f = std::min(f, first[c]);
  }
  if (total == 0) return "";
  return std::to_string(total) + " of " + std::to_string(selected) + " selected values differ; first out[" +
         std::to_string(f) + "]" + (f < selected ? " = " + value_text(got[f]) : std::string(" (past the count)"));
}

template <class T>
Row run_compaction(Bench& b, std::int64_t n64, int pct, bool flagged) {
  const std::string op = flagged ? "flagged" : "if";
  Row row = make_row("compaction", dtype_name<T>(), op, n64,
                     std::string(dtype_name<T>()) + " " + op + " n=" + pow2_text(n64) + " " + std::to_string(pct) + "%",
                     0, flagged ? "cub::DeviceSelect::Flagged" : "cub::DeviceSelect::If");
  row.pct = pct;
  const auto n = static_cast<std::size_t>(n64);
  cudaStream_t s = b.stream();

  std::vector<T> h(n);
  std::vector<unsigned char> flags(flagged ? n : 0);
  const std::uint64_t st = stream_of(b.opt().seed, "compaction " + row.label);
  const std::uint64_t st_select = splitmix(st ^ 0x5E1EC7ull);
  std::vector<std::size_t> counts(host_threads(), 0);
  auto selected_at = [&](std::size_t i) {
    return random_bits(st_select, i) % 10000 < static_cast<std::uint64_t>(pct) * 100;
  };
  parallel_chunks(n, [&](std::size_t c, std::size_t lo, std::size_t hi) {
    std::size_t k = 0;
    for (std::size_t i = lo; i < hi; ++i) {
      const bool take = selected_at(i);
      const std::uint64_t r = random_bits(st, i);
      h[i] = select_value<T>(r, flagged ? (r & 1) != 0 : !take);
      if (flagged) flags[i] = take ? static_cast<unsigned char>(1 + (r >> 8) % 255) : 0;
      k += take;
    }
    counts[c] = k;
  });
  std::size_t selected = 0;
  for (std::size_t k : counts) selected += k;
  row.selected = static_cast<std::int64_t>(selected);
  row.bytes = static_cast<double>(n) * sizeof(T) + (flagged ? static_cast<double>(n) : 0.0) +
              static_cast<double>(selected) * sizeof(T);

  DevBuf d_in(n * sizeof(T)), d_flags(flagged ? n : 0), d_out(n * sizeof(T)), d_count(sizeof(std::int32_t));
  upload(d_in, h, s);
  if (flagged) upload(d_flags, flags, s);
  const T* in = d_in.as<const T>();
  const unsigned char* fl = d_flags.as<const unsigned char>();
  T* out = d_out.as<T>();
  auto* count = d_count.as<std::int32_t>();

  auto poison = [&] {
    CK(cudaMemsetAsync(out, 0xA5, n * sizeof(T), s));
    CK(cudaMemsetAsync(count, 0xA5, sizeof(std::int32_t), s));
  };
  auto verify = [&]() -> std::string {
    const std::int32_t got_count = download<std::int32_t>(count, 1, s)[0];
    if (got_count != static_cast<std::int64_t>(selected))
      return "count " + std::to_string(got_count) + ", expected " + std::to_string(selected);
    return check_compaction(h, flags, counts, download<T>(out, selected, s));
  };

  if (flagged) {
    b.run(
        row.ours, row.bytes, [&] { record_choice(row, b.compaction<T>(pct).choice(n, "flagged")); }, poison,
        [&] { b.compaction<T>(pct).select_flagged(in, fl, n, out, count, s); }, verify);
  } else {
    b.run(
        row.ours, row.bytes, [&] { record_choice(row, b.compaction<T>(pct).choice(n, "if")); }, poison,
        [&] { b.compaction<T>(pct).select_positive(in, n, out, count, s); }, verify);
  }

  if (flagged) {
    run_cub(b, row, poison, verify, [&](void* temp, std::size_t& bytes) {
      return cub::DeviceSelect::Flagged(temp, bytes, in, fl, out, count, n64, s);
    });
  } else {
    run_cub(b, row, poison, verify, [&](void* temp, std::size_t& bytes) {
      return cub::DeviceSelect::If(temp, bytes, in, out, count, n64, Positive{}, s);
    });
  }
  run_copy(b, row, out, in, n * sizeof(T));
  return row;
}

// ---- transpose ------------------------------------------------------------------------------------------------

/// Checks out (cols x rows, row-major) against in (rows x cols, row-major) bit for bit, in parallel.
std::string check_transpose(const std::vector<float>& in, std::size_t rows, std::size_t cols,
                            const std::vector<float>& got) {
  const std::size_t n = rows * cols;
  std::vector<std::size_t> bad(host_threads(), 0), first(host_threads(), n);
  parallel_chunks(rows, [&](std::size_t c, std::size_t lo, std::size_t hi) {
    for (std::size_t r = lo; r < hi; ++r)
      for (std::size_t col = 0; col < cols; ++col)
        if (std::memcmp(&got[col * rows + r], &in[r * cols + col], sizeof(float)) != 0 && bad[c]++ == 0)
          first[c] = col * rows + r;
  });
  std::size_t total = 0, f = n;
  for (std::size_t c = 0; c < bad.size(); ++c) {
    total += bad[c];
    if (bad[c] != 0) f = std::min(f, first[c]);
  }
  if (total == 0) return "";
  return std::to_string(total) + " of " + std::to_string(n) + " elements differ; first out[" + std::to_string(f) +
         "] (row " + std::to_string(f / rows) + ", col " + std::to_string(f % rows) + ") = " + value_text(got[f]) +
         ", expected " + value_text(in[(f % rows) * cols + f / rows]);
}

Row run_transpose(Bench& b, std::int64_t rows64, std::int64_t cols64) {
  Row row = make_row("transpose", "float32", "", rows64 * cols64,
                     "float32 " + std::to_string(rows64) + "x" + std::to_string(cols64),
                     2.0 * static_cast<double>(rows64 * cols64) * sizeof(float), "cublasSgeam");
  row.rows = rows64;
  row.cols = cols64;
  const auto rows = static_cast<std::size_t>(rows64), cols = static_cast<std::size_t>(cols64);
  const std::size_t n = rows * cols;
  cudaStream_t s = b.stream();

  // Values +-[0.5, 1) with 24 random bits: never equal to the 0xA5 poison (-2.9e-16).
  std::vector<float> h(n);
  const std::uint64_t st = stream_of(b.opt().seed, "transpose " + row.label);
  parallel_chunks(n, [&](std::size_t, std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      const std::uint64_t r = random_bits(st, i);
      const float v = 0.5f + static_cast<float>(r >> 41) * 0x1p-24f;
      h[i] = (r & 1) ? -v : v;
    }
  });
  DevBuf d_in(n * sizeof(float)), d_out(n * sizeof(float));
  upload(d_in, h, s);
  const float* in = d_in.as<const float>();
  float* out = d_out.as<float>();

  // A finite poison (not NaN): cublasSgeam is called with beta = 0 and B = C, so 0 * poison must stay 0.
  auto poison = [&] { CK(cudaMemsetAsync(out, 0xA5, n * sizeof(float), s)); };
  auto verify = [&]() { return check_transpose(h, rows, cols, download<float>(out, n, s)); };

  b.run(
      row.ours, row.bytes, [&] { record_choice(row, b.transpose().choice(rows, cols)); }, poison,
      [&] { b.transpose().transpose(in, rows, cols, out, s); }, verify);

  // Row-major rows x cols `in` is column-major cols x rows (lda = cols); C = in^T is column-major rows x cols
  // (ldc = rows), i.e. row-major cols x rows: the transpose. beta = 0, B = C (cuBLAS's in-place form).
  const float one = 1.0f, zero = 0.0f;
  b.run(row.lib, row.bytes, nullptr, poison,
        [&] {
          CKB(cublasSgeam(b.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows), static_cast<int>(cols), &one,
                          in, static_cast<int>(cols), &zero, out, static_cast<int>(rows), out,
                          static_cast<int>(rows)));
        },
        verify);

  run_copy(b, row, out, in, n * sizeof(float));
  return row;
}

// ---- report ---------------------------------------------------------------------------------------------------

std::string cell_ms(const Impl& i) { return i.ok ? fixed(i.ms, 4) : "-"; }
std::string cell_gbps(const Impl& i) { return i.ok ? fixed(i.gbps, 1) : "-"; }
std::string cell_ratio(double r) { return r > 0 ? fixed(r, 2) : "-"; }
std::string status_cell(const Impl& i) {
  if (i.ok) return "";
  std::string s = first_line(i.status, 90);
  for (auto& ch : s)
    if (ch == '|') ch = '/';
  return i.name + " " + s;
}

void print_table(const std::vector<Row>& rows) {
  std::printf(
      "| family | case | library | ours ms | library ms | copy ms | ours GB/s | library GB/s | copy GB/s | "
      "ours/library | ours/copy | library/copy |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.family.c_str(), r.label.c_str(),
                r.lib.name.c_str(), cell_ms(r.ours).c_str(), cell_ms(r.lib).c_str(), cell_ms(r.copy).c_str(),
                cell_gbps(r.ours).c_str(), cell_gbps(r.lib).c_str(), cell_gbps(r.copy).c_str(),
                cell_ratio(r.ours.ok && r.lib.ok ? r.lib.ms / r.ours.ms : 0).c_str(),
                cell_ratio(ratio(r.ours, r.copy)).c_str(), cell_ratio(ratio(r.lib, r.copy)).c_str());
  }
  std::printf("\nours: configuration per case (match level of the lookup, where the binary came from)\n\n");
  std::printf("| family | case | match | configuration | binary | measured at | problems |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::string problems;
    for (const Impl* i : {&r.ours, &r.lib, &r.copy}) {
      const std::string s = status_cell(*i);
      if (!s.empty()) problems += (problems.empty() ? "" : "; ") + s;
    }
    if (!r.note.empty()) problems += (problems.empty() ? "note: " : "; note: ") + first_line(r.note, 120);
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", r.family.c_str(), r.label.c_str(),
                r.match.empty() ? "-" : (r.match + " (" + std::to_string(r.level) + ")").c_str(),
                r.config.empty() ? "-" : r.config.c_str(), r.binary.empty() ? "-" : r.binary.c_str(),
                r.measured.empty() ? "-" : r.measured.c_str(), problems.c_str());
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

bool write_csv(const std::string& path, const std::vector<Row>& rows, const std::string& device) {
  std::ofstream f(path);
  if (!f) return false;
  f << "device,family,case,dtype,op,n,rows,cols,select_pct,selected,bytes_counted,"
       "ours_status,ours_ms,ours_min_ms,ours_gbps,library,library_status,library_ms,library_min_ms,library_gbps,"
       "copy_status,copy_ms,copy_gbps,ours_over_library,ours_over_copy,library_over_copy,"
       "match,match_level,config,binary,measured_at,prepare_ms,compile_ms,note\n";
  for (const Row& r : rows) {
    const double ol = r.ours.ok && r.lib.ok ? r.lib.ms / r.ours.ms : 0;
    f << csv_field(device) << ',' << r.family << ',' << csv_field(r.label) << ',' << r.dtype << ',' << r.op << ','
      << r.n << ',' << r.rows << ',' << r.cols << ',' << r.pct << ',' << r.selected << ',' << fixed(r.bytes, 0) << ','
      << csv_field(first_line(r.ours.status, 400)) << ',' << fixed(r.ours.ms, 6) << ',' << fixed(r.ours.min_ms, 6)
      << ',' << fixed(r.ours.gbps, 2) << ',' << csv_field(r.lib.name) << ',' << csv_field(first_line(r.lib.status, 400))
      << ',' << fixed(r.lib.ms, 6) << ',' << fixed(r.lib.min_ms, 6) << ',' << fixed(r.lib.gbps, 2) << ','
      << csv_field(first_line(r.copy.status, 400)) << ',' << fixed(r.copy.ms, 6) << ',' << fixed(r.copy.gbps, 2)
      << ',' << fixed(ol, 4) << ',' << fixed(ratio(r.ours, r.copy), 4) << ',' << fixed(ratio(r.lib, r.copy), 4)
      << ',' << r.match << ',' << r.level << ',' << csv_field(r.config) << ',' << r.binary << ','
      << csv_field(r.measured) << ',' << fixed(r.prepare_ms, 3) << ',' << fixed(r.compile_ms, 3) << ','
      << csv_field(first_line(r.note, 400)) << '\n';
  }
  return static_cast<bool>(f);
}

bool wanted(const Options& o, const char* family) { return o.only.empty() || o.only.count(family) != 0; }

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const int rc = parse_args(argc, argv, &opt); rc >= 0) return rc;

  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::fprintf(stderr,
                 "versus_libraries: no usable CUDA GPU (%s). This benchmark times kernels on an NVIDIA GPU;\n"
                 "run it on the GPU machine, e.g. through bench/versus_libraries.sh.\n",
                 e != cudaSuccess ? (std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e)).c_str()
                                  : "the driver reports no device");
    return 3;
  }
  if (opt.device >= devices) {
    std::fprintf(stderr, "versus_libraries: --device %d, but the driver reports %d GPU(s)\n", opt.device, devices);
    return 2;
  }

  std::vector<Row> rows;
  std::string fatal;
  std::string device_text;
  // After a hang nothing may wait for the GPU again (destructors would): report and leave at once.
  g_on_hang = [&](const std::string& msg) {
    print_table(rows);
    std::printf("\nstopped early: %s\n", msg.c_str());
    std::fprintf(stderr, "versus_libraries: stopped early: %s\n", msg.c_str());
    if (!opt.csv.empty() && !write_csv(opt.csv, rows, device_text))
      std::fprintf(stderr, "versus_libraries: cannot write %s\n", opt.csv.c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  };
  try {
    CK(cudaSetDevice(opt.device));
    CK(cudaFree(nullptr));  // creates the primary context, which the launch API shares
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, opt.device));
    int driver = 0, runtime = 0;
    CK(cudaDriverGetVersion(&driver));
    CK(cudaRuntimeGetVersion(&runtime));
    Bench b(opt, prop);
    int cublas_version = 0;
    CKB(cublasGetVersion(b.cublas(), &cublas_version));
    device_text = prop.name;

    std::FILE* db_file = std::fopen(opt.db.c_str(), "rb");
    if (db_file != nullptr) std::fclose(db_file);
    else
      std::fprintf(stderr,
                   "versus_libraries: warning: no tuning database at %s: ours runs the spec defaults "
                   "(tune first, see bench/versus_libraries.sh)\n",
                   opt.db.c_str());

    std::printf("## versus_libraries on %s (sm_%d%d, %d SMs, L2 %.0f MiB, %.0f GiB)\n\n", prop.name, prop.major,
                prop.minor, prop.multiProcessorCount, prop.l2CacheSize / 1048576.0,
                static_cast<double>(prop.totalGlobalMem) / (1u << 30));
    std::printf(
        "driver %d.%d, runtime %d.%d, CUB %d.%d.%d, cuBLAS %d; tuning database %s; median of %d samples after %d "
        "warm-up runs; cold L2: %s of %.0f MiB before every sample.\n",
        driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, CUB_MAJOR_VERSION, CUB_MINOR_VERSION,
        CUB_SUBMINOR_VERSION, cublas_version, opt.db.c_str(), opt.reps, opt.warmup,
        opt.flush == "read" ? "a kernel reads a buffer" : "cudaMemsetAsync", b.flush_bytes() / 1048576.0);
    std::printf(
        "GB/s = 1e9 bytes/s. Bytes counted: reduction = read; scan = read + written; compaction = values and flags "
        "read + selected values written; transpose = read + written; copy (cudaMemcpyAsync of the input's bytes) = "
        "read + written. ours/library = library time / ours (> 1: ours faster); ours/copy and library/copy = ratio "
        "of GB/s.\n\n");
    std::fflush(stdout);

    std::vector<std::int64_t> given;
    for (int l : opt.sizes) given.push_back(std::int64_t{1} << l);
    const std::vector<std::int64_t> sizes1 =
        !given.empty() ? given
                       : (opt.quick ? std::vector<std::int64_t>{1 << 20} : std::vector<std::int64_t>{1 << 20, 1 << 24, 1 << 28});
    const std::vector<std::int64_t> sizes_c =
        !given.empty() ? given : (opt.quick ? std::vector<std::int64_t>{1 << 24} : std::vector<std::int64_t>{1 << 24, 1 << 28});
    struct Case {
      std::string family, label;
      std::function<Row()> run;
    };
    std::vector<Case> cases;
    if (wanted(opt, "reduction"))
      for (std::int64_t n : sizes1) {
        cases.push_back({"reduction", "int32 n=" + pow2_text(n), [&b, n] { return run_reduction<std::int32_t>(b, n); }});
        cases.push_back({"reduction", "float32 n=" + pow2_text(n), [&b, n] { return run_reduction<float>(b, n); }});
      }
    if (wanted(opt, "scan"))
      for (std::int64_t n : sizes1)
        for (const std::string& op : opt.scan_ops) {
          const std::string what = op == "inclusive_sum" ? "" : op + " ";
          cases.push_back({"scan", "int32 " + what + "n=" + pow2_text(n),
                           [&b, n, op] { return run_scan<std::int32_t>(b, n, op); }});
          cases.push_back({"scan", "float32 " + what + "n=" + pow2_text(n),
                           [&b, n, op] { return run_scan<float>(b, n, op); }});
        }
    if (wanted(opt, "compaction"))
      for (std::int64_t n : sizes_c)
        for (int pct : opt.select)
          for (bool flagged : {true, false}) {
            const std::string what = std::string(flagged ? "flagged" : "if") + " n=" + pow2_text(n) + " " +
                                     std::to_string(pct) + "%";
            cases.push_back({"compaction", "int32 " + what,
                             [&b, n, pct, flagged] { return run_compaction<std::int32_t>(b, n, pct, flagged); }});
            cases.push_back({"compaction", "float32 " + what,
                             [&b, n, pct, flagged] { return run_compaction<float>(b, n, pct, flagged); }});
          }
    if (wanted(opt, "transpose")) {
      const std::vector<std::pair<std::int64_t, std::int64_t>> shapes =
          opt.quick ? std::vector<std::pair<std::int64_t, std::int64_t>>{{4000, 4000}}
                    : std::vector<std::pair<std::int64_t, std::int64_t>>{{4096, 4096}, {8192, 8192}, {4000, 4000}};
      for (auto [r, c] : shapes)
        cases.push_back({"transpose", "float32 " + std::to_string(r) + "x" + std::to_string(c),
                         [&b, r = r, c = c] { return run_transpose(b, r, c); }});
    }

    if (!opt.match.empty()) {
      std::vector<Case> kept;
      for (Case& c : cases)
        for (const std::string& m : opt.match)
          if ((c.family + " " + c.label).find(m) != std::string::npos) {
            kept.push_back(std::move(c));
            break;
          }
      if (kept.empty()) throw std::runtime_error("--match: no case label contains any of the given texts");
      cases = std::move(kept);
    }
    for (const Case& c : cases) {
      try {
        rows.push_back(c.run());
      } catch (const ContextLost&) {
        throw;
      } catch (const std::exception& ex) {
        // Setup of the case failed (allocation, upload): one row that says so.
        std::fprintf(stderr, "  case failed: %s\n", ex.what());
        Row r;
        r.family = c.family;
        r.label = c.label;
        r.lib.name = "-";
        r.ours.status = r.lib.status = r.copy.status = std::string("error (case setup): ") + ex.what();
        rows.push_back(r);
        b.ensure_context("a case's setup");
      }
    }
  } catch (const std::exception& ex) {
    fatal = ex.what();
  }

  print_table(rows);
  std::size_t failures = 0;
  for (const Row& r : rows)
    for (const Impl* i : {&r.ours, &r.lib, &r.copy}) failures += i->ok ? 0 : 1;
  if (!fatal.empty()) {
    std::printf("\nstopped early: %s\n", fatal.c_str());
    std::fprintf(stderr, "versus_libraries: stopped early: %s\n", fatal.c_str());
  }
  std::printf("\n%zu cases, %zu implementation results not ok\n", rows.size(), failures);
  if (!opt.csv.empty()) {
    if (!write_csv(opt.csv, rows, device_text)) {
      std::fprintf(stderr, "versus_libraries: cannot write %s\n", opt.csv.c_str());
      return 1;
    }
    std::fprintf(stderr, "results written to %s\n", opt.csv.c_str());
  }
  return fatal.empty() && failures == 0 ? 0 : 1;
}
