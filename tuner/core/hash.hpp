// Stable 64-bit content hash (FNV-1a); used for config, source and spec identity. Not cryptographic.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace autotune {

inline std::uint64_t fnv1a64(std::string_view data, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

/// 16 lowercase hex digits.
std::string hex64(std::uint64_t v);

/// hex64(fnv1a64(data)).
inline std::string content_hash(std::string_view data) { return hex64(fnv1a64(data)); }

}  // namespace autotune
