// The local phase of broad_then_local (search/broad.cpp): a best-first search over neighbourhoods (Climb) and the
// order in which a neighbourhood is tried (NeighbourOrder, option local_order).
#pragma once
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "search/base.hpp"

namespace autotune::search::detail {

/// Option local_order: how a neighbourhood is ordered (NeighbourOrder).
enum class LocalOrder { random, near, learned };
/// The LocalOrder of an option value ("learned", "near", anything else: random).
LocalOrder local_order(const std::string& name);

/// Orders the neighbours of a config by the size of their move (stable, so random among equals): a move of one
/// position in the value list of a numeric parameter (three or more values) first, then a categorical or
/// two-valued switch (a variant, a flag: another code path) as one and a half positions, then two positions,
/// ... Numeric parameters are mostly smooth in their (log-scale) positions, so the next value up or down is the
/// likeliest improvement. With LocalOrder::learned, among moves of one size: first those that made configs faster
/// where the same change was measured elsewhere, last those that made them slower; then moves of other
/// parameters before a further move of the parameter whose change led to the config (the others' best values may
/// have shifted with it). What was learned is kept incrementally over the observations. Not thread-safe.
class NeighbourOrder {
 public:
  NeighbourOrder(const ParameterSpace& space, LocalOrder order) : space_(space), order_(order) {}

  /// Orders `nb`, neighbours of `base`, as above; leaves them as they are under LocalOrder::random.
  void arrange(std::size_t base, std::vector<std::size_t>& nb, const StrategyView& v) const;
  /// Remembers that config c was proposed as a neighbour of `base` (the first such proposal counts).
  void note_parent(std::size_t c, std::size_t base) { parent_.emplace(c, base); }

 private:
  /// The parameter whose change led to config c (c was proposed as a neighbour of a config differing from it in
  /// that parameter only), or kNone when c came from elsewhere (covering order, model, warm start).
  std::size_t arrived_by(std::size_t c) const;
  /// Records every pair of successfully evaluated configs that differ in one parameter, once: the log time
  /// ratio of the move (parameter, from value, to value) and of its reverse. Incremental over observed().
  void learn_moves(const StrategyView& v) const;
  /// How much the move of parameter p from value position `from` to `to` changed the log time where both ends
  /// were evaluated (the mean over those pairs, shrunk towards 0 by one pseudo-pair): negative = it helped.
  double move_evidence(std::size_t p, int from, int to) const;
  static std::uint64_t move_key(std::size_t p, int from, int to) {
    return (static_cast<std::uint64_t>(p) << 32) | (static_cast<std::uint64_t>(from) << 16) |
           static_cast<std::uint64_t>(to);
  }

  struct MoveSum {
    double log_ratio = 0;
    int pairs = 0;
  };
  const ParameterSpace& space_;
  const LocalOrder order_;
  mutable std::unordered_map<std::uint64_t, MoveSum> move_sums_;  // by move_key: what each move did
  mutable std::unordered_set<std::size_t> paired_;                // successful configs whose pairs are in move_sums_
  mutable std::size_t moves_up_to_ = 0;                           // observed() entries already paired
  std::unordered_map<std::size_t, std::size_t> parent_;           // proposed neighbour -> the config it neighbours
};

/// Configs that ran with (possibly) unevaluated neighbours, best first: (value, index).
using Ranking = std::set<std::pair<double, std::size_t>>;

/// The best-first search over neighbourhoods: the configs that ran, best first, are expanded: their unevaluated
/// neighbours (one parameter changed to any other value) are evaluated, in the NeighbourOrder. Whenever a
/// neighbour is better it becomes the first config to expand, so a run of expansions is a first-improvement hill
/// climb; when the best config's neighbourhood is exhausted (a local optimum among the evaluated configs), the
/// next best one is expanded, so later climbs start from the best configs found so far. Not thread-safe.
class Climb {
 public:
  Climb(const ParameterSpace& space, LocalOrder order) : space_(space), order_(space, order) {}

  /// Up to k unevaluated neighbours, neither observed nor outstanding, of the best ranked config that has any
  /// (a batch holds neighbours of one config only: taking those of the next best configs too spread a batch of
  /// 32 and found the optimum less often). Configs whose neighbourhood has been evaluated completely leave the
  /// ranking (counted in exhausted()).
  std::vector<std::size_t> expand(std::size_t k, Rng& rng, const StrategyView& v);

  /// The work of expand() on a ranking of its own: up to k neighbours of the best config in `ranked` that has
  /// unevaluated ones, skipping those observed, outstanding or in `skip`; each neighbourhood visited is shuffled
  /// with rng (then arranged by the NeighbourOrder), and a config without unevaluated neighbours leaves `ranked`
  /// (counted in `exhausted`; `ahead`: the configs outstanding count as evaluated, as they will be when a guessed
  /// step runs). `base` gets the config expanded. A guess runs it on copies of the ranking and the generator, so
  /// that it names what the next expansion takes when the results outstanding change nothing.
  std::vector<std::size_t> expansion(Ranking& ranked, std::size_t k, Rng& rng, const std::vector<std::size_t>& skip,
                                     std::size_t& base, std::size_t& exhausted, bool ahead,
                                     const StrategyView& v) const;

  /// The ranking with the results not ranked yet: what the next expand() starts from.
  Ranking ranking(const StrategyView& v) const;
  /// The k best configs that ran (value, index), best first, including results not ranked yet.
  std::vector<std::pair<double, std::size_t>> best_ran(std::size_t k, const StrategyView& v) const;
  /// The neighbours of c in the order an expansion would try them (without the random order among equals);
  /// only the moves of one position (and categorical moves) when `closest`.
  std::vector<std::size_t> nearest_of(std::size_t c, bool closest, const StrategyView& v) const;

  /// Neighbourhoods completed since the last restart_count().
  std::size_t exhausted() const { return exhausted_; }
  void restart_count() { exhausted_ = 0; }

 private:
  const ParameterSpace& space_;
  NeighbourOrder order_;
  Ranking ranked_;                // configs that ran with unevaluated neighbours, best first
  std::size_t ranked_up_to_ = 0;  // observed() entries already ranked
  std::size_t exhausted_ = 0;     // neighbourhoods completed since the last restart_count()
};

}  // namespace autotune::search::detail
