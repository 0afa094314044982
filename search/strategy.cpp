#include "search/strategy.hpp"

#include "search/base.hpp"
#include "tuner/core/error.hpp"

namespace autotune::search {

namespace {

using Factory = std::unique_ptr<Strategy> (*)(const ParameterSpace&, std::uint64_t, const detail::OptionReader&);

struct Entry {
  const char* name;
  const char* description;
  std::vector<detail::OptionSpec> (*options)();
  Factory make;
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"brute_force",
       "every valid config once, in the space's enumeration order or (order=covering) in a stratified random "
       "order that shows every value of every parameter first",
       detail::brute_force_options, detail::make_brute_force},
      {"random_sample", "uniformly random valid configs without replacement", detail::random_sample_options,
       detail::make_random_sample},
      {"simulated_annealing",
       "random moves to neighbouring configs, accepting worse ones with a probability that shrinks as the "
       "temperature cools; restarts from a random config when cold",
       detail::simulated_annealing_options, detail::make_simulated_annealing},
      {"genetic_algorithm",
       "population of configs evolved by tournament selection, crossover of parameter values, mutation and "
       "elitism; invalid offspring are repaired to the nearest valid config",
       detail::genetic_algorithm_options, detail::make_genetic_algorithm},
      {"particle_swarm",
       "particles move through the normalised parameter-index space, pulled towards their own and the "
       "swarm's best configs; positions snap to the nearest valid config",
       detail::particle_swarm_options, detail::make_particle_swarm},
      {"differential_evolution",
       "population updated by adding scaled differences of members (rand/1/bin or best/1/bin); trials snap "
       "to the nearest valid config and replace their target when not worse",
       detail::differential_evolution_options, detail::make_differential_evolution},
      {"greedy_local_search",
       "hill climbing over neighbouring configs (first or best improvement) with random restarts at local "
       "optima",
       detail::greedy_local_search_options, detail::make_greedy_local_search},
      {"iterated_local_search",
       "hill climbing to a local optimum, then a random kick of a few moves and another climb; keeps the new "
       "optimum if it is not worse; random restart after many kicks without progress",
       detail::iterated_local_search_options, detail::make_iterated_local_search},
      {"basin_hopping",
       "like iterated_local_search but accepts worse local optima with a Metropolis probability at a fixed "
       "temperature",
       detail::basin_hopping_options, detail::make_basin_hopping},
      {"bayesian_optimization",
       "Gaussian process (Matern 5/2) over normalised parameter indices fitted to log times; proposes the "
       "unevaluated valid config with the largest expected improvement after a few random samples",
       detail::bayesian_optimization_options, detail::make_bayesian_optimization},
      {"broad_then_local",
       "the default under a budget or time limit: the warm-start points, then a stratified sample holding every "
       "value of every parameter (covering rounds), then a best-first search over neighbourhoods (hill climbs "
       "from the best configs found so far; one config per step under a budget, nearest moves first), with a "
       "further covering round after every few exhausted neighbourhoods until the whole space is visited; a "
       "budget under two covering rounds climbs from the spec default",
       detail::broad_then_local_options, detail::make_broad_then_local},
  };
  return entries;
}

}  // namespace

std::vector<StrategyInfo> list_strategies() {
  std::vector<StrategyInfo> out;
  for (const Entry& e : registry()) {
    StrategyInfo info;
    info.name = e.name;
    info.description = e.description;
    for (const detail::OptionSpec& o : e.options()) info.options.push_back({o.name, o.default_value, o.description});
    out.push_back(std::move(info));
  }
  return out;
}

Options limited_options(const std::string& strategy, const Options& given) {
  Options out = given;
  if (strategy == "brute_force" && !out.count("order")) out["order"] = "covering";
  return out;
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, const ParameterSpace& space, std::uint64_t seed,
                                        const Options& options) {
  for (const Entry& e : registry()) {
    if (name != e.name) continue;
    const detail::OptionReader reader(name, e.options(), options);
    return e.make(space, seed, reader);
  }
  std::string valid;
  for (const Entry& e : registry()) valid += (valid.empty() ? "" : ", ") + std::string(e.name);
  throw UsageError("unknown search strategy '" + name + "' (valid: " + valid + ")");
}

}  // namespace autotune::search
