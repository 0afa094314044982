// `autotune export`: recorded trials as a T4 results file (the conversion lives in tuner/interop/interop.*), or
// the best configurations as a C++ header or JSON tables (tuner/lookup/export.*).
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/error.hpp"
#include "tuner/interop/interop.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/lookup/export.hpp"

namespace autotune::cli {

namespace {

void write_output(const std::string& output, const std::string& text) {
  if (output == "-")
    std::fwrite(text.data(), 1, text.size(), stdout);
  else
    write_file(output, text);
}

/// --format header / json: the tables of the kernels asked for (default: every kernel recorded).
int export_tables(const ExportArgs& a, const std::string& db_path) {
  if (!a.device.empty() || !a.problem.empty())
    throw UsageError(std::string(a.device.empty() ? "--problem" : "--device") + " filters --format t4 only: the " +
                     a.format +
                     " export holds every recorded device and problem, so that its selector falls back as the "
                     "lookup does");
  auto db = db::Database::open(db_path, db::Database::Mode::read_only);
  const bool named = !a.kernel.empty();
  std::vector<std::string> names = a.kernel;
  if (!named) {
    std::set<std::string> recorded;
    for (const auto& s : db->sessions()) recorded.insert(s.kernel);
    if (recorded.empty()) throw DbError("nothing is recorded in " + db_path + ": no kernel to export");
    names.assign(recorded.begin(), recorded.end());
  }
  std::vector<TuningSpec> specs;
  for (const std::string& name : names) {
    TuningSpec spec = interop::resolve_kernel(name, {db_path});
    if (std::any_of(specs.begin(), specs.end(), [&](const TuningSpec& s) { return s.name == spec.name; })) continue;
    if (!a.workload.empty()) {
      const Workload w = Workload::parse(a.workload);
      spec.check_workload(w);
      spec.workloads = {w};
    }
    const std::string obstacle = lookup::export_obstacle(spec);
    if (!obstacle.empty()) {
      if (named) throw UsageError("kernel '" + spec.name + "' cannot be exported: " + obstacle);
      std::fprintf(stderr, "warning: kernel '%s' left out: %s\n", spec.name.c_str(), obstacle.c_str());
      continue;
    }
    if (db->sessions(spec.name).empty())
      std::fprintf(stderr, "warning: nothing is recorded for kernel '%s' in %s: its selector gives the spec default\n",
                   spec.name.c_str(), db_path.c_str());
    specs.push_back(std::move(spec));
  }
  if (specs.empty()) throw UsageError("no kernel of " + db_path + " can be exported");
  const lookup::ExportTables t = lookup::export_tables(*db, db_path, specs, objective_from_string(a.objective));
  write_output(a.output, a.format == "header" ? lookup::to_header(t, a.name_space) : lookup::to_json(t));
  if (a.output != "-") {
    std::size_t configs = 0;
    for (const auto& k : t.kernels) configs += k.configs.size();
    std::fprintf(stderr, "exported %zu kernel%s (%zu configurations) to %s\n", t.kernels.size(),
                 t.kernels.size() == 1 ? "" : "s", configs, a.output.c_str());
  }
  return 0;
}

}  // namespace

int run_export(const ExportArgs& a, const std::string& db_path) {
  if (a.format != "t4") return export_tables(a, db_path);
  if (a.kernel.size() > 1) throw UsageError("--format t4 takes at most one --kernel");
  if (a.name_space != "autotune_tuned" || a.objective != "time")
    throw UsageError("--namespace and --objective apply to --format header and json");
  auto db = db::Database::open(db_path, db::Database::Mode::read_only);
  interop::ExportFilter f;
  if (!a.kernel.empty()) f.kernel = a.kernel.front();
  if (!a.device.empty()) f.device = a.device;
  if (!a.workload.empty()) f.workload = Workload::parse(a.workload).key();
  if (!a.problem.empty()) f.problem = ProblemKey::parse(a.problem).key();
  // Labels where the kernel's spec (built-in or stored stub) names values.
  auto params = std::make_shared<std::map<std::string, std::unique_ptr<std::vector<Param>>>>();
  f.params_of = [db_path, params](const std::string& kernel) -> const std::vector<Param>* {
    auto it = params->find(kernel);
    if (it == params->end()) {
      std::unique_ptr<std::vector<Param>> p;
      try {
        p = std::make_unique<std::vector<Param>>(interop::resolve_kernel(kernel, {db_path}).params);
      } catch (const Error&) {
        // a user spec not at hand: numbers
      }
      it = params->emplace(kernel, std::move(p)).first;
    }
    return it->second.get();
  };
  std::size_t n = 0;
  std::string text = interop::export_t4(*db, f, &n);
  write_output(a.output, text);
  if (a.output != "-") std::fprintf(stderr, "exported %zu trials to %s\n", n, a.output.c_str());
  if (n == 0) std::fprintf(stderr, "warning: no trials matched\n");
  return 0;
}

}  // namespace autotune::cli
