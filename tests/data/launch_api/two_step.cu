// Test kernel of the launch API (tests/nvrtc/test_launch_api.cpp, tests/gpu/test_launch_api_gpu.cpp): two launch
// steps over the same arguments and a __constant__ table, integers only (exact on the host):
//   stage1: tmp[i] = a * x[i] + bias[i % 4]      stage2: out[i] = tmp[i] + shift
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif

__constant__ int bias[4];

extern "C" __global__ void stage1(const int* x, int* tmp, int* out, int a, int shift, int n) {
  const int base = (blockIdx.x * BLOCK_SIZE + threadIdx.x) * ITEMS;
  for (int k = 0; k < ITEMS; ++k) {
    const int i = base + k;
    if (i < n) tmp[i] = a * x[i] + bias[i % 4];
  }
}

extern "C" __global__ void stage2(const int* x, int* tmp, int* out, int a, int shift, int n) {
  const int base = (blockIdx.x * BLOCK_SIZE + threadIdx.x) * ITEMS;
  for (int k = 0; k < ITEMS; ++k) {
    const int i = base + k;
    if (i < n) out[i] = tmp[i] + shift;
  }
}
