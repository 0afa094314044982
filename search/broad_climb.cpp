// The local phase of broad_then_local: see search/broad_climb.hpp.
#include "search/broad_climb.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace autotune::search::detail {

LocalOrder local_order(const std::string& name) {
  return name == "learned" ? LocalOrder::learned : name == "near" ? LocalOrder::near : LocalOrder::random;
}

void NeighbourOrder::arrange(std::size_t base, std::vector<std::size_t>& nb, const StrategyView& v) const {
  if (order_ == LocalOrder::random) return;
  const std::vector<Param>& ps = space_.params();
  const bool learned = order_ == LocalOrder::learned;
  if (learned) learn_moves(v);
  const std::size_t came_along = learned ? arrived_by(base) : kNone;
  struct Move {
    int size;         // in half positions: a switch counts as 1.5
    double evidence;  // mean log time ratio of the same move elsewhere (0 = none measured)
    bool along;       // changes the parameter that led to base
    std::size_t c;
  };
  std::vector<Move> moves;
  moves.reserve(nb.size());
  for (std::size_t c : nb) {
    Move m{3, 0.0, false, c};
    for (std::size_t p = 0; p < ps.size(); ++p) {
      const int from = space_.value_at(base, p), to = space_.value_at(c, p);
      if (from == to) continue;
      if (ps[p].labels.empty() && ps[p].values.size() >= 3) m.size = 2 * std::abs(from - to);
      if (learned) m.evidence = move_evidence(p, from, to);
      m.along = p == came_along;
    }
    moves.push_back(m);
  }
  std::stable_sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) {
    if (a.size != b.size) return a.size < b.size;
    if (a.evidence != b.evidence) return a.evidence < b.evidence;
    return !a.along && b.along;
  });
  for (std::size_t j = 0; j < nb.size(); ++j) nb[j] = moves[j].c;
}

std::size_t NeighbourOrder::arrived_by(std::size_t c) const {
  const auto it = parent_.find(c);
  if (it == parent_.end()) return kNone;
  for (std::size_t p = 0; p < space_.params().size(); ++p)
    if (space_.value_at(c, p) != space_.value_at(it->second, p)) return p;
  return kNone;
}

void NeighbourOrder::learn_moves(const StrategyView& v) const {
  const std::vector<std::size_t>& seen = v.observed();
  for (; moves_up_to_ < seen.size(); ++moves_up_to_) {
    const std::size_t x = seen[moves_up_to_];
    if (!std::isfinite(v.value(x)) || !paired_.insert(x).second) continue;
    for (std::size_t y : space_.neighbours(x)) {
      if (paired_.count(y) == 0) continue;  // not evaluated, failed, or paired when it comes
      for (std::size_t p = 0; p < space_.params().size(); ++p) {
        const int a = space_.value_at(x, p), b = space_.value_at(y, p);
        if (a == b) continue;
        const double r = std::log(v.value(y) / v.value(x));
        MoveSum& fwd = move_sums_[move_key(p, a, b)];
        fwd.log_ratio += r;
        ++fwd.pairs;
        MoveSum& back = move_sums_[move_key(p, b, a)];
        back.log_ratio -= r;
        ++back.pairs;
      }
    }
  }
}

double NeighbourOrder::move_evidence(std::size_t p, int from, int to) const {
  const auto it = move_sums_.find(move_key(p, from, to));
  if (it == move_sums_.end()) return 0;
  return it->second.log_ratio / (it->second.pairs + 1.0);
}

std::vector<std::size_t> Climb::expand(std::size_t k, Rng& rng, const StrategyView& v) {
  const std::vector<std::size_t>& seen = v.observed();
  for (; ranked_up_to_ < seen.size(); ++ranked_up_to_) {
    const std::size_t i = seen[ranked_up_to_];
    if (std::isfinite(v.value(i))) ranked_.insert({v.value(i), i});
  }
  std::size_t base = kNone;
  std::vector<std::size_t> out = expansion(ranked_, k, rng, {}, base, exhausted_, false, v);
  for (std::size_t c : out) order_.note_parent(c, base);
  return out;
}

std::vector<std::size_t> Climb::expansion(Ranking& ranked, std::size_t k, Rng& rng,
                                          const std::vector<std::size_t>& skip, std::size_t& base,
                                          std::size_t& exhausted, bool ahead, const StrategyView& v) const {
  std::vector<std::size_t> out;
  for (auto it = ranked.begin(); it != ranked.end() && out.size() < k;) {
    std::vector<std::size_t> nb = space_.neighbours(it->second);
    rng.shuffle(nb);
    order_.arrange(it->second, nb, v);
    bool open = false;
    for (std::size_t c : nb) {
      if (v.known(c) || (ahead && v.pending(c))) continue;
      open = true;
      if (out.size() < k && !v.pending(c) && std::find(out.begin(), out.end(), c) == out.end() &&
          std::find(skip.begin(), skip.end(), c) == skip.end())
        out.push_back(c);
    }
    if (open) {
      if (!out.empty()) {  // one config's neighbours per step
        base = it->second;
        break;
      }
      ++it;
    } else {
      it = ranked.erase(it);
      ++exhausted;
    }
  }
  return out;
}

Ranking Climb::ranking(const StrategyView& v) const {
  Ranking ranked = ranked_;
  const std::vector<std::size_t>& seen = v.observed();
  for (std::size_t j = ranked_up_to_; j < seen.size(); ++j)
    if (std::isfinite(v.value(seen[j]))) ranked.insert({v.value(seen[j]), seen[j]});
  return ranked;
}

std::vector<std::pair<double, std::size_t>> Climb::best_ran(std::size_t k, const StrategyView& v) const {
  std::vector<std::pair<double, std::size_t>> bases(ranked_.begin(), ranked_.end());
  const std::vector<std::size_t>& seen = v.observed();
  for (std::size_t j = ranked_up_to_; j < seen.size(); ++j)
    if (std::isfinite(v.value(seen[j]))) bases.emplace_back(v.value(seen[j]), seen[j]);
  k = std::min(k, bases.size());
  std::partial_sort(bases.begin(), bases.begin() + static_cast<std::ptrdiff_t>(k), bases.end());
  bases.resize(k);
  return bases;
}

std::vector<std::size_t> Climb::nearest_of(std::size_t c, bool closest, const StrategyView& v) const {
  std::vector<std::size_t> nb = closest ? space_.adjacent(c) : space_.neighbours(c);
  if (!closest) order_.arrange(c, nb, v);
  return nb;
}

}  // namespace autotune::search::detail
