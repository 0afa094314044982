// Point in polygon (crossing number) with the polygon in constant memory, as BAT's and Kernel Tuner's pnpoly
// kernels keep it: a test of constant-memory arguments, a templated (C++-named) entry point, a reference kernel
// that is not extern "C", and the resource pre-check (BLOCK_SIZE 2048 cannot launch).
#ifndef USE_CMEM
#ifdef AUTOTUNE_STRICT
#error "USE_CMEM not defined"
#endif
#define USE_CMEM 1
#endif

#define NVERT 16

__constant__ float2 d_vertices[NVERT];

__device__ int crossing_number(float2 p, bool from_constant) {
  int c = 0;
  for (int k = 0, j = NVERT - 1; k < NVERT; j = k++) {
    const float2 vk = from_constant ? d_vertices[k] : make_float2(0.0f, 0.0f);
    const float2 vj = from_constant ? d_vertices[j] : make_float2(0.0f, 0.0f);
    if (((vk.y > p.y) != (vj.y > p.y)) && (p.x < (vj.x - vk.x) * (p.y - vk.y) / (vj.y - vk.y) + vk.x)) c = !c;
  }
  return c;
}

// USE_CMEM 0 plants a wrong result: the polygon is not read (every point is outside).
template <int BLOCK>
__global__ void pnpoly(int* bitmap, const float2* points, int n) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) bitmap[i] = crossing_number(points[i], USE_CMEM != 0);
}

__global__ void pnpoly_reference(int* bitmap, const float2* points, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) bitmap[i] = crossing_number(points[i], true);
}
