// The one random number generator: the search strategies' draws and the kernel families' seeded inputs.
// std::uniform_int_distribution and friends are implementation-defined, so the same seed could give
// different sequences with another standard library; every draw here derives from the raw output of
// std::mt19937_64 (whose sequence the standard fixes) with arithmetic of our own.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace autotune {

/// Seeded generator. Not thread-safe (one per strategy object, one per chunk of inputs).
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}

  /// The next raw 64-bit draw of std::mt19937_64.
  std::uint64_t bits() { return engine_(); }

  /// Uniform integer in [0, n); returns 0 for n <= 1. Unbiased (rejects the short last block).
  std::size_t below(std::size_t n) {
    if (n <= 1) return 0;
    const std::uint64_t m = static_cast<std::uint64_t>(n);
    const std::uint64_t threshold = (0 - m) % m;  // 2^64 mod m
    std::uint64_t x = engine_();
    while (x < threshold) x = engine_();
    return static_cast<std::size_t>(x % m);
  }

  /// Uniform real in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  /// Uniform real in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

  /// True with probability p.
  bool chance(double p) { return uniform() < p; }

  /// Standard normal (Box-Muller, no cached second value so the stream stays simple).
  double normal() {
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) {
      const std::size_t j = below(i);
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace autotune
