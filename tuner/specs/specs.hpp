// Kernel specs by name, without any family adapter: the built-in specs embedded from kernels_src/, spec files
// (.json) with the kernel headers their sources include, and spec stubs stored by imports. Applications that only
// look configurations up link this (autotune_specs), never the adapters of tuner/kernels/.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/spec.hpp"

namespace autotune::specs {

/// Names of the built-in specs (from kernels_src/*/*.tune.json), sorted.
std::vector<std::string> builtin_names();

/// Loads a built-in spec with its embedded source and the embedded kernel headers it includes. Throws
/// UsageError naming the known kernels.
TuningSpec builtin_spec(const std::string& name);

/// Spec stubs that imports stored (a database's kernel_specs table): the stub's JSON for a kernel name, or
/// nullopt. Keeps this module free of the database.
using StoredSpecs = std::function<std::optional<std::string>(const std::string& name)>;

/// A built-in name, a path to a *.json spec file, or (when `stored` is given) the name of a kernel whose spec
/// stub an import stored. A spec file's source gets the headers it includes in quotes (#include "x.cuh") from
/// the source's folder, else from the folder above it (a tree laid out like kernels_src/), recursively; only a
/// header found in neither comes from the embedded kernel headers (e.g. "common/lookback.cuh"). Throws UsageError naming the known kernels, SpecError for a malformed spec or
/// an unreadable header.
TuningSpec load_spec(const std::string& name_or_path, const StoredSpecs& stored = {});

/// A spec from JSON text as if it were the file `spec_path` (sources, data files and headers resolved from its
/// folder): what load_spec does with a file, for documents converted from another format (T1 files). Throws
/// SpecError with spec_path in front.
TuningSpec load_spec_text(const std::string& text, const std::string& spec_path);

/// What every command and the launch API take as a kernel: load_spec(), except that a path (it has a '/' or ends
/// in .json) to a Kernel Tuner T1 file (t1.hpp) is converted first; `notes` (when given) receives what the
/// conversion read but did not use. Throws as load_spec does, SpecError naming the file for a T1 file that
/// cannot be converted.
TuningSpec resolve_kernel(const std::string& name_or_path, const StoredSpecs& stored = {},
                          std::vector<std::string>* notes = nullptr);

/// Whether `name` is a built-in kernel's name.
bool is_builtin(const std::string& name);

}  // namespace autotune::specs
