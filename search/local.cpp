// Local searches over the neighbourhood graph of the valid space: simulated_annealing,
// greedy_local_search, iterated_local_search and basin_hopping.
#include <algorithm>
#include <cmath>

#include "search/base.hpp"

namespace autotune::search::detail {

namespace {

enum class Hood { neighbours, adjacent };

Hood parse_hood(const std::string& s) { return s == "adjacent" ? Hood::adjacent : Hood::neighbours; }

OptionSpec hood_option(const char* def) {
  return {"neighbourhood", def,
          "moves: 'neighbours' = change one parameter to any other value, 'adjacent' = change one parameter "
          "by one step in its value list (only valid configs are ever moved to)",
          OptionKind::choice, 0, 0, {"neighbours", "adjacent"}};
}

/// Shared machinery: a neighbourhood, a resumable hill climb and the choice of starting points.
class LocalSearchBase : public StrategyBase {
 protected:
  LocalSearchBase(std::string name, const ParameterSpace& space, std::uint64_t seed, Hood hood,
                  bool best_improvement)
      : StrategyBase(std::move(name), space, seed), hood_(hood), best_improvement_(best_improvement) {}

  std::vector<std::size_t> moves(std::size_t i, Hood hood) const {
    return hood == Hood::adjacent ? space_.adjacent(i) : space_.neighbours(i);
  }

  /// Where the next climb (or walk) starts: the best warm-start point the first time (see
  /// StrategyBase::best_warm_point), then a random config that is neither observed nor outstanding; kNone when
  /// there is none.
  std::size_t start_point() {
    if (!started_) {
      started_ = true;
      const std::size_t warm = best_warm_point();
      if (warm != kNone) return warm;
    }
    return random_unknown();
  }

  /// Starts a climb at `start` (evaluated first if unknown).
  void climb_from(std::size_t start) {
    batch_.clear();
    move_to(start);
    climbing_ = true;
  }

  /// The next batch of the running climb, or of one started at start_point() when none runs; at each local
  /// optimum on the way the climb ends and at_optimum() runs, which may kick (climb_from) or leave the next round
  /// to restart at a random config. Empty when no start point is left.
  template <class AtOptimum>
  std::vector<std::size_t> climb(std::size_t hint, AtOptimum at_optimum) {
    for (int guard = 0; guard < 1000; ++guard) {
      if (!climbing_) {
        const std::size_t start = start_point();
        if (start == kNone) return {};
        climb_from(start);
      }
      std::vector<std::size_t> batch = climb_step(hint);
      if (!batch.empty()) return batch;
      climbing_ = false;
      at_optimum();
    }
    return {};
  }

  /// Next batch of unevaluated neighbours of the climb's current config; moves whenever a batch holds a
  /// better config (first improvement) or after the whole neighbourhood (best improvement). Empty when
  /// the current config is a local optimum (every neighbour known and none strictly better).
  std::vector<std::size_t> climb_step(std::size_t hint) {
    if (current_ == kNone) return {};
    if (!known(current_)) {
      batch_ = {current_};
      return batch_;
    }
    std::size_t best = kNone;
    for (std::size_t c : batch_)
      if (c != current_ && known(c) && (best == kNone || value(c) < value(best))) best = c;
    batch_.clear();
    if (best != kNone) {
      if (best_improvement_) {
        if (best_nb_ == kNone || value(best) < value(best_nb_)) best_nb_ = best;
      } else if (value(best) < value(current_)) {
        move_to(best);
      }
    }
    for (;;) {
      bool moved = false;
      while (nb_pos_ < nb_.size() && batch_.size() < hint) {
        const std::size_t c = nb_[nb_pos_++];
        if (!known(c)) {
          batch_.push_back(c);
        } else if (best_improvement_) {
          if (best_nb_ == kNone || value(c) < value(best_nb_)) best_nb_ = c;
        } else if (value(c) < value(current_)) {
          move_to(c);
          moved = true;
          break;
        }
      }
      if (moved) continue;
      if (!batch_.empty()) return batch_;
      if (best_improvement_ && best_nb_ != kNone && value(best_nb_) < value(current_)) {
        move_to(best_nb_);
        continue;
      }
      return {};  // local optimum
    }
  }

  /// `steps` random moves (any other value of one parameter) away from `from`.
  std::size_t kick(std::size_t from, int steps) {
    std::size_t x = from;
    for (int k = 0; k < steps; ++k) {
      const std::vector<std::size_t> nb = space_.neighbours(x);
      if (nb.empty()) break;
      x = nb[rng_.below(nb.size())];
    }
    return x;
  }

  std::size_t climb_current() const { return current_; }

  const Hood hood_;

 private:
  void move_to(std::size_t i) {
    current_ = i;
    nb_ = moves(i, hood_);
    rng_.shuffle(nb_);
    nb_pos_ = 0;
    best_nb_ = kNone;
  }

  const bool best_improvement_;
  bool started_ = false;
  bool climbing_ = false;  // a climb runs (climb)
  std::size_t current_ = kNone;
  std::vector<std::size_t> nb_;
  std::size_t nb_pos_ = 0;
  std::size_t best_nb_ = kNone;
  std::vector<std::size_t> batch_;
};

// ---------------------------------------------------------------------------------------------

class GreedyLocalSearch final : public LocalSearchBase {
 public:
  GreedyLocalSearch(const ParameterSpace& space, std::uint64_t seed, const OptionReader& o)
      : LocalSearchBase("greedy_local_search", space, seed, parse_hood(o.choice("neighbourhood")),
                        o.choice("improvement") == "best") {}

 protected:
  std::vector<std::size_t> step(std::size_t hint) override {
    return climb(hint, [] {});  // every local optimum: a random restart
  }
};

// ---------------------------------------------------------------------------------------------

/// Iterated local search (temperature 0: accept a new local optimum when not worse) and basin hopping
/// (Metropolis acceptance of local optima at a fixed temperature).
class IteratedLocalSearch final : public LocalSearchBase {
 public:
  IteratedLocalSearch(std::string name, const ParameterSpace& space, std::uint64_t seed, const OptionReader& o,
                      double temperature)
      : LocalSearchBase(std::move(name), space, seed, parse_hood(o.choice("neighbourhood")), false),
        temperature_(temperature),
        strength_(static_cast<int>(o.integer("perturbation"))),
        restart_after_(static_cast<int>(o.integer("restart_after"))) {}

 protected:
  std::vector<std::size_t> step(std::size_t hint) override {
    return climb(hint, [this] {
      const std::size_t optimum = climb_current();
      if (home_ == kNone || accept(optimum)) home_ = optimum;
      if (value(optimum) < record_) {
        record_ = value(optimum);
        stale_ = 0;
      } else {
        ++stale_;
      }
      if (restart_after_ > 0 && stale_ >= restart_after_) {  // the next round restarts at a random config
        home_ = kNone;
        stale_ = 0;
        record_ = kInf;
        return;
      }
      climb_from(kick(home_, strength_));
    });
  }

 private:
  bool accept(std::size_t candidate) {
    const double w = worsening(value(candidate), value(home_));
    if (w <= 0) return true;
    if (temperature_ <= 0 || !std::isfinite(w)) return false;
    return rng_.chance(std::exp(-w / temperature_));
  }

  const double temperature_;
  const int strength_;
  const int restart_after_;
  std::size_t home_ = kNone;
  double record_ = kInf;
  int stale_ = 0;
};

// ---------------------------------------------------------------------------------------------

class SimulatedAnnealing final : public LocalSearchBase {
 public:
  SimulatedAnnealing(const ParameterSpace& space, std::uint64_t seed, const OptionReader& o)
      : LocalSearchBase("simulated_annealing", space, seed, parse_hood(o.choice("neighbourhood")), false),
        t0_(o.real("initial_temperature")),
        cooling_(o.real("cooling")),
        t_min_(o.real("min_temperature")) {}

 protected:
  std::vector<std::size_t> step(std::size_t hint) override {
    if (current_ == kNone || temperature_ < t_min_) return restart();
    if (!known(current_)) return {current_};

    std::size_t best = kNone;
    for (std::size_t c : batch_)
      if (known(c) && (best == kNone || value(c) < value(best))) best = c;
    batch_.clear();
    if (best != kNone) {
      const double w = worsening(value(best), value(current_));
      if (w <= 0 || (std::isfinite(w) && rng_.chance(std::exp(-w / temperature_)))) set_current(best);
      temperature_ *= cooling_;
      if (temperature_ < t_min_) return restart();
    }
    if (nb_.empty()) return restart();
    // A few distinct random neighbours (one when called sequentially).
    const std::size_t k = std::min(hint, nb_.size());
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t j = i + rng_.below(nb_.size() - i);
      std::swap(nb_[i], nb_[j]);
      batch_.push_back(nb_[i]);
    }
    return batch_;
  }

 private:
  std::vector<std::size_t> restart() {
    batch_.clear();
    const std::size_t start = start_point();
    if (start == kNone) return {};
    set_current(start);
    temperature_ = t0_;
    return {start};
  }

  void set_current(std::size_t i) {
    current_ = i;
    nb_ = moves(i, hood_);
  }

  const double t0_, cooling_, t_min_;
  double temperature_ = 0;
  std::size_t current_ = kNone;
  std::vector<std::size_t> nb_;
  std::vector<std::size_t> batch_;
};

}  // namespace

std::vector<OptionSpec> simulated_annealing_options() {
  return {
      {"initial_temperature", "0.3",
       "starting temperature; a move that makes the time worse by a factor r is accepted with probability "
       "exp(-ln(r)/T)",
       OptionKind::real, 1e-9, 1e9, {}},
      {"cooling", "0.97", "temperature factor applied after every step", OptionKind::real, 0.01, 0.99999, {}},
      {"min_temperature", "0.002", "restart from a random unevaluated config when the temperature falls below this",
       OptionKind::real, 1e-12, 1e9, {}},
      hood_option("neighbours"),
  };
}

std::vector<OptionSpec> greedy_local_search_options() {
  return {
      hood_option("neighbours"),
      {"improvement", "first",
       "'first' = move as soon as a better neighbour is found (neighbours tried in random order), 'best' = "
       "evaluate the whole neighbourhood and move to the best",
       OptionKind::choice, 0, 0, {"first", "best"}},
  };
}

namespace {
std::vector<OptionSpec> ils_like_options(const char* restart_default) {
  return {
      hood_option("neighbours"),
      {"perturbation", "3", "random moves applied to the current local optimum before the next climb",
       OptionKind::integer, 1, 1000, {}},
      {"restart_after", restart_default,
       "restart from a random unevaluated config after this many climbs without a new best local optimum "
       "(0 = never)",
       OptionKind::integer, 0, 1e9, {}},
  };
}
}  // namespace

std::vector<OptionSpec> iterated_local_search_options() { return ils_like_options("10"); }

std::vector<OptionSpec> basin_hopping_options() {
  std::vector<OptionSpec> o = ils_like_options("20");
  o[1].default_value = "2";
  o.push_back({"temperature", "0.1",
               "a local optimum worse by a factor r than the current one is accepted with probability "
               "exp(-ln(r)/T)",
               OptionKind::real, 1e-9, 1e9, {}});
  return o;
}

std::unique_ptr<Strategy> make_simulated_annealing(const ParameterSpace& s, std::uint64_t seed,
                                                   const OptionReader& o) {
  return std::make_unique<SimulatedAnnealing>(s, seed, o);
}

std::unique_ptr<Strategy> make_greedy_local_search(const ParameterSpace& s, std::uint64_t seed,
                                                   const OptionReader& o) {
  return std::make_unique<GreedyLocalSearch>(s, seed, o);
}

std::unique_ptr<Strategy> make_iterated_local_search(const ParameterSpace& s, std::uint64_t seed,
                                                     const OptionReader& o) {
  return std::make_unique<IteratedLocalSearch>("iterated_local_search", s, seed, o, 0.0);
}

std::unique_ptr<Strategy> make_basin_hopping(const ParameterSpace& s, std::uint64_t seed, const OptionReader& o) {
  return std::make_unique<IteratedLocalSearch>("basin_hopping", s, seed, o, o.real("temperature"));
}

}  // namespace autotune::search::detail
