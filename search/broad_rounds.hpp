// The covering rounds of broad_then_local (search/broad.cpp): its broad phase, the exploration phases between
// climbs, and the samples it falls back on when no config is left to expand. See docs/strategies.md.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

#include "search/base.hpp"

namespace autotune::search::detail {

/// A covering order (covering_order()) and how far a strategy has taken it. Positions count configs of the order;
/// a round ends at each of round_ends(). Not thread-safe.
class CoveringRounds {
 public:
  /// Draws the covering order of `space` from rng. `broad`: the share of the space the broad phase covers, in
  /// whole rounds (at least one).
  CoveringRounds(const ParameterSpace& space, Rng& rng, double broad);

  /// Positions after each round (increasing; the last is the size of the space); empty for an empty space.
  const std::vector<std::size_t>& round_ends() const { return cover_.round_ends; }
  /// Every valid config: the length of the order.
  std::size_t size() const { return cover_.order.size(); }
  /// The next position take() reads.
  std::size_t position() const { return pos_; }

  /// End of the broad phase: the first round end that reaches `broad` of the space, only the first round after a
  /// warm start (`warm`: the warm points already say where to look); 0 when `climb_only` or without rounds.
  std::size_t broad_end(bool climb_only, bool warm) const;
  /// Where covering stops for now: the end of the broad phase or of the current exploration phase, the later.
  std::size_t cover_end(bool climb_only, bool warm) const {
    return std::max(broad_end(climb_only, warm), explore_end_);
  }
  /// Starts an exploration phase of `rounds` (>= 1) covering rounds from the current position (the current round,
  /// if the position is inside one, counts as the first).
  void explore(std::size_t rounds) { explore_end_ = round_end_ahead(rounds); }

  /// Up to k configs of the order before position `end` that are neither observed nor outstanding; the position
  /// moves past every config read.
  std::vector<std::size_t> take(std::size_t k, std::size_t end, const StrategyView& v);
  /// The configs at the positions from the current one to `end`, at most n, known or not (what take() reads next).
  std::vector<std::size_t> ahead(std::size_t n, std::size_t end) const;
  /// Appends to `out` (up to n in all) what take() would hand out before `end`, leaving out `except`.
  void peek(std::size_t n, std::size_t end, std::size_t except, const StrategyView& v,
            std::vector<std::size_t>& out) const;

 private:
  /// Position where the `rounds`-th round from the current position ends (see explore()).
  std::size_t round_end_ahead(std::size_t rounds) const;

  const CoveringOrder cover_;
  const double broad_;
  std::size_t pos_ = 0;
  std::size_t explore_end_ = 0;  // position where the current exploration phase ends
};

}  // namespace autotune::search::detail
