// broad_then_local: the default strategy under a budget or time limit. A stratified sample first (every value
// of every parameter), then a best-first search over neighbourhoods, with further covering rounds in between.
// This file holds the plan of steps; its parts: the covering rounds (broad_rounds.*), the climb and the order of a
// neighbourhood (broad_climb.*), the model steps (broad_model.*) and the warm start's test (broad_warm.*).
#include <algorithm>
#include <string>
#include <utility>

#include "search/base.hpp"
#include "search/broad_climb.hpp"
#include "search/broad_model.hpp"
#include "search/broad_rounds.hpp"
#include "search/broad_warm.hpp"

namespace autotune::search::detail {

namespace {

/// Phase 1: the warm-start points (queued by StrategyBase), then the covering order up to the end of the broad
/// phase (CoveringRounds::broad_end()). Phase 2: the Climb over the configs that ran, best first, with model picks
/// every `model` local steps. After `elite` exhausted neighbourhoods, `explore` more covering rounds are
/// evaluated, and the covering order is where new configs come from when no config has unevaluated neighbours:
/// every valid config is proposed once before the strategy runs dry.
class BroadThenLocal final : public StrategyBase {
 public:
  BroadThenLocal(const ParameterSpace& space, std::uint64_t seed, const OptionReader& o)
      : StrategyBase("broad_then_local", space, seed),
        elite_(static_cast<std::size_t>(o.integer("elite"))),
        explore_(static_cast<std::size_t>(o.integer("explore"))),
        model_every_(static_cast<std::size_t>(o.integer("model"))),
        local_batch_(static_cast<std::size_t>(o.integer("local_batch"))),
        climb_below_(o.real("climb_below")),
        climb_check_(o.real("climb_check")),
        rounds_(space, rng_, o.real("broad")),
        climb_(space, local_order(o.choice("local_order"))),
        model_(space, seed, o.real("model_ridge"), o.real("model_optimism")),
        warm_(o.real("warm_first"), o.real("warm_halving"), o.real("warm_more")) {
    const std::ptrdiff_t d = space.default_index();
    if (o.boolean("spec_default") && d >= 0) start_ = default_ = static_cast<std::size_t>(d);
  }

 protected:
  /// The broad phase hands out independent configs (a batch may span several steps); expansions need results.
  bool independent_steps() const override { return rounds_.position() < broad_end(); }

  std::vector<std::size_t> peek(std::size_t n) const override {
    std::vector<std::size_t> out;
    if (start_ != kNone && n > 0 && !known(start_) && !pending(start_)) out.push_back(start_);
    rounds_.peek(n, broad_end(), start_, view(), out);
    return out;
  }

  std::vector<std::size_t> step(std::size_t hint) override {
    if (start_ != kNone) {  // the spec's default config first: the kernel author's best guess
      const std::size_t d = start_;
      start_ = kNone;
      if (!known(d) && !pending(d)) return {d};
    }
    if (climb_only()) {  // is the default a starting point? a few covering configs first, then the test
      if (checks_ < climb_checks()) {
        ++checks_;
        std::vector<std::size_t> c = rounds_.take(1, rounds_.size(), view());
        if (!c.empty()) return c;
      }
      judge_climb();
    }
    if (climb_.exhausted() >= elite_) {  // the elite's neighbourhoods are done: explore the space further
      climb_.restart_count();
      rounds_.explore(explore_);
    }
    const std::size_t end = cover_end();
    if (rounds_.position() < end && !climb_only()) {
      std::vector<std::size_t> chunk = rounds_.take(hint, end, view());
      if (!chunk.empty()) return chunk;
    }
    // Smaller local steps adapt more often. Under a budget each evaluation is what is scarce: one per step (the
    // session compiles the guessed next ones ahead). Under a time limit (no budget) wall time is: whole batches
    // keep the compile threads and the GPU busy.
    if (has_source_values() && !warm_.decided()) {  // enough measured at both to test the warm start?
      std::vector<std::size_t> more = warm_.trusted_points(view(), planned());
      if (!more.empty()) return more;
    }
    hint = std::min(hint, local_cap(hint));
    if (model_every_ > 0 && !climb_only() && ++local_steps_ % model_every_ == 0) {
      std::vector<std::size_t> picks =
          model_.picks(std::max<std::size_t>(1, hint / model_every_), local_steps_, view());
      if (!picks.empty()) return picks;
    }
    std::vector<std::size_t> out = climb_.expand(hint, rng_, view());
    if (out.empty()) out = rounds_.take(hint, rounds_.size(), view());  // nothing left to expand: sample more
    return out;
  }

  /// A warm start with source values is a hypothesis (WarmHypothesis::upfront()); without values: all of its
  /// configs go first.
  std::size_t warm_upfront(std::size_t given) const override {
    if (!has_source_values()) return given;
    return warm_.upfront(given, warm_distance(), planned());
  }

  void warm_trust_level(WarmTrust& t) const override {
    if (!has_source_values()) return StrategyBase::warm_trust_level(t);
    warm_.report(t, warm_upfront(warm_points().size()));
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
    const std::size_t end = cover_end();
    if (rounds_.position() < end && !climb_only())
      add(rounds_.ahead(n, end));
    else
      local_steps_ahead(n, out);
    const std::vector<std::pair<double, std::size_t>> bases = climb_.best_ran(kGuessBases, view());
    for (std::size_t c : outstanding()) add(climb_.nearest_of(c, true, view()));
    for (std::size_t b = 0; b < bases.size(); ++b) add(climb_.nearest_of(bases[b].second, false, view()));
    return out;
  }

 private:
  StrategyView view() const { return StrategyView(*this); }

  /// A budget too small for a covering round and a local phase after it (under `climb_below` first rounds, no
  /// warm start measured as given; a hint with source values may be): the whole budget goes to a climb from the spec
  /// default (or a better warm point), nearest moves first, no model picks.
  bool climb_only() const {
    const std::vector<std::size_t>& ends = rounds_.round_ends();
    return !climb_dropped_ && budget() > 0 && default_ != kNone && (warm_points().empty() || has_source_values()) &&
           !ends.empty() && static_cast<double>(budget()) < climb_below_ * static_cast<double>(ends.front());
  }
  /// Once the default has its result: the climb from it goes on only if no config measured so far (the covering
  /// configs of `climb_check`) is faster; else the run covers as without a climb (a default that loses to a few
  /// samples is no starting point).
  void judge_climb() {
    if (climb_judged_ || !known(default_)) return;
    climb_judged_ = true;
    const std::vector<std::pair<double, std::size_t>> best = climb_.best_ran(1, view());
    climb_dropped_ = best.empty() || best.front().second != default_;
  }
  /// The covering configs measured before judge_climb(): `climb_check` of the budget, rounded down.
  std::size_t climb_checks() const { return static_cast<std::size_t>(climb_check_ * static_cast<double>(budget())); }
  std::size_t broad_end() const { return rounds_.broad_end(climb_only(), !warm_points().empty()); }
  std::size_t cover_end() const { return rounds_.cover_end(climb_only(), !warm_points().empty()); }

  /// The most configs of a local step when `hint` are asked for: `local_batch`, else one under a budget (each
  /// evaluation is scarce), else `hint`.
  std::size_t local_cap(std::size_t hint) const { return local_batch_ > 0 ? local_batch_ : (budget() > 0 ? 1 : hint); }

  /// The evaluations this run plans for: its budget, else (a time limit) 5% of the space, at least a covering round.
  double planned() const {
    if (budget() > 0) return static_cast<double>(budget());
    const std::vector<std::size_t>& ends = rounds_.round_ends();
    const double round = ends.empty() ? 1.0 : static_cast<double>(ends.front());
    return std::max(round, 0.05 * static_cast<double>(size()));
  }

  /// Appends to `out` (up to n in all) what the next local steps take if the results outstanding bring no new
  /// best: guess()'s main part.
  void local_steps_ahead(std::size_t n, std::vector<std::size_t>& out) const {
    Ranking ranked = climb_.ranking(view());
    Rng rng = rng_;
    std::size_t exhausted = climb_.exhausted();
    const std::size_t hint = std::min(n, local_cap(n));
    for (std::size_t step = local_steps_ + 1; out.size() < n && exhausted < elite_; ++step) {
      const std::size_t before = out.size();
      if (model_every_ > 0 && !climb_only() && step % model_every_ == 0) {
        const std::size_t k = std::max<std::size_t>(1, hint / model_every_);
        for (std::size_t c : model_.picks(k + out.size(), step, view()))
          if (out.size() < n && out.size() - before < k && std::find(out.begin(), out.end(), c) == out.end())
            out.push_back(c);
      } else {
        std::size_t base = kNone;
        for (std::size_t c : climb_.expansion(ranked, hint, rng, out, base, exhausted, true, view()))
          if (out.size() < n) out.push_back(c);
      }
      if (out.size() == before) break;
    }
  }

  static constexpr std::size_t kGuessBases = 3;  // neighbourhoods named by guess()

  const std::size_t elite_, explore_, model_every_, local_batch_;
  const double climb_below_;
  CoveringRounds rounds_;
  Climb climb_;
  ModelPicks model_;
  WarmHypothesis warm_;
  std::size_t local_steps_ = 0;
  std::size_t start_ = kNone;    // the spec default, until it has been handed out
  std::size_t default_ = kNone;  // the spec default (when option spec_default is on)
  const double climb_check_;
  std::size_t checks_ = 0;      // covering configs taken before judge_climb()
  bool climb_judged_ = false;   // judge_climb() has decided
  bool climb_dropped_ = false;  // ... against the climb
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
       "3",
       "with a budget (tune --budget) under this many first covering rounds, climb from the spec default instead "
       "(0 = never)",
       OptionKind::real,
       0,
       1e6,
       {}},
      {"climb_check",
       "0.15",
       "before a climb from the spec default (climb_below), this share of the budget (rounded down) goes to covering "
       "configs; the climb goes on only if none is faster than the default",
       OptionKind::real,
       0,
       1,
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
