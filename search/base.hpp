// Internal building blocks shared by the strategies (not part of the public search API).
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "search/strategy.hpp"
#include "tuner/core/random.hpp"
#include "tuner/core/space.hpp"

namespace autotune::search::detail {

/// The strategies' generator (one per strategy, seeded from the session).
using Rng = Random;

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------------
// Options

enum class OptionKind { integer, real, boolean, choice };

/// Declaration of one strategy option; the registry lists these and validates user input with them.
struct OptionSpec {
  std::string name;
  std::string default_value;
  std::string description;
  OptionKind kind = OptionKind::integer;
  double min = -std::numeric_limits<double>::infinity();  // inclusive bounds for integer/real
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // for choice
};

/// Validated option values of one strategy (defaults filled in). Throws UsageError on bad input.
class OptionReader {
 public:
  OptionReader(const std::string& strategy, const std::vector<OptionSpec>& specs, const Options& given);
  std::int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
  bool boolean(const std::string& name) const;
  const std::string& choice(const std::string& name) const;

 private:
  const std::string& raw(const std::string& name) const;
  std::string strategy_;
  Options values_;
};

// ---------------------------------------------------------------------------------------------
// Geometry of the index encoding

/// Finds the valid config closest to a target point given as per-parameter value positions (any real
/// numbers; clamped to each parameter's range). Distance: squared Euclidean in normalised coordinates
/// (each parameter's index range scaled to [0, 1]); ties are broken at random. The distance is a sum over
/// parameters, so each storage block of the space (ParameterSpace::block_count) is searched on its own, by
/// branch and bound over its lexicographically sorted rows. Not thread-safe.
class NearestValid {
 public:
  explicit NearestValid(const ParameterSpace& space);
  /// The space must not be empty.
  std::size_t operator()(const std::vector<double>& target, Rng& rng) const;

 private:
  struct Search;
  void descend(Search& s, std::size_t column, std::size_t lo, std::size_t hi, double partial) const;
  const ParameterSpace& space_;
  std::vector<double> scale2_;  // squared normalisation factor per parameter
};

/// A stratified random permutation of the valid space, in rounds. Each round visits the (parameter, value)
/// pairs that still have unvisited configs in random order; for a pair not yet covered in this round it takes
/// an unvisited config with that value (the one covering the most pairs not yet covered in this round among a
/// few random candidates) and marks every pair of that config covered. So the first round holds every value
/// of every parameter that has valid configs, in at most (sum of the value counts) configs, and later rounds
/// keep the rest spread out. Cost: O(size x params) time, 4 x size x params bytes while building.
struct CoveringOrder {
  std::vector<std::size_t> order;       // every valid index exactly once
  std::vector<std::size_t> round_ends;  // position in `order` after each round (increasing; last == size)
};
CoveringOrder covering_order(const ParameterSpace& space, Rng& rng);

/// Spearman rank correlation of a and b (same length; ties get their mean rank): in [-1, 1], NaN when fewer than 3
/// pairs or when either side is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

/// How far a warm-start source with rank correlation `rho` over `overlap` configs measured at both may steer a
/// search, in [0, 1]: 0 below kMinTrustOverlap configs, and while rho is not above what an unrelated source gives
/// by chance (one standard error under independence, 1 / sqrt(overlap - 1)); rho otherwise.
double trust_from_correlation(double rho, std::size_t overlap);
inline constexpr std::size_t kMinTrustOverlap = 6;

/// Relative worsening of `next` over `current` for acceptance tests: log(next/current) for positive
/// values, a relative difference otherwise; +inf if next failed and current did not.
double worsening(double next, double current);

// ---------------------------------------------------------------------------------------------
// Strategy base

/// Implements the ask/tell bookkeeping shared by every strategy:
/// - remembers every observed value (failures and NaN as +inf) and which proposals are outstanding;
/// - asks the algorithm (step()) for candidates and never hands out an index that is already observed
///   or outstanding: such a candidate is skipped, and the algorithm reads its value on its next step;
/// - if the algorithm keeps producing only known candidates (kMaxIdleSteps steps in a row) or has
///   nothing to propose, falls back to random unobserved configs, so propose() never loops forever;
/// - returns an empty proposal exactly when every valid config has been observed.
/// Proposals that were never observed are forgotten when propose() is called again with nothing left
/// to hand out (the budget ended, or results were lost); they may be proposed again later.
class StrategyBase : public Strategy {
 public:
  StrategyBase(std::string name, const ParameterSpace& space, std::uint64_t seed);
  std::string name() const override { return name_; }
  std::vector<std::size_t> propose(std::size_t n) final;
  void observe(const std::vector<Observation>& results) final;
  /// What propose() would hand out next from candidates already generated (the rest of a generation), then,
  /// for independent steps, what peek() names, otherwise what guess() names.
  std::vector<std::size_t> upcoming(std::size_t n) const final;
  /// Queues the valid, distinct indices ahead of anything step() suggests (see Strategy::warm_start); the
  /// algorithm reads them with warm_points(). A later call adds its points in front of the queue.
  void warm_start(const std::vector<std::size_t>& indices) final;
  /// Keeps the hint's source values (source_value()) and queues the first warm_upfront() of its valid, distinct
  /// indices ahead of anything step() suggests; warm_points() names all of them. Reads budget(): call
  /// set_budget() first. A later call adds its points in front of the queue and replaces the source values.
  void warm_start(const WarmStartHint& hint) final;
  /// The warm start's indices, how many were measured, the rank correlation over the configs measured here that
  /// the source has values for, and the trust the algorithm placed in it (warm_trust_level()).
  WarmTrust warm_trust() const final;
  /// Remembers the budget; the algorithm reads it with budget().
  void set_budget(std::size_t evaluations) final { budget_ = evaluations; }

 protected:
  static constexpr int kMaxIdleSteps = 200;

  /// Next step of the algorithm: indices it wants values for (duplicates and known indices allowed;
  /// they cost nothing). Values of earlier candidates are read with known()/value(). `hint` is how many
  /// fresh candidates the caller would still like (>= 1). An empty result means "nothing to suggest".
  virtual std::vector<std::size_t> step(std::size_t hint) = 0;

  /// True if the algorithm's steps do not depend on each other's results (brute force, random): then a
  /// single propose() may call step() several times to fill a batch.
  virtual bool independent_steps() const { return false; }

  /// Up to n fresh candidates that the next step() calls would produce, without changing any state (used by
  /// upcoming() for independent steps). Default: none (steps that draw random numbers cannot say).
  virtual std::vector<std::size_t> peek(std::size_t n) const {
    (void)n;
    return {};
  }

  /// Up to n fresh candidates that later dependent steps will probably propose, without changing any state:
  /// a compile-ahead hint that may turn out wrong (used by upcoming() when the steps are not independent).
  /// Default: none.
  virtual std::vector<std::size_t> guess(std::size_t n) const {
    (void)n;
    return {};
  }

  bool known(std::size_t i) const { return known_[i] != 0; }
  bool pending(std::size_t i) const { return pending_[i] != 0; }
  /// Observed value of i (+inf = failure); +inf also when unknown, so unknown ranks as worst.
  double value(std::size_t i) const { return known_[i] ? values_[i] : kInf; }
  /// Number of valid configs not yet observed.
  std::size_t unknown_count() const { return pool_.size(); }
  /// Proposals handed out and not yet observed, oldest first.
  const std::vector<std::size_t>& outstanding() const { return outstanding_; }
  /// A uniformly random config that is neither observed nor outstanding, or kNone.
  std::size_t random_unknown();
  /// Up to k distinct random configs that are neither observed nor outstanding.
  std::vector<std::size_t> random_unknowns(std::size_t k);
  /// Unobserved indices (order depends on history, deterministic for a seed).
  const std::vector<std::size_t>& unknown_pool() const { return pool_; }
  /// Observed indices in the order their results arrived.
  const std::vector<std::size_t>& observed() const { return observed_; }
  std::size_t size() const { return space_.size(); }
  /// Warm-start points in the order given (valid, no repeats); empty without a warm start.
  const std::vector<std::size_t>& warm_points() const { return warm_; }
  /// True when the warm start came with source values (WarmStartHint::source_values).
  bool has_source_values() const { return !source_.empty(); }
  /// The source's value of config i (lower is better), NaN when it has none.
  double source_value(std::size_t i) const {
    return i < source_.size() ? source_[i] : std::numeric_limits<double>::quiet_NaN();
  }
  /// The warm start's distance (WarmStartHint::distance; 0 without one).
  double warm_distance() const { return warm_distance_; }
  /// Spearman correlation of source values and observed values over the configs observed here with a finite value
  /// that the source has; `overlap` gets their number. NaN below 3 (see spearman()).
  double source_correlation(std::size_t& overlap) const;
  /// How many of the given warm points (valid, distinct) to queue first. Default: all of them.
  virtual std::size_t warm_upfront(std::size_t given) const { return given; }
  /// Fills the trust warm_trust() reports (in [0, 1]) and why; may replace the correlation and overlap with those
  /// the trust was decided on. Default: trust 1, the points are measured as given.
  virtual void warm_trust_level(WarmTrust& t) const {
    t.trust = 1.0;
    t.reason = "its configurations were measured first, as given";
  }
  /// Puts indices (valid, not yet known) at the front of the queue, in order: proposed before anything else.
  void queue_front(const std::vector<std::size_t>& indices);
  /// The budget given by set_budget() (0 = not known).
  std::size_t budget() const { return budget_; }
  /// The warm-start point with the best value observed so far (the first given one among equals, so an
  /// unknown one only when none ran), or kNone without a warm start.
  std::size_t best_warm_point() const;
  /// k distinct configs for a first population: the warm-start points (best observed first, up to k), then
  /// random configs that are neither observed nor outstanding. Warm points may be known already; the caller
  /// reads their values instead of proposing them.
  std::vector<std::size_t> initial_population(std::size_t k);
  /// Nearest valid config to a point in value-index coordinates (see NearestValid).
  std::size_t nearest(const std::vector<double>& target);
  std::size_t dims() const { return space_.params().size(); }

  const ParameterSpace& space_;
  Rng rng_;

 private:
  friend class StrategyView;
  void drop_outstanding();
  void remove_from_pool(std::size_t i);

  std::string name_;
  std::vector<double> values_;
  std::vector<std::uint8_t> known_;
  std::vector<std::uint8_t> pending_;
  std::vector<std::size_t> outstanding_;
  std::size_t budget_ = 0;
  std::vector<std::size_t> pool_;      // unobserved indices (swap-remove)
  std::vector<std::size_t> pool_pos_;  // position of each index in pool_, kNone if observed
  std::vector<std::size_t> observed_;
  std::vector<std::size_t> warm_;
  std::vector<double> source_;  // per index: the warm start's source value, NaN where it has none; empty = none
  double warm_distance_ = 0;
  std::deque<std::size_t> queue_;
  std::unique_ptr<NearestValid> nearest_;
};

/// Read access to a StrategyBase's record (what was observed with which value, what is outstanding, the warm
/// start and the budget) for the parts a strategy hands work to, e.g. broad_then_local's covering rounds, climb,
/// model steps and warm-start test. The same answers as the StrategyBase accessors of the same names. Holds a
/// reference: valid while the strategy lives; as thread-safe as the strategy (not at all).
class StrategyView {
 public:
  explicit StrategyView(const StrategyBase& s) : s_(s) {}
  bool known(std::size_t i) const { return s_.known(i); }
  bool pending(std::size_t i) const { return s_.pending(i); }
  double value(std::size_t i) const { return s_.value(i); }
  std::size_t unknown_count() const { return s_.unknown_count(); }
  const std::vector<std::size_t>& unknown_pool() const { return s_.unknown_pool(); }
  const std::vector<std::size_t>& observed() const { return s_.observed(); }
  std::size_t size() const { return s_.size(); }
  const std::vector<std::size_t>& warm_points() const { return s_.warm_points(); }
  double source_value(std::size_t i) const { return s_.source_value(i); }
  double source_correlation(std::size_t& overlap) const { return s_.source_correlation(overlap); }

 private:
  const StrategyBase& s_;
};

// ---------------------------------------------------------------------------------------------
// Factories (one per strategy; options already validated against the spec lists below)

std::vector<OptionSpec> brute_force_options();
std::vector<OptionSpec> random_sample_options();
std::vector<OptionSpec> simulated_annealing_options();
std::vector<OptionSpec> greedy_local_search_options();
std::vector<OptionSpec> iterated_local_search_options();
std::vector<OptionSpec> basin_hopping_options();
std::vector<OptionSpec> genetic_algorithm_options();
std::vector<OptionSpec> particle_swarm_options();
std::vector<OptionSpec> differential_evolution_options();
std::vector<OptionSpec> bayesian_optimization_options();
std::vector<OptionSpec> broad_then_local_options();

std::unique_ptr<Strategy> make_brute_force(const ParameterSpace& s, std::uint64_t seed, const OptionReader& o);
std::unique_ptr<Strategy> make_random_sample(const ParameterSpace& s, std::uint64_t seed, const OptionReader& o);
std::unique_ptr<Strategy> make_simulated_annealing(const ParameterSpace& s, std::uint64_t seed,
                                                   const OptionReader& o);
std::unique_ptr<Strategy> make_greedy_local_search(const ParameterSpace& s, std::uint64_t seed,
                                                   const OptionReader& o);
std::unique_ptr<Strategy> make_iterated_local_search(const ParameterSpace& s, std::uint64_t seed,
                                                     const OptionReader& o);
std::unique_ptr<Strategy> make_basin_hopping(const ParameterSpace& s, std::uint64_t seed, const OptionReader& o);
std::unique_ptr<Strategy> make_genetic_algorithm(const ParameterSpace& s, std::uint64_t seed,
                                                 const OptionReader& o);
std::unique_ptr<Strategy> make_particle_swarm(const ParameterSpace& s, std::uint64_t seed, const OptionReader& o);
std::unique_ptr<Strategy> make_differential_evolution(const ParameterSpace& s, std::uint64_t seed,
                                                      const OptionReader& o);
std::unique_ptr<Strategy> make_bayesian_optimization(const ParameterSpace& s, std::uint64_t seed,
                                                     const OptionReader& o);
std::unique_ptr<Strategy> make_broad_then_local(const ParameterSpace& s, std::uint64_t seed, const OptionReader& o);

}  // namespace autotune::search::detail
