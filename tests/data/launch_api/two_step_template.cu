// The two-step launch-API kernel (two_step.cu) with templated entry points: the spec names them as C++ name
// expressions ("stage1<BLOCK_SIZE, ITEMS>"), so a configuration's binary holds only what NVRTC instantiates for
// it, and the launch API must compile and look up the binary exactly as the tuner does
// (tests/nvrtc/test_launch_api.cpp, tests/gpu/test_launch_api_gpu.cpp). The parameters reach the kernels as
// template arguments only, so the source needs no macro defaults.
//   stage1: tmp[i] = a * x[i] + bias[i % 4]      stage2: out[i] = tmp[i] + shift
__constant__ int bias[4];

template <int Block, int Items>
__global__ void stage1(const int* x, int* tmp, int* out, int a, int shift, int n) {
  const int base = (blockIdx.x * Block + threadIdx.x) * Items;
  for (int k = 0; k < Items; ++k) {
    const int i = base + k;
    if (i < n) tmp[i] = a * x[i] + bias[i % 4];
  }
}

template <int Block, int Items>
__global__ void stage2(const int* x, int* tmp, int* out, int a, int shift, int n) {
  const int base = (blockIdx.x * Block + threadIdx.x) * Items;
  for (int k = 0; k < Items; ++k) {
    const int i = base + k;
    if (i < n) out[i] = tmp[i] + shift;
  }
}
