// Single-pass compaction with bulk tile copies (VARIANT 3, single_pass_bulk) of compaction.cu; see
// docs/compaction.md. A kernel header of the compaction family, embedded at build time and handed to NVRTC as the
// named header "compaction/compaction_bulk.cuh": compaction.cu includes it after its namespace compact_detail
// (value_t, the tile shape, warp_inclusive_sum, store_once, look_back), which this header extends. It reads no
// macro: its parameters are CompactPolicy's (BLOCK_SIZE, ITEMS_PER_THREAD, STAGE_OUTPUT, STREAMING) from the policy
// block of compaction.cu.
//
// One tile per block with its own ticket and the common look-back, as VARIANT 2; what differs is how the tile
// travels and who waits for whom:
//  * in: thread 0 has the SM's copy engine bring the tile's values into shared memory right after the ticket
//    (common/bulk_copy.cuh), and (flagged) each lane loads the flag bytes of its own vectors into registers at the
//    same time (LaneFlags: ITEMS_PER_THREAD / 4 words for 4-byte types), so that the values alone fill the shared
//    memory: 1024 x 56 and 768 x 64 tiles fit in Hopper's 227 KiB, where values and flags together allowed
//    768 x 60 at most, and on an H100 at 2^28 the larger tiles were 1.8% faster (docs/compaction.md).
//  * the count: warp w owns the tile's elements [w * 32 * ITEMS, (w + 1) * 32 * ITEMS), read as rows of 32
//    16-byte vectors (lane l the l-th vector of a row, and the flag bytes of those elements). The warps count their
//    selection (flagged: from the flags in registers, as soon as they arrive, a fifth of the bytes); warp 0 scans
//    the counts and looks back with the tile's count while the values may still be arriving.
//  * out, STAGE_OUTPUT 1: while warp 0 looks back, every other warp compacts its part in place, row by row (a
//    lane's selected values go to its rank among the warp's selected elements; a write never passes the row being
//    read), warp 0 after its look-back; then each warp writes its compacted part contiguously.
//    STAGE_OUTPUT 0: after the look-back, row by row, each lane writes its selected values straight to global
//    memory at their rank. STREAMING: the output with the evict-first hint.
// Below sm_90 (no bulk copies) and for the partial last tile, the threads load the tile into shared memory
// themselves (flags 0 and values not above the threshold beyond n).
#pragma once

#include "common/bulk_copy.cuh"  // reads no macro

namespace compact_detail {
namespace bulk_tiles {

constexpr bool kOn = CompactPolicy::variant == 3;
constexpr bool kFlagged = !CompactPolicy::select_if;
constexpr int kLane = 16 / static_cast<int>(sizeof(value_t));  // elements of one lane's 16-byte vector
constexpr int kRows = kItems / kLane;                          // rows of a warp's part
constexpr int kWarpElems = kWarp * kItems;                     // elements of a warp's part

static_assert(!kOn || (kItems % kLane == 0 && kItems >= kLane),
              "single_pass_bulk: ITEMS_PER_THREAD must fill whole 16-byte vectors");
static_assert(!kOn || CompactPolicy::lookback_delay == 0, "single_pass_bulk: LOOKBACK_DELAY must be 0");
static_assert(!kOn || kTile % 16 == 0, "single_pass_bulk: a tile's flags must be whole 16-byte chunks");

struct alignas(16) Vec16 {
  value_t v[kLane];
};

template <int N> struct FlagBytes;
template <> struct FlagBytes<4> { typedef unsigned type; };
template <> struct FlagBytes<2> { typedef unsigned short type; };
typedef FlagBytes<kLane>::type flags_t;  // the flag bytes of one lane's vector

/// Bit 8j set where byte j of a lane's flags is non-zero: each byte's bits folded onto its lowest (shifts within
/// the word never carry a byte's bits into the lowest bit of the byte below it).
__device__ __forceinline__ unsigned nonzero_bytes(flags_t f) {
  unsigned x = f;
  x |= x >> 4;
  x |= x >> 2;
  x |= x >> 1;
  return x & (kLane == 4 ? 0x01010101u : 0x0101u);
}

/// Bit j set where byte j of a lane's flags is non-zero: the bits 8j of nonzero_bytes() gathered by one multiply
/// (four bytes: bit 8j lands on bit 28 + j, the other products on bits below 24 that never carry) or one shift.
__device__ __forceinline__ unsigned flag_bits(flags_t f) {
  const unsigned nz = nonzero_bytes(f);
  if constexpr (kLane == 4) return (nz * 0x10204080u) >> 28;
  else return (nz | (nz >> 7)) & 3u;
}

/// Bit j set where element j of a lane's vector is selected (flagged: its flag byte in f non-zero; if: x.v[j]
/// above the threshold).
__device__ __forceinline__ unsigned selection(const Vec16& x, flags_t f, value_t threshold) {
  if constexpr (kFlagged) return flag_bits(f);
  unsigned bits = 0;
#pragma unroll
  for (int j = 0; j < kLane; ++j) bits |= x.v[j] > threshold ? 1u << j : 0u;
  return bits;
}

/// A lane's flag words (flagged): the flags of its vector in each row of its warp's part, word r for row r, loaded
/// from global memory into registers when the tile is known (flag 0 beyond n). Holds nothing for `if`.
struct LaneFlags {
  flags_t f[kFlagged && kRows > 0 ? kRows : 1];  // kRows is 0 for the other variants' small items
  __device__ __forceinline__ void load(const unsigned char* __restrict__ flags, long long part_base, long long n) {
    if constexpr (kFlagged) {
      const int lane = threadIdx.x & (kWarp - 1);
      if (part_base + kWarpElems <= n) {
        const flags_t* src = reinterpret_cast<const flags_t*>(flags + part_base);  // kWarpElems: whole words
#pragma unroll
        for (int r = 0; r < kRows; ++r) f[r] = __ldcs(src + r * kWarp + lane);  // touched once: evict-first
      } else {
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const long long e = part_base + static_cast<long long>(r * kWarp + lane) * kLane;
          unsigned v = 0;
#pragma unroll
          for (int j = 0; j < kLane; ++j) v |= (e + j < n ? static_cast<unsigned>(flags[e + j]) : 0u) << (8 * j);
          f[r] = static_cast<flags_t>(v);
        }
      }
    }
  }
  __device__ __forceinline__ flags_t row(int r) const {
    if constexpr (kFlagged) return f[r];
    else return flags_t(0);
  }
};

/// Selected elements of this lane's vectors in the warp's part, summed over the warp (every lane gets it).
__device__ __forceinline__ unsigned count_part(const Vec16* part, const LaneFlags& fl, value_t threshold) {
  const int lane = threadIdx.x & (kWarp - 1);
  unsigned c = 0;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    if constexpr (kFlagged) c += __popc(nonzero_bytes(fl.row(r)));
    else c += __popc(selection(part[r * kWarp + lane], 0, threshold));
  }
#pragma unroll
  for (int o = kWarp / 2; o > 0; o >>= 1) c += __shfl_xor_sync(kFullMask, c, o);
  return c;
}

constexpr int kCountBits = kLane == 4 ? 3 : 2;  // bits of a lane's count in one row (0..kLane)

/// The warp's exclusive prefix of the lanes' counts c (0..kLane) in `before`, their sum in `total`: one ballot per
/// bit of c, all independent, instead of a chain of five shuffles whose latencies add up.
__device__ __forceinline__ void row_prefix(unsigned c, unsigned& before, unsigned& total) {
  const unsigned below = (1u << (threadIdx.x & (kWarp - 1))) - 1u;  // the lanes below this one
  before = 0;
  total = 0;
#pragma unroll
  for (int b = 0; b < kCountBits; ++b) {
    const unsigned m = __ballot_sync(kFullMask, (c >> b) & 1u);
    before += static_cast<unsigned>(__popc(m & below)) << b;
    total += static_cast<unsigned>(__popc(m)) << b;
  }
}

/// Row by row, the selected values of the warp's part to dst[rank], rank counted over the part in element order.
/// dst is the part itself (compaction in place: a row's writes land at or below the elements read in it, read
/// before the warp synchronises) or global memory.
template <bool kGlobal>
__device__ __forceinline__ void compact_rows(value_t* part, const LaneFlags& fl, value_t threshold, value_t* dst) {
  const int lane = threadIdx.x & (kWarp - 1);
  const Vec16* rows = reinterpret_cast<const Vec16*>(part);
  unsigned run = 0;  // selected elements of the rows before this one
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int i = r * kWarp + lane;
    const Vec16 x = rows[i];
    const unsigned bits = selection(x, fl.row(r), threshold);
    unsigned before, total;
    row_prefix(static_cast<unsigned>(__popc(bits)), before, total);
    if constexpr (!kGlobal) __syncwarp();  // every lane has read its vector of this row before any write
    unsigned at = run + before;
#pragma unroll
    for (int j = 0; j < kLane; ++j) {
      if ((bits >> j) & 1u) {
        if constexpr (kGlobal) store_once(dst + at, x.v[j]);
        else dst[at] = x.v[j];
        ++at;
      }
    }
    run += total;
  }
  if constexpr (!kGlobal) __syncwarp();
}

/// The threads load the tile's values at element base into s themselves: a full tile as striped 16-byte chunks, a
/// partial one element by element (a value not above the threshold beyond n, which LaneFlags' flag 0 matches for
/// flagged). The caller waits at a barrier afterwards.
__device__ __forceinline__ void load_by_threads(const value_t* __restrict__ in, value_t threshold, long long base,
                                                long long n, value_t* s) {
  const int tid = threadIdx.x;
  if (base + kTile <= n) {
    const uint4* src = reinterpret_cast<const uint4*>(in + base);
    uint4* dst = reinterpret_cast<uint4*>(s);
    for (int j = tid; j < kTile / kLane; j += kBlock) dst[j] = src[j];
  } else {
    for (int i = tid; i < kTile; i += kBlock) s[i] = base + i < n ? in[base + i] : threshold;
  }
}

/// Bytes of dynamic shared memory that a block takes (the launch plan's, tuner/kernels/compaction.cpp): the tile's
/// values (the flags travel in registers).
constexpr unsigned kSharedBytes = kTile * sizeof(value_t);

/// The whole of a block: its ticket, the tile by bulk copies into shared memory, the warps' counts, warp 0's
/// look-back, the selection out. tiles: ceil(n / kTile), the grid. The tile is in dynamic shared memory
/// (kSharedBytes), so that tiles beyond the 48 KiB of static shared memory can be tuned.
__device__ __forceinline__ void compact_tile(const value_t* __restrict__ in, const unsigned char* __restrict__ flags,
                                             value_t threshold, long long n, value_t* __restrict__ out,
                                             unsigned* __restrict__ count, unsigned char* __restrict__ state) {
  extern __shared__ __align__(128) unsigned char tile_bytes[];
  value_t* s = reinterpret_cast<value_t*>(tile_bytes);
  __shared__ unsigned warp_excl[kWarp];      // each warp's count, then the selected elements of the warps before it
  __shared__ unsigned long long bar;         // the values have landed
  __shared__ unsigned s_tile, s_gen, s_offset, s_total;
  const int tid = threadIdx.x, lane = tid & (kWarp - 1), w = tid / kWarp;
  const long long tiles = (n + kTile - 1) / kTile;
  if (tid == 0) {
    if (bulk_copy::kAvailable) bulk_copy::init(&bar);
    unsigned gen;
    const unsigned t = take_tile(state, gen);
    const long long b = static_cast<long long>(t) * kTile;
    if (bulk_copy::kAvailable && b + kTile <= n) {
      constexpr unsigned kBytes = kTile * sizeof(value_t);
      bulk_copy::expect(&bar, kBytes);
      bulk_copy::copy(s, in + b, kBytes, &bar);
    }
    s_tile = t;
    s_gen = gen;
  }
  __syncthreads();  // the ticket is known, and the barriers initialised before anyone waits on them
  const long long tile = s_tile;
  const long long base = tile * kTile;
  const bool bulk = bulk_copy::kAvailable && base + kTile <= n;
  LaneFlags fl;  // flagged: this lane's flag words, loaded while the values travel
  fl.load(flags, base + w * kWarpElems, n);
  if (!bulk) {
    load_by_threads(in, threshold, base, n, s);
    __syncthreads();
  }
  value_t* part = s + w * kWarpElems;
  const Vec16* vpart = reinterpret_cast<const Vec16*>(part);

  // 1. This warp's count (flagged: from its flags alone; if: from the values, once they have landed).
  if (bulk && !kFlagged) bulk_copy::wait(&bar);
  const unsigned mine = count_part(vpart, fl, threshold);
  if (lane == 0) warp_excl[w] = mine;
  __syncthreads();

  // 2. Warp 0: the warps' exclusive prefixes and the tile's count, then the look-back with it. Meanwhile, with
  //    STAGE_OUTPUT, the other warps compact their parts in place.
  if (w == 0) {
    const unsigned v = lane < kWarps ? warp_excl[lane] : 0u;
    const unsigned inc = warp_inclusive_sum(v);
    const unsigned total = __shfl_sync(kFullMask, inc, kWarp - 1);
    if (lane < kWarps) warp_excl[lane] = inc - v;
    const unsigned exclusive =
        look_back(reinterpret_cast<unsigned long long*>(state + 8), tile, total, generation_tag(s_gen));
    if (lane == 0) {
      s_offset = exclusive;
      s_total = total;
    }
  }
  if (bulk && kFlagged) bulk_copy::wait(&bar);
  if constexpr (CompactPolicy::stage_output) compact_rows<false>(part, fl, threshold, part);
  __syncthreads();
  if (bulk_copy::kAvailable && tid == 0) bulk_copy::inval(&bar);  // every thread has passed its wait (or none)

  // 3. The selection out, at the tile's offset plus the warps before this one.
  const unsigned offset = s_offset;
  value_t* dst = out + offset + warp_excl[w];
  if constexpr (CompactPolicy::stage_output) {
    for (unsigned e = lane; e < mine; e += kWarp) store_once(dst + e, part[e]);
  } else {
    compact_rows<true>(part, fl, threshold, dst);
  }
  if (tid == 0 && tile == tiles - 1) *count = offset + s_total;
}

}  // namespace bulk_tiles
}  // namespace compact_detail
