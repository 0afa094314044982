// `autotune strategies`: the search strategies with their options.
#include <cstdio>

#include "search/strategy.hpp"
#include "tuner/cli/args.hpp"

namespace autotune::cli {

int run_strategies() {
  for (const auto& s : search::list_strategies()) {
    std::printf("%s\n    %s\n", s.name.c_str(), s.description.c_str());
    for (const auto& o : s.options)
      std::printf("    --strategy-option %s=%s  %s\n", o.name.c_str(), o.default_value.c_str(), o.description.c_str());
  }
  return 0;
}

}  // namespace autotune::cli
