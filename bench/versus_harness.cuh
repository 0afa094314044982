// The harness of bench/versus_libraries.cu: CUDA and cuBLAS errors, host helpers (threads, the counter-based
// inputs), the result rows, device buffers, the timing bench (events, L2 flush, warm-up and samples) and what every
// family's case shares (upload, download, poisoning, the copy). Included once, by versus_libraries.cu.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tuner/runtime/launch.hpp"
#include "versus_options.hpp"

namespace versus {

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

}  // namespace versus
