// broad_then_local: the default strategy under a budget or time limit. A stratified sample first (every value
// of every parameter), then a best-first search over neighbourhoods, with further covering rounds in between.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
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
/// Option local_order: how a neighbourhood is ordered (nearest_first()).
enum class Order { random, near, learned };
Order local_order(const std::string& name) {
  return name == "learned" ? Order::learned : name == "near" ? Order::near : Order::random;
}

class BroadThenLocal final : public StrategyBase {
 public:
  BroadThenLocal(const ParameterSpace& space, std::uint64_t seed, const OptionReader& o)
      : StrategyBase("broad_then_local", space, seed),
        seed_(seed),
        broad_(o.real("broad")),
        elite_(static_cast<std::size_t>(o.integer("elite"))),
        explore_(static_cast<std::size_t>(o.integer("explore"))),
        model_every_(static_cast<std::size_t>(o.integer("model"))),
        local_batch_(static_cast<std::size_t>(o.integer("local_batch"))),
        order_(local_order(o.choice("local_order"))),
        climb_below_(o.real("climb_below")),
        cover_(covering_order(space, rng_)),
        model_(space, o.real("model_ridge")),
        optimism_(o.real("model_optimism")),
        warm_first_(o.real("warm_first")),
        warm_halving_(o.real("warm_halving")),
        warm_more_(o.real("warm_more")) {
    const std::ptrdiff_t d = space.default_index();
    if (o.boolean("spec_default") && d >= 0) start_ = default_ = static_cast<std::size_t>(d);
  }

 protected:
  /// The broad phase hands out independent configs (a batch may span several steps); expansions need results.
  bool independent_steps() const override { return cover_pos_ < broad_end(); }

  /// A budget too small for a covering round and a local phase after it (under `climb_below` first rounds, no
  /// warm start measured as given; a hint with source values may be): the whole budget goes to a climb from the spec
  /// default (or a better warm point), nearest moves first, no model picks.
  bool climb_only() const {
    return budget() > 0 && default_ != kNone && (warm_points().empty() || has_source_values()) &&
           !cover_.round_ends.empty() &&
           static_cast<double>(budget()) < climb_below_ * static_cast<double>(cover_.round_ends.front());
  }

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
    if (cover_pos_ < end && !climb_only()) {
      std::vector<std::size_t> chunk = next_covering(hint, end);
      if (!chunk.empty()) return chunk;
    }
    // Smaller local steps adapt more often. Under a budget each evaluation is what is scarce: one per step (the
    // session compiles the guessed next ones ahead). Under a time limit (no budget) wall time is: whole batches
    // keep the compile threads and the GPU busy.
    if (has_source_values() && !trust_decided_) {  // enough measured at both to test the warm start?
      std::vector<std::size_t> more = trusted_warm_points();
      if (!more.empty()) return more;
    }
    const std::size_t cap = local_batch_ > 0 ? local_batch_ : (budget() > 0 ? 1 : hint);
    hint = std::min(hint, cap);
    if (model_every_ > 0 && !climb_only() && ++local_steps_ % model_every_ == 0) {
      std::vector<std::size_t> picks = model_picks(std::max<std::size_t>(1, hint / model_every_), local_steps_);
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
    if (cover_.round_ends.empty() || climb_only()) return 0;
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

  /// The evaluations this run plans for: its budget, else (a time limit) 5% of the space, at least a covering round.
  double planned() const {
    if (budget() > 0) return static_cast<double>(budget());
    const double round = cover_.round_ends.empty() ? 1.0 : static_cast<double>(cover_.round_ends.front());
    return std::max(round, 0.05 * static_cast<double>(size()));
  }

  /// A warm start with source values is a hypothesis: only `warm_first` of the planned evaluations (halved every
  /// `warm_halving` of distance, rounded; none under small budgets, where one evaluation on a source's best that
  /// moved is a large share: 20-config saxpy at 1 evaluation) go to its best configs before the covering round. A
  /// warm start without values: all of its configs.
  std::size_t warm_upfront(std::size_t given) const override {
    if (!has_source_values()) return given;
    const double share = warm_first_ / std::pow(2.0, warm_distance() / warm_halving_);
    return std::min(given, static_cast<std::size_t>(std::llround(share * planned())));
  }

  /// Once kMinTrustOverlap configs that ran here have source values: decides the trust once (rank correlation
  /// over them, trust_from_correlation()) and returns the source's best configs not yet evaluated, the given
  /// indices first, then by source value: trust^2 x `warm_more` of the planned evaluations (none without trust).
  /// Empty while the overlap is too small, and after the decision.
  std::vector<std::size_t> trusted_warm_points() {
    std::size_t overlap = 0;
    const double rho = source_correlation(overlap);
    if (overlap < kMinTrustOverlap) return {};
    trust_decided_ = true;
    trust_ = trust_from_correlation(rho, overlap);
    trust_rho_ = rho;
    trust_overlap_ = overlap;
    const auto want = static_cast<std::size_t>(std::llround(trust_ * trust_ * warm_more_ * planned()));
    std::vector<std::size_t> out;
    auto take = [&](std::size_t i) {
      if (out.size() < want && !known(i) && !pending(i) && std::find(out.begin(), out.end(), i) == out.end())
        out.push_back(i);
    };
    for (std::size_t i : warm_points()) take(i);
    if (out.size() < want) {
      std::vector<std::pair<double, std::size_t>> ranked;
      for (std::size_t i = 0; i < size(); ++i)
        if (std::isfinite(source_value(i)) && !known(i) && !pending(i)) ranked.push_back({source_value(i), i});
      const std::size_t k = std::min(ranked.size(), want);
      std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(k), ranked.end());
      for (std::size_t j = 0; j < k; ++j) take(ranked[j].second);
    }
    trusted_more_ = out.size();
    return out;
  }

  /// The trust decided by trusted_warm_points(), with the correlation and overlap it was decided on (later
  /// measurements are not a fair sample: the climb and the trusted points pick configs good at both).
  void warm_trust_level(WarmTrust& t) const override {
    if (!has_source_values()) return StrategyBase::warm_trust_level(t);
    const std::size_t upfront = warm_upfront(warm_points().size());
    const std::string first =
        upfront == 0 ? "none measured first" : "its best " + std::to_string(upfront) + " measured first";
    if (!trust_decided_) {
      t.trust = 0;
      t.reason = first + "; too few configurations measured at both to estimate a rank correlation (" +
                 std::to_string(kMinTrustOverlap) + " needed)";
      return;
    }
    char rho[32];
    std::snprintf(rho, sizeof rho, "%.2f", trust_rho_);
    t.trust = trust_;
    t.correlation = trust_rho_;
    t.overlap = trust_overlap_;
    const std::string over = "rank correlation " + std::string(rho) + " over " + std::to_string(trust_overlap_) +
                             " configurations measured at both";
    if (trust_ <= 0)
      t.reason = over + ", not above chance: nothing more taken from it (" + first + ")";
    else
      t.reason = over + " (" + first + ", " + std::to_string(trusted_more_) + " more of its best after that)";
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
    std::size_t base = kNone;
    std::vector<std::size_t> out = expansion(ranked_, k, rng_, {}, base, exhausted_, false);
    for (std::size_t c : out) parent_.emplace(c, base);
    return out;
  }

  /// The work of expand() on a ranking of its own: up to k neighbours of the best config in `ranked` that has
  /// unevaluated ones, skipping those observed, outstanding or in `skip`; each neighbourhood visited is shuffled
  /// with rng (then ordered by nearest_first()), and a config without unevaluated neighbours leaves `ranked`
  /// (counted in `exhausted`; `ahead`: the configs outstanding count as evaluated, as they will be when a guessed
  /// step runs). `base` gets the config expanded. guess() runs it on copies of the ranking and the
  /// generator, so that it names what the next expansion takes when the results outstanding change nothing.
  std::vector<std::size_t> expansion(std::set<std::pair<double, std::size_t>>& ranked, std::size_t k, Rng& rng,
                                     const std::vector<std::size_t>& skip, std::size_t& base, std::size_t& exhausted,
                                     bool ahead) const {
    std::vector<std::size_t> out;
    for (auto it = ranked.begin(); it != ranked.end() && out.size() < k;) {
      std::vector<std::size_t> nb = space_.neighbours(it->second);
      rng.shuffle(nb);
      if (order_ != Order::random) nearest_first(it->second, nb);
      bool open = false;
      for (std::size_t c : nb) {
        if (known(c) || (ahead && pending(c))) continue;
        open = true;
        if (out.size() < k && !pending(c) && std::find(out.begin(), out.end(), c) == out.end() &&
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

  /// Orders the neighbours of `base` by the size of their move (stable, so random among equals): a move of one
  /// position in the value list of a numeric parameter (three or more values) first, then a categorical or
  /// two-valued switch (a variant, a flag: another code path) as one and a half positions, then two positions,
  /// ... Numeric parameters are mostly smooth in their (log-scale) positions, so the next value up or down is the
  /// likeliest improvement. With local_order `learned`, among moves of one size: first those that made configs
  /// faster where the same change was measured elsewhere, last those that made them slower (move_evidence); then
  /// moves of other parameters before a further move of the parameter whose change led to `base` (the others'
  /// best values may have shifted with it).
  void nearest_first(std::size_t base, std::vector<std::size_t>& nb) const {
    const std::vector<Param>& ps = space_.params();
    const bool learned = order_ == Order::learned;
    if (learned) learn_moves();
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

  /// The parameter whose change led to config c (c was proposed as a neighbour of a config differing from it in
  /// that parameter only), or kNone when c came from elsewhere (covering order, model, warm start).
  std::size_t arrived_by(std::size_t c) const {
    const auto it = parent_.find(c);
    if (it == parent_.end()) return kNone;
    for (std::size_t p = 0; p < space_.params().size(); ++p)
      if (space_.value_at(c, p) != space_.value_at(it->second, p)) return p;
    return kNone;
  }

  /// Records every pair of successfully evaluated configs that differ in one parameter, once: the log time
  /// ratio of the move (parameter, from value, to value) and of its reverse. Incremental over observed().
  void learn_moves() const {
    const std::vector<std::size_t>& seen = observed();
    for (; moves_up_to_ < seen.size(); ++moves_up_to_) {
      const std::size_t x = seen[moves_up_to_];
      if (!std::isfinite(value(x)) || !paired_.insert(x).second) continue;
      for (std::size_t y : space_.neighbours(x)) {
        if (paired_.count(y) == 0) continue;  // not evaluated, failed, or paired when it comes
        for (std::size_t p = 0; p < space_.params().size(); ++p) {
          const int a = space_.value_at(x, p), b = space_.value_at(y, p);
          if (a == b) continue;
          const double r = std::log(value(y) / value(x));
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
  /// How much the move of parameter p from value position `from` to `to` changed the log time where both ends
  /// were evaluated (the mean over those pairs, shrunk towards 0 by one pseudo-pair): negative = it helped.
  double move_evidence(std::size_t p, int from, int to) const {
    const auto it = move_sums_.find(move_key(p, from, to));
    if (it == move_sums_.end()) return 0;
    return it->second.log_ratio / (it->second.pairs + 1.0);
  }
  static std::uint64_t move_key(std::size_t p, int from, int to) {
    return (static_cast<std::uint64_t>(p) << 32) | (static_cast<std::uint64_t>(from) << 16) |
           static_cast<std::uint64_t>(to);
  }

  /// What the next steps will probably evaluate, likeliest first. First the steps as they will run if the results
  /// outstanding change nothing (no new best among them): the rest of an exploration round's covering chunk, or
  /// the coming local steps, model picks under the newest fit and expansions run on copies of the ranking and the
  /// generator (so an expansion is named exactly as it will be drawn, wherever no random draw of a model step in a
  /// large space comes between). Then hedges for a new best: the nearest neighbours of the configs being measured,
  /// the neighbours of the next best configs. A compile-ahead hint only.
  std::vector<std::size_t> guess(std::size_t n) const override {
    std::vector<std::size_t> out;
    auto add = [&](const std::vector<std::size_t>& cs) {
      for (std::size_t c : cs)
        if (out.size() < n && !known(c) && !pending(c) && std::find(out.begin(), out.end(), c) == out.end())
          out.push_back(c);
    };
    const std::size_t cover_end = std::max(broad_end(), explore_end_);
    if (cover_pos_ < cover_end && !climb_only()) {
      std::vector<std::size_t> chunk;
      for (std::size_t k = cover_pos_; k < cover_end && chunk.size() < n; ++k) chunk.push_back(cover_.order[k]);
      add(chunk);
    } else {
      local_steps_ahead(n, out);
    }
    const std::vector<std::pair<double, std::size_t>> bases = best_ran(kGuessBases);
    for (std::size_t c : outstanding()) add(nearest_of(c, true));
    for (std::size_t b = 0; b < bases.size(); ++b) add(nearest_of(bases[b].second, false));
    return out;
  }

  /// Appends to `out` (up to n in all) what the next local steps take if the results outstanding bring no new
  /// best: guess()'s main part.
  void local_steps_ahead(std::size_t n, std::vector<std::size_t>& out) const {
    std::set<std::pair<double, std::size_t>> ranked = ranked_;
    const std::vector<std::size_t>& seen = observed();
    for (std::size_t j = ranked_up_to_; j < seen.size(); ++j)
      if (std::isfinite(value(seen[j]))) ranked.insert({value(seen[j]), seen[j]});
    Rng rng = rng_;
    std::size_t exhausted = exhausted_;
    const std::size_t hint = std::min(n, local_batch_ > 0 ? local_batch_ : (budget() > 0 ? 1 : n));
    for (std::size_t step = local_steps_ + 1; out.size() < n && exhausted < elite_; ++step) {
      const std::size_t before = out.size();
      if (model_every_ > 0 && !climb_only() && step % model_every_ == 0) {
        refit();
        const std::size_t k = std::max<std::size_t>(1, hint / model_every_);
        for (std::size_t c : ranked_by_model(model_candidates(step), k + out.size()))
          if (out.size() < n && out.size() - before < k && std::find(out.begin(), out.end(), c) == out.end())
            out.push_back(c);
      } else {
        std::size_t base = kNone;
        for (std::size_t c : expansion(ranked, hint, rng, out, base, exhausted, true))
          if (out.size() < n) out.push_back(c);
      }
      if (out.size() == before) break;
    }
  }

  /// The k best configs that ran (value, index), best first, including results not ranked yet.
  std::vector<std::pair<double, std::size_t>> best_ran(std::size_t k) const {
    std::vector<std::pair<double, std::size_t>> bases(ranked_.begin(), ranked_.end());
    const std::vector<std::size_t>& seen = observed();
    for (std::size_t j = ranked_up_to_; j < seen.size(); ++j)
      if (std::isfinite(value(seen[j]))) bases.emplace_back(value(seen[j]), seen[j]);
    k = std::min(k, bases.size());
    std::partial_sort(bases.begin(), bases.begin() + static_cast<std::ptrdiff_t>(k), bases.end());
    bases.resize(k);
    return bases;
  }

  /// The neighbours of c in the order an expansion would try them (without the random order among equals);
  /// only the moves of one position (and categorical moves) when `closest`.
  std::vector<std::size_t> nearest_of(std::size_t c, bool closest) const {
    std::vector<std::size_t> nb = closest ? space_.adjacent(c) : space_.neighbours(c);
    if (order_ != Order::random && !closest) nearest_first(c, nb);
    return nb;
  }

  /// Up to k unevaluated configs, neither observed nor outstanding, with the best times the marginal model
  /// predicts (refitted to every observation first), among model_candidates(step).
  std::vector<std::size_t> model_picks(std::size_t k, std::size_t step) const {
    refit();
    return ranked_by_model(model_candidates(step), k);
  }

  /// Brings the model up to date with every observation (const: the fit is a function of the observations only,
  /// so a guess may refit without changing what the strategy does).
  void refit() const {
    const std::vector<std::size_t>& seen = observed();
    for (; modelled_up_to_ < seen.size(); ++modelled_up_to_)
      model_.add(seen[modelled_up_to_], value(seen[modelled_up_to_]));
    model_.fit();
  }

  /// The candidates of the model step numbered `step`: every config neither observed nor outstanding, or in larger
  /// spaces kModelCandidates indices drawn from the whole space by a generator of the step's own (seeded by the
  /// strategy's seed and the step), the observed and outstanding ones left out. The draw neither depends on nor
  /// advances the strategy's generator, so guess() names the same candidates (and the expansion after them) as the
  /// step will.
  std::vector<std::size_t> model_candidates(std::size_t step) const {
    if (unknown_count() <= kModelCandidates) return first_candidates();
    Rng draw(seed_ ^ (0x9e3779b97f4a7c15ull * (step + 1)));
    std::vector<std::size_t> out;
    out.reserve(kModelCandidates);
    for (std::size_t j = 0; j < kModelCandidates; ++j) {
      const std::size_t i = draw.below(size());
      if (!known(i) && !pending(i)) out.push_back(i);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  /// The first kModelCandidates configs of the unknown pool that are not outstanding.
  std::vector<std::size_t> first_candidates() const {
    std::vector<std::size_t> out;
    for (std::size_t i : unknown_pool()) {
      if (out.size() >= kModelCandidates) break;
      if (!pending(i)) out.push_back(i);
    }
    return out;
  }

  /// Up to k of the candidates, best first by the model's current fit: the lowest predicted log time minus
  /// `model_optimism` standard deviations, among the kOptimistic best predictions.
  std::vector<std::size_t> ranked_by_model(const std::vector<std::size_t>& candidates, std::size_t k) const {
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
  static constexpr std::size_t kGuessBases = 3;  // neighbourhoods named by guess()

  const std::uint64_t seed_;  // of the model steps' candidate draws (model_candidates())
  const double broad_;
  const std::size_t elite_, explore_, model_every_, local_batch_;
  const Order order_;
  const double climb_below_;
  const CoveringOrder cover_;
  mutable MarginalModel model_;  // a function of the observations: refit() may bring it up to date at any time
  const double optimism_;
  const double warm_first_, warm_halving_, warm_more_;
  bool trust_decided_ = false;  // the warm start's source was tested (trusted_warm_points())
  double trust_ = 0, trust_rho_ = 0;
  std::size_t trust_overlap_ = 0, trusted_more_ = 0;
  mutable std::size_t modelled_up_to_ = 0;  // observed() entries already given to the model
  std::size_t local_steps_ = 0;
  std::size_t start_ = kNone;  // the spec default, until it has been handed out
  std::size_t default_ = kNone;  // the spec default (when option spec_default is on)
  std::size_t cover_pos_ = 0;
  std::size_t explore_end_ = 0;  // covering position where the current exploration phase ends
  std::set<std::pair<double, std::size_t>> ranked_;  // configs that ran with unevaluated neighbours, best first
  std::size_t ranked_up_to_ = 0;                     // observed() entries already ranked
  std::size_t exhausted_ = 0;  // neighbourhoods completed since the last exploration phase
  struct MoveSum {
    double log_ratio = 0;
    int pairs = 0;
  };
  mutable std::unordered_map<std::uint64_t, MoveSum> move_sums_;  // by move_key: what each move did
  mutable std::unordered_set<std::size_t> paired_;  // successful configs whose pairs are in move_sums_
  mutable std::size_t moves_up_to_ = 0;             // observed() entries already paired
  std::unordered_map<std::size_t, std::size_t> parent_;  // proposed neighbour -> the config it neighbours
};

}  // namespace

std::vector<OptionSpec> broad_then_local_options() {
  return {
      {"broad",
       "0",
       "share of the space in the broad phase, in whole covering rounds, at least one (0 = one round); "
       "after a warm start always one round",
       OptionKind::real,
       0,
       1,
       {}},
      {"elite",
       "16",
       "neighbourhoods of the best configs evaluated completely (local optima and the best configs next to "
       "them) before each exploration phase",
       OptionKind::integer,
       1,
       1e9,
       {}},
      {"explore", "1", "covering rounds in each exploration phase", OptionKind::integer, 1, 1e9, {}},
      {"model",
       "2",
       "every this many local steps, evaluate the configs a per-parameter marginal model of log time predicts "
       "fastest (0 = never)",
       OptionKind::integer,
       0,
       1e9,
       {}},
      {"model_ridge",
       "1",
       "ridge penalty of the marginal model (larger = more cautious effects)",
       OptionKind::real,
       1e-6,
       1e6,
       {}},
      {"local_batch",
       "0",
       "most configs per step of the local phase when a larger batch is asked (0 = one with a budget, e.g. tune "
       "--budget, the batch asked without one, e.g. under a time limit); small steps adapt after every result, "
       "and the session compiles the likely next configs ahead",
       OptionKind::integer,
       0,
       1e9,
       {}},
      {"local_order",
       "learned",
       "order in which a neighbourhood is tried: near (a numeric parameter's next value up or down first, then a "
       "switch of a variant or flag, then larger moves; random among equals), learned (near, and among equal moves "
       "first those that made configs faster elsewhere, last those that made them slower, then other parameters "
       "before the one just changed) or random",
       OptionKind::choice,
       0,
       0,
       {"learned", "near", "random"}},
      {"climb_below",
       "2",
       "with a budget (tune --budget) under this many first covering rounds, climb from the spec default instead "
       "(0 = never)",
       OptionKind::real,
       0,
       1e6,
       {}},
      {"spec_default",
       "true",
       "evaluate the spec's default config first (after any warm-start points)",
       OptionKind::boolean,
       0,
       1,
       {}},
      {"model_optimism",
       "4",
       "the model's picks minimise predicted log time minus this many standard deviations of the prediction",
       OptionKind::real,
       0,
       100,
       {}},
      {"warm_first",
       "0.03",
       "share of the planned evaluations (the budget; 5% of the space without one) that a warm start with source "
       "values gets before the covering round, at distance 0 (rounded to whole configs)",
       OptionKind::real,
       0,
       1,
       {}},
      {"warm_halving",
       "2",
       "distance of a warm start's source (|log2 size ratio|) that halves warm_first",
       OptionKind::real,
       1e-3,
       1e6,
       {}},
      {"warm_more",
       "0.05",
       "share of the planned evaluations, times the trust squared, for the source's next best configs once the "
       "rank correlation over the configs measured at both trusts it",
       OptionKind::real,
       0,
       1,
       {}},
  };
}

std::unique_ptr<Strategy> make_broad_then_local(const ParameterSpace& s, std::uint64_t seed, const OptionReader& o) {
  return std::make_unique<BroadThenLocal>(s, seed, o);
}

}  // namespace autotune::search::detail
