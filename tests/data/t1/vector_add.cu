// A stream-like kernel for the T1 tests: c = a + SCALE * b, each thread TILE elements a block apart.
#ifndef block_size_x
#define block_size_x 128
#endif
#ifndef tile
#define tile 1
#endif
#ifndef SCALE
#define SCALE 1
#endif
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  const int base = blockIdx.x * block_size_x * tile + threadIdx.x;
#pragma unroll
  for (int k = 0; k < tile; ++k) {
    const int i = base + k * block_size_x;
    if (i < n) c[i] = a[i] + SCALE * b[i];
  }
}
