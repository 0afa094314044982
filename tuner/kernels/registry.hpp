// Built-in kernel families and the adapter factory.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tuner/core/adapter.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::kernels {

/// Names of the built-in specs (from kernels_src/*/*.tune.json), sorted.
std::vector<std::string> builtin_names();

/// Loads a built-in spec with its embedded source. Throws UsageError naming the known kernels.
TuningSpec builtin_spec(const std::string& name);

/// A built-in name or a path to a *.json spec file.
TuningSpec load_spec(const std::string& name_or_path);

/// Host adapter for spec.family ("reduction", "user", ...). Throws UsageError for an unknown family.
std::shared_ptr<const KernelAdapter> make_adapter(const TuningSpec& spec);

// Factories of the individual families (one source file each).
std::shared_ptr<const KernelAdapter> make_reduction_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_user_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_scan_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_transpose_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_compaction_adapter(const TuningSpec& spec);

}  // namespace autotune::kernels
