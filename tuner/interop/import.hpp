// The import rules of `autotune import`: which spec a file's trials belong to (a built-in kernel, a spec file,
// a stored stub, or a new stub built from a Kernel Tuner cache), how its trials are read, and storing them so
// that a failed import leaves no database behind. The command line only prints the outcome (docs/interop.md).
#pragma once
#include <functional>
#include <string>

#include "tuner/core/request.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/interop/interop.hpp"

namespace autotune::interop {

/// Bytes one run moves for a spec's workload and problem (for GB/s), or an empty function when unknown (a stub,
/// a kernel without an adapter). Keeps this module free of the kernel adapters.
using BytesMovedOf =
    std::function<std::function<double(const Workload&, const ProblemKey&)>(const TuningSpec& spec)>;

struct ImportRequest {
  ImportFormat format = ImportFormat::kt_cache;
  std::string file;    // the file to read
  std::string kernel;  // --kernel: a built-in kernel, a spec file or a kernel imported before ("" = the file's)
  std::string as;      // --as: import a cache as a kernel of this name (a stub of its own)
  /// --spec: `kernel` is a T1 file, a native spec or a built-in kernel whose constraints the recorded configurations
  /// are checked against: those that violate them are reported (ImportReport::violating) and not imported.
  bool check_constraints = false;
  std::string device;  // --device: overrides the file's device name
  int cc = 0;          // --cc: compute capability of a device not in the database yet
  ProblemRequest problem;  // --n/--problem/--dtype/--op: override what the file says
  std::string db_path;     // the database the trials go to (created when missing)
  BytesMovedOf bytes_moved_of;
};

struct ImportOutcome {
  TuningSpec spec;          // the spec the trials were stored under
  ImportReport report;
  std::string source_hash;  // stored as the trials' source_hash
  std::string stub_json;    // a spec stub created or extended by this import ("" = none)
};

/// Reads, checks and stores request.file. Everything is read and checked before the database is opened, and a
/// database this import created is removed again when storing fails. Throws UsageError (unreadable file, format
/// errors, name clashes), SpecError, DbError.
ImportOutcome import_trials(const ImportRequest& request);

}  // namespace autotune::interop
