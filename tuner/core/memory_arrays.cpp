#include "tuner/core/memory_arrays.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "tuner/core/error.hpp"
#include "tuner/core/hash.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/parallel.hpp"

namespace autotune {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const MemoryArray>> arrays;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::string memory_path(const std::string& name) { return std::string(kMemoryPathPrefix) + name; }

bool is_memory_path(const std::string& path) {
  return path.compare(0, kMemoryPathPrefix.size(), kMemoryPathPrefix) == 0;
}

std::string memory_array_text(const std::string& path) {
  return "in-memory array '" + path.substr(std::min(path.size(), kMemoryPathPrefix.size())) + "'";
}

std::uint64_t memory_array_digest(const void* data, std::uint64_t bytes) {
  constexpr std::uint64_t kPiece = 64ull << 20;
  const std::size_t pieces = static_cast<std::size_t>(std::max<std::uint64_t>(1, (bytes + kPiece - 1) / kPiece));
  std::vector<std::uint64_t> hashes(pieces);
  const auto* base = static_cast<const unsigned char*>(data);
  auto hash_piece = [&](std::size_t i) {
    const std::uint64_t at = i * kPiece;
    hashes[i] = bulk_hash64(base + at, static_cast<std::size_t>(std::min(kPiece, bytes - at)));
  };
  parallel_for(pieces, hash_piece, 16);
  std::uint64_t h = fnv1a64(std::to_string(bytes));
  for (std::uint64_t v : hashes) h = fnv1a64(std::string_view(reinterpret_cast<const char*>(&v), sizeof v), h);
  return h;
}

void set_memory_arrays(std::vector<MemoryArray> arrays) {
  std::map<std::string, std::shared_ptr<const MemoryArray>> next;
  for (MemoryArray& a : arrays) {
    if (a.name.empty()) throw UsageError("an in-memory array needs a name");
    std::uint64_t es = 0;
    try {
      es = static_cast<std::uint64_t>(dtype_size(a.dtype));
    } catch (const UsageError& e) {
      throw UsageError("in-memory array '" + a.name + "': " + e.what());
    }
    if (a.bytes % es != 0)
      throw UsageError("in-memory array '" + a.name + "': " + std::to_string(a.bytes) +
                       " bytes are not a whole number of " + a.dtype + " elements");
    if (a.data == nullptr && a.bytes > 0) throw UsageError("in-memory array '" + a.name + "': no data");
    a.digest = memory_array_digest(a.data, a.bytes);
    const std::string name = a.name;
    if (!next.emplace(name, std::make_shared<const MemoryArray>(std::move(a))).second)
      throw UsageError("in-memory array '" + name + "' is given twice");
  }
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.arrays.swap(next);
}

std::shared_ptr<const MemoryArray> find_memory_array(const std::string& path, const std::string& what) {
  const std::string name = path.substr(std::min(path.size(), kMemoryPathPrefix.size()));
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.arrays.find(name);
  if (it != r.arrays.end()) return it->second;
  std::string known;
  for (const auto& [n, a] : r.arrays) known += (known.empty() ? "" : ", ") + n;
  throw UsageError(what + ": no in-memory array '" + name + "' is registered" +
                   (known.empty() ? std::string(" (none is)") : " (registered: " + known + ")"));
}

}  // namespace autotune
