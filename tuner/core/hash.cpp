#include "tuner/core/hash.hpp"

#include <cstdio>
#include <cstring>

namespace autotune {

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

namespace {

constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t kPrime3 = 0x165667B19E3779F9ull;

std::uint64_t rotl(std::uint64_t v, int r) { return (v << r) | (v >> (64 - r)); }

std::uint64_t word_at(const unsigned char* p) {
  std::uint64_t w = 0;
  std::memcpy(&w, p, sizeof w);
  return w;
}

/// One word into a lane: add, rotate, multiply.
std::uint64_t absorb(std::uint64_t lane, std::uint64_t word) { return rotl(lane + word * kPrime2, 31) * kPrime1; }

/// The final avalanche: every input bit reaches every output bit.
std::uint64_t avalanche(std::uint64_t h) {
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

}  // namespace

std::uint64_t bulk_hash64(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t lane[4] = {kPrime1 + kPrime2, kPrime2, 0, ~kPrime1};
  std::size_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    for (std::size_t k = 0; k < 4; ++k) lane[k] = absorb(lane[k], word_at(p + i + 8 * k));
  std::uint64_t h = rotl(lane[0], 1) + rotl(lane[1], 7) + rotl(lane[2], 12) + rotl(lane[3], 18);
  for (; i + 8 <= bytes; i += 8) h = absorb(h, word_at(p + i));
  for (; i < bytes; ++i) h = rotl(h ^ (p[i] * kPrime3), 11) * kPrime1;
  return avalanche(h ^ static_cast<std::uint64_t>(bytes));
}

}  // namespace autotune
