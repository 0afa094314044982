// Small host-side helpers shared by the kernel-family adapters: seeded input values drawn from the project's
// generator (tuner/core/random.hpp) chunk by chunk, typed access to byte buffers, and number formatting for
// verification messages. All functions are pure or act only on their arguments; thread-safe as long as each
// thread uses its own generator.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tuner/core/draw.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/plan.hpp"
#include "tuner/core/random.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::kernels {

/// Bytes between the regions of a scratch buffer: keeps VEC-wide accesses of any element type aligned.
constexpr std::size_t kRegionAlign = 256;

/// v rounded up to a multiple of a (a > 0).
constexpr std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

/// The launch shape of the tiled families (scan, compaction): VARIANT, BLOCK_SIZE and ITEMS_PER_THREAD of a
/// configuration and the tile of BLOCK_SIZE * ITEMS_PER_THREAD values a block works on.
struct TileShape {
  std::int64_t variant = 0;
  std::int64_t block = 0;
  std::int64_t items = 0;
  std::int64_t tile = 0;

  /// Tiles that cover `values` values: ceil(values / tile).
  std::int64_t tiles_of(std::int64_t values) const { return (values + tile - 1) / tile; }
};

/// The TileShape of c. UsageError "<family>: VARIANT must be <variants>" when VARIANT is not in [0, max_variant],
/// and "<family>: BLOCK_SIZE must be a multiple of 32 in [32, 1024] and ITEMS_PER_THREAD >= 1".
TileShape tile_shape(const std::string& family, const Config& c, std::int64_t max_variant, const std::string& variants);

/// The levels of a hierarchical scan of `count` values in tiles of `tile` values, and the layout of its scratch
/// buffer. Level l scans m[l] values in ceil(m[l] / tile) tiles: m[0] = count, m[l + 1] = ceil(m[l] / tile), down
/// to a level of one tile. From level `first` on, the buffer holds raw[l] (the m[l] values that level l scans)
/// and, for l < levels, scanned[l] (their exclusive scan), plus raw[levels] (one value: the total of the last
/// level); regions of `element_bytes` per value, each starting at a multiple of kRegionAlign. Offsets of the
/// levels below `first` stay 0.
struct ScanLevels {
  ScanLevels(std::int64_t count, std::int64_t tile, std::size_t first, std::size_t element_bytes);

  std::vector<std::int64_t> m;       // values per level
  std::vector<std::size_t> raw;      // byte offsets, levels + 1 of them
  std::vector<std::size_t> scanned;  // byte offsets, one per level
  std::size_t bytes = 0;             // the buffer's size
};

/// Throws SpecError at /parameters when the spec lacks one of `names` (C strings): "the <family> family needs
/// parameter <name>".
template <typename Names>
void require_params(const TuningSpec& spec, const std::string& family, const Names& names) {
  for (const char* name : names)
    if (spec.find_param(name) == nullptr)
      throw SpecError("/parameters", "the " + family + " family needs parameter " + name);
}

/// Calls check(w) for every workload w of the spec; a UsageError it throws for workload i becomes a SpecError at
/// /workloads/<i> with the same message.
void check_workloads(const TuningSpec& spec, const std::function<void(const Workload&)>& check);

/// An integer input value in [lo, hi] without 0 (requires lo < hi or lo == hi != 0), from one rng.uniform()
/// scaled to the range: off uniform by less than 2^-53 * (hi - lo + 1) (Random::below is the exact draw), kept
/// so that a seed gives the inputs it has always given.
std::int64_t uniform_nonzero_int(Random& rng, std::int64_t lo, std::int64_t hi);

/// Elements per chunk of parallel_chunks and for_each_chunk: the unit of work and of seeding.
constexpr std::size_t kChunkElements = std::size_t{1} << 16;

/// Calls fn(chunk, begin, end) for the chunks [c * kChunkElements, min(count, (c + 1) * kChunkElements)) of
/// [0, count), spread over the cores (inline when there is one chunk). Every chunk runs exactly once; the
/// first exception thrown by fn is rethrown after all threads have stopped.
void parallel_chunks(std::size_t count, const std::function<void(std::size_t, std::size_t, std::size_t)>& fn);

/// parallel_chunks with a generator per chunk, seeded from (seed, chunk) by splitmix64: what fn draws depends
/// only on seed and the chunk, never on the number of threads. Inputs of the kernel families are made
/// this way, so that 2^26 or 2^28 elements take a fraction of a second on a many-core machine.
void for_each_chunk(std::size_t count, std::uint64_t seed,
                    const std::function<void(Random&, std::size_t, std::size_t)>& fn);

/// Size from which host_bytes() asks for transparent huge pages.
constexpr std::size_t kHugePagesFrom = std::size_t{4} << 20;

/// A zero-filled buffer of `bytes` bytes for inputs and references. From kHugePagesFrom (4 MB) on, its memory is marked
/// for transparent huge pages (madvise MADV_HUGEPAGE, before the first touch) where the kernel offers them: a 1 GB
/// buffer then takes about 500 page faults instead of 262,144, which on a freshly started virtual machine are
/// most of the time it takes to make the inputs and the reference of a 2^28-element problem (docs/performance.md
/// "Scale-out"). Elsewhere the same buffer with ordinary pages.
std::vector<unsigned char> host_bytes(std::size_t bytes);

/// Element i of a buffer holding T values (memcpy, no alignment needed). No bounds check.
template <typename T>
T load_element(const std::vector<unsigned char>& bytes, std::size_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

/// Writes element i of a buffer holding T values. No bounds check.
template <typename T>
void store_element(std::vector<unsigned char>& bytes, std::size_t i, const T& v) {
  std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
}

/// Bytes of one value.
template <typename T>
std::vector<unsigned char> to_bytes(const T& v) {
  std::vector<unsigned char> out(sizeof(T));
  std::memcpy(out.data(), &v, sizeof(T));
  return out;
}

/// Shortest round-tripping decimal text of a double ("%.17g" trimmed where exact), e.g. "0.5", "-inf", "nan".
std::string format_number(double v);

/// Hex dump of bytes, e.g. "0000803f".
std::string hex_bytes(const std::vector<unsigned char>& bytes);

/// Element i of a buffer of 4- or 8-byte numbers as text: an int32 (size 4, not floating), a float or a double
/// (format_number).
std::string element_text(const std::vector<unsigned char>& bytes, std::size_t i, std::size_t size, bool floating);

/// A signed floating input value of a kernel family, from one draw. Sums: +-m/64 with m uniform in [32, 63], so
/// |x| in [0.5, 0.984] and every partial sum is a multiple of 2^-6: exact in float32 while |partial| < 2^18
/// (random signs keep partial sums near sqrt(n)) and in float64 always, which makes an n-scaled tolerance tight
/// enough to catch one dropped element. Otherwise: magnitude uniform in (0, 1] at `bits` bits of precision (24
/// for float, 53 for double), random sign.
double signed_input_value(Random& rng, bool sum, int bits);

/// The draw recipe (tuner/core/draw.hpp) of an input `name` of `count` elements that make_inputs() fills chunk by
/// chunk (for_each_chunk): int32_nonzero from uniform_nonzero_int(rng, -int_range, int_range), the float kinds from
/// signed_input_value(rng, sum, 24 or 53).
DrawRecipe signed_input_draw(const std::string& name, std::uint64_t seed, std::size_t count, DrawRecipe::Kind kind,
                             bool sum, std::int64_t int_range);

/// A one-dimensional kernel launch step of `family`'s plan; UsageError naming the kernel when grid is not in
/// [1, 2^31 - 1].
LaunchStep kernel_step_1d(const std::string& family, const std::string& kernel, std::int64_t grid, std::int64_t block);

}  // namespace autotune::kernels
