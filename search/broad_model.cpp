// The model steps of broad_then_local: see search/broad_model.hpp.
#include "search/broad_model.hpp"

#include <algorithm>
#include <utility>

namespace autotune::search::detail {

void ModelPicks::refit(const StrategyView& v) const {
  const std::vector<std::size_t>& seen = v.observed();
  for (; modelled_up_to_ < seen.size(); ++modelled_up_to_)
    model_.add(seen[modelled_up_to_], v.value(seen[modelled_up_to_]));
  model_.fit();
}

std::vector<std::size_t> ModelPicks::candidates(std::size_t step, const StrategyView& v) const {
  if (v.unknown_count() <= kCandidates) return first_candidates(v);
  Rng draw(seed_ ^ (0x9e3779b97f4a7c15ull * (step + 1)));
  std::vector<std::size_t> out;
  out.reserve(kCandidates);
  for (std::size_t j = 0; j < kCandidates; ++j) {
    const std::size_t i = draw.below(v.size());
    if (!v.known(i) && !v.pending(i)) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::size_t> ModelPicks::first_candidates(const StrategyView& v) {
  std::vector<std::size_t> out;
  for (std::size_t i : v.unknown_pool()) {
    if (out.size() >= kCandidates) break;
    if (!v.pending(i)) out.push_back(i);
  }
  return out;
}

std::vector<std::size_t> ModelPicks::ranked(const std::vector<std::size_t>& candidates, std::size_t k) const {
  std::vector<std::pair<double, std::size_t>> scored;
  scored.reserve(candidates.size());
  for (std::size_t i : candidates) scored.push_back({model_.predict(i), i});
  if (optimism_ > 0) {  // optimistic picks among the kOptimistic best predictions
    const std::size_t m = std::min(kOptimistic, scored.size());
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(m), scored.end());
    scored.resize(m);
    for (auto& [score, i] : scored) score -= optimism_ * model_.spread(i);
  }
  k = std::min(k, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(k), scored.end());
  std::vector<std::size_t> out;
  for (std::size_t j = 0; j < k; ++j) out.push_back(scored[j].second);
  return out;
}

}  // namespace autotune::search::detail
