// `autotune list`: the built-in kernels and the size of their spaces.
#include <cstdio>
#include <string>

#include "tuner/cli/args.hpp"
#include "tuner/cli/planning.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

namespace autotune::cli {

int run_list() {
  bool assumed = false;
  DeviceInfo dev = device_for_planning(&assumed);
  std::printf("%-12s %-10s %10s %10s  %-40s %s\n", "kernel", "family", "cartesian", "valid", "workloads",
              "description");
  for (const auto& name : specs::builtin_names()) {
    TuningSpec s = specs::builtin_spec(name);
    ParameterSpace sp = s.space(s.problem_sizes.front(), dev, s.workloads.front());
    std::string ws;
    for (const auto& w : s.workloads) ws += (ws.empty() ? "" : ",") + w.key();
    if (ws.size() > 40) ws = ws.substr(0, 37) + "...";
    std::printf("%-12s %-10s %10.0f %10zu  %-40s %s\n", s.name.c_str(), s.family.c_str(), sp.cartesian_size(),
                sp.size(), ws.c_str(), s.description.c_str());
  }
  std::printf("(valid sizes for each kernel's default problem and workload on %s)\n", dev.name.c_str());
  return 0;
}

}  // namespace autotune::cli
