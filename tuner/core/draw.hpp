// Inputs drawn on the GPU. A DrawRecipe describes an input buffer whose values the CUDA backend's draw kernel
// (tuner/cuda/device_kernels.hpp) makes on the device exactly as a kernel family's make_inputs() makes them on
// the host: the same generator (std::mt19937_64), the same seed per chunk of elements and the same arithmetic.
// The kernel also sums each chunk up (DrawChunk), so that a family whose reference needs no more than these
// summaries (a reduction) gets its expected values without the inputs ever being on the host. Pure data and
// host arithmetic: no CUDA here.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace autotune {

struct DrawRecipe {
  enum class Kind : std::uint8_t {
    int32_nonzero = 0,   // int32 from uniform_nonzero_int(rng, lo, hi) (tuner/kernels/host_util.hpp)
    float32_signed = 1,  // float(signed_input_value(rng, sum, 24))
    float64_signed = 2,  // signed_input_value(rng, sum, 53)
  };
  std::string name;  // the input buffer's name (a name of make_inputs())
  Kind kind = Kind::float32_signed;
  std::uint64_t seed = 0;       // the seed for_each_chunk is given
  std::uint64_t count = 0;      // elements
  std::uint64_t chunk = 0;      // elements per chunk (kernels::kChunkElements): the unit of seeding
  std::int64_t lo = 0, hi = 0;  // int32_nonzero: the range
  bool sum = false;             // float kinds: signed_input_value's form for sums

  std::size_t element_bytes() const { return kind == Kind::float64_signed ? 8 : 4; }
  std::size_t bytes() const { return static_cast<std::size_t>(count) * element_bytes(); }
  std::uint64_t chunks() const { return chunk == 0 ? 0 : (count + chunk - 1) / chunk; }
};

/// Expected values of a prefix scan made on the GPU from an input already there (the CUDA backend's prefix tool
/// kernels, tuner/cuda/device_kernels.hpp), for families whose reference needs every value. The arithmetic is the
/// one the scan family's reference() uses on the host, step for step in IEEE double (no long double, no fused
/// multiply-add), so the two give the same bytes:
///   - chunks of `chunk` elements; each chunk's total; the chunks' exclusive prefix of totals (in chunk order) as
///     the carry into each chunk; then each element's prefix from its chunk's carry;
///   - float sums: a Neumaier-compensated (sum, comp) pair (neumaier_add; a total enters a carry as
///     neumaier_add(sum, comp, total.sum) then comp += total.comp) and a plain double sum of |x|; the value
///     sum + comp rounded to the element type, and the tolerance scale * prefix of |x| plus that rounding, rounded
///     up to the element type;
///   - int32 sums modulo 2^32, maxima (from INT32_MIN or -infinity) exact.
struct PrefixRecipe {
  enum class Elem : std::uint8_t { int32 = 0, float32 = 1, float64 = 2 };
  std::string input;      // the input buffer (drawn or uploaded)
  std::string values;     // the expected buffer of prefix values: element type, n elements
  std::string tolerance;  // float sums: the expected buffer of tolerances (element type); empty otherwise
  Elem elem = Elem::float32;
  bool max = false;        // prefix maxima instead of sums
  bool exclusive = false;  // element i's prefix leaves element i out
  double scale = 0;        // float sums: the tolerance per unit of the prefix of |x|
  std::uint64_t count = 0, chunk = 0;

  bool float_sum() const { return !max && elem != Elem::int32; }
  std::size_t element_bytes() const { return elem == Elem::float64 ? 8 : 4; }
  std::size_t bytes() const { return static_cast<std::size_t>(count) * element_bytes(); }
  std::uint64_t chunks() const { return chunk == 0 ? 0 : (count + chunk - 1) / chunk; }
  /// Bytes of the expected buffers it makes.
  std::size_t expected_bytes() const { return bytes() * (float_sum() ? 2 : 1); }
};

/// What the draw kernel reports of one chunk, over its elements in order. x is each element as a double.
struct DrawChunk {
  double sum = 0, comp = 0;   // Neumaier-compensated sum of x (neumaier_add), float kinds only (else 0)
  double max_abs = 0;         // max |x|, float kinds only (else 0)
  double min = 0, max = 0;    // min and max of x (exact: every element is a double exactly)
  std::uint64_t hash = 0;     // FNV-1a over the elements' bit patterns (4 or 8 bytes as one word each)
  std::uint32_t wrapped = 0;  // int32_nonzero: the sum modulo 2^32 (else 0)
};

/// Chunk summaries of drawn inputs, by input name.
using DrawSummaries = std::map<std::string, std::vector<DrawChunk>>;

/// Adds x to the compensated sum (sum, comp) as the CPU references of the reductions do (Neumaier): after any
/// sequence of additions, sum + comp is the sum with far less rounding than sum alone.
inline void neumaier_add(double& sum, double& comp, double x) {
  const double t = sum + x;
  comp += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
  sum = t;
}

/// FNV-1a over 64-bit words: the hashes of drawn inputs (DrawChunk::hash) and of expected values made on the device.
/// The tool kernels' source takes these constants (tuner/cuda/device_kernels.cpp).
constexpr std::uint64_t kDrawHashBasis = 0xcbf29ce484222325ull;
constexpr std::uint64_t kDrawHashPrime = 0x100000001b3ull;
constexpr std::uint64_t draw_hash_step(std::uint64_t hash, std::uint64_t word) {
  return (hash ^ word) * kDrawHashPrime;
}

/// The chunk summaries of a buffer holding the recipe's elements, computed on the host as the draw kernel
/// computes them on the device (tests compare the two; bytes.size() must be recipe.bytes()).
std::vector<DrawChunk> summarize_draw(const DrawRecipe& recipe, const std::vector<unsigned char>& bytes);

}  // namespace autotune
