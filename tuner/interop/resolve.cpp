#include "tuner/interop/resolve.hpp"

#include <filesystem>
#include <optional>

#include "db/database.hpp"
#include "tuner/specs/specs.hpp"

namespace autotune::interop {

TuningSpec resolve_kernel(const std::string& name_or_path, const std::vector<std::string>& databases,
                          std::vector<std::string>* notes) {
  const specs::StoredSpecs stored = [&databases](const std::string& name) -> std::optional<std::string> {
    for (const std::string& path : databases) {
      std::error_code ec;
      if (path.empty() || !std::filesystem::is_regular_file(path, ec)) continue;
      auto db = db::Database::open(path, db::Database::Mode::read_only);
      if (auto k = db->kernel_spec(name)) return k->spec_json;
    }
    return std::nullopt;
  };
  return specs::resolve_kernel(name_or_path, stored, notes);
}

}  // namespace autotune::interop
