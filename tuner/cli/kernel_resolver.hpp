// Kernels by name for every sub-command: built-in kernels, .json spec files, and the spec stubs that imports
// stored in a database (so that an imported Kernel Tuner kernel is addressable by its name).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/kernels/registry.hpp"

namespace autotune::cli {

/// The spec of `name_or_path`: a built-in kernel, a .json file, or a stub stored in the first of `databases`
/// that has one of that name (files that do not exist are skipped, never created). Throws UsageError naming
/// the known kernels, SpecError, DbError for a database that cannot be read.
inline TuningSpec resolve_kernel(const std::string& name_or_path, const std::vector<std::string>& databases) {
  return kernels::load_spec(name_or_path, [&](const std::string& name) -> std::optional<std::string> {
    for (const std::string& path : databases) {
      std::error_code ec;
      if (path.empty() || !std::filesystem::is_regular_file(path, ec)) continue;
      auto db = db::Database::open(path, db::Database::Mode::read_only);
      if (auto k = db->kernel_spec(name)) return k->spec_json;
    }
    return std::nullopt;
  });
}

}  // namespace autotune::cli
