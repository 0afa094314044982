// `autotune import`: Kernel Tuner caches and T4 results as recorded trials; the rules live in
// tuner/interop/import.* (the conversions in interop.* and kt_stub.*; docs/interop.md), this prints the outcome.
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tuner/cli/args.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/error.hpp"
#include "tuner/interop/import.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/specs/t1.hpp"

namespace autotune::cli {

namespace {

/// What was imported, the stub stored (and written with --write-spec), values outside the spec, conflicts.
/// Returns the exit code: 1 for conflicts or nothing read.
int print_report(const ImportArgs& a, const std::string& db_path, const TuningSpec& spec,
                 const interop::ImportReport& r, const std::string& source_hash, const std::string& stub_json) {
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
  if (r.violating) {
    std::string some;
    for (const auto& c : r.violating_examples) some += (some.empty() ? "" : "; ") + c;
    std::printf("warning: %zu recorded configuration%s violate%s the constraints of %s and %s not imported: %s%s\n",
                r.violating, r.violating == 1 ? "" : "s", r.violating == 1 ? "s" : "", spec.name.c_str(),
                r.violating == 1 ? "was" : "were", some.c_str(),
                r.violating > r.violating_examples.size() ? "; ..." : "");
  }
  if (r.conflicts) {
    std::printf("error: %zu trials have the key of a stored trial (kernel, source, device, workload, problem, "
                "configuration) but another measurement: the stored ones were kept, these were not imported (a "
                "cache of another size or device needs its own --n/--problem or --device)\n", r.conflicts);
    return 1;
  }
  return r.read ? 0 : 1;
}

}  // namespace

/// --format t1: the native spec of a T1 file, written to --write-spec with its paths relative to that file's
/// folder, checked by loading it back.
int import_t1(const ImportArgs& a) {
  if (a.write_spec.empty())
    throw UsageError(
        "import --format t1 converts a T1 file into a native spec: give --write-spec OUT.tune.json (a T1 "
        "file is tuned directly as well: autotune tune " +
        a.file + ")");
  std::vector<std::string> notes;
  const std::optional<std::string> text = specs::t1_spec_text(a.file, &notes);
  if (!text)
    throw UsageError(a.file + " is not a T1 file (a JSON object with ConfigurationSpace and KernelSpecification)");
  nlohmann::json spec = nlohmann::json::parse(*text);
  namespace fs = std::filesystem;
  const fs::path from = fs::absolute(fs::path(a.file).parent_path());
  const fs::path to = fs::absolute(fs::path(a.write_spec).parent_path());
  auto moved = [&](const std::string& p) {
    if (p.empty() || fs::path(p).is_absolute()) return p;
    return fs::relative(from / p, to).lexically_normal().string();
  };
  spec["source"] = moved(spec["source"]);
  for (auto& arg : spec["arguments"])
    for (const char* key : {"init", "expected", "value"})
      if (arg.contains(key) && arg[key].is_object() && arg[key].contains("file"))
        arg[key]["file"] = moved(arg[key]["file"]);
  write_file(a.write_spec, spec.dump(2) + "\n");
  const TuningSpec loaded = specs::load_spec(a.write_spec);  // the written spec must load as it is
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
  std::printf("T1 file %s: kernel %s, %zu parameters, %zu conditions; native spec written to %s\n", a.file.c_str(),
              loaded.name.c_str(), loaded.params.size(), loaded.constraints.size(), a.write_spec.c_str());
  return 0;
}

int run_import(const ImportArgs& a, const std::string& db_path) {
  if (a.format == "t1") return import_t1(a);
  interop::ImportRequest q;
  q.format = interop::import_format_from_string(a.format);
  q.file = a.file;
  q.db_path = db_path;
  q.kernel = a.spec.empty() ? a.kernel : a.spec;
  q.check_constraints = !a.spec.empty();
  q.as = a.as;
  q.device = a.device;
  q.cc = a.cc;
  q.problem = a.pa;
  q.bytes_moved_of = [](const TuningSpec& spec) -> std::function<double(const Workload&, const ProblemKey&)> {
    std::shared_ptr<const KernelAdapter> adapter;
    try {
      adapter = kernels::make_adapter(spec);
    } catch (const Error&) {
      return {};  // no adapter: GB/s stays unknown
    }
    return [adapter](const Workload& w, const ProblemKey& p) { return adapter->bytes_moved(w, p); };
  };
  const interop::ImportOutcome o = interop::import_trials(q);
  return print_report(a, db_path, o.spec, o.report, o.source_hash, o.stub_json);
}

}  // namespace autotune::cli
