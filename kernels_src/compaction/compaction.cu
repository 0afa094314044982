// Stream compaction (select): copies, in order, the elements whose flag is non-zero ("flagged") or that
// are greater than a threshold ("if") and writes their number. Compiled at run time by NVRTC;
// compiles alone at its defaults; its includes, the decoupled look-back (common/lookback.cuh) and the cache-hinted
// stores (common/cache_hints.cuh), are kernel headers that the tuner hands to NVRTC by name (no include path
// needed). See docs/compaction.md.
//
// Variants:
//  * three_phase (VARIANT 0): compact_count counts the selected elements of every tile, the host plan scans
//    the tile counts (compact_scan_tiles, recursively, and compact_scan_add), compact_scatter re-reads each
//    tile, ranks its selected elements and writes them at the tile's offset.
//  * single_pass (VARIANT 1): compact_single_pass ranks a tile and gets its offset from the tiles before it
//    by decoupled look-back (dynamic tile ids); the tile state is zero once and then kept consistent by the
//    kernel itself (generation-tagged words), so a launch needs no memset.
//    Within a tile, elements are ranked with warp ballots and population counts (stable).
//  * single_pass_blocked (VARIANT 2): the same kernel and look-back, but each thread owns ITEMS_PER_THREAD
//    consecutive elements, loads their flags as 32-bit words and their values with 16-byte loads (always:
//    no load depends on a flag), counts its selection, and the block ranks the threads with one exclusive
//    scan of the counts. ITEMS_PER_THREAD must be a multiple of 4.
//  * single_pass_bulk (VARIANT 3): the same ticket and look-back, with the tile brought into shared memory by the
//    SM's copy engine (sm_90 bulk copies; the threads below that), counted from its flags and compacted by warps
//    in rows of 16-byte vectors: compaction/compaction_bulk.cuh. ITEMS_PER_THREAD must be a multiple of 4.
//
// Workload macros (set by the host adapter): DTYPE_ID 0 int32, 1 float32, 2 float64 (the numbering of the
// reduction and scan families); SELECT_IF 0 = flagged (flags array, one byte per element), 1 = x > threshold.

// ---- policy block: every macro is read here and nowhere else -----------------------------------------
#ifndef VARIANT
#ifdef AUTOTUNE_STRICT
#error "compaction.cu: VARIANT is not defined (AUTOTUNE_STRICT)"
#endif
#define VARIANT 3
#endif
#ifndef BLOCK_SIZE
#ifdef AUTOTUNE_STRICT
#error "compaction.cu: BLOCK_SIZE is not defined (AUTOTUNE_STRICT)"
#endif
#define BLOCK_SIZE 256
#endif
#ifndef ITEMS_PER_THREAD
#ifdef AUTOTUNE_STRICT
#error "compaction.cu: ITEMS_PER_THREAD is not defined (AUTOTUNE_STRICT)"
#endif
#define ITEMS_PER_THREAD 64
#endif
#ifndef STAGE_OUTPUT
#ifdef AUTOTUNE_STRICT
#error "compaction.cu: STAGE_OUTPUT is not defined (AUTOTUNE_STRICT)"
#endif
#define STAGE_OUTPUT 1
#endif
#ifndef LOOKBACK_DELAY
#ifdef AUTOTUNE_STRICT
#error "compaction.cu: LOOKBACK_DELAY is not defined (AUTOTUNE_STRICT)"
#endif
#define LOOKBACK_DELAY 0
#endif
#ifndef STREAMING
#ifdef AUTOTUNE_STRICT
#error "compaction.cu: STREAMING is not defined (AUTOTUNE_STRICT)"
#endif
#define STREAMING 0
#endif
#ifndef CLEAR_STATE
#ifdef AUTOTUNE_STRICT
#error "compaction.cu: CLEAR_STATE is not defined (AUTOTUNE_STRICT)"
#endif
#define CLEAR_STATE 0
#endif
#ifndef MIN_THREADS_PER_SM
#ifdef AUTOTUNE_STRICT
#error "compaction.cu: MIN_THREADS_PER_SM is not defined (AUTOTUNE_STRICT)"
#endif
#define MIN_THREADS_PER_SM 1024
#endif
#ifndef DTYPE_ID
#ifdef AUTOTUNE_STRICT
#error "compaction.cu: DTYPE_ID is not defined (AUTOTUNE_STRICT)"
#endif
#define DTYPE_ID 1
#endif
#ifndef SELECT_IF
#ifdef AUTOTUNE_STRICT
#error "compaction.cu: SELECT_IF is not defined (AUTOTUNE_STRICT)"
#endif
#define SELECT_IF 0
#endif

struct CompactPolicy {
  static constexpr int variant = VARIANT;        // 0 three_phase, 1 single_pass, 2 single_pass_blocked, 3 single_pass_bulk
  static constexpr int block = BLOCK_SIZE;       // threads per block
  static constexpr int items = ITEMS_PER_THREAD; // elements per thread; tile = block * items
  static constexpr bool stage_output = STAGE_OUTPUT != 0;  // write a tile's selection through shared memory
  static constexpr int lookback_delay = LOOKBACK_DELAY;     // ns of the first back-off of a look-back spin (0: none)
  // MIN_THREADS_PER_SM > 0: __launch_bounds__ asks the compiler for registers that let this many threads be
  // resident on an SM (1024: at most 64 per thread, 1536: 40, 2048: 32), so that more bytes can be in flight; 0: no cap.
  static constexpr bool streaming = STREAMING != 0;  // VARIANT 2, full tiles: evict-first (.cs) loads and stores; 3: stores
  static constexpr int min_threads = MIN_THREADS_PER_SM;
  // CLEAR_STATE: read by the host plan only (1: a memset clears the tile state before each launch); the kernel
  // is the same either way.
  static constexpr bool clear_state = CLEAR_STATE != 0;
  static constexpr int min_blocks = MIN_THREADS_PER_SM > 0 ? MIN_THREADS_PER_SM / BLOCK_SIZE : 1;
  static constexpr int dtype = DTYPE_ID;         // 0 int32, 1 float32, 2 float64
  static constexpr bool select_if = SELECT_IF != 0;
};
// ---- end of policy block (no macro is read below this line) -------------------------------------------

#include "common/cache_hints.cuh"  // reads no macro
#include "common/lookback.cuh"     // reads no macro

template <int D> struct CompactDType;
template <> struct CompactDType<0> { typedef int type; };
template <> struct CompactDType<1> { typedef float type; };
template <> struct CompactDType<2> { typedef double type; };
typedef CompactDType<CompactPolicy::dtype>::type compact_value_t;

namespace compact_detail {

typedef compact_value_t value_t;

constexpr int kWarp = 32;
constexpr int kBlock = CompactPolicy::block;
constexpr int kItems = CompactPolicy::items;
constexpr int kTile = kBlock * kItems;
constexpr int kWarps = kBlock / kWarp;
constexpr int kCounts = kItems * kWarps;  // one selection count per (item round, warp)
constexpr unsigned kFullMask = 0xffffffffu;

static_assert(CompactPolicy::variant >= 0 && CompactPolicy::variant <= 3, "VARIANT must be 0, 1, 2 or 3");
static_assert(CompactPolicy::variant != 2 || kItems % 4 == 0, "single_pass_blocked: ITEMS_PER_THREAD % 4 == 0");
static_assert(kBlock % kWarp == 0 && kBlock >= 32 && kBlock <= 1024, "BLOCK_SIZE: a multiple of 32 in [32, 1024]");
static_assert(kItems >= 1 && kItems <= 64, "ITEMS_PER_THREAD must be in [1, 64]");
static_assert(CompactPolicy::min_threads >= 0 && CompactPolicy::min_threads <= 2048 && CompactPolicy::min_threads % CompactPolicy::block == 0,
              "MIN_THREADS_PER_SM: 0, or a multiple of BLOCK_SIZE up to 2048");

/// Loads the tile's elements in striped order (element r * BLOCK_SIZE + threadIdx.x of the tile in item r)
/// and decides which are selected. Values of unselected "flagged" elements are not read.
__device__ __forceinline__ void load_selection(const value_t* __restrict__ in, const unsigned char* __restrict__ flags,
                                               value_t threshold, long long base, long long n,
                                               bool (&sel)[kItems], value_t (&x)[kItems]) {
#pragma unroll
  for (int r = 0; r < kItems; ++r) {
    const long long i = base + r * kBlock + threadIdx.x;
    sel[r] = false;
    x[r] = value_t(0);
    if (i < n) {
      if constexpr (CompactPolicy::select_if) {
        x[r] = in[i];
        sel[r] = x[r] > threshold;
      } else {
        sel[r] = flags[i] != 0;
        if (sel[r]) x[r] = in[i];
      }
    }
  }
}

/// Combines one value per thread (warp shuffles, then warp 0); the result is returned to every thread.
/// Contains two barriers; scratch needs kWarps + 1 entries.
__device__ __forceinline__ unsigned block_sum(unsigned v, unsigned* scratch) {
  const int lane = threadIdx.x & (kWarp - 1);
  const int w = threadIdx.x / kWarp;
#pragma unroll
  for (int o = kWarp / 2; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  if (lane == 0) scratch[w] = v;
  __syncthreads();
  if (w == 0) {
    unsigned t = lane < kWarps ? scratch[lane] : 0u;
#pragma unroll
    for (int o = kWarp / 2; o > 0; o >>= 1) t += __shfl_xor_sync(kFullMask, t, o);
    if (lane == 0) scratch[kWarps] = t;
  }
  __syncthreads();
  return scratch[kWarps];
}

/// Inclusive sum over the warp: lane l gets the sum of v over lanes 0..l. All 32 lanes take part.
__device__ __forceinline__ unsigned warp_inclusive_sum(unsigned v) {
  const int lane = threadIdx.x & (kWarp - 1);
#pragma unroll
  for (int o = 1; o < kWarp; o <<= 1) {
    const unsigned y = __shfl_up_sync(kFullMask, v, o);
    if (lane >= o) v += y;
  }
  return v;
}

/// Rank of every selected element among the selected elements of the tile (stable: in element order), from
/// warp ballots; counts needs kCounts + 1 entries. Returns the number of selected elements of the tile.
/// Contains two barriers.
__device__ __forceinline__ unsigned block_rank(const bool (&sel)[kItems], unsigned (&rank)[kItems], unsigned* counts) {
  const int lane = threadIdx.x & (kWarp - 1);
  const int w = threadIdx.x / kWarp;
  const unsigned lanes_below = (1u << lane) - 1u;
#pragma unroll
  for (int r = 0; r < kItems; ++r) {
    const unsigned m = __ballot_sync(kFullMask, sel[r]);
    rank[r] = __popc(m & lanes_below);
    if (lane == 0) counts[r * kWarps + w] = __popc(m);
  }
  __syncthreads();
  if (w == 0) {  // exclusive scan of the counts in (item round, warp) order = element order
    unsigned carry = 0;
    for (int c0 = 0; c0 < kCounts; c0 += kWarp) {
      const int e = c0 + lane;
      const unsigned v = e < kCounts ? counts[e] : 0u;
      const unsigned inc = warp_inclusive_sum(v);
      if (e < kCounts) counts[e] = carry + inc - v;
      carry += __shfl_sync(kFullMask, inc, kWarp - 1);
    }
    if (lane == 0) counts[kCounts] = carry;
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kItems; ++r) rank[r] += counts[r * kWarps + w];
  return counts[kCounts];
}

/// *p = v, with the evict-first hint when STREAMING is set (the output is written once and not read here).
template <class T>
__device__ __forceinline__ void store_once(T* p, T v) {
  hints::store<CompactPolicy::streaming>(p, v);
}

/// STAGE_OUTPUT: the tile's selected elements compacted in shared memory, stage[rank] = x.
__device__ __forceinline__ void stage_ranked(const bool (&sel)[kItems], const value_t (&x)[kItems],
                                             const unsigned (&rank)[kItems], value_t* stage) {
#pragma unroll
  for (int r = 0; r < kItems; ++r)
    if (sel[r]) stage[rank[r]] = x[r];
}

/// STAGE_OUTPUT: the tile's `total` staged elements to out[offset, offset + total), contiguous. The stage
/// must be complete (a barrier after it was written).
__device__ __forceinline__ void copy_staged(unsigned total, unsigned long long offset, value_t* __restrict__ out,
                                            const value_t* stage) {
  for (unsigned e = threadIdx.x; e < total; e += kBlock) store_once(out + offset + e, stage[e]);
}

/// Writes the selected elements of a tile to out[offset + rank]: directly, or (STAGE_OUTPUT) compacted in
/// shared memory first so that the global writes are contiguous.
__device__ __forceinline__ void scatter(const bool (&sel)[kItems], const value_t (&x)[kItems],
                                        const unsigned (&rank)[kItems], unsigned total, unsigned long long offset,
                                        value_t* __restrict__ out, value_t* stage) {
  if constexpr (CompactPolicy::stage_output) {
    stage_ranked(sel, x, rank, stage);
    __syncthreads();
    copy_staged(total, offset, out, stage);
  } else {
#pragma unroll
    for (int r = 0; r < kItems; ++r)
      if (sel[r]) out[offset + rank[r]] = x[r];
  }
}

// ---- blocked selection (VARIANT 2): thread t owns tile elements [t * kItems, (t + 1) * kItems) -----------

template <class V, int N> struct alignas(sizeof(V) * N) VecOf { V v[N]; };
// Values per load: as many as fit in 16 bytes (VARIANT 2 only; 1 elsewhere, where it is unused).
constexpr int kValVec = CompactPolicy::variant != 2 ? 1
                        : (16 / static_cast<int>(sizeof(value_t)) < kItems ? 16 / static_cast<int>(sizeof(value_t)) : kItems);
static_assert(kItems % kValVec == 0, "ITEMS_PER_THREAD must be a multiple of the values per 16-byte load");

static_assert(CompactPolicy::variant != 2 || kItems <= 32, "single_pass_blocked: ITEMS_PER_THREAD <= 32");

/// *p, with the evict-first (streaming, .cs) hint when STREAMING is set: every element is read once. The
/// unions reinterpret 4-, 8- and 16-byte values as the hint intrinsics' types.
template <class T>
__device__ __forceinline__ T load_once(const T* p) {
  if constexpr (CompactPolicy::streaming && sizeof(T) == 16) {
    union { uint4 u; T v; } c;
    c.u = __ldcs(reinterpret_cast<const uint4*>(p));
    return c.v;
  } else if constexpr (CompactPolicy::streaming && sizeof(T) == 8) {
    union { uint2 u; T v; } c;
    c.u = __ldcs(reinterpret_cast<const uint2*>(p));
    return c.v;
  } else if constexpr (CompactPolicy::streaming && sizeof(T) == 4) {
    union { unsigned u; T v; } c;
    c.u = __ldcs(reinterpret_cast<const unsigned*>(p));
    return c.v;
  } else {
    return *p;
  }
}


/// Loads this thread's elements and decides which are selected: bit k of *sel for element k (unselected or
/// out of range: 0). One register for the selection instead of one per element keeps the register count
/// (and so the resident blocks) of the `if` workload, which holds every value until the scatter, down.
__device__ __forceinline__ void load_blocked(const value_t* __restrict__ in, const unsigned char* __restrict__ flags,
                                             value_t threshold, long long base, long long n,
                                             unsigned* sel, value_t (&x)[kItems]) {
  unsigned bits = 0;
  const long long first = base + static_cast<long long>(threadIdx.x) * kItems;
  if (base + kTile <= n) {
    typedef VecOf<value_t, kValVec> vec_t;
    const vec_t* vin = reinterpret_cast<const vec_t*>(in + first);
#pragma unroll
    for (int k = 0; k < kItems / kValVec; ++k) {
      const vec_t v = load_once(vin + k);
#pragma unroll
      for (int j = 0; j < kValVec; ++j) x[k * kValVec + j] = v.v[j];
    }
    if constexpr (CompactPolicy::select_if) {
#pragma unroll
      for (int k = 0; k < kItems; ++k) bits |= (x[k] > threshold ? 1u : 0u) << k;
    } else {
      const unsigned* words = reinterpret_cast<const unsigned*>(flags + first);
#pragma unroll
      for (int k = 0; k < kItems / 4; ++k) {
        const unsigned f = load_once(words + k);
#pragma unroll
        for (int j = 0; j < 4; ++j) bits |= (((f >> (8 * j)) & 0xffu) != 0 ? 1u : 0u) << (4 * k + j);
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const long long i = first + k;
      x[k] = i < n ? in[i] : value_t(0);
      bool s;
      if constexpr (CompactPolicy::select_if) s = i < n && x[k] > threshold;
      else s = i < n && flags[i] != 0;
      bits |= (s ? 1u : 0u) << k;
    }
  }
  *sel = bits;
}

/// Exclusive sum of one count per thread over the block; *total gets the sum. Two barriers; warp_tot needs
/// kWarp entries.
__device__ __forceinline__ unsigned block_exclusive_count(unsigned c, unsigned* warp_tot, unsigned* total) {
  const int lane = threadIdx.x & (kWarp - 1);
  const int w = threadIdx.x / kWarp;
  const unsigned inc = warp_inclusive_sum(c);
  if (lane == kWarp - 1) warp_tot[w] = inc;
  __syncthreads();
  if (w == 0) {
    const unsigned t = warp_inclusive_sum(lane < kWarps ? warp_tot[lane] : 0u);
    if (lane < kWarps) warp_tot[lane] = t;
  }
  __syncthreads();
  *total = warp_tot[kWarps - 1];
  return inc - c + (w > 0 ? warp_tot[w - 1] : 0u);
}

/// STAGE_OUTPUT: this thread's selected elements, in order, to stage[mine + j].
__device__ __forceinline__ void stage_blocked(unsigned sel, const value_t (&x)[kItems], unsigned mine, value_t* stage) {
  unsigned j = mine;
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if ((sel >> k) & 1u) stage[j++] = x[k];
}

/// Without STAGE_OUTPUT: this thread's selected elements, in order, straight to out[offset + mine + j].
__device__ __forceinline__ void scatter_blocked(unsigned sel, const value_t (&x)[kItems], unsigned mine,
                                                unsigned long long offset, value_t* __restrict__ out) {
  unsigned long long j = offset + mine;
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if ((sel >> k) & 1u) store_once(out + j++, x[k]);
}

// ---- decoupled look-back over tile counts ---------------------------------------------------------------
// Tickets, generation tags and the look-back itself: common/lookback.cuh. state layout (bytes) after the
// launch word [0, 8): [8, 8 + 8 * tiles) one 64-bit word per tile, tag << 32 | count (published together by
// one 64-bit store; lookback::PackedStatus).

using lookback::generation_tag;
using lookback::take_ticket;

/// Run by thread 0 of a single-pass block: the block's tile (a ticket, so that tiles start in launch order) and
/// the launch's generation in gen. The L2 fetches the tile's status word now (after other work it is in memory),
/// so that the successors' look-backs and this block's publishing find it there.
__device__ __forceinline__ unsigned take_tile(unsigned char* __restrict__ state, unsigned& gen) {
  const unsigned t = take_ticket(state, gridDim.x - 1, gen);
  asm volatile("prefetch.global.L2 [%0];" ::"l"(state + 8 + 8 * static_cast<long long>(t)));
  return t;
}

/// Run by the 32 threads of warp 0: publishes the tile's count, sums the predecessors' counts back to the
/// nearest inclusive prefix (lookback::look_back), publishes this tile's inclusive prefix and returns its
/// exclusive prefix. tag: generation_tag of this launch.
__device__ unsigned look_back(unsigned long long* words, long long tile, unsigned count, unsigned tag) {
  return lookback::look_back<CompactPolicy::lookback_delay>(lookback::PackedStatus{words, tag}, tile, count, 0u,
                                                             [](unsigned a, unsigned b) { return a + b; });
}

}  // namespace compact_detail

#include "compaction/compaction_bulk.cuh"  // VARIANT 3; reads no macro

// ---- entry points -------------------------------------------------------------------------------------

/// tile_counts[b] = number of selected elements in tile b. Grid: ceil(n / tile) blocks of BLOCK_SIZE.
extern "C" __global__ void __launch_bounds__(CompactPolicy::block, CompactPolicy::min_blocks)
compact_count(const compact_value_t* __restrict__ in, const unsigned char* __restrict__ flags,
              compact_value_t threshold, long long n, unsigned* __restrict__ tile_counts) {
  using namespace compact_detail;
  if constexpr (CompactPolicy::variant == 0) {  // three_phase only: nothing to compile for the other variants
    __shared__ unsigned scratch[kWarps + 1];
    const long long base = static_cast<long long>(blockIdx.x) * kTile;
    unsigned c = 0;
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
      const long long i = base + r * kBlock + threadIdx.x;
      if (i < n) {
        if constexpr (CompactPolicy::select_if) c += in[i] > threshold ? 1u : 0u;
        else c += flags[i] != 0 ? 1u : 0u;
      }
    }
    const unsigned total = block_sum(c, scratch);
    if (threadIdx.x == 0) tile_counts[blockIdx.x] = total;
  }
}

/// Exclusive scan of each tile of in[0, m) into out; tile totals to tile_sums[blockIdx.x].
/// Grid: ceil(m / tile) blocks.
extern "C" __global__ void __launch_bounds__(CompactPolicy::block, CompactPolicy::min_blocks)
compact_scan_tiles(const unsigned* __restrict__ in, unsigned* __restrict__ out, long long m,
                   unsigned* __restrict__ tile_sums) {
  using namespace compact_detail;
  if constexpr (CompactPolicy::variant == 0) {  // three_phase only: nothing to compile for the other variants
    __shared__ unsigned warp_tot[kWarp];
    const long long first = static_cast<long long>(blockIdx.x) * kTile + static_cast<long long>(threadIdx.x) * kItems;
    unsigned v[kItems];
    unsigned sum = 0;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      v[k] = first + k < m ? in[first + k] : 0u;
      sum += v[k];
    }
    unsigned total;
    unsigned run = block_exclusive_count(sum, warp_tot, &total);  // exclusive prefix of this thread
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      if (first + k < m) out[first + k] = run;
      run += v[k];
    }
    if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
  }
}

/// data[i] += offsets[t] for the elements of tile t >= 1 (block b handles tile b + 1). Grid: tiles - 1.
extern "C" __global__ void __launch_bounds__(CompactPolicy::block, CompactPolicy::min_blocks)
compact_scan_add(unsigned* __restrict__ data, long long m, const unsigned* __restrict__ offsets) {
  using namespace compact_detail;
  if constexpr (CompactPolicy::variant == 0) {  // three_phase only: nothing to compile for the other variants
    const long long tile = static_cast<long long>(blockIdx.x) + 1;
    const unsigned off = offsets[tile];
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
      const long long i = tile * kTile + r * kBlock + threadIdx.x;
      if (i < m) data[i] += off;
    }
  }
}

/// Writes the selected elements of tile b to out[tile_offsets[b] + rank]; the last block writes the total
/// count. Grid: ceil(n / tile) blocks.
extern "C" __global__ void __launch_bounds__(CompactPolicy::block, CompactPolicy::min_blocks)
compact_scatter(const compact_value_t* __restrict__ in, const unsigned char* __restrict__ flags,
                compact_value_t threshold, long long n, const unsigned* __restrict__ tile_offsets,
                compact_value_t* __restrict__ out, unsigned* __restrict__ count) {
  using namespace compact_detail;
  if constexpr (CompactPolicy::variant == 0) {  // three_phase only: nothing to compile for the other variants
    __shared__ unsigned counts[kCounts + 1];
    __shared__ value_t stage[CompactPolicy::stage_output ? kTile : 1];
    const long long base = static_cast<long long>(blockIdx.x) * kTile;
    bool sel[kItems];
    value_t x[kItems];
    unsigned rank[kItems];
    load_selection(in, flags, threshold, base, n, sel, x);
    const unsigned total = block_rank(sel, rank, counts);
    const unsigned offset = tile_offsets[blockIdx.x];
    scatter(sel, x, rank, total, offset, out, stage);
    if (threadIdx.x == 0 && blockIdx.x == gridDim.x - 1) *count = offset + total;
  }
}

/// Single-pass compaction with decoupled look-back. state: see "decoupled look-back" above (zero before the
/// first launch; each launch leaves it ready for the next). Grid: ceil(n / tile) blocks.
extern "C" __global__ void __launch_bounds__(CompactPolicy::block, CompactPolicy::min_blocks)
compact_single_pass(const compact_value_t* __restrict__ in, const unsigned char* __restrict__ flags,
                    compact_value_t threshold, long long n, compact_value_t* __restrict__ out,
                    unsigned* __restrict__ count, unsigned char* __restrict__ state) {
  using namespace compact_detail;
  if constexpr (CompactPolicy::variant == 3) {
    bulk_tiles::compact_tile(in, flags, threshold, n, out, count, state);
  } else if constexpr (CompactPolicy::variant != 0) {  // single_pass, single_pass_blocked
    __shared__ unsigned counts[kCounts + 1];
    __shared__ value_t stage[CompactPolicy::stage_output ? kTile : 1];
    __shared__ unsigned s_tile, s_gen;
    __shared__ unsigned s_offset;
    const long long tiles = (n + kTile - 1) / kTile;
    if (threadIdx.x == 0) {
      unsigned gen;
      s_tile = take_tile(state, gen);
      s_gen = gen;
    }
    __syncthreads();
    const long long tile = s_tile;
    const long long base = tile * kTile;
    bool sel[kItems];       // VARIANT 1: which elements are selected
    unsigned sel_bits = 0;  // VARIANT 2: the same as bits
    value_t x[kItems];
    unsigned rank[kItems];  // VARIANT 1: rank of each selected element in the tile; VARIANT 2: rank[0] is the
                            // rank of this thread's first selected element
    unsigned total;
    if constexpr (CompactPolicy::variant == 2) {
      load_blocked(in, flags, threshold, base, n, &sel_bits, x);
      rank[0] = block_exclusive_count(static_cast<unsigned>(__popc(sel_bits)), counts, &total);
    } else {
      load_selection(in, flags, threshold, base, n, sel, x);
      total = block_rank(sel, rank, counts);
    }
    if constexpr (CompactPolicy::stage_output) {
      // Staged output: the tile's selection goes to shared memory before the look-back, so that no register
      // holds the values while warp 0 waits for its predecessors (the barrier after the look-back orders these
      // writes before the copy-out).
      if constexpr (CompactPolicy::variant == 2) stage_blocked(sel_bits, x, rank[0], stage);
      else stage_ranked(sel, x, rank, stage);
    }
    if (threadIdx.x < kWarp) {
      const unsigned exclusive =
          look_back(reinterpret_cast<unsigned long long*>(state + 8), tile, total, generation_tag(s_gen));
      if (threadIdx.x == 0) s_offset = exclusive;
    }
    __syncthreads();
    const unsigned offset = s_offset;
    if constexpr (CompactPolicy::stage_output) copy_staged(total, offset, out, stage);
    else if constexpr (CompactPolicy::variant == 2) scatter_blocked(sel_bits, x, rank[0], offset, out);
    else scatter(sel, x, rank, total, offset, out, stage);
    if (threadIdx.x == 0 && tile == tiles - 1) *count = offset + total;
  }
}
