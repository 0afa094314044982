// Kernels by name for every command: specs::resolve_kernel (built-in kernels, .json spec files, T1 files) with the
// spec stubs that imports stored in databases, so that an imported Kernel Tuner kernel is addressable by its name.
#pragma once
#include <string>
#include <vector>

#include "tuner/core/spec.hpp"

namespace autotune::interop {

/// The spec of `name_or_path`: specs::resolve_kernel, with the stub stored in the first of `databases` that has
/// one of that name (files that do not exist are skipped, never created). Throws UsageError naming the known
/// kernels, SpecError, DbError for a database that cannot be read.
TuningSpec resolve_kernel(const std::string& name_or_path, const std::vector<std::string>& databases,
                          std::vector<std::string>* notes = nullptr);

}  // namespace autotune::interop
