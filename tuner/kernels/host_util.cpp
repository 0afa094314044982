#include "tuner/kernels/host_util.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tuner/core/error.hpp"
#include "tuner/core/parallel.hpp"

namespace autotune::kernels {

namespace {

/// An integer in [lo, hi] (lo <= hi) from one rng.uniform() scaled to the range.
std::int64_t scaled_int(Random& rng, std::int64_t lo, std::int64_t hi) {
  const double span = static_cast<double>(hi) - static_cast<double>(lo) + 1.0;
  auto k = static_cast<std::int64_t>(std::floor(rng.uniform() * span));
  if (k > hi - lo) k = hi - lo;  // guard against rounding of span near 2^53
  return lo + k;
}

}  // namespace

std::int64_t uniform_nonzero_int(Random& rng, std::int64_t lo, std::int64_t hi) {
  if (lo > 0 || hi < 0) return scaled_int(rng, lo, hi);
  // Draw from [lo, hi - 1] and shift the non-negative part up by one: 0 is skipped, others stay uniform.
  const std::int64_t v = scaled_int(rng, lo, hi - 1);
  return v + static_cast<std::int64_t>(v >= 0);  // no branch: the sign is random, a branch would mispredict
}

void parallel_chunks(std::size_t count, const std::function<void(std::size_t, std::size_t, std::size_t)>& fn) {
  const std::size_t chunks = (count + kChunkElements - 1) / kChunkElements;
  parallel_for(chunks, [&](std::size_t c) { fn(c, c * kChunkElements, std::min(count, (c + 1) * kChunkElements)); });
}

namespace {
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

std::vector<unsigned char> host_bytes(std::size_t bytes) {
  std::vector<unsigned char> v;
  if (bytes >= kHugePagesFrom) {
    v.reserve(bytes);  // allocated, not yet touched
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
    const std::uintptr_t first = (begin + page - 1) / page * page, last = (begin + bytes) / page * page;
    // Advice only: where transparent huge pages are off (or the call fails), the buffer has ordinary pages.
    if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
  v.resize(bytes);
  return v;
}

void for_each_chunk(std::size_t count, std::uint64_t seed,
                    const std::function<void(Random&, std::size_t, std::size_t)>& fn) {
  const std::uint64_t base = splitmix64(seed);
  parallel_chunks(count, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
    Random rng(splitmix64(base ^ splitmix64(static_cast<std::uint64_t>(chunk))));
    fn(rng, begin, end);
  });
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

std::string element_text(const std::vector<unsigned char>& bytes, std::size_t i, std::size_t size, bool floating) {
  if (!floating) return std::to_string(load_element<std::int32_t>(bytes, i));
  return format_number(size == 4 ? static_cast<double>(load_element<float>(bytes, i)) : load_element<double>(bytes, i));
}

double signed_input_value(Random& rng, bool sum, int bits) {
  const std::uint64_t r = rng.bits();
  // The sign without a branch: it is random, so a branch mispredicts half the time (on the development machine
  // 16 ns per element with it, 10 ns without; the inputs of a 2^28 problem are made on every tune).
  const double sign = 1.0 - 2.0 * static_cast<double>(r & 1);
  if (sum) return sign * static_cast<double>(32 + (r >> 59)) / 64.0;
  return sign * static_cast<double>((r >> (64 - bits)) + 1) * std::ldexp(1.0, -bits);
}

DrawRecipe signed_input_draw(const std::string& name, std::uint64_t seed, std::size_t count, DrawRecipe::Kind kind,
                             bool sum, std::int64_t int_range) {
  DrawRecipe r;
  r.name = name;
  r.seed = seed;
  r.count = static_cast<std::uint64_t>(count);
  r.chunk = kChunkElements;
  r.sum = sum;
  r.kind = kind;
  if (kind == DrawRecipe::Kind::int32_nonzero) {
    r.lo = -int_range;
    r.hi = int_range;
  }
  return r;
}

void check_workloads(const TuningSpec& spec, const std::function<void(const Workload&)>& check) {
  for (std::size_t i = 0; i < spec.workloads.size(); ++i) {
    try {
      check(spec.workloads[i]);
    } catch (const UsageError& e) {
      throw SpecError("/workloads/" + std::to_string(i), e.what());
    }
  }
}

TileShape tile_shape(const std::string& family, const Config& c, std::int64_t max_variant,
                     const std::string& variants) {
  TileShape t;
  t.variant = c.at("VARIANT");
  t.block = c.at("BLOCK_SIZE");
  t.items = c.at("ITEMS_PER_THREAD");
  if (t.variant < 0 || t.variant > max_variant) throw UsageError(family + ": VARIANT must be " + variants);
  if (t.block < 32 || t.block > 1024 || t.block % 32 != 0 || t.items < 1)
    throw UsageError(family + ": BLOCK_SIZE must be a multiple of 32 in [32, 1024] and ITEMS_PER_THREAD >= 1");
  t.tile = t.block * t.items;
  return t;
}

ScanLevels::ScanLevels(std::int64_t count, std::int64_t tile, std::size_t first, std::size_t element_bytes) : m{count} {
  auto tiles_of = [tile](std::int64_t values) { return (values + tile - 1) / tile; };
  while (tiles_of(m.back()) > 1) m.push_back(tiles_of(m.back()));
  const std::size_t levels = m.size();
  raw.assign(levels + 1, 0);
  scanned.assign(levels, 0);
  for (std::size_t l = first; l <= levels; ++l) {
    const auto values = static_cast<std::size_t>(l < levels ? m[l] : 1);
    raw[l] = bytes;
    bytes = align_up(bytes + values * element_bytes, kRegionAlign);
    if (l < levels) {
      scanned[l] = bytes;
      bytes = align_up(bytes + values * element_bytes, kRegionAlign);
    }
  }
}

LaunchStep kernel_step_1d(const std::string& family, const std::string& kernel, std::int64_t grid, std::int64_t block) {
  if (grid < 1 || grid > 2147483647)
    throw UsageError(family + ": " + kernel + " would need " + std::to_string(grid) + " blocks");
  LaunchStep s;
  s.kind = LaunchStep::Kind::kernel;
  s.kernel = kernel;
  s.grid = {static_cast<std::uint32_t>(grid), 1, 1};
  s.block = {static_cast<std::uint32_t>(block), 1, 1};
  return s;
}

}  // namespace autotune::kernels
