// broad_then_local: the default strategy under a budget or time limit. A stratified sample first (every value
// of every parameter), then a best-first search over neighbourhoods, with further covering rounds in between.
#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "search/base.hpp"
#include "search/marginal.hpp"

namespace autotune::search::detail {

namespace {

/// Phase 1: the warm-start points (queued by StrategyBase), then the covering order up to broad_end().
/// Phase 2: the configs that ran, best first, are expanded: their unevaluated neighbours (one parameter
/// changed to any other value) are evaluated in random order. Whenever a neighbour is better it becomes the
/// first config to expand, so a run of expansions is a first-improvement hill climb; when the best config's
/// neighbourhood is exhausted (a local optimum among the evaluated configs), the next best one is expanded, so
/// later climbs start from the best configs found so far. A batch holds neighbours of one config only (taking
/// those of the next best configs too spread a batch of 32 and found the optimum less often). After `elite`
/// exhausted neighbourhoods, `explore` more covering rounds are evaluated, and the covering order is where new
/// configs come from when no config has unevaluated neighbours: every valid config is proposed once before the
/// strategy runs dry.
class BroadThenLocal final : public StrategyBase {
 public:
  BroadThenLocal(const ParameterSpace& space, std::uint64_t seed, const OptionReader& o)
      : StrategyBase("broad_then_local", space, seed),
        broad_(o.real("broad")),
        elite_(static_cast<std::size_t>(o.integer("elite"))),
        explore_(static_cast<std::size_t>(o.integer("explore"))),
        model_every_(static_cast<std::size_t>(o.integer("model"))),
        local_batch_(static_cast<std::size_t>(o.integer("local_batch"))),
        cover_(covering_order(space, rng_)),
        model_(space, o.real("model_ridge")),
        optimism_(o.real("model_optimism")) {
    const std::ptrdiff_t d = space.default_index();
    if (o.boolean("spec_default") && d >= 0) start_ = static_cast<std::size_t>(d);
  }

 protected:
  /// The broad phase hands out independent configs (a batch may span several steps); expansions need results.
  bool independent_steps() const override { return cover_pos_ < broad_end(); }

  std::vector<std::size_t> peek(std::size_t n) const override {
    std::vector<std::size_t> out;
    if (start_ != kNone && n > 0 && !known(start_) && !pending(start_)) out.push_back(start_);
    for (std::size_t k = cover_pos_; k < broad_end() && out.size() < n; ++k) {
      const std::size_t i = cover_.order[k];
      if (!known(i) && !pending(i) && i != start_) out.push_back(i);
    }
    return out;
  }

  std::vector<std::size_t> step(std::size_t hint) override {
    if (start_ != kNone) {  // the spec's default config first: the kernel author's best guess
      const std::size_t d = start_;
      start_ = kNone;
      if (!known(d) && !pending(d)) return {d};
    }
    if (exhausted_ >= elite_) {  // the elite's neighbourhoods are done: explore the space further
      exhausted_ = 0;
      explore_end_ = round_end_ahead(explore_);
    }
    const std::size_t end = std::max(broad_end(), explore_end_);
    if (cover_pos_ < end) {
      std::vector<std::size_t> chunk = next_covering(hint, end);
      if (!chunk.empty()) return chunk;
    }
    if (local_batch_ > 0) hint = std::min(hint, local_batch_);  // smaller local steps: more chances to adapt
    if (model_every_ > 0 && ++local_steps_ % model_every_ == 0) {
      std::vector<std::size_t> picks = model_picks(std::max<std::size_t>(1, hint / model_every_));
      if (!picks.empty()) return picks;
    }
    std::vector<std::size_t> out = expand(hint);
    if (out.empty()) out = next_covering(hint, cover_.order.size());  // nothing left to expand: sample more
    return out;
  }

 private:
  /// End (position in the covering order) of the broad phase: the first covering round that reaches `broad`
  /// of the space; only the first round after a warm start (the warm points already say where to look).
  std::size_t broad_end() const {
    if (cover_.round_ends.empty()) return 0;
    const double target = warm_points().empty() ? broad_ * static_cast<double>(size()) : 0.0;
    for (std::size_t e : cover_.round_ends)
      if (static_cast<double>(e) >= target) return e;
    return cover_.round_ends.back();
  }

  /// Position in the covering order where the `rounds`-th round from the current position ends (the current
  /// round, if the position is inside one, counts as the first).
  std::size_t round_end_ahead(std::size_t rounds) const {
    auto it = std::upper_bound(cover_.round_ends.begin(), cover_.round_ends.end(), cover_pos_);
    if (it == cover_.round_ends.end()) return cover_pos_;
    const std::size_t ahead = std::min<std::size_t>(rounds - 1, cover_.round_ends.end() - it - 1);
    return *(it + static_cast<std::ptrdiff_t>(ahead));
  }

  /// Up to k configs of the covering order before position `end` that are neither observed nor outstanding.
  std::vector<std::size_t> next_covering(std::size_t k, std::size_t end) {
    std::vector<std::size_t> out;
    while (cover_pos_ < end && out.size() < k) {
      const std::size_t i = cover_.order[cover_pos_++];
      if (!known(i) && !pending(i)) out.push_back(i);
    }
    return out;
  }

  /// Up to k unevaluated neighbours, neither observed nor outstanding, of the best ranked config that has any.
  /// Configs whose neighbourhood has been evaluated completely leave the ranking (counted in exhausted_).
  std::vector<std::size_t> expand(std::size_t k) {
    const std::vector<std::size_t>& seen = observed();
    for (; ranked_up_to_ < seen.size(); ++ranked_up_to_) {
      const std::size_t i = seen[ranked_up_to_];
      if (std::isfinite(value(i))) ranked_.insert({value(i), i});
    }
    std::vector<std::size_t> out;
    for (auto it = ranked_.begin(); it != ranked_.end() && out.size() < k;) {
      std::vector<std::size_t> nb = space_.neighbours(it->second);
      rng_.shuffle(nb);
      bool open = false;
      for (std::size_t c : nb) {
        if (known(c)) continue;
        open = true;
        if (out.size() < k && !pending(c) && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
      }
      if (open) {
        if (!out.empty()) break;  // one config's neighbours per step
        ++it;
      } else {
        it = ranked_.erase(it);
        ++exhausted_;
      }
    }
    return out;
  }

  /// Up to k unevaluated configs, neither observed nor outstanding, with the best times the marginal model
  /// predicts (refitted to every observation first). Candidates: every unevaluated config, or kModelCandidates
  /// random ones in larger spaces.
  std::vector<std::size_t> model_picks(std::size_t k) {
    const std::vector<std::size_t>& seen = observed();
    for (; modelled_up_to_ < seen.size(); ++modelled_up_to_)
      model_.add(seen[modelled_up_to_], value(seen[modelled_up_to_]));
    model_.fit();
    std::vector<std::size_t> candidates;
    if (unknown_count() <= kModelCandidates) {
      for (std::size_t i : unknown_pool())
        if (!pending(i)) candidates.push_back(i);
    } else {
      candidates = random_unknowns(kModelCandidates);
    }
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

  static constexpr std::size_t kModelCandidates = 4096;
  static constexpr std::size_t kOptimistic = 64;

  const double broad_;
  const std::size_t elite_, explore_, model_every_, local_batch_;
  const CoveringOrder cover_;
  MarginalModel model_;
  const double optimism_;
  std::size_t modelled_up_to_ = 0;  // observed() entries already given to the model
  std::size_t local_steps_ = 0;
  std::size_t start_ = kNone;  // the spec default, until it has been handed out
  std::size_t cover_pos_ = 0;
  std::size_t explore_end_ = 0;  // covering position where the current exploration phase ends
  std::set<std::pair<double, std::size_t>> ranked_;  // configs that ran with unevaluated neighbours, best first
  std::size_t ranked_up_to_ = 0;                     // observed() entries already ranked
  std::size_t exhausted_ = 0;  // neighbourhoods completed since the last exploration phase
};

}  // namespace

std::vector<OptionSpec> broad_then_local_options() {
  return {
      {"broad", "0", "share of the space in the broad phase, in whole covering rounds, at least one (0 = one round); "
       "after a warm start always one round",
       OptionKind::real, 0, 1, {}},
      {"elite", "16",
       "neighbourhoods of the best configs evaluated completely (local optima and the best configs next to "
       "them) before each exploration phase",
       OptionKind::integer, 1, 1e9, {}},
      {"explore", "1", "covering rounds in each exploration phase", OptionKind::integer, 1, 1e9, {}},
      {"model", "2",
       "every this many local steps, evaluate the configs a per-parameter marginal model of log time predicts "
       "fastest (0 = never)",
       OptionKind::integer, 0, 1e9, {}},
      {"model_ridge", "1", "ridge penalty of the marginal model (larger = more cautious effects)", OptionKind::real,
       1e-6, 1e6, {}},
      {"local_batch", "0",
       "most configs per step of the local phase when a larger batch is asked (0 = the batch asked); smaller steps "
       "adapt more often within a small budget but give the session fewer configs to compile at once",
       OptionKind::integer, 0, 1e9, {}},
      {"spec_default", "true", "evaluate the spec's default config first (after any warm-start points)",
       OptionKind::boolean, 0, 1, {}},
      {"model_optimism", "4",
       "the model's picks minimise predicted log time minus this many standard deviations of the prediction",
       OptionKind::real, 0, 100, {}},
  };
}

std::unique_ptr<Strategy> make_broad_then_local(const ParameterSpace& s, std::uint64_t seed, const OptionReader& o) {
  return std::make_unique<BroadThenLocal>(s, seed, o);
}

}  // namespace autotune::search::detail
