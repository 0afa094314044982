// Global-memory loads and stores with cache hints, for the streaming kernels (scan, compaction): one copy of the
// reinterpretation of a value as the hardware word of its size, used by every kernel that hints its traffic.
// A kernel header, data like the sources: embedded at build time and handed to NVRTC as the named header
// "common/cache_hints.cuh", so a source includes it as
//   #include "common/cache_hints.cuh"
// and still compiles on its own. It reads no macro: whether a kernel hints is a template argument, set from the
// policy block of the source that includes it.
//
// streaming: the evict-first (.cs) hint: every element is read or written once, so it should not displace data
// that is reused. l2_prefetch (loads of 16 bytes only): the hint that the L2 fetch the 256 bytes around the access
// (a block's neighbouring vectors). Values of another size than 4, 8 or 16 bytes are loaded and stored plainly.
#pragma once

namespace hints {

/// The hardware word of a value of N bytes (4, 8 or 16); void for other sizes. (Types only: a constant member
/// here would be emitted into every module as an object of its own.)
template <int N> struct Word { typedef void type; };
template <> struct Word<4> { typedef unsigned type; };
template <> struct Word<8> { typedef uint2 type; };
template <> struct Word<16> { typedef uint4 type; };

/// *p, with the hints asked for where the size of T allows them.
template <bool kStreaming, bool kL2Prefetch, class T>
__device__ __forceinline__ T load(const T* p) {
  typedef typename Word<sizeof(T)>::type W;
  if constexpr (kL2Prefetch && sizeof(T) == 16) {
    union { uint4 u; T v; } c;
    if constexpr (kStreaming) {
      asm volatile("ld.global.cs.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(c.u.x), "=r"(c.u.y), "=r"(c.u.z), "=r"(c.u.w) : "l"(p));
    } else {
      asm volatile("ld.global.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(c.u.x), "=r"(c.u.y), "=r"(c.u.z), "=r"(c.u.w) : "l"(p));
    }
    return c.v;
  } else if constexpr (kStreaming && (sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16)) {
    union { W u; T v; } c;
    c.u = __ldcs(reinterpret_cast<const W*>(p));
    return c.v;
  } else {
    return *p;
  }
}

/// *p = v, with the evict-first hint where kStreaming is set and the size of T allows it.
template <bool kStreaming, class T>
__device__ __forceinline__ void store(T* p, const T& v) {
  typedef typename Word<sizeof(T)>::type W;
  if constexpr (kStreaming && (sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16)) {
    union { W u; T v; } c;
    c.v = v;
    __stcs(reinterpret_cast<W*>(p), c.u);
  } else {
    *p = v;
  }
}

}  // namespace hints
