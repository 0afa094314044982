// Built-in kernel families and the adapter factory.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/adapter.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::kernels {

/// Names of the built-in specs (from kernels_src/*/*.tune.json), sorted.
std::vector<std::string> builtin_names();

/// Loads a built-in spec with its embedded source. Throws UsageError naming the known kernels.
TuningSpec builtin_spec(const std::string& name);

/// Spec stubs that imports stored (a database's kernel_specs table): the stub's JSON for a kernel name, or
/// nullopt. Keeps this module free of the database.
using StoredSpecs = std::function<std::optional<std::string>(const std::string& name)>;

/// A built-in name, a path to a *.json spec file, or (when `stored` is given) the name of a kernel whose spec
/// stub an import stored. Throws UsageError naming the known kernels, SpecError for a malformed spec.
TuningSpec load_spec(const std::string& name_or_path, const StoredSpecs& stored = {});

/// Whether `name` is a built-in kernel's name.
bool is_builtin(const std::string& name);

/// Host adapter for spec.family ("reduction", "user", ...). Throws UsageError for an unknown family and for a
/// spec stub (nothing to run until it is completed).
std::shared_ptr<const KernelAdapter> make_adapter(const TuningSpec& spec);

// Factories of the individual families (one source file each).
std::shared_ptr<const KernelAdapter> make_reduction_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_user_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_scan_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_transpose_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_compaction_adapter(const TuningSpec& spec);

}  // namespace autotune::kernels
