// Single-pass scan with bulk tile copies (VARIANT 10, single_pass_bulk) of scan.cu; see docs/scan.md.
// A kernel header of the scan family, embedded at build time and handed to NVRTC as the named header
// "scan/scan_bulk.cuh": scan.cu includes it after its namespace scan_detail (value_t, combine, identity,
// warp_inclusive, TileStatus, warp_prefixes_look_back), which this header extends. It reads no macro: its parameters are ScanPolicy's
// (BLOCK_SIZE, ITEMS_PER_THREAD, STREAMING, REG_ROWS) from the policy block of scan.cu.
//
// One tile per block, as VARIANT 4 (a ticket per block, the common look-back), but the block takes its ticket itself
// (scan_single_pass hands over before its own prologue), so that thread 0 starts the copies right after the ticket's
// round trip. What differs is how the tile travels:
//  * in: one thread asks the SM's copy engine for the whole tile (sm_90 bulk copies of common/bulk_copy.cuh, one
//    per warp's part, completing on one mbarrier). No thread holds loaded data in registers, so a block needs few
//    registers and as many tiles can be in flight on an SM as its shared memory holds. REG_ROWS > 0: the last
//    REG_ROWS rows of each warp's part (below) do not go through shared memory: each lane loads its vector of
//    them into registers (evict-first) while the copy engine brings the rest, so that a tile can be larger than
//    the shared memory it takes (1024 x 64 in 224 KiB).
//  * the scan: warp w owns the tile's elements [w * 32 * ITEMS, (w + 1) * 32 * ITEMS), read as rows of 32
//    16-byte vectors (lane l the l-th vector of a row: conflict-free, no padding). A lane first combines its
//    vectors of all rows (the warp's total by shuffles, the block's exclusive warp prefixes and the look-back as
//    in VARIANT 6); then, row by row, each lane scans its vector, the warp scans the lane totals by shuffles, and
//    the lane stores its 16 bytes of output straight to global memory (a row is 512 contiguous bytes:
//    coalesced). STREAMING: the stores with the evict-first hint.
// Below sm_90 (no bulk copies) and for the partial last tile, the threads load the tile into shared memory
// themselves (16-byte vectors; the partial tile element by element, the identity beyond n).
#pragma once

#include "common/bulk_copy.cuh"  // reads no macro

namespace scan_detail {
namespace bulk_tiles {

constexpr bool kOn = ScanPolicy::variant == 10;
constexpr int kLane = 16 / static_cast<int>(sizeof(value_t));  // elements of one lane's 16-byte vector
constexpr int kRowElems = kWarp * kLane;                      // elements of a warp row (512 bytes)
constexpr int kRows = kItems / kLane;                          // rows of a warp's part
constexpr int kWarpElems = kWarp * kItems;                     // elements of a warp's part
constexpr int kRegRows = ScanPolicy::reg_rows;                 // rows of a warp's part its lanes hold in registers
constexpr int kSmemRows = kRows - kRegRows;                    // rows of a warp's part in shared memory
constexpr int kWarpSmem = kSmemRows * kRowElems;               // elements of a warp's part in shared memory

static_assert(!kOn || (kItems % kLane == 0 && kItems >= kLane),
              "single_pass_bulk: ITEMS_PER_THREAD must fill whole 16-byte vectors");
static_assert(!kOn || kVec == kLane, "single_pass_bulk: VEC * sizeof(T) must be 16");
static_assert(!kOn || ScanPolicy::padding == 0, "single_pass_bulk: PADDING must be 0 (rows need no padding)");
static_assert(!kOn || ScanPolicy::lookback_delay == 0, "single_pass_bulk: LOOKBACK_DELAY must be 0");
static_assert(kOn ? kRegRows >= 0 && kRegRows < kRows : kRegRows == 0,
              "REG_ROWS: single_pass_bulk only, fewer than the rows of a warp's part (ITEMS_PER_THREAD / vector)");

struct alignas(16) Vec16 {
  value_t v[kLane];
};

constexpr bool kBulk = bulk_copy::kAvailable;

/// Thread 0, sm_90: the barrier counts one arrival (its own, with the bytes to expect), then starts one bulk
/// copy per warp part (its rows in shared memory) of the full tile at element base into s.
__device__ __forceinline__ void start_bulk(const value_t* __restrict__ in, long long base, value_t* s,
                                           unsigned long long* bar) {
  bulk_copy::expect(bar, kWarps * kWarpSmem * sizeof(value_t));
#pragma unroll
  for (int w = 0; w < kWarps; ++w)
    bulk_copy::copy(s + w * kWarpSmem, in + base + static_cast<long long>(w) * kWarpElems,
                    kWarpSmem * sizeof(value_t), bar);
}

/// Each warp loads the rows of its part that live in shared memory (at s + w * kWarpSmem) itself: in a full tile
/// as 16-byte vectors, in a partial one element by element (the identity beyond n). The caller waits at a
/// barrier afterwards.
__device__ __forceinline__ void load_by_threads(const value_t* __restrict__ in, long long base, long long n,
                                                value_t* s) {
  const int lane = threadIdx.x & (kWarp - 1), w = threadIdx.x / kWarp;
  const long long part_base = base + static_cast<long long>(w) * kWarpElems;
  value_t* ps = s + w * kWarpSmem;
  if (base + kTile <= n) {
    const Vec16* src = reinterpret_cast<const Vec16*>(in + part_base);
    Vec16* dst = reinterpret_cast<Vec16*>(ps);
#pragma unroll
    for (int r = 0; r < kSmemRows; ++r) dst[r * kWarp + lane] = src[r * kWarp + lane];
  } else {
#pragma unroll
    for (int r = 0; r < kSmemRows; ++r)
#pragma unroll
      for (int j = 0; j < kLane; ++j) {
        const int i = r * kRowElems + j * kWarp + lane;  // consecutive lanes, consecutive elements
        ps[i] = part_base + i < n ? in[part_base + i] : identity();
      }
  }
}

/// A lane's vectors of the last kRegRows rows of its warp's part, loaded from global memory into registers
/// (evict-first: read once) while the copy engine brings the rows in shared memory; in a partial tile element by
/// element, the identity beyond n.
struct LaneRows {
  Vec16 x[kRegRows > 0 ? kRegRows : 1];
  __device__ __forceinline__ void load(const value_t* __restrict__ in, long long part_base, long long n, bool full) {
    if constexpr (kRegRows > 0) {
      const int lane = threadIdx.x & (kWarp - 1);
      const long long first = part_base + static_cast<long long>(kWarpSmem) + lane * kLane;
#pragma unroll
      for (int r = 0; r < kRegRows; ++r) {
        const long long at = first + static_cast<long long>(r) * kRowElems;
        if (full) {
          x[r] = hints::load<true, false>(reinterpret_cast<const Vec16*>(in + at));
        } else {
#pragma unroll
          for (int j = 0; j < kLane; ++j) x[r].v[j] = at + j < n ? in[at + j] : identity();
        }
      }
    }
  }
};

/// Bytes of dynamic shared memory that a block takes (the launch plan's, tuner/kernels/scan.cpp): the tile's rows
/// that are not in registers.
constexpr unsigned kSharedBytes = kWarps * kWarpSmem * sizeof(value_t);

/// The whole of a block: its ticket (one per block, as VARIANT 4), the tile by bulk copies into shared memory,
/// row-wise warp scans, stores from registers. tiles: ceil(n / kTile), the grid. The tile is in dynamic shared
/// memory (kSharedBytes), so that tiles beyond the 48 KiB of static shared memory can be tuned.
__device__ __forceinline__ void scan_tile(const value_t* __restrict__ in, value_t* __restrict__ out, long long n,
                                          bool exclusive, unsigned char* __restrict__ state, long long tiles,
                                          value_t* warp_tot, value_t& s_prefix) {
  extern __shared__ __align__(128) unsigned char tile_bytes[];
  value_t* s = reinterpret_cast<value_t*>(tile_bytes);
  __shared__ value_t warp_excl[kWarp];
  __shared__ unsigned long long bar;
  __shared__ unsigned s_tile, s_gen;
  const int tid = threadIdx.x, lane = tid & (kWarp - 1), w = tid / kWarp;
  if (tid == 0) {
    // Thread 0 starts the copies as soon as it has the ticket, before the block's first barrier: the ticket's
    // round trip and the copies are the start of the path to this tile's aggregate, which its successors wait for.
    if (kBulk) bulk_copy::init(&bar);
    unsigned gen;
    const unsigned t = lookback::take_ticket(state, static_cast<unsigned>(gridDim.x - 1), gen);
    if (kBulk && static_cast<long long>(t) * kTile + kTile <= n) start_bulk(in, static_cast<long long>(t) * kTile, s, &bar);
    TileStatus{state, tiles, 0}.prefetch<value_t>(t);
    s_tile = t;
    s_gen = gen;
  }
  __syncthreads();  // the ticket is known, and the barrier initialised before anyone waits on it
  const long long tile = s_tile;
  const long long base = tile * kTile;
  const bool full = base + kTile <= n;
  const TileStatus st{state, tiles, lookback::generation_tag(s_gen)};
  const long long part_base = base + static_cast<long long>(w) * kWarpElems;
  LaneRows regs;  // REG_ROWS > 0: this lane's vectors of the rows not in shared memory, loaded while the copy runs
  regs.load(in, part_base, n, full);
  if (kBulk && full) {
    bulk_copy::wait(&bar);
  } else {
    load_by_threads(in, base, n, s);
    __syncthreads();
  }

  // 1. This warp's total: each lane combines its vectors of every row, then the warp by shuffles.
  const Vec16* part = reinterpret_cast<const Vec16*>(s + w * kWarpSmem);
  value_t t = identity();
  auto add_row = [&t](const Vec16& x) {
#pragma unroll
    for (int j = 0; j < kLane; ++j) t = combine(t, x.v[j]);
  };
#pragma unroll
  for (int r = 0; r < kSmemRows; ++r) add_row(part[r * kWarp + lane]);
#pragma unroll
  for (int r = 0; r < kRegRows; ++r) add_row(regs.x[r]);
#pragma unroll
  for (int o = kWarp / 2; o > 0; o >>= 1) t = combine(t, __shfl_xor_sync(kFullMask, t, o));
  if (lane == 0) warp_tot[w] = t;
  __syncthreads();

  // 2. Warp 0: the warps' exclusive prefixes and the tile total, then the look-back with it.
  if (w == 0) warp_prefixes_look_back(st, tile, warp_tot, warp_excl, s_prefix);
  __syncthreads();
  if (kBulk && tid == 0)  // every thread has passed its wait (or never waited): the barrier's memory may go
    bulk_copy::inval(&bar);

  // 3. Row by row: each lane scans its vector, the warp the lane totals; the row goes out from registers.
  value_t carry = combine(s_prefix, warp_excl[w]);  // everything before this row
  auto scan_row = [&](Vec16 x, int r) {
#pragma unroll
    for (int j = 1; j < kLane; ++j) x.v[j] = combine(x.v[j - 1], x.v[j]);
    const value_t inc = warp_inclusive(x.v[kLane - 1]);
    const value_t before = __shfl_up_sync(kFullMask, inc, 1);  // the lanes before this one
    const value_t p = lane == 0 ? carry : combine(carry, before);
    Vec16 y;
    if (exclusive) {
      y.v[0] = p;
#pragma unroll
      for (int j = 1; j < kLane; ++j) y.v[j] = combine(p, x.v[j - 1]);
    } else {
#pragma unroll
      for (int j = 0; j < kLane; ++j) y.v[j] = combine(p, x.v[j]);
    }
    carry = combine(carry, __shfl_sync(kFullMask, inc, kWarp - 1));
    const long long at = part_base + static_cast<long long>(r) * kRowElems + lane * kLane;
    if (full) {
      hints::store<ScanPolicy::streaming>(reinterpret_cast<Vec16*>(out + at), y);
    } else {
#pragma unroll
      for (int j = 0; j < kLane; ++j)
        if (at + j < n) out[at + j] = y.v[j];
    }
  };
#pragma unroll
  for (int r = 0; r < kSmemRows; ++r) scan_row(part[r * kWarp + lane], r);
#pragma unroll
  for (int r = 0; r < kRegRows; ++r) scan_row(regs.x[r], kSmemRows + r);
}

}  // namespace bulk_tiles
}  // namespace scan_detail
