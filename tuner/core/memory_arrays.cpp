#include "tuner/core/memory_arrays.hpp"

#include <map>
#include <mutex>
#include <set>

#include "tuner/core/error.hpp"
#include "tuner/core/keys.hpp"

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
