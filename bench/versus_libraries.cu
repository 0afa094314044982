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
#include "versus_harness.cuh"
#include "versus_options.hpp"
#include "versus_report.hpp"

namespace {

using namespace versus;  // the harness, options and report of this one program

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
