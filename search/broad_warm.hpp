// The warm start of broad_then_local (search/broad.cpp) as a hypothesis: a hint with source values gets a few
// evaluations first, and more only once the configs measured at both say how far its source can be trusted.
#pragma once
#include <cstddef>
#include <vector>

#include "search/base.hpp"

namespace autotune::search::detail {

/// The test of a warm start with source values (WarmStartHint::source_values) and its verdict. Options
/// warm_first, warm_halving and warm_more; see broad_then_local_options(). Not thread-safe.
class WarmHypothesis {
 public:
  WarmHypothesis(double first, double halving, double more) : first_(first), halving_(halving), more_(more) {}

  /// How many of the `given` warm points go before the covering round: `warm_first` of the `planned` evaluations,
  /// halved every `warm_halving` of the source's `distance`, rounded (none under small budgets, where one
  /// evaluation on a source's best that moved is a large share: 20-config saxpy at 1 evaluation), at most `given`.
  std::size_t upfront(std::size_t given, double distance, double planned) const;

  /// True once trusted_points() has decided the trust.
  bool decided() const { return decided_; }

  /// Once kMinTrustOverlap configs that ran have source values: decides the trust once (rank correlation over
  /// them, trust_from_correlation()) and returns the source's best configs not yet evaluated, the warm points
  /// first, then by source value: trust^2 x `warm_more` of the `planned` evaluations (none without trust).
  /// Empty while the overlap is too small.
  std::vector<std::size_t> trusted_points(const StrategyView& v, double planned);

  /// Fills the trust and its reason for Strategy::warm_trust(): the trust decided, with the correlation and overlap
  /// it was decided on (later measurements are not a fair sample: the climb and the trusted points pick configs
  /// good at both). `upfront`: how many warm points were measured first.
  void report(WarmTrust& t, std::size_t upfront) const;

 private:
  const double first_, halving_, more_;
  bool decided_ = false;  // the source was tested (trusted_points())
  double trust_ = 0, rho_ = 0;
  std::size_t overlap_ = 0, taken_ = 0;  // the overlap the trust was decided on; configs trusted_points() gave
};

}  // namespace autotune::search::detail
