#ifndef BLOCK_SIZE
#define BLOCK_SIZE 128
#endif
extern "C" __global__ void tiny_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
extern "C" __global__ void tiny_reference(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
