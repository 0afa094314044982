// Moving trials between autotune and Kernel Tuner: import Kernel Tuner cache files and T4 result files
// (the auto-tuning community's JSON results format) as recorded trials, export trials as T4.
// Mapping and limits: docs/interop.md. Pure conversion plus one database transaction; no CUDA.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::interop {

enum class ImportFormat { kt_cache, t4 };

/// "kt-cache" or "t4"; throws UsageError naming the known formats.
ImportFormat import_format_from_string(const std::string& s);

struct ImportOptions {
  /// The kernel the trials belong to: its parameter names (and value labels) define the configs.
  const TuningSpec* spec = nullptr;
  /// Stored as the trials' source_hash: the built-in spec's source hash, or "imported".
  std::string source_hash = "imported";
  /// Device name; overrides the file's (Kernel Tuner cache: "device_name"; T4: our "autotune" extension).
  std::optional<std::string> device;
  std::optional<int> cc;  // compute capability major*10+minor for a device that is not in the database yet
  /// Override the file's workload / problem; without either, the spec's first workload / problem size.
  std::optional<Workload> workload;
  std::optional<ProblemKey> problem;
  /// Bytes moved by one run, for GB/s (returns 0 when unknown); may be empty.
  std::function<double(const Workload&, const ProblemKey&)> bytes_moved;
  /// Name of the file, for messages and the protocol column.
  std::string origin = "input";
  /// T4: the kernel whose results are read (their "autotune" extension's kernel); "" = spec->name. Differs from
  /// spec->name when a stub is imported under another name (--as).
  std::string file_kernel;
};

/// One trial read from a file, not yet stored.
struct ImportedTrial {
  DeviceInfo device;    // name (and cc when known); the rest from the file or at the defaults
  double copy_gbps = 0; // device copy bandwidth from the file, 0 = unknown
  db::TrialRow row;     // everything but ids (device_id/session_id are 0)
};

/// Parses a Kernel Tuner cache file (also one that Kernel Tuner left open, without its closing brackets).
/// Throws UsageError naming the file and the problem: not JSON, no "cache" object, a parameter of the file
/// that the spec does not have or the reverse, a value that is not an integer or a label of the spec, an
/// unknown error string in "time".
std::vector<ImportedTrial> parse_kt_cache(const std::string& text, const ImportOptions& opt);

/// Parses a T4 results file ({"results": [...]}). Results whose "autotune" extension names another kernel
/// (than opt.file_kernel, else the spec's) are skipped (*skipped counts them). A stub's values are read from the
/// results' "configuration" (labels matched by text), a spec's from our extension's config_values where present. Throws
/// UsageError as parse_kt_cache, and when a device is neither in the file nor given.
std::vector<ImportedTrial> parse_t4(const std::string& text, const ImportOptions& opt, std::size_t* skipped = nullptr);

struct ImportReport {
  std::size_t read = 0;        // trials parsed
  std::size_t inserted = 0;    // new rows
  std::size_t duplicates = 0;  // already present: same key (kernel, source, device, workload, problem, config)
                               // and the same measurement
  std::size_t conflicts = 0;   // same key, another measurement: the stored row is kept, the file's is not stored
  std::size_t skipped = 0;     // results of other kernels (T4)
  std::size_t outside_spec = 0;  // configs with a value that is not in the spec's value list
  /// import --spec: recorded configurations that violate the spec's constraints, not imported (not in `read`);
  /// up to 5 of them as Config::str() text.
  std::size_t violating = 0;
  std::vector<std::string> violating_examples;
  std::map<std::string, std::size_t> by_status;  // of the rows read
  std::vector<std::string> devices;              // names, as stored
  std::vector<std::string> groups;               // "workload problem" keys imported
};

/// Stores parsed trials in one transaction (session_id NULL). A device is reused when the database has one
/// with the same name or normalised name (and the same cc when the trial's cc is known), else created; creating
/// one whose compute capability is unknown (0) is a UsageError (nothing is stored). Existing trials with the
/// same key are kept (the first result wins): counted as duplicates when the measurement is the same, else as
/// conflicts. Throws DbError.
ImportReport store_trials(db::Database& db, const std::vector<ImportedTrial>& trials, const TuningSpec* spec = nullptr);


struct ExportFilter {
  std::optional<std::string> kernel;
  std::optional<std::string> device;  // exact or normalised name
  std::optional<std::string> workload;
  std::optional<std::string> problem;
  /// The parameters of a kernel (by name), so that the configurations carry labels where the spec names values
  /// (the numbers are in the "autotune" extension's config_values); may be empty or return nullptr (numbers).
  std::function<const std::vector<Param>*(const std::string& kernel)> params_of;
};

/// T4 results JSON (schema_version 1.0.0) of the matching trials, in id order; each result carries an
/// "autotune" object (kernel, source_hash, device, cc, workload, problem, status, protocol, log) so that an
/// import restores the trials exactly. *count receives the number of results. Throws UsageError when a
/// device filter matches no device.
std::string export_t4(const db::Database& db, const ExportFilter& f, std::size_t* count = nullptr);

}  // namespace autotune::interop
