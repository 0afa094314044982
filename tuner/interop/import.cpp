#include "tuner/interop/import.hpp"

#include <zlib.h>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/core/error.hpp"
#include "tuner/interop/kt_stub.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/specs/specs.hpp"

namespace autotune::interop {

namespace {

/// The whole file, gunzipped when it is gzip-compressed (zlib reads a plain file as it is). Throws UsageError when it
/// cannot be opened or its compressed stream is corrupt.
std::string read_input(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> in(gzopen(path.c_str(), "rb"), gzclose);
  if (!in) throw UsageError("cannot read " + path);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const int n = gzread(in.get(), buf, sizeof buf);
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(in.get(), &code);
      throw UsageError("cannot read " + path + ": " + (msg ? msg : "corrupt gzip stream"));
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
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

/// The stored stub of kernel `name` in db_path, if any.
std::optional<std::string> stored_stub(const std::string& db_path, const std::string& name) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(db_path, ec))
    if (auto k = db::Database::open(db_path, db::Database::Mode::read_only)->kernel_spec(name)) return k->spec_json;
  return std::nullopt;
}

/// A stub's name must not be a built-in kernel's: `what` says whose name it is ("the cache's kernel").
void check_stub_name(const std::string& name, const std::string& what) {
  if (specs::is_builtin(name))
    throw UsageError(what + " '" + name + "' is also the name of a built-in kernel: import it into the built-in "
                     "spec with --kernel " + name + " (same parameter names), or as a kernel of its own with --as "
                     "OTHER_NAME");
}

/// The spec of a stub built from `file`; a SpecError names the file.
TuningSpec parsed_stub(const std::string& stub_json, const std::string& file) {
  try {
    return TuningSpec::from_json_text(stub_json, "", false);
  } catch (const SpecError& e) {
    throw SpecError::in_context("the spec stub built from " + file, e);
  }
}

/// The spec a Kernel Tuner cache is imported into when it is not a built-in kernel or a spec file: a stub
/// built from the cache, or the stored stub of that name extended by it. *stub_json receives the stub to store.
TuningSpec stub_for_cache(const ImportRequest& a, const nlohmann::json& root, const std::string& db_path,
                          std::string* stub_json) {
  const KtCacheHeader h = read_kt_header(root, a.file);
  std::string name = !a.as.empty() ? a.as : !a.kernel.empty() ? a.kernel : h.kernel_name;
  if (name.empty()) throw UsageError(a.file + " names no kernel (\"kernel_name\"): give a name with --as NAME");
  check_stub_name(name, "the cache's kernel");
  const std::optional<std::string> existing = stored_stub(db_path, name);
  Workload fallback{"float32", ""};
  if (existing) fallback = TuningSpec::from_json_text(*existing, "", false).workloads.front();
  *stub_json = kt_stub_spec(root, name, a.file, flag_workload(a.problem, fallback), flag_problem(a.problem), existing);
  return parsed_stub(*stub_json, a.file);
}

/// The spec a T4 file is imported into without --kernel: a stub inferred from its results (the kernel that the
/// first result's "autotune" extension names, or --as), or the stored stub of that name extended by it.
/// *file_kernel receives the kernel whose results are read ("" = every result).
TuningSpec stub_for_t4(const ImportRequest& a, const std::string& text, std::string* stub_json,
                       std::string* file_kernel) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(a.file + " is not valid JSON: " + e.what());
  }
  if (!root.is_object() || !root.contains("results") || !root["results"].is_array())
    throw UsageError(a.file + " is not a T4 results file (no \"results\" array)");
  for (const auto& res : root["results"])
    if (res.is_object() && res.contains("autotune") && res["autotune"].is_object() &&
        res["autotune"].contains("kernel") && res["autotune"]["kernel"].is_string()) {
      *file_kernel = res["autotune"]["kernel"].get<std::string>();
      break;
    }
  const std::string name = !a.as.empty() ? a.as : *file_kernel;
  if (name.empty())
    throw UsageError(a.file + " names no kernel (T4 files carry none unless exported by autotune): give a name "
                     "with --as NAME, or the kernel's spec with --kernel or --spec");
  check_stub_name(name, "the T4 file's kernel");
  const std::optional<std::string> existing = stored_stub(a.db_path, name);
  std::optional<Workload> w;
  if (a.problem.has_workload()) w = flag_workload(a.problem, Workload{"float32", ""});
  *stub_json = t4_stub_spec(root, *file_kernel, name, a.file, w, flag_problem(a.problem), existing);
  return parsed_stub(*stub_json, a.file);
}

/// The spec the trials belong to. A Kernel Tuner cache: --kernel (a built-in kernel, a spec file or a kernel
/// imported before, whose stub is extended); without it (or with --as) a kernel of its own, named by the cache,
/// whose new stub *stub_json receives. T4: --kernel, else a stub inferred from the results (stub_for_t4).
/// --spec: the spec of a T1 file, a native spec or a built-in kernel, never a stub.
TuningSpec import_spec(const ImportRequest& a, const std::string& text, std::string* stub_json,
                       std::string* file_kernel) {
  const ImportFormat format = a.format;
  const std::string& db_path = a.db_path;
  if (a.check_constraints) {
    TuningSpec spec = resolve_kernel(a.kernel, {db_path});
    if (spec.is_stub())
      throw UsageError("import --spec " + a.kernel +
                       ": a spec stub knows no constraints; give a T1 file, a native "
                       "spec or a built-in kernel (or import into the stub with --kernel)");
    return spec;
  }
  if (format != ImportFormat::kt_cache) {
    if (a.kernel.empty()) return stub_for_t4(a, text, stub_json, file_kernel);
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
    if (!stub_json.empty())
      db->put_kernel_spec(spec.name, stub_json, (a.format == ImportFormat::t4 ? "t4 " : "kt-cache ") + a.file);
    return r;
  } catch (...) {
    if (!existed)
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(db_path + suffix, ec);
    throw;
  }
}

/// import --spec: removes the trials whose configuration violates one of the spec's constraints (evaluated with
/// the trial's problem, workload and the device as the file describes it), counting them in *count and keeping
/// up to 5 in *examples.
void drop_violating(const TuningSpec& spec, std::vector<ImportedTrial>& trials, std::size_t* count,
                    std::vector<std::string>* examples) {
  std::vector<ImportedTrial> kept;
  kept.reserve(trials.size());
  for (auto& t : trials) {
    const Config c = Config::from_json(t.row.config_json);
    const ProblemKey p = ProblemKey::parse(t.row.problem);
    const Workload w = Workload::parse(t.row.workload);
    bool holds = true;
    for (const Expr& e : spec.constraints) holds = holds && eval_expr(e, c, p, t.device, w) != 0;
    if (holds) {
      kept.push_back(std::move(t));
      continue;
    }
    ++*count;
    if (examples->size() < 5) examples->push_back(c.str(&spec.params));
  }
  trials.swap(kept);
}

}  // namespace

ImportOutcome import_trials(const ImportRequest& request) {
  const std::string text = read_input(request.file);
  std::string stub_json, file_kernel;
  TuningSpec spec = import_spec(request, text, &stub_json, &file_kernel);
  ImportOptions opt = import_options(request, spec);
  opt.file_kernel = file_kernel;
  std::size_t skipped = 0;
  std::vector<ImportedTrial> trials =
      request.format == ImportFormat::kt_cache ? parse_kt_cache(text, opt) : parse_t4(text, opt, &skipped);
  std::size_t violating = 0;
  std::vector<std::string> examples;
  if (request.check_constraints) drop_violating(spec, trials, &violating, &examples);
  ImportReport report = store(request, request.db_path, spec, trials, stub_json);
  report.skipped = skipped;
  report.violating = violating;
  report.violating_examples = std::move(examples);
  ImportOutcome out{std::move(spec), std::move(report), opt.source_hash, std::move(stub_json)};
  return out;
}

}  // namespace autotune::interop
