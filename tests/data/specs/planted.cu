// A copy with planted errors, for the verification policies: PLANT=1 adds 1 to one element (index 12345),
// NUDGE=1 scales every element by 1 + 1e-6 (a relative error near float rounding).
#ifndef PLANT
#ifdef AUTOTUNE_STRICT
#error "PLANT not defined"
#endif
#define PLANT 0
#endif
#ifndef NUDGE
#ifdef AUTOTUNE_STRICT
#error "NUDGE not defined"
#endif
#define NUDGE 0
#endif

extern "C" __global__ void planted(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = NUDGE ? x[i] * 1.000001f : x[i];
  if (PLANT && i == 12345) v += 1.0f;
  y[i] = v;
}

extern "C" __global__ void planted_reference(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
