// A kernel whose time is set by a parameter: each thread runs 4096 x REPEAT dependent multiply-adds before it
// writes 2 x its input, so REPEAT = 8 is about eight times REPEAT = 1 and every configuration computes the same
// output. For the racing test (tests/gpu/test_session_gpu.cpp).
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 128
#endif
#ifndef REPEAT
#define REPEAT 1
#endif
extern "C" __global__ void spin_kernel(const float* x, float* y, int n) {
  const int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < 4096 * REPEAT; ++r) v = v * 0.999f + 0.001f;
  y[i] = 2.0f * x[i] + (v != v ? 1.0f : 0.0f);  // v is never NaN, but the compiler cannot drop the loop
}
extern "C" __global__ void spin_reference(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
