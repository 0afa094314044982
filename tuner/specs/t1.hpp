// Kernel Tuner's T1 input format (kernel_tuner/schema/T1/1.0.0/input-schema.json, also read by KTT and benchmark
// suites) as a tuning spec: a T1 file is turned into the project's native spec (docs/spec-format.md "T1 files"),
// which `autotune tune FILE.json` and every other command take directly, and `import --format t1 --write-spec`
// writes out. Values, Conditions and the size expressions are Python (tuner/core/expr/pyexpr.hpp), evaluated as Kernel
// Tuner evaluates them. What a CUDA tuner cannot honour is a SpecError naming the field's JSON pointer. KTT's tuning
// scripts, its flavour of T1, are read too: its keys are used or noted (docs/spec-format.md "KTT's flavour").
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace autotune::specs {

/// Whether a parsed JSON document is a T1 file (an object with "ConfigurationSpace" and "KernelSpecification").
bool is_t1(const nlohmann::json& doc);

struct T1Conversion {
  nlohmann::json spec;             // the native spec (family "user", "expressions": "python")
  std::vector<std::string> notes;  // fields read but not used, with their pointers, for the user
};

/// The native spec of T1 document `t1` read from `path` (the kernel file and data files resolve as Kernel Tuner
/// resolves them: as given, else next to the T1 file, else one folder up; paths in the spec are relative to the
/// T1 file's folder). Throws SpecError with the JSON pointer of a field that is malformed or cannot be honoured
/// (another language than CUDA, Script or HDF5 fills, OpenCL local memory arguments, ...).
T1Conversion t1_to_spec(const nlohmann::json& t1, const std::string& path);

/// The native spec (JSON text) of the T1 file at `path`, with the conversion's notes; nullopt when `path` is not a
/// T1 file (not readable JSON, or another document). Throws SpecError naming the file for a T1 file that cannot be
/// converted.
std::optional<std::string> t1_spec_text(const std::string& path, std::vector<std::string>* notes = nullptr);

}  // namespace autotune::specs
