typedef unsigned long long u64;
constexpr u64 kHashBasis = 14695981039346656037ull;
constexpr u64 kHashPrime = 1099511628211ull;

extern "C" __global__ void autotune_l2_flush(const uint4* __restrict__ buffer, u64 n, unsigned* sink) {
  unsigned acc = 0;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
    const uint4 v = __ldcg(buffer + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x2545f491u) *sink = acc;  // keeps the loads; the buffer's pattern never gives this value
}

// ---- inputs drawn on the device (tuner/core/draw.hpp) ----
// std::mt19937_64 as the C++ standard defines it (seeded from one value), one per chunk of elements.
struct Mt64 {
  u64 x[312];
  int next_index;
  __device__ void seed(u64 s) {
    x[0] = s;
    for (int k = 1; k < 312; ++k) x[k] = 6364136223846793005ull * (x[k - 1] ^ (x[k - 1] >> 62)) + (u64)k;
    next_index = 312;
  }
  __device__ void twist() {
    for (int k = 0; k < 312; ++k) {
      const u64 y = (x[k] & 0xffffffff80000000ull) | (x[k + 1 < 312 ? k + 1 : 0] & 0x7fffffffull);
      x[k] = x[k + 156 < 312 ? k + 156 : k - 156] ^ (y >> 1) ^ ((y & 1) ? 0xb5026f5aa96619e9ull : 0ull);
    }
    next_index = 0;
  }
  __device__ u64 next() {
    if (next_index >= 312) twist();
    u64 z = x[next_index++];
    z ^= (z >> 29) & 0x5555555555555555ull;
    z ^= (z << 17) & 0x71d67fffeda60000ull;
    z ^= (z << 37) & 0xfff7eee000000000ull;
    return z ^ (z >> 43);
  }
};

__device__ u64 autotune_splitmix64(u64 x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// draw_hash_step() of the host: the draw's and the prefix write's hashes.
__device__ u64 hash_step(u64 hash, u64 word) { return (hash ^ word) * kHashPrime; }

// Random::uniform() and scaled_int() of the host (tuner/core/random.hpp, tuner/kernels/host_util.cpp).
__device__ double draw_uniform(Mt64& g) { return (double)(g.next() >> 11) * (1.0 / 9007199254740992.0); }
__device__ long long draw_scaled_int(Mt64& g, long long lo, long long hi) {
  const double span = (double)hi - (double)lo + 1.0;
  long long k = (long long)floor(draw_uniform(g) * span);
  if (k > hi - lo) k = hi - lo;
  return lo + k;
}

// Thread c draws chunk c: elements [c * chunk, min((c + 1) * chunk, count)) with the generator seeded as
// for_each_chunk seeds it, and writes the chunk's DrawChunk as 7 words to summary[7c..7c+6] (sum, comp, max_abs,
// min, max as double bits, hash, wrapped) unless summary is null.
extern "C" __global__ void autotune_draw(void* out, u64 count, u64 chunk, u64 seed, int kind, long long lo,
                                         long long hi, int sum, u64* summary) {
  const u64 c = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  const u64 begin = c * chunk;
  if (begin >= count) return;
  const u64 end = min(begin + chunk, count);
  Mt64 g;
  g.seed(autotune_splitmix64(autotune_splitmix64(seed) ^ autotune_splitmix64(c)));
  double s = 0, comp = 0, max_abs = 0, lowest = __longlong_as_double(0x7ff0000000000000ll), highest = -lowest;
  u64 hash = kHashBasis;
  unsigned wrapped = 0;
  const int bits = kind == 1 ? 24 : 53;
  const double scale = ldexp(1.0, -bits);
  for (u64 i = begin; i < end; ++i) {
    double x;
    u64 word;
    if (kind == 0) {  // uniform_nonzero_int
      long long v;
      if (lo > 0 || hi < 0) {
        v = draw_scaled_int(g, lo, hi);
      } else {
        v = draw_scaled_int(g, lo, hi - 1);
        v += v >= 0 ? 1 : 0;
      }
      const int v32 = (int)v;
      ((int*)out)[i] = v32;
      x = (double)v32;
      wrapped += (unsigned)v32;
      word = (unsigned)v32;
    } else {  // signed_input_value
      const u64 r = g.next();
      const double sign = 1.0 - 2.0 * (double)(r & 1);
      const double v = sum ? sign * (double)(32 + (r >> 59)) / 64.0 : sign * (double)((r >> (64 - bits)) + 1) * scale;
      if (kind == 1) {
        const float f = (float)v;
        ((float*)out)[i] = f;
        x = (double)f;
        word = __float_as_uint(f);
      } else {
        ((double*)out)[i] = v;
        x = v;
        word = (u64)__double_as_longlong(v);
      }
      const double t = s + x;
      comp += fabs(s) >= fabs(x) ? (s - t) + x : (x - t) + s;
      s = t;
      max_abs = fmax(max_abs, fabs(x));
    }
    lowest = fmin(lowest, x);
    highest = fmax(highest, x);
    hash = hash_step(hash, word);
  }
  if (summary == nullptr) return;
  u64* w = summary + 7 * c;
  w[0] = (u64)__double_as_longlong(s);
  w[1] = (u64)__double_as_longlong(comp);
  w[2] = (u64)__double_as_longlong(max_abs);
  w[3] = (u64)__double_as_longlong(lowest);
  w[4] = (u64)__double_as_longlong(highest);
  w[5] = hash;
  w[6] = wrapped;
}

// ---- expected values of a prefix scan made on the device (PrefixRecipe, tuner/core/draw.hpp) ----
// The scan family's reference() (tuner/kernels/scan.cpp) in the same IEEE double steps (this module is compiled
// without fused multiply-add). elem: 0 int32, 1 float32, 2 float64. A prefix's state is 4 doubles: a float sum's
// (sum, comp, abs), an int32 sum modulo 2^32 in word 3, a maximum in word 0.
__device__ double prefix_load(const void* in, int elem, u64 i) {
  return elem == 0 ? (double)((const int*)in)[i] : elem == 1 ? (double)((const float*)in)[i] : ((const double*)in)[i];
}
__device__ void prefix_start(double* a, int elem, int is_max) {
  a[0] = is_max ? (elem == 0 ? -2147483648.0 : -__longlong_as_double(0x7ff0000000000000ll)) : 0.0;
  a[1] = a[2] = a[3] = 0.0;
}
__device__ void prefix_neumaier(double* a, double x) {
  const double t = a[0] + x;
  a[1] += fabs(a[0]) >= fabs(x) ? (a[0] - t) + x : (x - t) + a[0];
  a[0] = t;
}
__device__ void prefix_add(double* a, double x, int elem, int is_max) {
  if (is_max) {
    a[0] = a[0] < x ? x : a[0];  // std::max(acc, x)
  } else if (elem == 0) {
    a[3] = (double)((unsigned)a[3] + (unsigned)(int)x);
  } else {
    prefix_neumaier(a, x);
    a[2] += fabs(x);
  }
}

// Thread c: the total of chunk c into totals[4c..4c+3].
extern "C" __global__ void autotune_prefix_totals(const void* in, u64 count, u64 chunk, int elem, int is_max,
                                                  double* totals) {
  const u64 c = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  const u64 begin = c * chunk;
  if (begin >= count) return;
  const u64 end = min(begin + chunk, count);
  double a[4];
  prefix_start(a, elem, is_max);
  for (u64 i = begin; i < end; ++i) prefix_add(a, prefix_load(in, elem, i), elem, is_max);
  for (int k = 0; k < 4; ++k) totals[4 * c + k] = a[k];
}

// One thread: the totals become the carries into each chunk (their exclusive prefix, in chunk order).
extern "C" __global__ void autotune_prefix_carries(double* totals, u64 chunks, int elem, int is_max) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  double run[4];
  prefix_start(run, elem, is_max);
  for (u64 c = 0; c < chunks; ++c) {
    double* t = totals + 4 * c;
    const double total[4] = {t[0], t[1], t[2], t[3]};
    for (int k = 0; k < 4; ++k) t[k] = run[k];
    if (is_max) {
      run[0] = run[0] < total[0] ? total[0] : run[0];
    } else if (elem == 0) {
      run[3] = (double)((unsigned)run[3] + (unsigned)total[3]);
    } else {
      prefix_neumaier(run, total[0]);
      run[1] += total[1];
      run[2] += total[2];
    }
  }
}

// Thread c: the expected values of chunk c from its carry (values: the element type; tolerance: float sums),
// then over its carry the FNV-1a hash of what it wrote (each element's value bits, then its tolerance's).
extern "C" __global__ void autotune_prefix_write(const void* in, void* values, void* tolerance, u64 count,
                                                 u64 chunk, int elem, int is_max, int exclusive, double scale,
                                                 double* state) {
  const u64 c = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  const u64 begin = c * chunk;
  if (begin >= count) return;
  const u64 end = min(begin + chunk, count);
  double a[4];
  for (int k = 0; k < 4; ++k) a[k] = state[4 * c + k];
  u64 hash = kHashBasis;
  for (u64 i = begin; i < end; ++i) {
    const double x = prefix_load(in, elem, i);
    if (!exclusive) prefix_add(a, x, elem, is_max);
    u64 value_bits, tolerance_bits = 0;
    if (is_max || elem == 0) {
      if (elem == 0) {
        const int v = is_max ? (int)a[0] : (int)(unsigned)a[3];
        ((int*)values)[i] = v;
        value_bits = (unsigned)v;
      } else if (elem == 1) {
        ((float*)values)[i] = (float)a[0];
        value_bits = __float_as_uint((float)a[0]);
      } else {
        ((double*)values)[i] = a[0];
        value_bits = (u64)__double_as_longlong(a[0]);
      }
    } else {
      const double exact = a[0] + a[1];
      const double rounded = elem == 1 ? (double)(float)exact : exact;
      const double bound = scale * a[2] + fabs(exact - rounded);
      if (elem == 1) {
        float t = (float)bound;
        if ((double)t < bound) t = __uint_as_float(__float_as_uint(t) + 1u);  // round_up<float>
        ((float*)values)[i] = (float)rounded;
        ((float*)tolerance)[i] = t;
        value_bits = __float_as_uint((float)rounded);
        tolerance_bits = __float_as_uint(t);
      } else {
        ((double*)values)[i] = rounded;
        ((double*)tolerance)[i] = bound;
        value_bits = (u64)__double_as_longlong(rounded);
        tolerance_bits = (u64)__double_as_longlong(bound);
      }
    }
    hash = hash_step(hash, value_bits);
    if (!is_max && elem != 0) hash = hash_step(hash, tolerance_bits);
    if (exclusive) prefix_add(a, x, elem, is_max);
  }
  ((u64*)state)[4 * c] = hash;
}

// Predicates of element i, as element_matches() on the host.
template <typename T>
struct BitsEqual {
  const T* got; const T* want;
  __device__ bool operator()(u64 i) const { return __ldcs(got + i) == __ldcs(want + i); }
};
struct BytesEqual {
  const unsigned char* got; const unsigned char* want; unsigned es;
  __device__ bool operator()(u64 i) const {
    bool same = true;
    for (unsigned k = 0; k < es; ++k) same = same && __ldcs(got + i * es + k) == __ldcs(want + i * es + k);
    return same;
  }
};
// NaN in both agrees unless the output is still the poison (every byte 0xFF: never written), as nan_agrees().
__device__ bool is_poison(float g) { return __float_as_uint(g) == 0xffffffffu; }
__device__ bool is_poison(double g) { return __double_as_longlong(g) == -1ll; }
template <typename T>
__device__ bool nan_agrees(T g, double e) {
  return isnan((double)g) && isnan(e) && !is_poison(g);
}
template <typename T>
struct FloatEqual {
  const T* got; const T* want;
  __device__ bool operator()(u64 i) const {
    const T g = __ldcs(got + i);
    const double e = (double)__ldcs(want + i);
    return (double)g == e || nan_agrees(g, e);
  }
};
template <typename T, typename R>
struct AbsTolerance {
  const T* got; const R* want; const R* tol;
  __device__ bool operator()(u64 i) const {
    const T g = __ldcs(got + i);
    const double e = (double)__ldcs(want + i);
    return fabs((double)g - e) <= (double)__ldcs(tol + i) || nan_agrees(g, e);
  }
};
template <typename T>
struct RelTolerance {
  const T* got; const T* want; double relative; double absolute;
  __device__ bool operator()(u64 i) const {
    const T gt = __ldcs(got + i);
    const double g = (double)gt, e = (double)__ldcs(want + i);
    return (isfinite(g) && fabs(g - e) <= absolute + relative * fmax(fabs(e), 1e-30)) || nan_agrees(gt, e);
  }
};

template <typename Pred>
__device__ void compare_chunk(const Pred& match, u64 count, u64 chunk, u64* results) {
  __shared__ u64 block_bad, block_first;
  if (threadIdx.x == 0) {
    block_bad = 0;
    block_first = ~0ull;
  }
  __syncthreads();
  const u64 begin = (u64)blockIdx.x * chunk;
  const u64 end = min(begin + chunk, count);
  const u64 stride = blockDim.x;
  u64 bad = 0, first = ~0ull;
  for (u64 base = begin + threadIdx.x; base < end; base += 4 * stride) {
    bool ok[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const u64 i = base + k * stride;
      ok[k] = i >= end || match(i);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (ok[k]) continue;
      ++bad;
      first = min(first, base + k * stride);
    }
  }
  if (bad != 0) {
    atomicAdd(&block_bad, bad);
    atomicMin(&block_first, first);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    results[2 * blockIdx.x] = block_bad;
    results[2 * blockIdx.x + 1] = block_first;
  }
}

#define AUTOTUNE_COMPARE(NAME, PRED_INIT)                                                                  \
  extern "C" __global__ void NAME(const void* got, const void* want, const void* tol, u64 count,       \
                                  u64 chunk, unsigned es, double relative, double absolute, u64* results) { \
    (void)tol; (void)es; (void)relative; (void)absolute;                                                  \
    compare_chunk(PRED_INIT, count, chunk, results);                                                      \
  }

AUTOTUNE_COMPARE(autotune_compare_bits1,
                 (BitsEqual<unsigned char>{(const unsigned char*)got, (const unsigned char*)want}))
AUTOTUNE_COMPARE(autotune_compare_bits2,
                 (BitsEqual<unsigned short>{(const unsigned short*)got, (const unsigned short*)want}))
AUTOTUNE_COMPARE(autotune_compare_bits4, (BitsEqual<unsigned>{(const unsigned*)got, (const unsigned*)want}))
AUTOTUNE_COMPARE(autotune_compare_bits8, (BitsEqual<u64>{(const u64*)got, (const u64*)want}))
AUTOTUNE_COMPARE(autotune_compare_bytes, (BytesEqual{(const unsigned char*)got, (const unsigned char*)want, es}))
AUTOTUNE_COMPARE(autotune_compare_feq4, (FloatEqual<float>{(const float*)got, (const float*)want}))
AUTOTUNE_COMPARE(autotune_compare_feq8, (FloatEqual<double>{(const double*)got, (const double*)want}))
AUTOTUNE_COMPARE(autotune_compare_abs4,
                 (AbsTolerance<float, double>{(const float*)got, (const double*)want, (const double*)tol}))
AUTOTUNE_COMPARE(autotune_compare_abs4f,
                 (AbsTolerance<float, float>{(const float*)got, (const float*)want, (const float*)tol}))
AUTOTUNE_COMPARE(autotune_compare_abs8,
                 (AbsTolerance<double, double>{(const double*)got, (const double*)want, (const double*)tol}))
AUTOTUNE_COMPARE(autotune_compare_rel4,
                 (RelTolerance<float>{(const float*)got, (const float*)want, relative, absolute}))
AUTOTUNE_COMPARE(autotune_compare_rel8,
                 (RelTolerance<double>{(const double*)got, (const double*)want, relative, absolute}))
