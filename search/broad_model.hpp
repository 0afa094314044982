// The model steps of broad_then_local (search/broad.cpp): configs a per-parameter marginal model of log time
// (search/marginal.hpp) predicts fastest, among candidates drawn per step.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "search/base.hpp"
#include "search/marginal.hpp"

namespace autotune::search::detail {

/// The marginal model over a strategy's observations and the picks it makes. Options model_ridge and
/// model_optimism; see broad_then_local_options(). Its const methods may refit the model (a function of the
/// observations only), so a guess may call them without changing what the strategy does. Not thread-safe.
class ModelPicks {
 public:
  /// `seed`: the strategy's seed, from which the candidates of each step are drawn.
  ModelPicks(const ParameterSpace& space, std::uint64_t seed, double ridge, double optimism)
      : seed_(seed), model_(space, ridge), optimism_(optimism) {}

  /// Up to k unevaluated configs, neither observed nor outstanding, with the best times the model predicts
  /// (refitted to every observation first), among candidates(step).
  std::vector<std::size_t> picks(std::size_t k, std::size_t step, const StrategyView& v) const {
    refit(v);
    return ranked(candidates(step, v), k);
  }

  /// Brings the model up to date with every observation.
  void refit(const StrategyView& v) const;

  /// The candidates of the model step numbered `step`: every config neither observed nor outstanding, or in larger
  /// spaces kCandidates indices drawn from the whole space by a generator of the step's own (seeded by the
  /// strategy's seed and the step), the observed and outstanding ones left out. The draw neither depends on nor
  /// advances the strategy's generator, so a guess names the same candidates (and the expansion after them) as the
  /// step will.
  std::vector<std::size_t> candidates(std::size_t step, const StrategyView& v) const;

  /// Up to k of the candidates, best first by the model's current fit: the lowest predicted log time minus
  /// `model_optimism` standard deviations, among the kOptimistic best predictions.
  std::vector<std::size_t> ranked(const std::vector<std::size_t>& candidates, std::size_t k) const;

 private:
  /// The first kCandidates configs of the unknown pool that are not outstanding.
  static std::vector<std::size_t> first_candidates(const StrategyView& v);

  static constexpr std::size_t kCandidates = 4096;
  static constexpr std::size_t kOptimistic = 64;

  const std::uint64_t seed_;     // of the candidate draws (candidates())
  mutable MarginalModel model_;  // a function of the observations: refit() may bring it up to date at any time
  const double optimism_;
  mutable std::size_t modelled_up_to_ = 0;  // observed() entries already given to the model
};

}  // namespace autotune::search::detail
