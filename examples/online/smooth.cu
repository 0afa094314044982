// A 17-point moving average, out[i] = mean of in[i-8 .. i+8] (zero outside), with the launch shaped by the spec's
// parameters: threads per block, elements per thread, the inner loop unrolled or not, the window staged in shared
// memory or read from global memory (through the read-only cache or not). PLANT=1 plants a fault: the last element
// is never written, so those configurations compute a wrong result (which online tuning must never let through).
// Every configuration adds the same terms in the same order, so the correct ones agree bit for bit.
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef UNROLL
#define UNROLL 0
#endif
#ifndef USE_SHARED
#define USE_SHARED 0
#endif
#ifndef READ_ONLY
#define READ_ONLY 0
#endif
#ifndef PLANT
#define PLANT 0
#endif

#define RADIUS 8

__device__ __forceinline__ float load(const float* __restrict__ in, long long i, int n) {
  if (i < 0 || i >= n) return 0.0f;
#if READ_ONLY
  return __ldg(in + i);
#else
  return in[i];
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) smooth(const float* __restrict__ in, float* __restrict__ out,
                                                                int n) {
  const long long base = (long long)blockIdx.x * BLOCK_SIZE * ITEMS;
#if USE_SHARED
  __shared__ float tile[BLOCK_SIZE * ITEMS + 2 * RADIUS];
  for (int j = threadIdx.x; j < BLOCK_SIZE * ITEMS + 2 * RADIUS; j += BLOCK_SIZE)
    tile[j] = load(in, base + j - RADIUS, n);
  __syncthreads();
#endif
#if UNROLL
#pragma unroll
#else
#pragma unroll 1
#endif
  for (int it = 0; it < ITEMS; ++it) {
    const long long i = base + (long long)it * BLOCK_SIZE + threadIdx.x;
    if (i >= n) break;
#if PLANT
    if (i == n - 1) break;
#endif
    float s = 0.0f;
#pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k) {
#if USE_SHARED
      s += tile[i - base + RADIUS + k];
#else
      s += load(in, i + k, n);
#endif
    }
    out[i] = s * (1.0f / (2 * RADIUS + 1));
  }
}

extern "C" __global__ void smooth_reference(const float* in, float* out, int n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.0f;
  for (int k = -RADIUS; k <= RADIUS; ++k) s += (i + k >= 0 && i + k < n) ? in[i + k] : 0.0f;
  out[i] = s * (1.0f / (2 * RADIUS + 1));
}
