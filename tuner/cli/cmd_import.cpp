// `autotune import`: Kernel Tuner caches and T4 results as recorded trials (the conversions live in
// tuner/session/interop.* and tuner/session/kt_stub.*; docs/interop.md).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/cli/kernel_resolver.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/session/interop.hpp"
#include "tuner/session/kt_stub.hpp"

namespace autotune::cli {

namespace {

std::string read_input(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The problem of the flags without a spec (a stub being created): --problem, --n, --rows, --cols.
std::optional<ProblemKey> flag_problem(const ProblemFlags& f) {
  if (!f.has_problem()) return std::nullopt;
  ProblemKey p;
  if (!f.problem.empty()) p = ProblemKey::parse(f.problem);
  if (f.n) p.dims["n"] = f.n;
  if (f.rows) p.dims["rows"] = f.rows;
  if (f.cols) p.dims["cols"] = f.cols;
  return p;
}

/// The workload of the flags without a spec (a stub): --workload or --dtype/--op; else `fallback`.
Workload flag_workload(const ProblemFlags& f, const Workload& fallback) {
  if (!f.workload_key.empty()) return Workload::parse(f.workload_key);
  if (!f.dtype.empty()) return Workload{f.dtype, f.op};
  return fallback;
}

/// The spec a Kernel Tuner cache is imported into when it is not a built-in kernel or a spec file: a stub
/// built from the cache, or the stored stub of that name extended by it. *stub_json receives the stub to store.
TuningSpec stub_for_cache(const ImportArgs& a, const nlohmann::json& root, const std::string& db_path,
                          std::string* stub_json) {
  const session::KtCacheHeader h = session::read_kt_header(root, a.file);
  std::string name = !a.as.empty() ? a.as : !a.kernel.empty() ? a.kernel : h.kernel_name;
  if (name.empty()) throw UsageError(a.file + " names no kernel (\"kernel_name\"): give a name with --as NAME");
  if (kernels::is_builtin(name))
    throw UsageError("the cache's kernel '" + name + "' is also the name of a built-in kernel: import it into the "
                     "built-in spec with --kernel " + name + " (same parameter names), or as a kernel of its own "
                     "with --as OTHER_NAME");
  std::optional<std::string> existing;
  std::error_code ec;
  if (std::filesystem::is_regular_file(db_path, ec))
    if (auto k = db::Database::open(db_path, db::Database::Mode::read_only)->kernel_spec(name)) existing = k->spec_json;
  Workload fallback{"float32", ""};
  if (existing) fallback = TuningSpec::from_json_text(*existing, "", false).workloads.front();
  *stub_json = session::kt_stub_spec(root, name, a.file, flag_workload(a.pa, fallback), flag_problem(a.pa), existing);
  try {
    return TuningSpec::from_json_text(*stub_json, "", false);
  } catch (const SpecError& e) {
    throw SpecError::in_context("the spec stub built from " + a.file, e);
  }
}

/// The spec the trials belong to. A Kernel Tuner cache: --kernel (a built-in kernel, a spec file or a kernel
/// imported before, whose stub is extended); without it (or with --as) a kernel of its own, named by the cache,
/// whose new stub *stub_json receives. T4: --kernel.
TuningSpec import_spec(const ImportArgs& a, session::ImportFormat format, const std::string& text,
                       const std::string& db_path, std::string* stub_json) {
  if (format != session::ImportFormat::kt_cache) {
    if (a.kernel.empty()) throw UsageError("import --format t4 needs --kernel (T4 files carry no parameter lists)");
    return resolve_kernel(a.kernel, {db_path});
  }
  const nlohmann::json root = session::read_kt_cache_json(text, a.file);
  std::optional<TuningSpec> named;
  if (!a.kernel.empty() && a.as.empty()) named = resolve_kernel(a.kernel, {db_path});
  const bool file = a.kernel.find('/') != std::string::npos ||
                    (a.kernel.size() > 5 && a.kernel.compare(a.kernel.size() - 5, 5, ".json") == 0);
  return named && (!named->is_stub() || file) ? *named : stub_for_cache(a, root, db_path, stub_json);
}

/// How the file's trials are read: the spec, origin, source hash, the flags' device, workload and problem,
/// and the adapter's bytes moved where the kernel has one.
session::ImportOptions import_options(const ImportArgs& a, const TuningSpec& spec) {
  session::ImportOptions opt;
  opt.spec = &spec;
  opt.origin = a.file;
  opt.source_hash = kernels::is_builtin(a.kernel) ? spec.source_hash() : kImportedSourceHash;
  if (!a.device.empty()) opt.device = a.device;
  if (a.cc) opt.cc = a.cc;
  if (a.pa.has_workload()) opt.workload = a.pa.workload(spec);
  if (a.pa.has_problem()) opt.problem = a.pa.problem_key(spec);
  std::shared_ptr<const KernelAdapter> adapter;
  if (!spec.is_stub()) {
    try {
      adapter = kernels::make_adapter(spec);
    } catch (const Error&) {
      // no adapter: GB/s stays unknown
    }
  }
  if (adapter)
    opt.bytes_moved = [adapter](const Workload& w, const ProblemKey& p) { return adapter->bytes_moved(w, p); };
  return opt;
}

/// Stores the trials (and a new stub) in db_path; a database this import created is removed when it fails.
session::ImportReport store(const ImportArgs& a, const std::string& db_path, const TuningSpec& spec,
                            const std::vector<session::ImportedTrial>& trials, const std::string& stub_json) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool existed = fs::exists(db_path, ec);
  try {
    auto db = db::Database::open(db_path);
    session::ImportReport r = session::store_trials(*db, trials, &spec);
    if (!stub_json.empty()) db->put_kernel_spec(spec.name, stub_json, "kt-cache " + a.file);
    return r;
  } catch (...) {
    if (!existed)
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(db_path + suffix, ec);
    throw;
  }
}

/// What was imported, the stub stored (and written with --write-spec), values outside the spec, conflicts.
/// Returns the exit code: 1 for conflicts or nothing read.
int print_report(const ImportArgs& a, const std::string& db_path, const TuningSpec& spec,
                 const session::ImportReport& r, const std::string& source_hash, const std::string& stub_json) {
  std::string devs, groups, statuses;
  for (const auto& d : r.devices) devs += (devs.empty() ? "" : ", ") + d;
  for (const auto& x : r.groups) groups += (groups.empty() ? "" : "; ") + x;
  for (const auto& [s, n] : r.by_status) statuses += (statuses.empty() ? "" : ", ") + s + " " + std::to_string(n);
  std::printf("imported %zu of %zu trials of %s (%s) on %s into %s; %zu already present", r.inserted, r.read,
              spec.name.c_str(), groups.c_str(), devs.empty() ? "-" : devs.c_str(), db_path.c_str(), r.duplicates);
  if (r.skipped) std::printf(", %zu results of other kernels skipped", r.skipped);
  std::printf("\nby status: %s\nsource hash: %s\n", statuses.empty() ? "-" : statuses.c_str(), source_hash.c_str());
  if (!stub_json.empty()) {
    std::string sizes;
    for (const auto& p : spec.problem_sizes) sizes += (sizes.empty() ? "" : ", ") + p.key();
    std::printf("kernel %s: spec stub stored in %s (%zu parameters; problem sizes %s): `summary %s`, `best %s`, "
                "`tune %s --simulate` and `compare-strategies %s` address it by name; to tune it, complete the stub "
                "(--write-spec FILE; docs/interop.md)\n",
                spec.name.c_str(), db_path.c_str(), spec.params.size(), sizes.c_str(), spec.name.c_str(),
                spec.name.c_str(), spec.name.c_str(), spec.name.c_str());
    if (!a.write_spec.empty()) {
      write_file(a.write_spec, stub_json + "\n");
      std::printf("spec stub written to %s\n", a.write_spec.c_str());
    }
  }
  if (r.outside_spec)
    std::printf("warning: %zu configurations use values outside the spec's value lists; they can be looked at "
                "but never proposed or simulated\n", r.outside_spec);
  if (r.conflicts) {
    std::printf("error: %zu trials have the key of a stored trial (kernel, source, device, workload, problem, "
                "configuration) but another measurement: the stored ones were kept, these were not imported (a "
                "cache of another size or device needs its own --n/--problem or --device)\n", r.conflicts);
    return 1;
  }
  return r.read ? 0 : 1;
}

}  // namespace

int run_import(const ImportArgs& a, const std::string& db_path) {
  const std::string text = read_input(a.file);
  const session::ImportFormat format = session::import_format_from_string(a.format);
  // Everything is read and checked before the database is opened: a failed import creates no file.
  std::string stub_json;
  const TuningSpec spec = import_spec(a, format, text, db_path, &stub_json);
  const session::ImportOptions opt = import_options(a, spec);
  std::size_t skipped = 0;
  const std::vector<session::ImportedTrial> trials = format == session::ImportFormat::kt_cache
                                                         ? session::parse_kt_cache(text, opt)
                                                         : session::parse_t4(text, opt, &skipped);
  session::ImportReport r = store(a, db_path, spec, trials, stub_json);
  r.skipped = skipped;
  return print_report(a, db_path, spec, r, opt.source_hash, stub_json);
}

}  // namespace autotune::cli
