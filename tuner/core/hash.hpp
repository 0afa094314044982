// Stable 64-bit content hashes, not cryptographic: FNV-1a for config, source and spec identity; bulk_hash64 for
// naming large data by content (captures), at memory speed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace autotune {

/// FNV-1a's steps and prime; its default basis is not the published one (0xcbf29ce484222325) but a number one digit
/// shorter. It stays: databases and binary caches already hold identities made with it.
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

/// A 64-bit hash of a byte buffer that reads 8-byte words in four independent lanes (multiply-rotate mixing, the
/// length folded in at the end), several GB/s where FNV-1a manages a fraction of one. The same bytes give the same
/// value on every little-endian machine. Thread-safe.
std::uint64_t bulk_hash64(const void* data, std::size_t bytes);

}  // namespace autotune
