// Decoupled look-back of the single-pass kernels (scan, compaction): launch tickets with a generation,
// generation-tagged tile status words and the warp-wide look-back itself.
// A kernel header, data like the sources: embedded at build time and handed to NVRTC as the named header
// "common/lookback.cuh" (tuner/cuda/nvrtc_compile.cpp), so a source includes it as
//   #include "common/lookback.cuh"
// and still compiles on its own. It reads no macro: what is tunable (the back-off of a spin) is a template
// argument, set from the policy block of the source that includes it.
//
// Launch word: bytes [0, 8) of a kernel's state buffer: bits 63..32 the launch generation g, bits 31..0 the
// next ticket (tile id). Blocks take tickets with a 64-bit atomicAdd (so each sees g with its ticket); the
// block that takes the last ticket of the launch stores (g + 1) << 32: every other ticket was handed out
// before it, so no block of this launch reads the word again, and the next launch (stream-ordered) starts at
// ticket 0. The state buffer is zero when first used and every launch leaves it ready for the next one, so no
// launch needs a memset before it.
// Tags: a tile's status carries (generation tag << 2) | flag, flag 1 = aggregate available, 2 = inclusive
// prefix available, and generation tag = g mod (2^30 - 1) + 1 (never 0, so a zeroed word is never current).
// A status whose generation tag is not the current launch's reads as "nothing yet": words left by earlier
// launches need no clearing. (A word is taken for current only if it was last written exactly a multiple of
// 2^30 - 1 launches earlier and never since, which needs that many launches with fewer tiles in between.)
// Where the status words of the tiles lie after the launch word is the including kernel's choice (a Status
// type, see look_back).
#pragma once

namespace lookback {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr unsigned kFlagNone = 0, kFlagAggregate = 1, kFlagPrefix = 2;

/// The tag bits of generation g (the low two bits, for the flag, are zero).
__device__ __forceinline__ unsigned generation_tag(unsigned g) { return (g % 0x3fffffffu + 1u) << 2; }

/// Takes the next ticket of this launch from the launch word at state; `last` is the launch's last ticket
/// (every ticket is taken exactly once). Sets gen to the launch generation.
__device__ __forceinline__ unsigned take_ticket(unsigned char* state, unsigned last, unsigned& gen) {
  unsigned long long* word = reinterpret_cast<unsigned long long*>(state);
  const unsigned long long w = atomicAdd(word, 1ull);
  const unsigned ticket = static_cast<unsigned>(w);
  gen = static_cast<unsigned>(w >> 32);
  if (ticket == last) atomicExch(word, static_cast<unsigned long long>(gen + 1u) << 32);
  return ticket;
}

// A packed 64-bit status word carries tag and value together and nothing else is communicated through
// it, so relaxed (strong, gpu-scope) accesses suffice: a reader sees either an old word or the complete new one.
// (Acquire loads would also invalidate the L1 cache on every spin of the look-back.)
__device__ __forceinline__ void st_relaxed(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long ld_relaxed(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

/// Status of 32-bit values: one 64-bit word per tile, tag << 32 | value bits, published by one store.
struct PackedStatus {
  unsigned long long* words;  // the word of tile 0
  unsigned tag;               // generation_tag of this launch

  /// The flag a tag stands for in this launch (kFlagNone for a tag of another launch).
  __device__ __forceinline__ unsigned flag_of(unsigned t) const { return (t & ~3u) == tag ? (t & 3u) : kFlagNone; }
  __device__ __forceinline__ void publish(long long tile, unsigned flag, unsigned bits) const {
    st_relaxed(words + tile, (static_cast<unsigned long long>(tag | flag) << 32) | bits);
  }
  /// tile < 0 reads as an inclusive prefix of 0 (see look_back).
  __device__ __forceinline__ void read(long long tile, unsigned& flag, unsigned& bits) const {
    const unsigned long long w =
        tile >= 0 ? ld_relaxed(words + tile) : static_cast<unsigned long long>(tag | kFlagPrefix) << 32;
    flag = flag_of(static_cast<unsigned>(w >> 32));
    bits = static_cast<unsigned>(w);
  }
};

/// Run by the 32 threads of warp 0 (threadIdx.x is the lane): publishes the tile's aggregate, combines the
/// predecessors' values (32 at a time) back to the nearest inclusive prefix, publishes this tile's inclusive
/// prefix and returns its exclusive prefix. Progress is guaranteed because tile ids come from take_ticket:
/// every predecessor belongs to a block that started earlier.
/// Status: publish(tile, flag, T) and read(tile, unsigned& flag, T&), kFlagNone for "nothing yet"; read of a
/// tile < 0 (before the first tile) gives kFlagPrefix and the identity.
/// kDelay: ns of the first back-off of a spin (doubled up to 16x; 0: spin without sleeping).
/// combine(a, b): the associative operator, a from the earlier tiles; identity its neutral value.
template <int kDelay, class T, class Status, class Combine>
__device__ __forceinline__ T look_back(const Status& st, long long tile, T aggregate, T identity, Combine combine) {
  const int lane = threadIdx.x;
  if (tile == 0) {
    if (lane == 0) st.publish(0, kFlagPrefix, aggregate);
    return identity;
  }
  if (lane == 0) st.publish(tile, kFlagAggregate, aggregate);
  T exclusive = identity;
  long long end = tile - 1;  // last predecessor of the current window of 32
  for (;;) {
    const long long idx = end - (kWarp - 1 - lane);
    unsigned flag;
    T v;
    unsigned delay = kDelay;
    for (;;) {
      st.read(idx, flag, v);
      if (!__any_sync(kFullMask, flag == kFlagNone)) break;
      if constexpr (kDelay > 0) {  // back off: fewer status reads compete with the data
        __nanosleep(delay);
        delay = delay < 16 * kDelay ? 2 * delay : delay;
      }
    }
    const unsigned prefix_mask = __ballot_sync(kFullMask, flag == kFlagPrefix);
    const int first = prefix_mask ? kWarp - 1 - __clz(prefix_mask) : 0;  // nearest inclusive prefix
    T c = lane >= first ? v : identity;
#pragma unroll
    for (int o = kWarp / 2; o > 0; o >>= 1) c = combine(c, __shfl_xor_sync(kFullMask, c, o));
    exclusive = combine(c, exclusive);
    if (prefix_mask) break;
    end -= kWarp;
  }
  if (lane == 0) st.publish(tile, kFlagPrefix, combine(exclusive, aggregate));
  return exclusive;
}

}  // namespace lookback
