// Search strategies: seeded ask/tell objects over the valid configurations of a ParameterSpace.
// No CUDA, no SQLite, no clocks, no files. Deterministic for a given seed and sequence of observations.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tuner/core/space.hpp"

namespace autotune::search {

/// Result of evaluating the config at space index `index`. value = time (lower is better);
/// failures (compile/launch error, wrong result) are +infinity.
struct Observation {
  std::size_t index = 0;
  double value = std::numeric_limits<double>::infinity();
};

/// What another problem predicts for this one, given to Strategy::warm_start(): a hypothesis the strategy may test
/// against what it measures, not a list of orders. Typically another size of the same kernel on the same device, or
/// the same problem on another device of the same architecture.
struct WarmStartHint {
  /// Configs believed to be good, as space indices, best first. Indices outside the space and repeats are ignored.
  std::vector<std::size_t> indices;
  /// What the source measured for configs of this space, (index, value) with lower values better (e.g. median ns),
  /// for as many configs as it has (failures left out). Empty: nothing to test the indices against, so every
  /// strategy measures them first, as given.
  std::vector<std::pair<std::size_t, double>> source_values;
  /// How far the source is from this problem, >= 0: |log2 of the ratio of problem sizes| for another size,
  /// kOtherDeviceDistance for another device of the same architecture, 0 when not known.
  double distance = 0;
  /// "n=67108864": where the hint comes from, for reports only.
  std::string source;

  /// Distance given to a source on another device of the same architecture: as far as a size 4x away.
  static constexpr double kOtherDeviceDistance = 2.0;
};

/// How much a strategy let its warm start steer it, and why (Strategy::warm_trust()).
struct WarmTrust {
  std::size_t given = 0;     // distinct valid indices of the hint
  std::size_t measured = 0;  // of those, evaluated here so far
  /// Configs evaluated here (successfully) that the source has values for: the overlap the correlation is over.
  std::size_t overlap = 0;
  /// Spearman rank correlation of source values and values measured here over the overlap; NaN below 3 configs.
  double correlation = std::numeric_limits<double>::quiet_NaN();
  /// In [0, 1]: how much the source steered the search (1: its indices were measured as given).
  double trust = 0;
  /// One line for the session's output: "rank correlation 0.83 over 14 configurations measured at both".
  std::string reason;
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
  /// Whether the proposals are a fixed sequence: neither the results observed nor how many are asked for at once
  /// change which configurations come in which order (brute force). The session may then ask for larger batches
  /// (one per device measuring in parallel) without changing what is measured. Default: false.
  virtual bool fixed_order() const { return false; }
  /// Configs believed to be good before any measurement (e.g. the best configs of a similar problem on the same
  /// device), as space indices, best first. Call once, right after construction and before the first propose().
  /// Indices outside the space and repeats are ignored. Every strategy built by make_strategy() proposes the
  /// ones not yet observed before anything else (they cost budget like any other evaluation; a batch may
  /// hold all of them), then uses them in its own way: local searches start their first climb from the
  /// best of them (by the value observed now), population strategies put them in the initial population,
  /// bayesian_optimization counts them among its initial samples, broad_then_local shortens its broad phase
  /// and climbs from them. Default: ignored.
  virtual void warm_start(const std::vector<std::size_t>& indices) { (void)indices; }
  /// A warm start with what its source predicts (WarmStartHint). Call once, like warm_start(indices). Without
  /// source values it is warm_start(hint.indices). With them, strategies built by make_strategy() estimate from
  /// the configs measured at both how well the source predicts this problem (warm_trust()); broad_then_local
  /// measures only a few of the indices first and the rest only as far as the estimate trusts the source, the
  /// others measure the indices first as given. Default: warm_start(hint.indices).
  virtual void warm_start(const WarmStartHint& hint) { warm_start(hint.indices); }
  /// How much the warm start was trusted so far, and why (given == 0 without one). Default: nothing known.
  virtual WarmTrust warm_trust() const { return {}; }
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
