// Sub-commands import and export: Kernel Tuner caches and T4 results in, T4 out (the conversions live in
// tuner/session/interop.* and tuner/session/kt_stub.*; docs/interop.md).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "db/database.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/kernel_resolver.hpp"
#include "tuner/cli/problem_flags.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/session/interop.hpp"
#include "tuner/session/kt_stub.hpp"

namespace autotune::cli {

namespace {

struct ImportArgs {
  std::string format, file, kernel, as, device, write_spec;
  int cc = 0;
  ProblemFlags pa;
};

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

int run_import(const ImportArgs& a, const std::string& db_path) {
  namespace fs = std::filesystem;
  const std::string text = read_input(a.file);
  const session::ImportFormat format = session::import_format_from_string(a.format);

  // Everything is read and checked before the database is opened: a failed import creates no file.
  TuningSpec spec;
  std::string stub_json;
  if (format == session::ImportFormat::kt_cache) {
    const nlohmann::json root = session::read_kt_cache_json(text, a.file);
    // --kernel: a built-in kernel, a spec file or a kernel imported before (its stub is extended); without it
    // (or with --as) a kernel of its own, named by the cache.
    std::optional<TuningSpec> named;
    if (!a.kernel.empty() && a.as.empty()) named = resolve_kernel(a.kernel, {db_path});
    const bool file = a.kernel.find('/') != std::string::npos ||
                      (a.kernel.size() > 5 && a.kernel.compare(a.kernel.size() - 5, 5, ".json") == 0);
    spec = named && (!named->is_stub() || file) ? *named : stub_for_cache(a, root, db_path, &stub_json);
  } else {
    if (a.kernel.empty()) throw UsageError("import --format t4 needs --kernel (T4 files carry no parameter lists)");
    spec = resolve_kernel(a.kernel, {db_path});
  }

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
  std::size_t skipped = 0;
  const std::vector<session::ImportedTrial> trials = format == session::ImportFormat::kt_cache
                                                         ? session::parse_kt_cache(text, opt)
                                                         : session::parse_t4(text, opt, &skipped);

  std::error_code ec;
  const bool existed = fs::exists(db_path, ec);
  session::ImportReport r;
  try {
    auto db = db::Database::open(db_path);
    r = session::store_trials(*db, trials, &spec);
    if (!stub_json.empty()) db->put_kernel_spec(spec.name, stub_json, "kt-cache " + a.file);
  } catch (...) {
    if (!existed)
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(db_path + suffix, ec);
    throw;
  }
  r.skipped = skipped;

  std::string devs, groups, statuses;
  for (const auto& d : r.devices) devs += (devs.empty() ? "" : ", ") + d;
  for (const auto& x : r.groups) groups += (groups.empty() ? "" : "; ") + x;
  for (const auto& [s, n] : r.by_status) statuses += (statuses.empty() ? "" : ", ") + s + " " + std::to_string(n);
  std::printf("imported %zu of %zu trials of %s (%s) on %s into %s; %zu already present", r.inserted, r.read,
              spec.name.c_str(), groups.c_str(), devs.empty() ? "-" : devs.c_str(), db_path.c_str(), r.duplicates);
  if (r.skipped) std::printf(", %zu results of other kernels skipped", r.skipped);
  std::printf("\nby status: %s\nsource hash: %s\n", statuses.empty() ? "-" : statuses.c_str(), opt.source_hash.c_str());
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

void register_interop_commands(CLI::App& app, Globals& g) {
  // ---- import
  auto ia = std::make_shared<ImportArgs>();
  auto* imp = app.add_subcommand("import", "import Kernel Tuner cache files or T4 result files as recorded trials (--db)");
  imp->add_option("--format", ia->format, "kt-cache (Kernel Tuner cache JSON) or t4 (T4 results JSON)")->required()
      ->check(CLI::IsMember({"kt-cache", "t4"}));
  imp->add_option("file", ia->file, "file to import")->required();
  imp->add_option("--kernel", ia->kernel,
                  "built-in kernel, path to a .json spec, or kernel imported before, that the trials belong to; "
                  "default for a Kernel Tuner cache: a kernel of its own (a spec stub) named by the cache's "
                  "kernel_name (required for T4)");
  imp->add_option("--as", ia->as, "name of the imported kernel (spec stub) instead of the cache's kernel_name");
  imp->add_option("--write-spec", ia->write_spec, "also write the spec stub of the imported kernel to this file");
  imp->add_option("--device", ia->device, "device name (default: the file's; required for T4 files from other tools)");
  imp->add_option("--cc", ia->cc,
                  "compute capability as major*10+minor (e.g. 90); needed for a device that is not yet in the "
                  "database when its name does not tell it");
  ia->pa.add(imp, true);
  imp->callback([&g, ia] { g.run = [&g, ia] { return run_import(*ia, g.db_path); }; });

  // ---- export
  struct ExportArgs {
    std::string format = "t4", kernel, device, workload, problem, output = "-";
  };
  auto ea = std::make_shared<ExportArgs>();
  auto* exp = app.add_subcommand("export", "export recorded trials (--db) as a T4 results file");
  exp->add_option("--format", ea->format, "output format (t4)")->capture_default_str()->check(CLI::IsMember({"t4"}));
  exp->add_option("--kernel", ea->kernel, "only this kernel (default: all)");
  exp->add_option("--device", ea->device, "only this device (name or normalised name)");
  exp->add_option("--workload", ea->workload, "only this workload, e.g. float32/sum");
  exp->add_option("--problem", ea->problem, "only this problem, e.g. n=67108864");
  exp->add_option("-o,--output", ea->output, "output file ('-' = standard output)")->capture_default_str();
  exp->callback([&g, ea] {
    g.run = [&g, ea] {
      auto db = db::Database::open(g.db_path, db::Database::Mode::read_only);
      session::ExportFilter f;
      if (!ea->kernel.empty()) f.kernel = ea->kernel;
      if (!ea->device.empty()) f.device = ea->device;
      if (!ea->workload.empty()) f.workload = Workload::parse(ea->workload).key();
      if (!ea->problem.empty()) f.problem = ProblemKey::parse(ea->problem).key();
      // Labels where the kernel's spec (built-in or stored stub) names values.
      auto params = std::make_shared<std::map<std::string, std::unique_ptr<std::vector<Param>>>>();
      f.params_of = [&g, params](const std::string& kernel) -> const std::vector<Param>* {
        auto it = params->find(kernel);
        if (it == params->end()) {
          std::unique_ptr<std::vector<Param>> p;
          try {
            p = std::make_unique<std::vector<Param>>(resolve_kernel(kernel, {g.db_path}).params);
          } catch (const Error&) {
            // a user spec not at hand: numbers
          }
          it = params->emplace(kernel, std::move(p)).first;
        }
        return it->second.get();
      };
      std::size_t n = 0;
      std::string text = session::export_t4(*db, f, &n);
      if (ea->output == "-") {
        std::fwrite(text.data(), 1, text.size(), stdout);
      } else {
        write_file(ea->output, text);
        std::fprintf(stderr, "exported %zu trials to %s\n", n, ea->output.c_str());
      }
      if (n == 0) std::fprintf(stderr, "warning: no trials matched\n");
      return 0;
    };
  });
}

}  // namespace autotune::cli
