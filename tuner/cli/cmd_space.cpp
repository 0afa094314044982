// `autotune space`: a kernel's parameter space (narrowed by --values/--restrict/--drop-constraint/
// --deterministic) and its size.
#include <cstdio>
#include <string>

#include "tuner/cli/args.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/cli/planning.hpp"

namespace autotune::cli {

int run_space(const SpaceArgs& a, const std::string& db_path) {
  TuningSpec s = interop::resolve_kernel(a.kernel, {db_path});
  a.narrow.apply(s);
  ProblemKey p = a.pf.problem_key(s);
  Workload w = a.pf.workload(s);
  bool assumed = false;
  DeviceInfo dev = device_for_planning(&assumed);
  ParameterSpace sp = s.space(p, dev, w);
  const std::string deterministic = deterministic_summary(s, p, dev, w);
  std::printf("kernel:      %s (%s)\n", s.name.c_str(), s.family.c_str());
  std::printf("problem:     %s, workload %s, device %s\n", p.key().c_str(), w.key().c_str(), dev.name.c_str());
  std::printf("parameters:  %zu\n", s.params.size());
  for (const auto& prm : s.params) {
    std::string vals;
    for (auto v : prm.values) vals += (vals.empty() ? "" : ", ") + prm.label(v);
    std::printf("  %-18s [%s] default %s\n", prm.name.c_str(), vals.c_str(), prm.label(prm.default_value).c_str());
  }
  std::printf("constraints: %zu\n", s.constraints.size());
  std::printf("cartesian:   %.0f\n", sp.cartesian_size());
  std::printf("valid:       %zu\n", sp.size());
  if (!deterministic.empty()) std::printf("%s\n", deterministic.c_str());
  std::printf("groups:      %zu (parameters connected by constraints; the space is their product%s)\n",
              sp.groups().size(), sp.factorised() ? ", stored factorised" : "");
  for (const auto& grp : sp.groups()) {
    std::string names;
    for (std::size_t pos : grp.params) names += (names.empty() ? "" : " ") + s.params[pos].name;
    std::printf("  %12zu  %s\n", grp.size, names.c_str());
  }
  std::printf("built in:    %.3f ms\n", sp.build_seconds() * 1e3);
  if (a.list)
    for (std::size_t i = 0; i < sp.size(); ++i) std::printf("%s\n", sp.config(i).str(&s.params).c_str());
  return sp.empty() ? 1 : 0;
}

}  // namespace autotune::cli
