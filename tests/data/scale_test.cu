// Test kernel for the CUDA backend tests: out[i] = 2 * in[i] over n floats.
// VARIANT selects deliberate failures: 0 correct, 1 writes nothing, 2 writes 4 TiB past the output
// (illegal address), 3 does not compile, 4 correct through dynamic shared memory (blockDim.x floats at
// least; the launch may ask for more to exercise the > 48 KB opt-in), 5 never finishes (spins), 6 as 4 with
// 16 KB of static shared memory besides (the two add up towards the 48 KB opt-in line).
#ifndef BLOCK_SIZE
#ifdef AUTOTUNE_STRICT
#error "BLOCK_SIZE is not defined"
#endif
#define BLOCK_SIZE 256
#endif
#ifndef VARIANT
#ifdef AUTOTUNE_STRICT
#error "VARIANT is not defined"
#endif
#define VARIANT 0
#endif

extern "C" __global__ void scale(const float* __restrict__ in, float* __restrict__ out, unsigned int n) {
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
#if VARIANT == 0
  if (i < n) out[i] = 2.0f * in[i];
#elif VARIANT == 1
  (void)in; (void)out; (void)n; (void)i;
#elif VARIANT == 2
  if (i < n) out[i + (1ull << 40)] = 2.0f * in[i];
#elif VARIANT == 3
  this is not valid C++;
#elif VARIANT == 4
  extern __shared__ float staged[];
  staged[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = 2.0f * staged[threadIdx.x];
#elif VARIANT == 6
  extern __shared__ float staged[];
  __shared__ float fixed[4096];
  fixed[threadIdx.x] = 2.0f;
  staged[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = fixed[threadIdx.x] * staged[threadIdx.x];
#elif VARIANT == 5
  // The inputs are positive: this reads global memory forever (volatile: every read is kept).
  while (*(const volatile float*)in > 0.0f) {
  }
  if (i < n) out[i] = 2.0f * in[i];
#endif
}
