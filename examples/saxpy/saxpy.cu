// Example user kernel: y = a * x + y' (written to a separate output), tuned over block size and the
// number of elements each thread handles. Compiles alone at its defaults.
#ifndef BLOCK_SIZE
#ifdef AUTOTUNE_STRICT
#error "BLOCK_SIZE not defined"
#endif
#define BLOCK_SIZE 256
#endif
#ifndef ITEMS_PER_THREAD
#ifdef AUTOTUNE_STRICT
#error "ITEMS_PER_THREAD not defined"
#endif
#define ITEMS_PER_THREAD 1
#endif

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
saxpy(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out, float a, int n) {
  const long long base = (long long)blockIdx.x * BLOCK_SIZE * ITEMS_PER_THREAD + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS_PER_THREAD; ++k) {
    long long i = base + (long long)k * BLOCK_SIZE;
    if (i < n) out[i] = a * x[i] + y[i];
  }
}

// Reference: one element per thread, the obvious way.
extern "C" __global__ void saxpy_reference(const float* x, const float* y, float* out, float a, int n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
