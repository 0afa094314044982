#include "tuner/kernels/host_util.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace autotune::kernels {

double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);  // 2^-53
}

std::int64_t uniform_int(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  const double span = static_cast<double>(hi) - static_cast<double>(lo) + 1.0;
  auto k = static_cast<std::int64_t>(std::floor(uniform01(rng) * span));
  if (k > hi - lo) k = hi - lo;  // guard against rounding of span near 2^53
  return lo + k;
}

std::int64_t uniform_nonzero_int(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  if (lo > 0 || hi < 0) return uniform_int(rng, lo, hi);
  // Draw from [lo, hi - 1] and shift the non-negative part up by one: 0 is skipped, others stay uniform.
  std::int64_t v = uniform_int(rng, lo, hi - 1);
  return v >= 0 ? v + 1 : v;
}

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string hex_bytes(const std::vector<unsigned char>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

}  // namespace autotune::kernels
