// An in-place update, x[i] = x[i] * 0.5 + 1 (test of online tuning, tests/gpu/test_online_gpu.cpp): the kernel's
// output is its input. PLANT=1 plants a wrong result at element 0.
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef PLANT
#define PLANT 0
#endif
extern "C" __global__ void inplace(float* x, int n) {
  for (int it = 0; it < ITEMS; ++it) {
    const long long i = ((long long)blockIdx.x * ITEMS + it) * BLOCK_SIZE + threadIdx.x;
    if (i >= n) return;
    x[i] = x[i] * 0.5f + (PLANT && i == 0 ? 2.0f : 1.0f);
  }
}
extern "C" __global__ void inplace_reference(float* x, int n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}
