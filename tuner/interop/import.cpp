#include "tuner/interop/import.hpp"

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/core/error.hpp"
#include "tuner/interop/kt_stub.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/specs/specs.hpp"

namespace autotune::interop {

namespace {

std::string read_input(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The problem of the flags without a spec (a stub being created): --problem, --n, --rows, --cols.
std::optional<ProblemKey> flag_problem(const ProblemRequest& f) {
  if (!f.has_problem()) return std::nullopt;
  ProblemKey p;
  if (!f.problem.empty()) p = ProblemKey::parse(f.problem);
  if (f.n) p.dims["n"] = f.n;
  if (f.rows) p.dims["rows"] = f.rows;
  if (f.cols) p.dims["cols"] = f.cols;
  return p;
}

/// The workload of the flags without a spec (a stub): --workload or --dtype/--op; else `fallback`.
Workload flag_workload(const ProblemRequest& f, const Workload& fallback) {
  if (!f.workload_key.empty()) return Workload::parse(f.workload_key);
  if (!f.dtype.empty()) return Workload{f.dtype, f.op};
  return fallback;
}

/// The spec a Kernel Tuner cache is imported into when it is not a built-in kernel or a spec file: a stub
/// built from the cache, or the stored stub of that name extended by it. *stub_json receives the stub to store.
TuningSpec stub_for_cache(const ImportRequest& a, const nlohmann::json& root, const std::string& db_path,
                          std::string* stub_json) {
  const KtCacheHeader h = read_kt_header(root, a.file);
  std::string name = !a.as.empty() ? a.as : !a.kernel.empty() ? a.kernel : h.kernel_name;
  if (name.empty()) throw UsageError(a.file + " names no kernel (\"kernel_name\"): give a name with --as NAME");
  if (specs::is_builtin(name))
    throw UsageError("the cache's kernel '" + name + "' is also the name of a built-in kernel: import it into the "
                     "built-in spec with --kernel " + name + " (same parameter names), or as a kernel of its own "
                     "with --as OTHER_NAME");
  std::optional<std::string> existing;
  std::error_code ec;
  if (std::filesystem::is_regular_file(db_path, ec))
    if (auto k = db::Database::open(db_path, db::Database::Mode::read_only)->kernel_spec(name)) existing = k->spec_json;
  Workload fallback{"float32", ""};
  if (existing) fallback = TuningSpec::from_json_text(*existing, "", false).workloads.front();
  *stub_json = kt_stub_spec(root, name, a.file, flag_workload(a.problem, fallback), flag_problem(a.problem), existing);
  try {
    return TuningSpec::from_json_text(*stub_json, "", false);
  } catch (const SpecError& e) {
    throw SpecError::in_context("the spec stub built from " + a.file, e);
  }
}

/// The spec the trials belong to. A Kernel Tuner cache: --kernel (a built-in kernel, a spec file or a kernel
/// imported before, whose stub is extended); without it (or with --as) a kernel of its own, named by the cache,
/// whose new stub *stub_json receives. T4: --kernel.
TuningSpec import_spec(const ImportRequest& a, const std::string& text, std::string* stub_json) {
  const ImportFormat format = a.format;
  const std::string& db_path = a.db_path;
  if (format != ImportFormat::kt_cache) {
    if (a.kernel.empty()) throw UsageError("import --format t4 needs --kernel (T4 files carry no parameter lists)");
    return resolve_kernel(a.kernel, {db_path});
  }
  const nlohmann::json root = read_kt_cache_json(text, a.file);
  std::optional<TuningSpec> named;
  if (!a.kernel.empty() && a.as.empty()) named = resolve_kernel(a.kernel, {db_path});
  const bool file = a.kernel.find('/') != std::string::npos ||
                    (a.kernel.size() > 5 && a.kernel.compare(a.kernel.size() - 5, 5, ".json") == 0);
  return named && (!named->is_stub() || file) ? *named : stub_for_cache(a, root, db_path, stub_json);
}

/// How the file's trials are read: the spec, origin, source hash, the flags' device, workload and problem,
/// and the adapter's bytes moved where the kernel has one.
ImportOptions import_options(const ImportRequest& a, const TuningSpec& spec) {
  ImportOptions opt;
  opt.spec = &spec;
  opt.origin = a.file;
  opt.source_hash = specs::is_builtin(a.kernel) ? spec.source_hash() : kImportedSourceHash;
  if (!a.device.empty()) opt.device = a.device;
  if (a.cc) opt.cc = a.cc;
  if (a.problem.has_workload()) opt.workload = a.problem.workload(spec);
  if (a.problem.has_problem()) opt.problem = a.problem.problem_key(spec);
  if (!spec.is_stub() && a.bytes_moved_of) opt.bytes_moved = a.bytes_moved_of(spec);  // empty: GB/s unknown
  return opt;
}

/// Stores the trials (and a new stub) in db_path; a database this import created is removed when it fails.
ImportReport store(const ImportRequest& a, const std::string& db_path, const TuningSpec& spec,
                   const std::vector<ImportedTrial>& trials, const std::string& stub_json) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool existed = fs::exists(db_path, ec);
  try {
    auto db = db::Database::open(db_path);
    ImportReport r = store_trials(*db, trials, &spec);
    if (!stub_json.empty()) db->put_kernel_spec(spec.name, stub_json, "kt-cache " + a.file);
    return r;
  } catch (...) {
    if (!existed)
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(db_path + suffix, ec);
    throw;
  }
}

}  // namespace

ImportOutcome import_trials(const ImportRequest& request) {
  const std::string text = read_input(request.file);
  std::string stub_json;
  TuningSpec spec = import_spec(request, text, &stub_json);
  const ImportOptions opt = import_options(request, spec);
  std::size_t skipped = 0;
  const std::vector<ImportedTrial> trials = request.format == ImportFormat::kt_cache
                                                ? parse_kt_cache(text, opt)
                                                : parse_t4(text, opt, &skipped);
  ImportReport report = store(request, request.db_path, spec, trials, stub_json);
  report.skipped = skipped;
  ImportOutcome out{std::move(spec), std::move(report), opt.source_hash, std::move(stub_json)};
  return out;
}

}  // namespace autotune::interop
