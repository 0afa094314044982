// The warm start of broad_then_local as a hypothesis: see search/broad_warm.hpp.
#include "search/broad_warm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

namespace autotune::search::detail {

std::size_t WarmHypothesis::upfront(std::size_t given, double distance, double planned) const {
  const double share = first_ / std::pow(2.0, distance / halving_);
  return std::min(given, static_cast<std::size_t>(std::llround(share * planned)));
}

std::vector<std::size_t> WarmHypothesis::trusted_points(const StrategyView& v, double planned) {
  std::size_t overlap = 0;
  const double rho = v.source_correlation(overlap);
  if (overlap < kMinTrustOverlap) return {};
  decided_ = true;
  trust_ = trust_from_correlation(rho, overlap);
  rho_ = rho;
  overlap_ = overlap;
  const auto want = static_cast<std::size_t>(std::llround(trust_ * trust_ * more_ * planned));
  std::vector<std::size_t> out;
  auto take = [&](std::size_t i) {
    if (out.size() < want && !v.known(i) && !v.pending(i) && std::find(out.begin(), out.end(), i) == out.end())
      out.push_back(i);
  };
  for (std::size_t i : v.warm_points()) take(i);
  if (out.size() < want) {
    std::vector<std::pair<double, std::size_t>> ranked;
    for (std::size_t i = 0; i < v.size(); ++i)
      if (std::isfinite(v.source_value(i)) && !v.known(i) && !v.pending(i)) ranked.push_back({v.source_value(i), i});
    const std::size_t k = std::min(ranked.size(), want);
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(k), ranked.end());
    for (std::size_t j = 0; j < k; ++j) take(ranked[j].second);
  }
  taken_ = out.size();
  return out;
}

void WarmHypothesis::report(WarmTrust& t, std::size_t upfront) const {
  const std::string first =
      upfront == 0 ? "none measured first" : "its best " + std::to_string(upfront) + " measured first";
  if (!decided_) {
    t.trust = 0;
    t.reason = first + "; too few configurations measured at both to estimate a rank correlation (" +
               std::to_string(kMinTrustOverlap) + " needed)";
    return;
  }
  char rho[32];
  std::snprintf(rho, sizeof rho, "%.2f", rho_);
  t.trust = trust_;
  t.correlation = rho_;
  t.overlap = overlap_;
  const std::string over =
      "rank correlation " + std::string(rho) + " over " + std::to_string(overlap_) + " configurations measured at both";
  if (trust_ <= 0)
    t.reason = over + ", not above chance: nothing more taken from it (" + first + ")";
  else
    t.reason = over + " (" + first + ", " + std::to_string(taken_) + " more of its best after that)";
}

}  // namespace autotune::search::detail
