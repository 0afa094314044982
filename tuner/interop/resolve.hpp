// Kernels by name for every command: built-in kernels, .json spec files, and the spec stubs that imports stored
// in a database (so that an imported Kernel Tuner kernel is addressable by its name).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/spec.hpp"

namespace autotune::interop {

/// The spec of `name_or_path`: a built-in kernel, a .json file, or a stub stored in the first of `databases`
/// that has one of that name (files that do not exist are skipped, never created). Throws UsageError naming
/// the known kernels, SpecError, DbError for a database that cannot be read.
/// A .json file that is a Kernel Tuner T1 file (tuner/interop/t1.hpp) is converted; `notes` (when given) receives
/// what the conversion read but did not use.
TuningSpec resolve_kernel(const std::string& name_or_path, const std::vector<std::string>& databases,
                          std::vector<std::string>* notes = nullptr);

/// The native spec (JSON text) of a T1 file, with the conversion's notes; nullopt when `path` is not a T1 file (not
/// readable JSON, or another document). Throws SpecError naming the file for a T1 file that cannot be converted.
std::optional<std::string> t1_spec_text(const std::string& path, std::vector<std::string>* notes = nullptr);

}  // namespace autotune::interop
