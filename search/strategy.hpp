// Search strategies: seeded ask/tell objects over the valid configurations of a ParameterSpace.
// No CUDA, no SQLite, no clocks, no files. Deterministic for a given seed and sequence of observations.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tuner/core/space.hpp"

namespace autotune::search {

/// Result of evaluating the config at space index `index`. value = time (lower is better);
/// failures (compile/launch error, wrong result) are +infinity.
struct Observation {
  std::size_t index = 0;
  double value = std::numeric_limits<double>::infinity();
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  /// Up to n indices to evaluate next (n >= 1). May repeat an index that was already observed (the
  /// session answers it from its records without spending budget); an empty result means the strategy
  /// has nothing more to propose (space exhausted).
  virtual std::vector<std::size_t> propose(std::size_t n) = 0;
  /// Results for proposed indices (any order, possibly a subset when a budget ends).
  virtual void observe(const std::vector<Observation>& results) = 0;
  /// Up to n indices the strategy expects to propose next, without proposing them or changing any state: a
  /// hint for speculative compilation that may turn out wrong. Default: none.
  virtual std::vector<std::size_t> upcoming(std::size_t n) const {
    (void)n;
    return {};
  }
  /// Configs believed to be good before any measurement (e.g. the best configs of a similar problem on the same
  /// device), as space indices, best first. Call once, right after construction and before the first propose().
  /// Indices outside the space and repeats are ignored. Every strategy built by make_strategy() proposes the
  /// ones not yet observed before anything else (they cost budget like any other evaluation; a batch may
  /// hold all of them), then uses them in its own way: local searches start their first climb from the
  /// best of them (by the value observed now), population strategies put them in the initial population,
  /// bayesian_optimization counts them among its initial samples, broad_then_local shortens its broad phase
  /// and climbs from them. Default: ignored.
  virtual void warm_start(const std::vector<std::size_t>& indices) { (void)indices; }
  /// The most evaluations this run will make (a `tune --budget`; 0 = not known, e.g. under a time limit). A hint
  /// for strategies that plan differently under small budgets; call before the first propose(). Default: ignored.
  virtual void set_budget(std::size_t evaluations) { (void)evaluations; }
};

struct OptionInfo {
  std::string name;
  std::string default_value;
  std::string description;
};

struct StrategyInfo {
  std::string name;
  std::string description;
  std::vector<OptionInfo> options;
};

using Options = std::map<std::string, std::string>;

/// Every strategy with its options and defaults.
std::vector<StrategyInfo> list_strategies();

/// Options for `strategy` in a run cut short by an evaluation budget or a time limit: `given` plus
/// order=covering for brute_force when `given` has no `order` (so a partial brute force sees every value of
/// every parameter early instead of the first variants only). Other strategies: `given` unchanged.
/// Does not validate (make_strategy does).
Options limited_options(const std::string& strategy, const Options& given);

/// The strategy to use when the user names none and the run is limited by a budget or a time limit.
inline constexpr const char* kLimitedDefaultStrategy = "broad_then_local";

/// Throws UsageError for an unknown strategy name, unknown option or unparsable option value.
/// The space must outlive the strategy.
std::unique_ptr<Strategy> make_strategy(const std::string& name, const ParameterSpace& space,
                                        std::uint64_t seed, const Options& options = {});

}  // namespace autotune::search
