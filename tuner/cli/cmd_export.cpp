// `autotune export`: recorded trials as a T4 results file (the conversion lives in tuner/interop/interop.*).
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/error.hpp"
#include "tuner/interop/interop.hpp"

namespace autotune::cli {

int run_export(const ExportArgs& a, const std::string& db_path) {
  auto db = db::Database::open(db_path, db::Database::Mode::read_only);
  interop::ExportFilter f;
  if (!a.kernel.empty()) f.kernel = a.kernel;
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
  if (a.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    write_file(a.output, text);
    std::fprintf(stderr, "exported %zu trials to %s\n", n, a.output.c_str());
  }
  if (n == 0) std::fprintf(stderr, "warning: no trials matched\n");
  return 0;
}

}  // namespace autotune::cli
