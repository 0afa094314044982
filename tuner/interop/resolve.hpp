// Kernels by name for every command: built-in kernels, .json spec files, and the spec stubs that imports stored
// in a database (so that an imported Kernel Tuner kernel is addressable by its name).
#pragma once
#include <string>
#include <vector>

#include "tuner/core/spec.hpp"

namespace autotune::interop {

/// The spec of `name_or_path`: a built-in kernel, a .json file, or a stub stored in the first of `databases`
/// that has one of that name (files that do not exist are skipped, never created). Throws UsageError naming
/// the known kernels, SpecError, DbError for a database that cannot be read.
TuningSpec resolve_kernel(const std::string& name_or_path, const std::vector<std::string>& databases);

}  // namespace autotune::interop
