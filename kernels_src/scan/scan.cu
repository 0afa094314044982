// Prefix scan (inclusive or exclusive; sum or max) of one array, compiled at run time by NVRTC.
// Compiles alone at its defaults; its includes, the decoupled look-back of the single-pass variants
// (common/lookback.cuh), the cache-hinted loads and stores (common/cache_hints.cuh), the tile loads and stores
// (scan/scan_tiles.cuh, included inside namespace scan_detail) and VARIANTs 9 and 10 (scan/scan_async.cuh,
// scan/scan_bulk.cuh), are kernel headers that the tuner hands to NVRTC by name (no include path needed).
//
// Two shapes of algorithm share this file (see docs/scan.md):
//  * hierarchical (VARIANT 0-3): scan_tiles scans each tile of BLOCK_SIZE * ITEMS_PER_THREAD elements
//    with one of four block-level algorithms and writes the tile totals; the host plan scans the totals
//    with the same kernel (recursively) and scan_add adds the scanned totals back.
//  * single pass (VARIANT 4): scan_single_pass, a chained scan with decoupled look-back and dynamic tile
//    ids; its tile state is zero once and then kept consistent by the kernel itself (generation-tagged status
//    words), so a launch needs no memset. The tile goes through shared memory (striped coalesced loads,
//    three-phase block scan, striped stores).
//  * single pass in registers (VARIANT 5): the same kernel and look-back, but each thread loads its
//    ITEMS_PER_THREAD consecutive elements straight into registers with VEC-wide loads, scans them there and
//    stores them the same way; shared memory holds only the warp totals, so it does not limit occupancy.
//  * single pass with prefetch (VARIANT 7): the kernel of VARIANT 4 in persistent blocks (about as many as fit
//    on the GPU at once) that take tile after tile; a block takes the id of its next tile and issues that
//    tile's loads into registers before it scans, looks back and stores the current one, so that the loads
//    stay in flight while the block waits for its predecessors.
//  * single pass in persistent blocks (VARIANT 8): the kernel of VARIANT 4 in persistent blocks that take tile
//    after tile, so no block starts or ends between tiles; a block asks for its next tile id once its look-back
//    is done, so the atomic's round trip overlaps its stores. The tile still goes through shared memory.
//  * single pass with asynchronous copies (VARIANT 9): persistent blocks that cycle through STAGES tile buffers
//    in shared memory, the cp.async copies of their tiles started up to STAGES - 1 tiles ahead, so that they are
//    in flight while the block looks back and stores the current one (kernel header scan/scan_async.cuh; plain
//    loads below sm_80).
//  * single pass with bulk copies (VARIANT 10): one tile per block as VARIANT 4, but one thread has the SM's copy
//    engine bring the whole tile into shared memory (cp.async.bulk, sm_90; threads load it below that), and each
//    warp scans its part row by row with shuffles and stores each row straight from registers (kernel header
//    scan/scan_bulk.cuh).
//  * single pass, warp-transposed (VARIANT 6): the same kernel and look-back; each warp loads its own
//    32 * ITEMS_PER_THREAD elements with coalesced VEC-wide loads into its part of shared memory, transposes
//    them to consecutive elements per thread (warp-synchronous, no block barrier), scans in registers and with
//    warp shuffles, and stores the same way back; the whole tile needs two block-wide barriers.
//
// Workload macros (set by the host adapter, numbered like the reduction family's):
//   DTYPE_ID 0 int32, 1 float32, 2 float64;  OP_ID 0 sum, 2 max.
// Whether a scan is inclusive or exclusive is a kernel argument, so both share one binary.

// ---- policy block: every macro is read here and nowhere else -----------------------------------------
#ifndef VARIANT
#ifdef AUTOTUNE_STRICT
#error "scan.cu: VARIANT is not defined (AUTOTUNE_STRICT)"
#endif
#define VARIANT 6
#endif
#ifndef BLOCK_SIZE
#ifdef AUTOTUNE_STRICT
#error "scan.cu: BLOCK_SIZE is not defined (AUTOTUNE_STRICT)"
#endif
#define BLOCK_SIZE 256
#endif
#ifndef ITEMS_PER_THREAD
#ifdef AUTOTUNE_STRICT
#error "scan.cu: ITEMS_PER_THREAD is not defined (AUTOTUNE_STRICT)"
#endif
#define ITEMS_PER_THREAD 16
#endif
#ifndef VEC
#ifdef AUTOTUNE_STRICT
#error "scan.cu: VEC is not defined (AUTOTUNE_STRICT)"
#endif
#define VEC 2
#endif
#ifndef PADDING
#ifdef AUTOTUNE_STRICT
#error "scan.cu: PADDING is not defined (AUTOTUNE_STRICT)"
#endif
#define PADDING 1
#endif
#ifndef LOOKBACK_DELAY
#ifdef AUTOTUNE_STRICT
#error "scan.cu: LOOKBACK_DELAY is not defined (AUTOTUNE_STRICT)"
#endif
#define LOOKBACK_DELAY 0
#endif
#ifndef STREAMING
#ifdef AUTOTUNE_STRICT
#error "scan.cu: STREAMING is not defined (AUTOTUNE_STRICT)"
#endif
#define STREAMING 0
#endif
#ifndef L2_PREFETCH
#ifdef AUTOTUNE_STRICT
#error "scan.cu: L2_PREFETCH is not defined (AUTOTUNE_STRICT)"
#endif
#define L2_PREFETCH 0
#endif
#ifndef CLEAR_STATE
#ifdef AUTOTUNE_STRICT
#error "scan.cu: CLEAR_STATE is not defined (AUTOTUNE_STRICT)"
#endif
#define CLEAR_STATE 0
#endif
#ifndef MIN_THREADS_PER_SM
#ifdef AUTOTUNE_STRICT
#error "scan.cu: MIN_THREADS_PER_SM is not defined (AUTOTUNE_STRICT)"
#endif
#define MIN_THREADS_PER_SM 2048
#endif
#ifndef STAGES
#ifdef AUTOTUNE_STRICT
#error "scan.cu: STAGES is not defined (AUTOTUNE_STRICT)"
#endif
#define STAGES 1
#endif
#ifndef REG_ROWS
#ifdef AUTOTUNE_STRICT
#error "scan.cu: REG_ROWS is not defined (AUTOTUNE_STRICT)"
#endif
#define REG_ROWS 0
#endif
#ifndef DTYPE_ID
#ifdef AUTOTUNE_STRICT
#error "scan.cu: DTYPE_ID is not defined (AUTOTUNE_STRICT)"
#endif
#define DTYPE_ID 1
#endif
#ifndef OP_ID
#ifdef AUTOTUNE_STRICT
#error "scan.cu: OP_ID is not defined (AUTOTUNE_STRICT)"
#endif
#define OP_ID 0
#endif

struct ScanPolicy {
  static constexpr int variant = VARIANT;       // 0 kogge_stone, 1 kogge_stone_double_buffer, 2 brent_kung,
                                                // 3 three_phase, 4 single_pass, 5 single_pass_registers,
                                                // 6 single_pass_warp, 7 single_pass_prefetch,
                                                // 8 single_pass_persistent, 9 single_pass_async,
                                                // 10 single_pass_bulk
  static constexpr int block = BLOCK_SIZE;      // threads per block
  static constexpr int items = ITEMS_PER_THREAD;
  static constexpr int vec = VEC;               // elements per global load/store instruction
  static constexpr int padding = PADDING;       // 1: one shared-memory word of padding every 32 elements
  static constexpr int lookback_delay = LOOKBACK_DELAY;  // ns of the first back-off of a look-back spin (0: none)
  // MIN_THREADS_PER_SM > 0: __launch_bounds__ asks the compiler for registers that let this many threads be
  // resident on an SM (1024: at most 64 per thread, 1536: 40, 2048: 32), so that more bytes can be in flight; 0: no cap.
  static constexpr bool streaming = STREAMING != 0;  // full tiles: loads and stores with the evict-first hint (.cs)
  static constexpr bool l2_prefetch = L2_PREFETCH != 0;  // full-tile 16-byte loads ask the L2 to fetch 256 bytes
  static constexpr int min_threads = MIN_THREADS_PER_SM;
  // CLEAR_STATE: read by the host plan only (1: a memset clears the tile state before each launch); the kernel
  // is the same either way.
  static constexpr bool clear_state = CLEAR_STATE != 0;
  static constexpr int stages = STAGES;         // VARIANT 9: tile buffers in shared memory per block
  static constexpr int reg_rows = REG_ROWS;     // VARIANT 10: rows of 16-byte vectors per lane loaded into registers
  static constexpr int min_blocks = MIN_THREADS_PER_SM > 0 ? MIN_THREADS_PER_SM / BLOCK_SIZE : 1;
  static constexpr int dtype = DTYPE_ID;         // 0 int32, 1 float32, 2 float64
  static constexpr int op = OP_ID;               // 0 sum, 2 max (the numbering of the reduction family)
};
// ---- end of policy block (no macro is read below this line) -------------------------------------------

#include "common/cache_hints.cuh"  // reads no macro
#include "common/lookback.cuh"     // reads no macro

template <int D> struct ScanDType;
template <> struct ScanDType<0> { typedef int type; };
template <> struct ScanDType<1> { typedef float type; };
template <> struct ScanDType<2> { typedef double type; };
typedef ScanDType<ScanPolicy::dtype>::type scan_value_t;

namespace scan_detail {

typedef scan_value_t value_t;
constexpr bool kOpMax = ScanPolicy::op == 2;

constexpr int kWarp = 32;
constexpr int kBlock = ScanPolicy::block;
constexpr int kItems = ScanPolicy::items;
constexpr int kVec = ScanPolicy::vec;
constexpr int kTile = kBlock * kItems;
constexpr int kWarps = kBlock / kWarp;
constexpr int kTileSmem = kTile + (ScanPolicy::padding ? kTile / 32 : 0);
constexpr unsigned kFullMask = 0xffffffffu;

__host__ __device__ constexpr bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

static_assert(ScanPolicy::op == 0 || ScanPolicy::op == 2, "OP_ID must be 0 (sum) or 2 (max)");
static_assert(ScanPolicy::variant >= 0 && ScanPolicy::variant <= 10, "VARIANT must be 0..10");
static_assert(kBlock % kWarp == 0 && kBlock >= 64 && kBlock <= 1024, "BLOCK_SIZE: a multiple of 32 in [64, 1024]");
static_assert(kItems >= 1 && kItems <= 64, "ITEMS_PER_THREAD must be in [1, 64]");
static_assert(kVec == 1 || kVec == 2 || kVec == 4, "VEC must be 1, 2 or 4");
static_assert(kItems % kVec == 0, "ITEMS_PER_THREAD must be a multiple of VEC");
static_assert(sizeof(value_t) * kVec <= 16, "VEC * sizeof(T) must not exceed 16 bytes");
static_assert(ScanPolicy::padding == 0 || ScanPolicy::padding == 1, "PADDING must be 0 or 1");
static_assert(ScanPolicy::min_threads >= 0 && ScanPolicy::min_threads <= 2048 && ScanPolicy::min_threads % ScanPolicy::block == 0,
              "MIN_THREADS_PER_SM: 0, or a multiple of BLOCK_SIZE up to 2048");
static_assert(ScanPolicy::variant != 2 || is_pow2(kTile), "brent_kung needs a power-of-two tile");

template <class V> struct Traits;
// larger(): the max of two values in one instruction where the type has one (IMNMX, FMNMX); `a > b ? a : b` on
// floats is a compare and a select. The float versions return the other operand where one is NaN (IEEE
// maxNum), which the inputs never are.
template <> struct Traits<int> {
  static constexpr bool is_int = true;
  static __device__ __forceinline__ int lowest() { return -2147483647 - 1; }
  static __device__ __forceinline__ int larger(int a, int b) { return max(a, b); }
};
template <> struct Traits<float> {
  static constexpr bool is_int = false;
  static __device__ __forceinline__ float lowest() { return __int_as_float(0xff800000); }  // -inf
  static __device__ __forceinline__ float larger(float a, float b) { return fmaxf(a, b); }
};
template <> struct Traits<double> {
  static constexpr bool is_int = false;
  static __device__ __forceinline__ double lowest() {
    return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull));  // -inf
  }
  static __device__ __forceinline__ double larger(double a, double b) { return fmax(a, b); }
};

__device__ __forceinline__ value_t identity() {
  if constexpr (kOpMax) return Traits<value_t>::lowest();
  else return value_t(0);
}

/// a (earlier elements) combined with b (later elements). Integer sums wrap around (two's complement).
__device__ __forceinline__ value_t combine(value_t a, value_t b) {
  if constexpr (kOpMax) {
    return Traits<value_t>::larger(a, b);
  } else if constexpr (Traits<value_t>::is_int) {
    return static_cast<value_t>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
  } else {
    return a + b;
  }
}

/// Shared-memory index of tile element i (one padding word after every 32 elements when PADDING=1).
__device__ __forceinline__ int pad(int i) { return ScanPolicy::padding ? i + (i >> 5) : i; }

template <class V, int N> struct alignas(sizeof(V) * N) VecOf { V v[N]; };
typedef VecOf<value_t, kVec> vec_t;

/// One vector of a full tile from global memory; STREAMING: with the evict-first (streaming, .cs) hint, since
/// every element is read once; L2_PREFETCH (16-byte vectors): with the hint that the L2 fetch 256 bytes around
/// the access (the block's neighbouring vectors). See common/cache_hints.cuh.
__device__ __forceinline__ vec_t load_vec(const vec_t* p) {
  return hints::load<ScanPolicy::streaming, ScanPolicy::l2_prefetch>(p);
}

/// One vector of a full tile to global memory; STREAMING: with the evict-first hint (written once, not read).
__device__ __forceinline__ void store_vec(vec_t* p, const vec_t& v) { hints::store<ScanPolicy::streaming>(p, v); }

#include "scan/scan_tiles.cuh"  // the tile loads and stores (this namespace); reads no macro

// ---- block-level scans: in place over the tile in shared memory, result = inclusive scan ---------------

/// Kogge-Stone: log2(tile) steps, every element active in every step; two barriers per step.
__device__ __forceinline__ value_t* kogge_stone(value_t* s) {
  const int tid = threadIdx.x;
  for (int d = 1; d < kTile; d <<= 1) {
    value_t t[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = k * kBlock + tid;
      t[k] = i >= d ? combine(s[pad(i - d)], s[pad(i)]) : s[pad(i)];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kItems; ++k) s[pad(k * kBlock + tid)] = t[k];
    __syncthreads();
  }
  return s;
}

/// Kogge-Stone ping-ponging between two buffers: one barrier per step. Returns the buffer with the result.
__device__ __forceinline__ value_t* kogge_stone_double_buffer(value_t* a, value_t* b) {
  const int tid = threadIdx.x;
  value_t* src = a;
  value_t* dst = b;
  for (int d = 1; d < kTile; d <<= 1) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = k * kBlock + tid;
      dst[pad(i)] = i >= d ? combine(src[pad(i - d)], src[pad(i)]) : src[pad(i)];
    }
    __syncthreads();
    value_t* t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/// Brent-Kung: work-efficient up-sweep (reduction tree) and down-sweep (distribution tree), inclusive.
__device__ __forceinline__ value_t* brent_kung(value_t* s) {
  const int tid = threadIdx.x;
  for (int d = 1; d < kTile; d <<= 1) {
    const int pairs = kTile / (2 * d);
    for (int p = tid; p < pairs; p += kBlock) {
      const int a = (2 * p + 1) * d - 1;
      const int b = a + d;
      s[pad(b)] = combine(s[pad(a)], s[pad(b)]);
    }
    __syncthreads();
  }
  for (int d = kTile / 4; d >= 1; d >>= 1) {
    const int count = (kTile / d - 1) / 2;  // p with (2p + 3) d - 1 < kTile
    for (int p = tid; p < count; p += kBlock) {
      const int a = (2 * p + 2) * d - 1;
      const int b = a + d;
      s[pad(b)] = combine(s[pad(a)], s[pad(b)]);
    }
    __syncthreads();
  }
  return s;
}

/// Inclusive scan of one value per lane across the calling warp (shuffles; every lane of the warp calls it).
__device__ __forceinline__ value_t warp_inclusive(value_t v) {
  const int lane = threadIdx.x & (kWarp - 1);
#pragma unroll
  for (int o = 1; o < kWarp; o <<= 1) {
    const value_t y = __shfl_up_sync(kFullMask, v, o);
    if (lane >= o) v = combine(y, v);
  }
  return v;
}

/// Exclusive scan of one value per thread (warp shuffles, then the warp totals by warp 0).
/// Thread 0 gets the identity; *total gets the combination of all values. Contains two barriers.
__device__ __forceinline__ value_t block_exclusive(value_t x, value_t* warp_tot, value_t* total) {
  const int tid = threadIdx.x;
  const int lane = tid & (kWarp - 1);
  const int w = tid / kWarp;
  const value_t inc = warp_inclusive(x);
  if (lane == kWarp - 1) warp_tot[w] = inc;
  __syncthreads();
  if (w == 0) {
    const value_t t = warp_inclusive(lane < kWarps ? warp_tot[lane] : identity());
    if (lane < kWarps) warp_tot[lane] = t;
  }
  __syncthreads();
  value_t e = __shfl_up_sync(kFullMask, inc, 1);
  if (lane == 0) e = identity();
  if (w > 0) e = lane == 0 ? warp_tot[w - 1] : combine(warp_tot[w - 1], e);
  *total = warp_tot[kWarps - 1];
  return e;
}

/// Coarsened three-phase scan: each thread scans its ITEMS_PER_THREAD consecutive elements sequentially,
/// the block scans the thread totals, each thread adds its prefix back.
__device__ __forceinline__ value_t* three_phase(value_t* s, value_t* warp_tot) {
  const int tid = threadIdx.x;
  value_t r[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) r[k] = s[pad(tid * kItems + k)];
#pragma unroll
  for (int k = 1; k < kItems; ++k) r[k] = combine(r[k - 1], r[k]);
  value_t total;
  const value_t excl = block_exclusive(r[kItems - 1], warp_tot, &total);  // barriers: all reads are done
  if (tid > 0) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) r[k] = combine(excl, r[k]);
  }
#pragma unroll
  for (int k = 0; k < kItems; ++k) s[pad(tid * kItems + k)] = r[k];
  __syncthreads();
  return s;
}

/// The block-level scan chosen by VARIANT (single_pass uses three_phase).
__device__ __forceinline__ value_t* block_scan(value_t* s, value_t* s2, value_t* warp_tot) {
  if constexpr (ScanPolicy::variant == 0) return kogge_stone(s);
  else if constexpr (ScanPolicy::variant == 1) return kogge_stone_double_buffer(s, s2);
  else if constexpr (ScanPolicy::variant == 2) return brent_kung(s);
  else return three_phase(s, warp_tot);
}

// ---- tile status for the decoupled look-back ------------------------------------------------------------
// Tickets, generation tags and the look-back itself: common/lookback.cuh. state layout (bytes) after the
// launch word [0, 8):
//   4-byte T: [8, 8 + 8 * tiles) one 64-bit word per tile: tag << 32 | value bits (tag and value are
//             published together by one 64-bit store, as in lookback::PackedStatus);
//   8-byte T: [8, 8 + 4 * tiles) one 32-bit tag per tile, then (8-aligned) tiles aggregates and tiles
//             inclusive prefixes; a value is written before its tag with release/acquire ordering.

using lookback::generation_tag;
using lookback::kFlagAggregate;
using lookback::kFlagNone;
using lookback::kFlagPrefix;
using lookback::ld_relaxed;
using lookback::st_relaxed;
using lookback::take_ticket;

// A separate 32-bit flag (float64) publishes a value written before it: release store, acquire load.
__device__ __forceinline__ void st_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_relaxed(double* p, double v) {
  asm volatile("st.relaxed.gpu.f64 [%0], %1;" ::"l"(p), "d"(v) : "memory");
}
__device__ __forceinline__ double ld_relaxed(const double* p) {
  double v;
  asm volatile("ld.relaxed.gpu.f64 %0, [%1];" : "=d"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ unsigned to_bits(int v) { return static_cast<unsigned>(v); }
__device__ __forceinline__ unsigned to_bits(float v) { return __float_as_uint(v); }
template <class V> __device__ __forceinline__ V from_bits(unsigned u);
template <> __device__ __forceinline__ int from_bits<int>(unsigned u) { return static_cast<int>(u); }
template <> __device__ __forceinline__ float from_bits<float>(unsigned u) { return __uint_as_float(u); }

struct TileStatus {
  unsigned char* state;
  long long tiles;
  unsigned tag;  // generation_tag of this launch

  /// The flag a tag stands for in this launch (kFlagNone for a tag of another launch).
  __device__ __forceinline__ unsigned flag_of(unsigned t) const { return (t & ~3u) == tag ? (t & 3u) : kFlagNone; }

  // Templates so that the branch for the other element size is never instantiated.
  template <class V>
  __device__ void publish(long long tile, unsigned flag, V v) const {
    if constexpr (sizeof(V) == 4) {
      unsigned long long* words = reinterpret_cast<unsigned long long*>(state + 8);
      st_relaxed(words + tile, (static_cast<unsigned long long>(tag | flag) << 32) | to_bits(v));
    } else {
      unsigned* flags = reinterpret_cast<unsigned*>(state + 8);
      double* aggregates = reinterpret_cast<double*>(state + 8 + ((4 * tiles + 7) / 8) * 8);
      double* prefixes = aggregates + tiles;
      st_relaxed((flag == kFlagAggregate ? aggregates : prefixes) + tile, v);
      st_release(flags + tile, tag | flag);
    }
  }

  /// Asks the L2 to fetch the status of `tile` (its sector is in memory, not in the L2, when a launch starts
  /// after other work), so that the look-backs of its successors and its own publishing find it there.
  template <class V>
  __device__ void prefetch(long long tile) const {
    if constexpr (sizeof(V) == 4) {
      asm volatile("prefetch.global.L2 [%0];" ::"l"(state + 8 + 8 * tile));
    } else {
      const long long values = 8 + ((4 * tiles + 7) / 8) * 8;
      asm volatile("prefetch.global.L2 [%0];" ::"l"(state + 8 + 4 * tile));
      asm volatile("prefetch.global.L2 [%0];" ::"l"(state + values + 8 * tile));
      asm volatile("prefetch.global.L2 [%0];" ::"l"(state + values + 8 * (tiles + tile)));
    }
  }

  /// tile < 0 (before the first tile) reads as an inclusive prefix of identity().
  template <class V>
  __device__ void read(long long tile, unsigned& flag, V& v) const {
    if (tile < 0) {
      flag = kFlagPrefix;
      v = identity();
    } else if constexpr (sizeof(V) == 4) {
      const unsigned long long* words = reinterpret_cast<const unsigned long long*>(state + 8);
      const unsigned long long w = ld_relaxed(words + tile);
      flag = flag_of(static_cast<unsigned>(w >> 32));
      v = from_bits<V>(static_cast<unsigned>(w));
    } else {
      const unsigned* flags = reinterpret_cast<const unsigned*>(state + 8);
      const double* aggregates = reinterpret_cast<const double*>(state + 8 + ((4 * tiles + 7) / 8) * 8);
      const double* prefixes = aggregates + tiles;
      flag = flag_of(ld_acquire(flags + tile));
      v = flag == kFlagAggregate ? ld_relaxed(aggregates + tile)
                                 : (flag == kFlagPrefix ? ld_relaxed(prefixes + tile) : identity());
    }
  }
};

/// Run by the 32 threads of warp 0: lookback::look_back over the tile status with the scan's operator.
__device__ value_t look_back(const TileStatus& st, long long tile, value_t aggregate) {
  return lookback::look_back<ScanPolicy::lookback_delay>(st, tile, aggregate, identity(),
                                                          [](value_t a, value_t b) { return combine(a, b); });
}

/// Run by the 32 threads of warp 0 once every warp's total is in warp_tot: the warps' exclusive prefixes into
/// warp_excl, the tile total, and the look-back with it; lane 0 leaves the tile's exclusive prefix in s_prefix.
__device__ __forceinline__ void warp_prefixes_look_back(const TileStatus& st, long long tile, const value_t* warp_tot,
                                                        value_t* warp_excl, value_t& s_prefix) {
  const int lane = threadIdx.x;
  const value_t t = warp_inclusive(lane < kWarps ? warp_tot[lane] : identity());
  const value_t e = __shfl_up_sync(kFullMask, t, 1);
  if (lane < kWarps) warp_excl[lane] = lane == 0 ? identity() : e;
  const value_t total = __shfl_sync(kFullMask, t, kWarps - 1);
  const value_t prefix = look_back(st, tile, total);
  if (lane == 0) s_prefix = prefix;
}

}  // namespace scan_detail

#include "scan/scan_async.cuh"  // VARIANT 9; reads no macro
#include "scan/scan_bulk.cuh"   // VARIANT 10; reads no macro

// ---- entry points -------------------------------------------------------------------------------------

/// Scans each tile of in[0, n) on its own (block blockIdx.x scans tile blockIdx.x) into out and writes the
/// tile total to tile_sums[blockIdx.x]. exclusive != 0: out[i] excludes in[i] (first element of a tile
/// gets the identity). Grid: ceil(n / (BLOCK_SIZE * ITEMS_PER_THREAD)) blocks of BLOCK_SIZE threads.
extern "C" __global__ void __launch_bounds__(ScanPolicy::block, ScanPolicy::min_blocks)
scan_tiles(const scan_value_t* __restrict__ in, scan_value_t* __restrict__ out, long long n,
           scan_value_t* __restrict__ tile_sums, int exclusive) {
  using namespace scan_detail;
  // Part of every binary, but never launched with VARIANT 5 or 6 (single pass): then it keeps no tile (and
  // does nothing).
  constexpr int kSmem = ScanPolicy::variant >= 5 ? 1 : kTileSmem;
  __shared__ value_t s[kSmem];
  __shared__ value_t s2[ScanPolicy::variant == 1 ? kTileSmem : 1];
  __shared__ value_t warp_tot[kWarp];
  if constexpr (ScanPolicy::variant < 5) {
    const long long base = static_cast<long long>(blockIdx.x) * kTile;
    load_tile(in, base, n, s);
    __syncthreads();
    const value_t* res = block_scan(s, s2, warp_tot);
    if (threadIdx.x == 0) tile_sums[blockIdx.x] = res[pad(kTile - 1)];
    store_tile(out, base, n, res, identity(), exclusive != 0);
  }
}

/// data[i] = offsets[t] combined with data[i] for every element i of tile t >= 1 (block b handles tile
/// b + 1). offsets holds the exclusive scan of the tile totals. Grid: tiles - 1 blocks.
extern "C" __global__ void __launch_bounds__(ScanPolicy::block, ScanPolicy::min_blocks)
scan_add(scan_value_t* __restrict__ data, long long n, const scan_value_t* __restrict__ offsets) {
  using namespace scan_detail;
  const long long tile = static_cast<long long>(blockIdx.x) + 1;
  const long long base = tile * kTile;
  const value_t off = offsets[tile];
  const int tid = threadIdx.x;
  if (base + kTile <= n) {
    vec_t* vd = reinterpret_cast<vec_t*>(data + base);
#pragma unroll
    for (int r = 0; r < kItems / kVec; ++r) {
      vec_t x = vd[r * kBlock + tid];
#pragma unroll
      for (int j = 0; j < kVec; ++j) x.v[j] = combine(off, x.v[j]);
      vd[r * kBlock + tid] = x;
    }
  } else {
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
      const long long i = base + r * kBlock + tid;
      if (i < n) data[i] = combine(off, data[i]);
    }
  }
}

/// Single-pass chained scan with decoupled look-back. state: see "tile status" above (zero before the
/// first launch; each launch leaves it ready for the next). Grid: ceil(n / (BLOCK_SIZE * ITEMS_PER_THREAD))
/// blocks (VARIANT 7, 8, 9: at most that many persistent blocks; VARIANT 10: one per tile, as 4).
extern "C" __global__ void __launch_bounds__(ScanPolicy::block, ScanPolicy::min_blocks)
scan_single_pass(const scan_value_t* __restrict__ in, scan_value_t* __restrict__ out, long long n,
                 int exclusive, unsigned char* __restrict__ state) {
  using namespace scan_detail;
  __shared__ value_t warp_tot[kWarp];
  __shared__ unsigned s_tile, s_gen;
  __shared__ value_t s_prefix;
  const long long tiles = (n + kTile - 1) / kTile;
  if constexpr (ScanPolicy::variant == 10) {  // takes its own ticket (see scan/scan_bulk.cuh)
    bulk_tiles::scan_tile(in, out, n, exclusive != 0, state, tiles, warp_tot, s_prefix);
    return;
  }
  // Tickets of a launch: one per block; persistent blocks (VARIANT 7, 8, 9) take tickets until one is >= tiles.
  constexpr bool kPersistent = ScanPolicy::variant >= 7 && ScanPolicy::variant <= 9;
  const unsigned last_ticket = static_cast<unsigned>(kPersistent ? tiles + gridDim.x - 1 : gridDim.x - 1);
  if (threadIdx.x == 0) {
    unsigned gen;
    const unsigned t = take_ticket(state, last_ticket, gen);
    if (t < tiles) TileStatus{state, tiles, 0}.prefetch<value_t>(t);
    s_tile = t;
    s_gen = gen;
  }
  __syncthreads();
  const long long tile = s_tile;
  const long long base = tile * kTile;
  const TileStatus st{state, tiles, generation_tag(s_gen)};
  if constexpr (ScanPolicy::variant == 9) {
    async_tiles::scan_persistent(in, out, n, exclusive != 0, state, tiles, last_ticket, st, s_tile, warp_tot,
                                 s_prefix);
  } else if constexpr (ScanPolicy::variant == 5) {
    value_t r[kItems];
    load_blocked(in, base, n, r);
#pragma unroll
    for (int k = 1; k < kItems; ++k) r[k] = combine(r[k - 1], r[k]);
    value_t total;
    const value_t thread_prefix = block_exclusive(r[kItems - 1], warp_tot, &total);  // identity for thread 0
    if (threadIdx.x < kWarp) {
      const value_t prefix = look_back(st, tile, total);
      if (threadIdx.x == 0) s_prefix = prefix;
    }
    __syncthreads();
    store_blocked(out, base, n, r, threadIdx.x == 0 ? s_prefix : combine(s_prefix, thread_prefix), exclusive != 0);
  } else if constexpr (ScanPolicy::variant == 6) {
    __shared__ value_t ws_all[kWarps * kWarpSmem];
    __shared__ value_t warp_excl[kWarp];
    value_t* ws = ws_all + (threadIdx.x / kWarp) * kWarpSmem;
    const int lane = threadIdx.x & (kWarp - 1);
    const int w = threadIdx.x / kWarp;
    value_t r[kItems];
    load_warp(in, base, n, ws, r);
#pragma unroll
    for (int k = 1; k < kItems; ++k) r[k] = combine(r[k - 1], r[k]);
    const value_t inc = warp_inclusive(r[kItems - 1]);  // inclusive scan of the lanes' totals within the warp
    value_t lane_excl = __shfl_up_sync(kFullMask, inc, 1);
    if (lane == kWarp - 1) warp_tot[w] = inc;
    __syncthreads();
    if (w == 0) warp_prefixes_look_back(st, tile, warp_tot, warp_excl, s_prefix);
    __syncthreads();
    value_t p = combine(s_prefix, warp_excl[w]);
    if (lane > 0) p = combine(p, lane_excl);
    value_t o[kItems];
    if (exclusive != 0) {
      o[0] = p;
#pragma unroll
      for (int k = 1; k < kItems; ++k) o[k] = combine(p, r[k - 1]);
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) o[k] = combine(p, r[k]);
    }
    store_warp(out, base, n, ws, o);
  } else if constexpr (ScanPolicy::variant == 7) {
    __shared__ value_t s[kTileSmem];
    __shared__ unsigned s_next;
    long long current = tile;  // < tiles: the plan launches at most `tiles` blocks
    value_t r[kItems];
    load_striped(in, current * kTile, n, r);
    while (current < tiles) {
      const long long at = current * kTile;
      stage_striped(r, at, n, s);
      if (threadIdx.x == 0) {
        unsigned gen;
        s_next = take_ticket(state, last_ticket, gen);
        if (s_next < tiles) st.prefetch<value_t>(s_next);
      }
      __syncthreads();
      three_phase(s, warp_tot);  // ends with a barrier; r is free meanwhile (fewer registers)
      const long long next = s_next;
      if (next < tiles) load_striped(in, next * kTile, n, r);  // in flight during the look-back and the stores
      if (threadIdx.x < kWarp) {
        const value_t prefix = look_back(st, current, s[pad(kTile - 1)]);
        if (threadIdx.x == 0) s_prefix = prefix;
      }
      __syncthreads();
      store_tile(out, at, n, s, s_prefix, exclusive != 0);
      __syncthreads();  // s, s_next and s_prefix are written again for the next tile
      current = next;
    }
  } else if constexpr (ScanPolicy::variant == 8) {
    __shared__ value_t s[kTileSmem];
    __shared__ unsigned s_next;
    long long current = tile;
    while (current < tiles) {
      const long long at = current * kTile;
      load_tile(in, at, n, s);
      __syncthreads();
      three_phase(s, warp_tot);
      if (threadIdx.x < kWarp) {
        const value_t prefix = look_back(st, current, s[pad(kTile - 1)]);
        if (threadIdx.x == 0) {
          s_prefix = prefix;
          // The next ticket only now: a tile id taken earlier would wait for this tile's whole scan, and the
          // look-backs of all later tiles with it (measured: 1.6x slower at 2^28). Its round trip overlaps
          // the stores of this tile.
          unsigned gen;
          s_next = take_ticket(state, last_ticket, gen);
          if (s_next < tiles) st.prefetch<value_t>(s_next);
        }
      }
      __syncthreads();
      store_tile(out, at, n, s, s_prefix, exclusive != 0);
      current = s_next;
      __syncthreads();  // s, s_next and s_prefix are written again for the next tile
    }
  } else {
    __shared__ value_t s[ScanPolicy::variant >= 5 ? 1 : kTileSmem];
    load_tile(in, base, n, s);
    __syncthreads();
    three_phase(s, warp_tot);
    if (threadIdx.x < kWarp) {
      const value_t prefix = look_back(st, tile, s[pad(kTile - 1)]);
      if (threadIdx.x == 0) s_prefix = prefix;
    }
    __syncthreads();
    store_tile(out, base, n, s, s_prefix, exclusive != 0);
  }
}
