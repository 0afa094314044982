// The covering rounds of broad_then_local: see search/broad_rounds.hpp.
#include "search/broad_rounds.hpp"

namespace autotune::search::detail {

CoveringRounds::CoveringRounds(const ParameterSpace& space, Rng& rng, double broad)
    : cover_(covering_order(space, rng)), broad_(broad) {}

std::size_t CoveringRounds::broad_end(bool climb_only, bool warm) const {
  if (cover_.round_ends.empty() || climb_only) return 0;
  const double target = warm ? 0.0 : broad_ * static_cast<double>(size());
  for (std::size_t e : cover_.round_ends)
    if (static_cast<double>(e) >= target) return e;
  return cover_.round_ends.back();
}

std::size_t CoveringRounds::round_end_ahead(std::size_t rounds) const {
  auto it = std::upper_bound(cover_.round_ends.begin(), cover_.round_ends.end(), pos_);
  if (it == cover_.round_ends.end()) return pos_;
  const std::size_t ahead = std::min<std::size_t>(rounds - 1, cover_.round_ends.end() - it - 1);
  return *(it + static_cast<std::ptrdiff_t>(ahead));
}

std::vector<std::size_t> CoveringRounds::take(std::size_t k, std::size_t end, const StrategyView& v) {
  std::vector<std::size_t> out;
  while (pos_ < end && out.size() < k) {
    const std::size_t i = cover_.order[pos_++];
    if (!v.known(i) && !v.pending(i)) out.push_back(i);
  }
  return out;
}

std::vector<std::size_t> CoveringRounds::ahead(std::size_t n, std::size_t end) const {
  std::vector<std::size_t> out;
  for (std::size_t k = pos_; k < end && out.size() < n; ++k) out.push_back(cover_.order[k]);
  return out;
}

void CoveringRounds::peek(std::size_t n, std::size_t end, std::size_t except, const StrategyView& v,
                          std::vector<std::size_t>& out) const {
  for (std::size_t k = pos_; k < end && out.size() < n; ++k) {
    const std::size_t i = cover_.order[k];
    if (!v.known(i) && !v.pending(i) && i != except) out.push_back(i);
  }
}

}  // namespace autotune::search::detail
