// Host side of the reduction family (kernels_src/reduction): pieces exposed for tests and documentation.
// The adapter itself is created by make_reduction_adapter() (tuner/kernels/registry.hpp). All functions here
// are pure and thread-safe.
#pragma once
#include <cstdint>
#include <string>

namespace autotune::kernels::reduction {

/// Layout-compatible with CUDA's float3 (12 bytes, no padding).
struct Float3 {
  float x = 0, y = 0, z = 0;
};

/// x*x + y*y + z*z in float, rounded after every operation in exactly this order (the device code uses
/// __fmul_rn/__fadd_rn so that no FMA contraction changes the result).
float maxmag_norm2(Float3 v);

/// CPU twin of the shipped "maxmag" custom operator: the point of larger maxmag_norm2(); ties go to the
/// larger x, then y, then z. A total order on distinct points, so the reduction is exact in any order.
Float3 maxmag_combine(Float3 a, Float3 b);

/// Allowed |result - exact| of a floating-point sum of n values with max |x_i| = max_abs:
/// factor * eps * sqrt(n) * max_abs (eps: machine epsilon of the element type). See docs/reduction.md.
double sum_tolerance(double factor, double eps, std::int64_t n, double max_abs);

/// Machine epsilon of "float32" (2^-23) or "float64" (2^-52); 0 for other dtypes.
double dtype_epsilon(const std::string& dtype);

}  // namespace autotune::kernels::reduction
