// Parallel reduction: the classic lecture sequence (variants 0-5) and two modern grid-stride variants (6, 7).
//
// Compiled at run time by NVRTC, never by CMake; needs no header. Every tunable macro has a default below
// and is read only in the policy block; with -DAUTOTUNE_STRICT=1 a missing macro is an #error, so a
// spec/kernel name mismatch cannot silently fall back to a default.
//
// Workload macros (from the host adapter's compile_options, also strict):
//   DTYPE_ID  0 int32, 1 float32, 2 float64, 3 custom type CUSTOM_T (e.g. float3)
//   OP_ID     0 sum, 1 min, 2 max, 3 custom: CUSTOM_COMBINE(a,b), CUSTOM_IDENTITY and optional CUSTOM_PRELUDE
//             (device declarations the combine expression may call)
//
// Entry points (all extern "C"):
//   reduce_pass(in, dst, n)        one pass of the chosen VARIANT over n elements. FINAL=0: block b writes
//                                  dst[b]; FINAL=1: every block combines its result atomically into dst[0].
//   reduce_final(partials, out, m) one block folds m partials into out[0] (FINAL=0 of variants 6 and 7).
//   reduce_init(out)               writes the identity into out[0] (FINAL=1 when no memset can express it).
//   reduce_reference_chunks / reduce_reference_final: the sequential reference for custom operators.
// Integer sums wrap modulo 2^32 (computed in unsigned arithmetic), so they are exact in any order.

// ---------------------------------------------------------------------------------------------------
// Policy: the only place that reads the macros.
#if defined(AUTOTUNE_STRICT) && !defined(AUTOTUNE_REFERENCE_ONLY)
#ifndef VARIANT
#error "AUTOTUNE_STRICT: VARIANT is not defined"
#endif
#ifndef BLOCK_SIZE
#error "AUTOTUNE_STRICT: BLOCK_SIZE is not defined"
#endif
#ifndef ITEMS_PER_THREAD
#error "AUTOTUNE_STRICT: ITEMS_PER_THREAD is not defined"
#endif
#ifndef VEC
#error "AUTOTUNE_STRICT: VEC is not defined"
#endif
#ifndef BLOCKS_PER_SM
#error "AUTOTUNE_STRICT: BLOCKS_PER_SM is not defined"
#endif
#ifndef FINAL
#error "AUTOTUNE_STRICT: FINAL is not defined"
#endif
#ifndef KAHAN
#error "AUTOTUNE_STRICT: KAHAN is not defined"
#endif
#endif
#if defined(AUTOTUNE_STRICT)
#ifndef DTYPE_ID
#error "AUTOTUNE_STRICT: DTYPE_ID is not defined"
#endif
#ifndef OP_ID
#error "AUTOTUNE_STRICT: OP_ID is not defined"
#endif
#endif

#ifndef VARIANT
#define VARIANT 7
#endif
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef ITEMS_PER_THREAD
#define ITEMS_PER_THREAD 2
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef BLOCKS_PER_SM
#define BLOCKS_PER_SM 4
#endif
#ifndef FINAL
#define FINAL 0
#endif
#ifndef KAHAN
#define KAHAN 0
#endif
#ifndef DTYPE_ID
#define DTYPE_ID 1
#endif
#ifndef OP_ID
#define OP_ID 0
#endif
#ifndef CUSTOM_PRELUDE
#define CUSTOM_PRELUDE
#endif

namespace red {

typedef unsigned long long u64;

// BLOCKS_PER_SM only shapes the grid, which the host computes; it is listed here so the policy is complete.
struct Policy {
  static constexpr int variant = VARIANT;
  static constexpr int block = BLOCK_SIZE;
  static constexpr int items = ITEMS_PER_THREAD;
  static constexpr int vec = VEC;
  static constexpr int blocks_per_sm = BLOCKS_PER_SM;
  static constexpr bool atomic_final = FINAL != 0;
  static constexpr bool kahan = KAHAN != 0;
  static constexpr int dtype = DTYPE_ID;
  static constexpr int op = OP_ID;
};

}  // namespace red

// Declarations the custom combine expression may use (expanded at file scope).
CUSTOM_PRELUDE

namespace red {

template <int D> struct DType;
template <> struct DType<0> { typedef int type; };
template <> struct DType<1> { typedef float type; };
template <> struct DType<2> { typedef double type; };
#if DTYPE_ID == 3
template <> struct DType<3> { typedef CUSTOM_T type; };
#endif
typedef typename DType<Policy::dtype>::type T;

constexpr int kWarp = 32;
__host__ __device__ constexpr bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

static_assert(Policy::variant >= 0 && Policy::variant <= 7, "VARIANT must be 0..7");
static_assert(is_pow2(Policy::block) && Policy::block >= 64 && Policy::block <= 1024,
              "BLOCK_SIZE must be a power of two in [64, 1024]");
static_assert(Policy::items >= 1 && Policy::items <= 64, "ITEMS_PER_THREAD must be in [1, 64]");
static_assert(Policy::vec == 1 || Policy::vec == 2 || Policy::vec == 4, "VEC must be 1, 2 or 4");
static_assert(Policy::blocks_per_sm >= 1, "BLOCKS_PER_SM must be positive");
static_assert(Policy::op >= 0 && Policy::op <= 3, "OP_ID must be 0..3");
static_assert(Policy::dtype != 3 || Policy::op == 3, "a custom type (DTYPE_ID=3) needs a custom operator (OP_ID=3)");
static_assert(!Policy::kahan || (Policy::op == 0 && (Policy::dtype == 1 || Policy::dtype == 2)),
              "KAHAN needs a floating-point sum");
static_assert(!Policy::kahan || Policy::variant >= 6, "KAHAN applies to the grid-stride variants 6 and 7");
static_assert(!Policy::atomic_final || sizeof(T) == 4 || sizeof(T) == 8,
              "FINAL=1 needs a 4- or 8-byte type (atomic compare-and-swap)");
static_assert(sizeof(T) % 4 == 0, "the element size must be a multiple of 4 bytes (warp shuffles)");

// ---------------------------------------------------------------------------------------------------
// The operator.
__device__ __forceinline__ T op_identity() {
#if OP_ID == 0
  return T(0);
#elif OP_ID == 3
  return CUSTOM_IDENTITY;
#elif DTYPE_ID == 0
  return OP_ID == 1 ? 2147483647 : (-2147483647 - 1);
#elif DTYPE_ID == 1
  return __int_as_float(OP_ID == 1 ? 0x7f800000 : static_cast<int>(0xff800000u));  // +inf / -inf
#elif DTYPE_ID == 2
  return __longlong_as_double(OP_ID == 1 ? 0x7ff0000000000000LL
                                         : static_cast<long long>(0xfff0000000000000ULL));  // +inf / -inf
#endif
}

__device__ __forceinline__ T op_combine(T a, T b) {
#if OP_ID == 0 && DTYPE_ID == 0
  return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b));  // wraps, order-independent
#elif OP_ID == 0
  return a + b;
#elif OP_ID == 1
  return b < a ? b : a;
#elif OP_ID == 2
  return a < b ? b : a;
#else
  return CUSTOM_COMBINE(a, b);
#endif
}

// Bit-level copies between T and 32/64-bit words.
template <typename To, typename From>
__device__ __forceinline__ To bit_cast(const From& v) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
  union { From from; To to; } u;
  u.from = v;
  return u.to;
}

// Shuffle of any T whose size is a multiple of 4 bytes, word by word.
__device__ __forceinline__ T shfl_down(T v, int delta) {
  constexpr int words = sizeof(T) / 4;
  union { T t; int w[words]; } in, out;
  in.t = v;
#pragma unroll
  for (int i = 0; i < words; ++i) out.w[i] = __shfl_down_sync(0xffffffffu, in.w[i], delta);
  return out.t;
}

__device__ __forceinline__ T warp_reduce(T v) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v = op_combine(v, shfl_down(v, offset));
  return v;
}

// Combines v into *dst with an atomic read-modify-write (FINAL=1).
template <typename W, typename U>
__device__ __forceinline__ void cas_combine(U* dst, U v) {
  W* addr = reinterpret_cast<W*>(dst);
  W old = *reinterpret_cast<volatile W*>(addr);
  while (true) {
    const W next = bit_cast<W>(op_combine(bit_cast<U>(old), v));
    if (next == old) return;
    const W seen = atomicCAS(addr, old, next);
    if (seen == old) return;
    old = seen;
  }
}

// Templates, so that nothing is instantiated for types without an atomic path unless FINAL=1 asks for it.
template <typename U>
__device__ __forceinline__ void atomic_combine(U* dst, U v) {
#if OP_ID == 0 && DTYPE_ID == 0
  atomicAdd(reinterpret_cast<unsigned*>(dst), static_cast<unsigned>(v));
#elif OP_ID == 0 && (DTYPE_ID == 1 || DTYPE_ID == 2)
  atomicAdd(dst, v);  // float64 atomicAdd: sm_60 and newer
#elif OP_ID == 1 && DTYPE_ID == 0
  atomicMin(dst, v);
#elif OP_ID == 2 && DTYPE_ID == 0
  atomicMax(dst, v);
#else
  if constexpr (sizeof(U) == 4) {
    cas_combine<unsigned int>(dst, v);
  } else {
    cas_combine<unsigned long long>(dst, v);
  }
#endif
}

// How a block publishes its result: a plain store of its partial, or an atomic combine into dst[0].
template <bool Atomic, typename U>
struct BlockStore {
  static __device__ __forceinline__ void apply(U* dst, U r) { dst[blockIdx.x] = r; }
};
template <typename U>
struct BlockStore<true, U> {
  static __device__ __forceinline__ void apply(U* dst, U r) { atomic_combine(dst, r); }
};

// Per-thread accumulator of the grid-stride variants: plain, or Kahan-compensated for float sums.
template <bool Compensated, typename U>
struct Accumulator {
  U value;
  __device__ __forceinline__ void init() { value = op_identity(); }
  __device__ __forceinline__ void add(U x) { value = op_combine(value, x); }
  __device__ __forceinline__ U result() const { return value; }
};

template <typename U>
struct Accumulator<true, U> {
  U sum;
  U comp;  // running compensation: the low-order part lost so far (negated)
  __device__ __forceinline__ void init() {
    sum = U(0);
    comp = U(0);
  }
  __device__ __forceinline__ void add(U x) {
    const U y = x - comp;
    const U t = sum + y;
    comp = (t - sum) - y;
    sum = t;
  }
  __device__ __forceinline__ U result() const { return sum; }
};

// VEC consecutive elements, aligned for a single vector load when the size is a power of two <= 32 bytes.
__host__ __device__ constexpr int vec_align() {
  return (is_pow2(static_cast<int>(sizeof(T)) * Policy::vec) && sizeof(T) * Policy::vec <= 32)
             ? static_cast<int>(sizeof(T)) * Policy::vec
             : static_cast<int>(alignof(T));
}
struct alignas(vec_align()) VecT {
  T e[Policy::vec];
};

// ---------------------------------------------------------------------------------------------------
// Loads.

// Variants 0-5: one element per thread (0-2) or two elements added during the load (3-5).
__device__ __forceinline__ T load_fixed(const T* __restrict__ in, u64 n) {
  const unsigned tid = threadIdx.x;
  if (Policy::variant <= 2) {
    const u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + tid;
    return i < n ? in[i] : op_identity();
  }
  const u64 i = static_cast<u64>(blockIdx.x) * (2ull * blockDim.x) + tid;
  T v = i < n ? in[i] : op_identity();
  if (i + blockDim.x < n) v = op_combine(v, in[i + blockDim.x]);
  return v;
}

// Variants 6-7: grid-stride loop over VEC-wide vectors, ITEMS_PER_THREAD loads in flight per iteration;
// the n % VEC tail elements are taken by the first threads of the grid with scalar loads.
// The input base must be aligned to sizeof(VecT) (device allocations are 256-byte aligned).
__device__ __forceinline__ T load_grid_stride(const T* __restrict__ in, u64 n) {
  constexpr int B = Policy::block;
  constexpr int I = Policy::items;
  constexpr int V = Policy::vec;
  const unsigned tid = threadIdx.x;
  const VecT* __restrict__ vin = reinterpret_cast<const VecT*>(in);
  const u64 nv = n / V;
  const u64 stride = static_cast<u64>(gridDim.x) * B * I;
  u64 base = static_cast<u64>(blockIdx.x) * B * I + tid;

  Accumulator<Policy::kahan, T> acc;
  acc.init();
  for (; base + static_cast<u64>(I - 1) * B < nv; base += stride) {
    VecT buf[I];
#pragma unroll
    for (int k = 0; k < I; ++k) buf[k] = vin[base + static_cast<u64>(k) * B];
#pragma unroll
    for (int k = 0; k < I; ++k)
#pragma unroll
      for (int j = 0; j < V; ++j) acc.add(buf[k].e[j]);
  }
#pragma unroll
  for (int k = 0; k < I; ++k) {
    const u64 idx = base + static_cast<u64>(k) * B;
    if (idx < nv) {
      const VecT x = vin[idx];
#pragma unroll
      for (int j = 0; j < V; ++j) acc.add(x.e[j]);
    }
  }
  if (V > 1) {
    const u64 global = static_cast<u64>(blockIdx.x) * B + tid;
    const u64 tail = n - nv * V;
    if (global < tail) acc.add(in[nv * V + global]);
  }
  return acc.result();
}

// ---------------------------------------------------------------------------------------------------
// Block reductions. Each returns the block's result in thread 0 (other threads: unspecified).

// Last warp after the shared-memory tree: threads 0-31 with __syncwarp between the read and the write
// of every step, correct under independent thread scheduling (no implicit warp-synchronous execution).
__device__ __forceinline__ T last_warp_shared(T* s, unsigned tid) {
  T v = s[tid];
#pragma unroll
  for (int offset = kWarp; offset > 1; offset >>= 1) {
    v = op_combine(v, s[tid + offset]);
    __syncwarp();
    s[tid] = v;
    __syncwarp();
  }
  return op_combine(v, s[tid + 1]);
}

// Variants 0-4 loop over blockDim.x at run time, as in the lecture; variants 5 and 6 unroll at compile time.
__device__ __forceinline__ T block_reduce_shared(T* s, T v) {
  const unsigned tid = threadIdx.x;
  s[tid] = v;
  __syncthreads();
  if (Policy::variant == 0) {  // interleaved addressing, divergent branch on tid % (2s)
#pragma unroll 1
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
      if (tid % (2 * stride) == 0) s[tid] = op_combine(s[tid], s[tid + stride]);
      __syncthreads();
    }
    return s[0];
  } else if (Policy::variant == 1) {  // interleaved addressing, strided index (bank conflicts)
#pragma unroll 1
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
      const unsigned index = 2 * stride * tid;
      if (index < blockDim.x) s[index] = op_combine(s[index], s[index + stride]);
      __syncthreads();
    }
    return s[0];
  } else if (Policy::variant == 2 || Policy::variant == 3) {  // sequential addressing
#pragma unroll 1
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
      if (tid < stride) s[tid] = op_combine(s[tid], s[tid + stride]);
      __syncthreads();
    }
    return s[0];
  } else if (Policy::variant == 4) {  // sequential addressing, last warp unrolled
#pragma unroll 1
    for (unsigned stride = blockDim.x / 2; stride > kWarp; stride >>= 1) {
      if (tid < stride) s[tid] = op_combine(s[tid], s[tid + stride]);
      __syncthreads();
    }
    return tid < kWarp ? last_warp_shared(s, tid) : v;
  } else {  // complete unrolling with the compile-time block size (variants 5 and 6)
    constexpr int B = Policy::block;
    if (B >= 1024) {
      if (tid < 512) s[tid] = op_combine(s[tid], s[tid + 512]);
      __syncthreads();
    }
    if (B >= 512) {
      if (tid < 256) s[tid] = op_combine(s[tid], s[tid + 256]);
      __syncthreads();
    }
    if (B >= 256) {
      if (tid < 128) s[tid] = op_combine(s[tid], s[tid + 128]);
      __syncthreads();
    }
    if (B >= 128) {
      if (tid < 64) s[tid] = op_combine(s[tid], s[tid + 64]);
      __syncthreads();
    }
    return tid < kWarp ? last_warp_shared(s, tid) : v;
  }
}

// Warp shuffles, one shared slot per warp (variant 7 and reduce_final). s holds blockDim.x / 32 slots.
__device__ __forceinline__ T block_reduce_shuffle(T* s, T v) {
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = threadIdx.x / kWarp;
  const unsigned warps = blockDim.x / kWarp;
  v = warp_reduce(v);
  if (lane == 0) s[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_reduce(lane < warps ? s[lane] : op_identity());
  return v;
}

}  // namespace red

// ---------------------------------------------------------------------------------------------------
// Entry points. Dynamic shared memory: blockDim.x * sizeof(T) (variants 0-6), blockDim.x / 32 * sizeof(T)
// (variant 7, reduce_final).

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
reduce_pass(const red::T* __restrict__ in, red::T* __restrict__ dst, unsigned long long n) {
  using namespace red;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* s = reinterpret_cast<T*>(smem_raw);
  T r;
  if (Policy::variant <= 5) {
    r = block_reduce_shared(s, load_fixed(in, n));
  } else if (Policy::variant == 6) {
    r = block_reduce_shared(s, load_grid_stride(in, n));
  } else {
    r = block_reduce_shuffle(s, load_grid_stride(in, n));
  }
  if (threadIdx.x == 0) BlockStore<Policy::atomic_final, T>::apply(dst, r);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
reduce_final(const red::T* __restrict__ partials, red::T* __restrict__ out, unsigned long long count) {
  using namespace red;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* s = reinterpret_cast<T*>(smem_raw);
  T v = op_identity();
  for (u64 i = threadIdx.x; i < count; i += blockDim.x) v = op_combine(v, partials[i]);
  v = block_reduce_shuffle(s, v);
  if (threadIdx.x == 0) out[0] = v;
}

extern "C" __global__ void reduce_init(red::T* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = red::op_identity();
}

// Reference for custom operators: thread g folds the contiguous chunk [g*chunk, (g+1)*chunk) from the left;
// reduce_reference_final then folds the partials in order. Exact for exactly associative operators.
extern "C" __global__ void reduce_reference_chunks(const red::T* __restrict__ in, red::T* __restrict__ partials,
                                                   unsigned long long n, unsigned long long chunk) {
  using namespace red;
  const u64 g = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  const u64 begin = g * chunk;
  const u64 end = begin + chunk < n ? begin + chunk : n;
  T v = op_identity();
  for (u64 i = begin; i < end; ++i) v = op_combine(v, in[i]);
  partials[g] = v;
}

extern "C" __global__ void reduce_reference_final(const red::T* __restrict__ partials, red::T* __restrict__ out,
                                                  unsigned long long count) {
  using namespace red;
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  T v = op_identity();
  for (u64 i = 0; i < count; ++i) v = op_combine(v, partials[i]);
  out[0] = v;
}
