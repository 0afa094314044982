// Test kernel of filed.tune.json and filed_expected.tune.json: y[i] = x[i] * scale + bias[i % 16], with x, bias
// and scale read from files (make_files.py). VARIANT 1 is planted wrong: it drops the bias of every 97th element,
// so that the default configuration (VARIANT 0) as the reference, or the expected values of y_expected.npy, catch
// it. The rounding is explicit (no fused multiply-add) so that the file's values, computed on the host, are exact.
#ifndef BLOCK_SIZE
#ifdef AUTOTUNE_STRICT
#error "BLOCK_SIZE not defined"
#endif
#define BLOCK_SIZE 128
#endif
#ifndef VARIANT
#ifdef AUTOTUNE_STRICT
#error "VARIANT not defined"
#endif
#define VARIANT 0
#endif

extern "C" __global__ void filed(const float* x, const int* bias, float* y, float scale, int n) {
  const int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
  if (i >= n) return;
  const float b = (VARIANT == 1 && i % 97 == 5) ? 0.0f : static_cast<float>(bias[i % 16]);
  y[i] = __fadd_rn(__fmul_rn(x[i], scale), b);
}
