// A 2-D filter (convolution-like) kernel for the T1 tests: out[y][x] = sum of in[y+j][x+i] * filt[j][i] over a
// filter_width^2 window, the filter in __constant__ memory, each thread tile_y rows. `accumulate` (a string-valued
// parameter) names the accumulator's type, `threshold` (float-valued) picks one of two equal loop orders.
#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 4
#endif
#ifndef tile_y
#define tile_y 1
#endif
#ifndef filter_width
#define filter_width 5
#endif
#ifndef accumulate
#define accumulate float_acc
#endif
#ifndef threshold
#define threshold 1.0
#endif
#ifndef MAXW
#define MAXW 5
#endif
typedef float float_acc;
typedef double double_acc;

__constant__ float filt[MAXW * MAXW];

extern "C" __global__ void blur(float* out, const float* in, int nx, int ny) {
  const int x = blockIdx.x * block_size_x + threadIdx.x;
  const int y0 = (blockIdx.y * block_size_y + threadIdx.y) * tile_y;
  const int stride = nx + MAXW - 1;
  if (x >= nx) return;
  for (int t = 0; t < tile_y; ++t) {
    const int y = y0 + t;
    if (y >= ny) return;
    accumulate sum = 0;
    if (threshold > 0.75) {
      for (int j = 0; j < filter_width; ++j)
        for (int i = 0; i < filter_width; ++i) sum += in[(y + j) * stride + x + i] * filt[j * filter_width + i];
    } else {
      for (int k = 0; k < filter_width * filter_width; ++k)
        sum += in[(y + k / filter_width) * stride + x + k % filter_width] * filt[k];
    }
    out[y * nx + x] = (float)sum;
  }
}
