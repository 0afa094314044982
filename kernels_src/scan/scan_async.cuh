// Single-pass scan with asynchronous tile copies (VARIANT 9, single_pass_async) of scan.cu; see docs/scan.md.
// A kernel header of the scan family, embedded at build time and handed to NVRTC as the named header
// "scan/scan_async.cuh": scan.cu includes it after its namespace scan_detail (value_t, combine, identity,
// block_exclusive, TileStatus, look_back), which this header extends. It reads no macro: its parameters are
// ScanPolicy's (STAGES, PADDING, STREAMING) from the policy block of scan.cu.
//
// Persistent blocks cycle through STAGES tile buffers in shared memory. The copies of a block's tiles into the
// other buffers (cp.async, 16 bytes per copy, one commit group per tile) start up to STAGES - 1 tiles ahead, so
// that with STAGES >= 2 a look-back no longer leaves the SM without loads in flight. A buffer is refilled once its
// tile's output has left it (the output goes through the same buffer, so that the stores are coalesced 16-byte
// vectors). With STAGES = 3 the block also publishes the aggregate of its next tile before it looks back for the
// current one (see scan_persistent).
//
// Progress. Tile ids are tickets (lookback::take_ticket), handed out in increasing order, one at a time, and
// only to blocks that run; a block takes the tickets of its prefetched tiles one after another, so its tiles
// are increasing and it works on them in that order; a block only ever waits (in its look-back) for tiles with
// smaller ids than the one it works on. Claim: every tile j publishes its inclusive prefix. By induction on j:
// the owner of j runs (it took the ticket while running and stays resident until it ends); before j it works
// only on its own tiles with smaller ids, which publish by induction, and for j itself its look-back waits
// only for tiles below j, which publish by induction; so it reaches j and publishes it. Taking the ticket of a
// tile before the look-back of an earlier one is therefore safe: no block waits for a tile whose owner waits
// for it. (It delays when that tile's aggregate appears, by the time of the tiles before it in the same block:
// the cost of the prefetch that the tuner weighs with STAGES.)
// Every block takes tickets until it draws one >= tiles and then no more, so a launch hands out tiles +
// gridDim.x tickets, like the other persistent variants.
//
// Fallback: without cp.async (below sm_80) the copies are plain 16-byte loads and shared-memory stores made
// when the copy is issued; the commit and wait are empty. Partial tiles (at most the last of a launch) are
// always loaded element by element (the identity beyond n).
#pragma once

namespace scan_detail {
namespace async_tiles {

constexpr bool kOn = ScanPolicy::variant == 9;
constexpr int kStages = ScanPolicy::stages;
constexpr int kChunkElems = 16 / static_cast<int>(sizeof(value_t));  // elements per 16-byte chunk
constexpr int kThreadChunks = kItems / kChunkElems;                  // chunks per thread (and tile / block)
constexpr unsigned kNoTile = 0xffffffffu;                            // a ring entry without a tile

static_assert(!kOn || (kItems % kChunkElems == 0 && kItems >= 8),
              "single_pass_async: ITEMS_PER_THREAD must be at least 8 and fill whole 16-byte chunks");
static_assert(!kOn || kVec == kChunkElems, "single_pass_async: VEC * sizeof(T) must be 16");
static_assert(!kOn || kBlock >= 128, "single_pass_async: BLOCK_SIZE must be at least 128");
static_assert(kStages >= 1 && kStages <= 4, "STAGES must be in [1, 4]");
static_assert(kOn || kStages == 1, "STAGES > 1 needs VARIANT 9 (single_pass_async)");

struct alignas(16) Chunk {
  value_t v[kChunkElems];
};

/// Shared-memory chunk of tile chunk q (16 bytes each). PADDING = 1: the 8 chunks of every 128 bytes are
/// permuted by their row's index (q / 8 mod 8), so that the blocked accesses (thread t: chunks
/// [t * kThreadChunks, (t + 1) * kThreadChunks)) of 8 threads fall into 8 different bank quadruples for 2, 4 and
/// 8 chunks per thread; the striped accesses (32 consecutive chunks per warp) stay conflict-free.
__device__ __forceinline__ int chunk_at(int q) { return ScanPolicy::padding ? q ^ ((q >> 3) & 7) : q; }

/// Shared-memory index of tile element i.
__device__ __forceinline__ int element_at(int i) {
  return chunk_at(i / kChunkElems) * kChunkElems + i % kChunkElems;
}

/// Copies 16 bytes from global src to shared dst (both 16-byte aligned): asynchronously with cp.async on
/// sm_80 and later (complete after wait_copies), a plain load and store before that.
__device__ __forceinline__ void copy_chunk(value_t* dst, const value_t* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
#else
  *reinterpret_cast<Chunk*>(dst) = *reinterpret_cast<const Chunk*>(src);
#endif
}

/// Closes the group of copies this thread issued since the last commit (one group per tile, empty or not).
__device__ __forceinline__ void commit_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

/// Waits until at most kPending of this thread's groups are still in flight (its older groups are complete).
template <int kPending>
__device__ __forceinline__ void wait_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
#endif
}

/// Starts loading the tile at element base into buffer b: a full tile as 16-byte copies, thread t the striped
/// chunks t, t + kBlock, ... (coalesced); a partial tile element by element, the identity beyond n.
__device__ __forceinline__ void start_tile(const value_t* __restrict__ in, long long base, long long n, value_t* b) {
  const int tid = threadIdx.x;
  if (base + kTile <= n) {
#pragma unroll
    for (int j = 0; j < kThreadChunks; ++j) {
      const int q = j * kBlock + tid;
      copy_chunk(b + chunk_at(q) * kChunkElems, in + base + static_cast<long long>(q) * kChunkElems);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = k * kBlock + tid;
      b[element_at(i)] = base + i < n ? in[base + i] : identity();
    }
  }
}

/// Stores the tile in buffer b to out at element base (the striped chunks of start_tile; a partial tile
/// element by element up to n). STREAMING: with the evict-first hint.
__device__ __forceinline__ void store_out(value_t* __restrict__ out, long long base, long long n, const value_t* b) {
  const int tid = threadIdx.x;
  if (base + kTile <= n) {
    Chunk* o = reinterpret_cast<Chunk*>(out + base);
#pragma unroll
    for (int j = 0; j < kThreadChunks; ++j) {
      const int q = j * kBlock + tid;
      hints::store<ScanPolicy::streaming>(o + q, *reinterpret_cast<const Chunk*>(b + chunk_at(q) * kChunkElems));
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = k * kBlock + tid;
      if (base + i < n) out[base + i] = b[element_at(i)];
    }
  }
}

/// This thread's part of the tile in buffer b (blocked: chunks [tid * kThreadChunks, (tid + 1) * kThreadChunks))
/// into r.
__device__ __forceinline__ void read_blocked(const value_t* b, value_t (&r)[kItems]) {
#pragma unroll
  for (int c = 0; c < kThreadChunks; ++c) {
    const Chunk x = *reinterpret_cast<const Chunk*>(b + chunk_at(threadIdx.x * kThreadChunks + c) * kChunkElems);
#pragma unroll
    for (int j = 0; j < kChunkElems; ++j) r[c * kChunkElems + j] = x.v[j];
  }
}

/// The block-wide part of a tile's scan: this thread's exclusive prefix within the tile in buffer b (identity for
/// thread 0), and the tile's aggregate in *total. Contains two barriers (block_exclusive).
__device__ __forceinline__ value_t reduce_tile(const value_t* b, value_t* warp_tot, value_t* total) {
  value_t r[kItems];
  read_blocked(b, r);
  value_t t = r[0];
#pragma unroll
  for (int k = 1; k < kItems; ++k) t = combine(t, r[k]);  // the order of the thread scan in finish_tile
  return block_exclusive(t, warp_tot, total);
}

/// Writes the tile's result into buffer b in place: this thread's elements scanned and combined with p (the
/// tile's exclusive prefix combined with the thread's), shifted by one for an exclusive scan.
__device__ __forceinline__ void finish_tile(value_t* b, value_t p, bool exclusive) {
  value_t r[kItems];
  read_blocked(b, r);
#pragma unroll
  for (int k = 1; k < kItems; ++k) r[k] = combine(r[k - 1], r[k]);
  if (exclusive) {
#pragma unroll
    for (int k = kItems - 1; k > 0; --k) r[k] = combine(p, r[k - 1]);
    r[0] = p;
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) r[k] = combine(p, r[k]);
  }
#pragma unroll
  for (int c = 0; c < kThreadChunks; ++c) {
    Chunk x;
#pragma unroll
    for (int j = 0; j < kChunkElems; ++j) x.v[j] = r[c * kChunkElems + j];
    *reinterpret_cast<Chunk*>(b + chunk_at(threadIdx.x * kThreadChunks + c) * kChunkElems) = x;
  }
}

/// Thread 0: the block's next ticket while `more` (then more = whether it is a tile, whose status line the L2 is
/// asked to fetch), kNoTile once the block has drawn a ticket >= tiles.
__device__ __forceinline__ unsigned draw_ticket(unsigned char* state, unsigned last_ticket, long long tiles,
                                                const TileStatus& st, bool& more) {
  if (!more) return kNoTile;
  unsigned gen;
  const unsigned t = take_ticket(state, last_ticket, gen);
  more = t < tiles;
  if (more) st.prefetch<value_t>(t);
  return t;
}

/// The whole of VARIANT 9 for one persistent block, whose first tile (ticket) is `first` (>= tiles: none).
/// tiles: tiles of the launch; last_ticket: its last ticket; st: the tile status with the launch's tag.
/// warp_tot (32 values) and s_prefix are the kernel's shared scratch.
///
/// Order of the work on tile i (buffer `slot`), with STAGES >= 3 ("ahead": the block's next tile i', whose
/// copies were started STAGES - 1 tiles earlier, so they had the whole of the previous tile to arrive):
///   1. wait for the copies of i', reduce i' (thread totals, block-wide exclusive scan of them) and publish its
///      aggregate, so that the look-backs of later tiles can pass i' before this block looks back for i;
///   2. warp 0 looks back for i (its aggregate was published in the step 1 before) and thread 0 takes the
///      ticket of the tile that this buffer gets next;
///   3. every thread scans its part of i with its prefix into the buffer, the block stores the buffer;
///   4. the buffer's copies of its next tile start.
/// The copies of the STAGES - 2 tiles after i' are in flight during steps 2 and 3. With STAGES = 1 and 2 the
/// block reduces i itself in step 1 (waiting for i's copies, started STAGES - 1 tiles earlier) and look_back
/// publishes i's aggregate: with STAGES = 2 the copies of i + 1 are in flight during the whole of i, but i + 1's
/// aggregate appears only after i's look-back. (STAGES = 2 with step 1 on i + 1 would wait for copies started
/// just before, at the end of the previous tile, and leave nothing in flight during the look-back.) The block's
/// last tile has no step 1 with STAGES >= 3, and no step 4.
__device__ __forceinline__ void scan_persistent(const value_t* __restrict__ in, value_t* __restrict__ out,
                                                long long n, bool exclusive, unsigned char* state, long long tiles,
                                                unsigned last_ticket, const TileStatus& st, unsigned first,
                                                value_t* warp_tot, value_t& s_prefix) {
  constexpr bool kAhead = kStages >= 3;
  __shared__ Chunk buf_chunks[kOn ? kStages * kTile / kChunkElems : 1];
  __shared__ unsigned ring[kStages];  // the tile of each buffer, in ticket order from the current one on
  value_t* const buf = buf_chunks[0].v;
  const int tid = threadIdx.x;
  bool more = first < tiles;  // thread 0: whether to take further tickets (none after the first >= tiles)
  if (tid == 0) {
    ring[0] = first;
    for (int s = 1; s < kStages; ++s) ring[s] = draw_ticket(state, last_ticket, tiles, st, more);
  }
  __syncthreads();
#pragma unroll
  for (int s = 0; s < kStages; ++s) {
    if (ring[s] < tiles) start_tile(in, static_cast<long long>(ring[s]) * kTile, n, buf + s * kTile);
    commit_copies();
  }
  // The current tile's block-wide part: this thread's exclusive prefix within it and the tile's aggregate.
  value_t thread_prefix = identity(), total = identity();
  if constexpr (kAhead) {
    if (ring[0] < tiles) {
      wait_copies<kStages - 1>();  // the first group
      __syncthreads();
      thread_prefix = reduce_tile(buf, warp_tot, &total);
    }
  }
  for (int slot = 0;; slot = slot + 1 == kStages ? 0 : slot + 1) {
    const long long tile = ring[slot];
    if (tile >= tiles) break;  // a block without tiles (STAGES <= 2: after its last tile); the same for all threads
    value_t* const b = buf + slot * kTile;
    // last: this is the block's last tile. Then no barrier separates the reads of ring[slot] above from the
    // step-2 write of thread 0, so thread 0 leaves ring alone (nobody reads it again).
    bool last = false;
    value_t ahead_prefix = identity(), ahead_total = identity();
    if constexpr (kAhead) {
      const int ahead_slot = slot + 1 == kStages ? 0 : slot + 1;
      const long long ahead = ring[ahead_slot];
      last = ahead >= tiles;
      if (!last) {
        wait_copies<kStages - 2>();  // the group of the ahead tile: one after the current tile's
        __syncthreads();
        ahead_prefix = reduce_tile(buf + ahead_slot * kTile, warp_tot, &ahead_total);  // barriers: ring read
        if (tid == 0) st.publish(ahead, kFlagAggregate, ahead_total);
      }
    } else {
      wait_copies<kStages - 1>();  // this tile's group (the oldest in flight; the next tile's may still be)
      __syncthreads();
      thread_prefix = reduce_tile(b, warp_tot, &total);  // barriers: every thread has read ring[slot]
    }
    if (tid < kWarp) {
      const value_t prefix = look_back(st, tile, total);
      if (tid == 0) {
        s_prefix = prefix;
        if (!last) {
          // The ticket of the tile this buffer gets next: after the look-back, so that its round trip overlaps
          // the stores (as VARIANT 8); the copies of the other buffers are in flight meanwhile.
          ring[slot] = draw_ticket(state, last_ticket, tiles, st, more);
        }
      }
    }
    __syncthreads();
    finish_tile(b, tid == 0 ? s_prefix : combine(s_prefix, thread_prefix), exclusive);
    __syncthreads();
    store_out(out, tile * kTile, n, b);
    if (last) break;
    const long long next = ring[slot];
    if (next < tiles) {
      // A full tile's copies go to exactly the chunks this thread has just read for store_out (its own reads,
      // earlier in program order), so no barrier; a partial tile is written element by element into other
      // threads' chunks, so it waits for every thread's stores first.
      if ((next + 1) * kTile > n) __syncthreads();
      start_tile(in, next * kTile, n, b);
    }
    commit_copies();
    if constexpr (kAhead) {
      thread_prefix = ahead_prefix;
      total = ahead_total;
    }
  }
}

}  // namespace async_tiles
}  // namespace scan_detail
