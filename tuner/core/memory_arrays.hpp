// Arrays in the memory of the calling process that a spec reads where it could read a file: {"memory": NAME} as
// an input buffer's or constant's "init", a scalar's "value" or an output's "expected" (docs/spec-format.md
// "Inputs from memory"). A program that embeds the tuner (the Python package through the C interface,
// tuner/capi/) registers them before it tunes; the spec then names them by a path of the form "memory:NAME",
// which the array file readers (data_file.hpp) and the data tag (spec.hpp) read in place of a file. The data
// is the caller's: it is not copied here and must stay valid and unchanged while tuning reads it (its hash, the
// data tag's part, is taken when it is registered: data changed in place needs registering again).
// Thread-safe: the set is replaced as a whole, and readers hold the set they looked it up in.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace autotune {

/// A named array of the caller's: `bytes` bytes of little-endian elements of `dtype`, C order.
struct MemoryArray {
  std::string name;
  std::string dtype;  // a dtype name of dtype_size (keys.hpp): int8 ... uint64, float16, float32, float64, ...
  const void* data = nullptr;
  std::uint64_t bytes = 0;
  /// The content's hash, set by set_memory_arrays (memory_array_digest): what the data tag (spec.hpp) folds in
  /// for this array, so that tags of several gigabytes cost one pass over the bytes per registration.
  std::uint64_t digest = 0;
};

/// The path by which a spec's {"memory": NAME} is read: "memory:NAME".
inline constexpr std::string_view kMemoryPathPrefix = "memory:";
std::string memory_path(const std::string& name);
/// Whether a path names an in-memory array (starts with "memory:").
bool is_memory_path(const std::string& path);

/// A hash of `bytes` bytes at `data`: bulk_hash64 (hash.hpp) of each 64 MiB piece, the pieces hashed on up to 16
/// threads, their hashes combined in order with FNV-1a. Deterministic (the pieces do not depend on the threads).
std::uint64_t memory_array_digest(const void* data, std::uint64_t bytes);

/// Replaces the registered arrays by `arrays` (empty: none), each with its digest computed here. UsageError, leaving
/// the set unchanged, for an empty or repeated name, an unknown dtype, bytes that are not a whole number of elements,
/// or null data with bytes > 0.
void set_memory_arrays(std::vector<MemoryArray> arrays);

/// The array a "memory:NAME" path names. UsageError naming `what` (the reader, "argument 'x'") and the array when
/// none of that name is registered. The returned pointer keeps the registration it came from alive.
std::shared_ptr<const MemoryArray> find_memory_array(const std::string& path, const std::string& what);

/// "in-memory array 'NAME'", for messages.
std::string memory_array_text(const std::string& path);

}  // namespace autotune
