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

// Comparison kernels of the user (verification.compare), one launch per verified run: add the number of
// mismatching elements to result[0], lower result[1] to the first mismatching index (grid-stride loop).
// within_half: |got - expected| <= 0.5 (PLANT's +1 fails, NUDGE's relative 1e-6 passes).
extern "C" __global__ void within_half(const float* got, const float* expected, unsigned long long count,
                                       unsigned long long* result) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    if (!(fabsf(got[i] - expected[i]) <= 0.5f)) {
      atomicAdd(result, 1ull);
      atomicMin(result + 1, i);
    }
  }
}

// every_element_differs: a C++ name (not extern "C"), found in the module by its demangled name; rejects all.
__global__ void every_element_differs(const float*, const float*, unsigned long long count,
                                      unsigned long long* result) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    atomicAdd(result, 1ull);
    atomicMin(result + 1, i);
  }
}
