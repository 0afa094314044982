// A GEMM-shaped user kernel for space-construction tests and benchmarks (tests/cpu/test_space.cpp,
// bench/space_construction.sh): its spec has the parameter and constraint structure of a tiled matrix multiply.
// The body is a plain C = A * B with one thread per output element; the parameters only shape the launch.
#ifndef MWG
#define MWG 64
#endif
#ifndef NWG
#define NWG 64
#endif
#ifndef KWG
#define KWG 16
#endif
#ifndef MDIMC
#define MDIMC 16
#endif
#ifndef NDIMC
#define NDIMC 16
#endif
#ifndef VWM
#define VWM 1
#endif
#ifndef VWN
#define VWN 1
#endif
#ifndef STAGES
#define STAGES 1
#endif
#ifndef SA
#define SA 0
#endif
#ifndef SB
#define SB 0
#endif
extern "C" __global__ void gemm_like(const float* a, const float* b, float* c, int n) {
  int row = blockIdx.y * MWG + threadIdx.y;
  int col = blockIdx.x * NWG + threadIdx.x;
  for (int r = row; r < min(n, (int)(blockIdx.y + 1) * MWG); r += MDIMC)
    for (int q = col; q < min(n, (int)(blockIdx.x + 1) * NWG); q += NDIMC) {
      float s = 0;
      for (int k = 0; k < n; ++k) s += a[r * n + k] * b[k * n + q];
      c[r * n + q] = s + 0 * (KWG + VWM + VWN + STAGES + SA + SB);
    }
}
extern "C" __global__ void gemm_like_reference(const float* a, const float* b, float* c, int n) {
  int r = blockIdx.y * blockDim.y + threadIdx.y, q = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n || q >= n) return;
  float s = 0;
  for (int k = 0; k < n; ++k) s += a[r * n + k] * b[k * n + q];
  c[r * n + q] = s;
}
