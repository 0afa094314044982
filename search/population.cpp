// Population-based strategies: genetic_algorithm, particle_swarm, differential_evolution.
// All work on the per-parameter value indices of configs; offspring that land on an invalid or
// out-of-range combination are repaired to the nearest valid config (NearestValid).
#include <algorithm>
#include <cmath>

#include "search/base.hpp"

namespace autotune::search::detail {

namespace {

/// Sorts indices by observed value (unknown = worst), stable so equal values keep their order.
template <typename ValueOf>
void sort_by_value(std::vector<std::size_t>& v, ValueOf value_of) {
  std::stable_sort(v.begin(), v.end(), [&](std::size_t a, std::size_t b) { return value_of(a) < value_of(b); });
}

bool contains(const std::vector<std::size_t>& v, std::size_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// ---------------------------------------------------------------------------------------------

class GeneticAlgorithm final : public StrategyBase {
 public:
  GeneticAlgorithm(const ParameterSpace& space, std::uint64_t seed, const OptionReader& o)
      : StrategyBase("genetic_algorithm", space, seed),
        pop_size_(static_cast<std::size_t>(o.integer("population"))),
        elitism_(static_cast<std::size_t>(o.integer("elitism"))),
        tournament_(static_cast<std::size_t>(o.integer("tournament"))),
        crossover_(o.choice("crossover")),
        crossover_rate_(o.real("crossover_rate")),
        mutation_rate_(o.real("mutation_rate")) {}

 protected:
  std::vector<std::size_t> step(std::size_t) override {
    next_population();
    if (pop_.empty()) {
      children_ = initial_population(pop_size_);
      return children_;
    }
    breed();
    return children_;
  }

 private:
  void next_population() {
    auto by_value = [this](std::size_t i) { return value(i); };
    std::vector<std::size_t> kids;
    for (std::size_t c : children_)
      if (known(c) && !contains(kids, c)) kids.push_back(c);
    children_.clear();
    sort_by_value(kids, by_value);
    std::vector<std::size_t> old = pop_;
    sort_by_value(old, by_value);
    std::vector<std::size_t> next;
    for (std::size_t i = 0; i < old.size() && next.size() < elitism_; ++i) next.push_back(old[i]);
    for (std::size_t c : kids)
      if (next.size() < pop_size_ && !contains(next, c)) next.push_back(c);
    for (std::size_t c : old)
      if (next.size() < pop_size_ && !contains(next, c)) next.push_back(c);
    pop_ = std::move(next);
  }

  std::size_t select() {
    std::size_t best = pop_[rng_.below(pop_.size())];
    for (std::size_t k = 1; k < tournament_; ++k) {
      const std::size_t c = pop_[rng_.below(pop_.size())];
      if (value(c) < value(best)) best = c;
    }
    return best;
  }

  std::vector<double> make_child() {
    const auto& a = space_.indices(select());
    const auto& b = space_.indices(select());
    const std::size_t d = a.size();
    std::vector<double> g(a.begin(), a.end());
    if (d > 1 && rng_.chance(crossover_rate_)) {
      if (crossover_ == "uniform") {
        for (std::size_t j = 0; j < d; ++j)
          if (rng_.chance(0.5)) g[j] = b[j];
      } else {
        std::size_t lo = 1 + rng_.below(d - 1), hi = d;
        if (crossover_ == "two_point") {
          const std::size_t other = 1 + rng_.below(d - 1);
          hi = std::max(lo, other);
          lo = std::min(lo, other);
          if (lo == hi) hi = d;
        }
        for (std::size_t j = lo; j < hi; ++j) g[j] = b[j];
      }
    }
    const auto& params = space_.params();
    for (std::size_t j = 0; j < d; ++j) {
      const std::size_t count = params[j].values.size();
      if (count < 2 || !rng_.chance(mutation_rate_)) continue;
      if (rng_.chance(0.5)) {  // one step
        const bool up = g[j] <= 0 ? true : (g[j] >= static_cast<double>(count - 1) ? false : rng_.chance(0.5));
        g[j] += up ? 1 : -1;
      } else {  // any other value
        const std::size_t v = rng_.below(count - 1);
        g[j] = static_cast<double>(v >= static_cast<std::size_t>(g[j]) ? v + 1 : v);
      }
    }
    return g;
  }

  void breed() {
    const std::size_t count = pop_size_ > elitism_ ? pop_size_ - elitism_ : 1;
    std::size_t fresh = 0;
    for (std::size_t k = 0; k < count; ++k) {
      std::size_t child = kNone;
      for (int attempt = 0; attempt < 8; ++attempt) {
        child = nearest(make_child());
        if (!known(child) && !contains(children_, child)) break;
      }
      if (!known(child) && !contains(children_, child)) ++fresh;
      children_.push_back(child);
    }
    if (fresh == 0) {
      // Converged onto known configs: replace half of the offspring with random immigrants.
      std::vector<std::size_t> immigrants = random_unknowns(std::max<std::size_t>(1, count / 2));
      for (std::size_t k = 0; k < immigrants.size(); ++k) children_[k] = immigrants[k];
    }
  }

  const std::size_t pop_size_, elitism_, tournament_;
  const std::string crossover_;
  const double crossover_rate_, mutation_rate_;
  std::vector<std::size_t> pop_;
  std::vector<std::size_t> children_;
};

// ---------------------------------------------------------------------------------------------

class ParticleSwarm final : public StrategyBase {
 public:
  ParticleSwarm(const ParameterSpace& space, std::uint64_t seed, const OptionReader& o)
      : StrategyBase("particle_swarm", space, seed),
        swarm_size_(static_cast<std::size_t>(o.integer("swarm"))),
        inertia_(o.real("inertia")),
        cognitive_(o.real("cognitive")),
        social_(o.real("social")),
        vmax_(o.real("max_velocity")) {
    for (const Param& p : space.params()) span_.push_back(p.values.size() > 1 ? double(p.values.size() - 1) : 0.0);
  }

 protected:
  std::vector<std::size_t> step(std::size_t) override {
    if (swarm_.empty()) {
      for (std::size_t i : initial_population(swarm_size_)) swarm_.push_back(spawn(i));
      return current();
    }
    for (Particle& p : swarm_) {
      if (!known(p.config)) continue;
      if (p.best == kNone || value(p.config) < value(p.best)) {
        p.best = p.config;
        p.best_x = normalised(p.config);
      }
      if (gbest_ == kNone || value(p.config) < value(gbest_)) {
        gbest_ = p.config;
        gbest_x_ = normalised(p.config);
      }
    }
    std::size_t fresh = 0;
    for (Particle& p : swarm_) {
      for (std::size_t j = 0; j < p.x.size(); ++j) {
        const double pb = p.best == kNone ? p.x[j] : p.best_x[j];
        const double gb = gbest_ == kNone ? p.x[j] : gbest_x_[j];
        double v = inertia_ * p.v[j] + cognitive_ * rng_.uniform() * (pb - p.x[j]) +
                   social_ * rng_.uniform() * (gb - p.x[j]);
        v = std::max(-vmax_, std::min(vmax_, v));
        double x = p.x[j] + v;
        if (x < 0 || x > 1) {
          x = std::max(0.0, std::min(1.0, x));
          v = 0;
        }
        p.x[j] = x;
        p.v[j] = v;
      }
      p.config = snap(p.x);
      if (!known(p.config)) ++fresh;
    }
    stale_ = fresh == 0 ? stale_ + 1 : 0;
    if (stale_ >= 3) {
      // The swarm only revisits known configs: scatter the half whose personal best is worst.
      stale_ = 0;
      std::vector<std::size_t> order(swarm_.size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return value_or_inf(swarm_[a].best) > value_or_inf(swarm_[b].best);
      });
      const std::vector<std::size_t> fresh_configs = random_unknowns(std::max<std::size_t>(1, swarm_.size() / 2));
      for (std::size_t k = 0; k < fresh_configs.size(); ++k) {
        Particle& p = swarm_[order[k]];
        const Particle q = spawn(fresh_configs[k]);
        p.x = q.x;
        p.v = q.v;
        p.config = q.config;
      }
    }
    return current();
  }

 private:
  struct Particle {
    std::vector<double> x, v, best_x;
    std::size_t config = kNone;
    std::size_t best = kNone;
  };

  double value_or_inf(std::size_t i) const { return i == kNone ? kInf : value(i); }

  std::vector<double> normalised(std::size_t i) const {
    const auto& idx = space_.indices(i);
    std::vector<double> x(idx.size());
    for (std::size_t j = 0; j < idx.size(); ++j) x[j] = span_[j] > 0 ? idx[j] / span_[j] : 0.5;
    return x;
  }

  std::size_t snap(const std::vector<double>& x) {
    std::vector<double> t(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) t[j] = x[j] * span_[j];
    return nearest(t);
  }

  Particle spawn(std::size_t config) {
    Particle p;
    p.config = config;
    p.x = normalised(config);
    p.v.resize(p.x.size());
    for (double& v : p.v) v = rng_.uniform(-vmax_, vmax_);
    return p;
  }

  std::vector<std::size_t> current() const {
    std::vector<std::size_t> out;
    for (const Particle& p : swarm_) out.push_back(p.config);
    return out;
  }

  const std::size_t swarm_size_;
  const double inertia_, cognitive_, social_, vmax_;
  std::vector<double> span_;
  std::vector<Particle> swarm_;
  std::size_t gbest_ = kNone;
  std::vector<double> gbest_x_;
  int stale_ = 0;
};

// ---------------------------------------------------------------------------------------------

class DifferentialEvolution final : public StrategyBase {
 public:
  DifferentialEvolution(const ParameterSpace& space, std::uint64_t seed, const OptionReader& o)
      : StrategyBase("differential_evolution", space, seed),
        pop_size_(static_cast<std::size_t>(o.integer("population"))),
        weight_(o.real("differential_weight")),
        crossover_rate_(o.real("crossover_rate")),
        use_best_(o.choice("variant") == "best1bin") {}

 protected:
  std::vector<std::size_t> step(std::size_t) override {
    if (pop_.empty()) {
      pop_ = initial_population(pop_size_);
      return pop_;
    }
    // Selection: a trial replaces its target when it is not worse.
    for (std::size_t i = 0; i < pop_.size(); ++i) {
      const std::size_t t = i < trials_.size() ? trials_[i] : kNone;
      if (t != kNone && known(t) && (!known(pop_[i]) || value(t) <= value(pop_[i]))) pop_[i] = t;
    }
    std::size_t best = pop_[0];
    for (std::size_t m : pop_)
      if (value(m) < value(best)) best = m;

    trials_.assign(pop_.size(), kNone);
    std::size_t fresh = 0;
    for (std::size_t i = 0; i < pop_.size(); ++i) {
      std::size_t t = kNone;
      for (int attempt = 0; attempt < 4; ++attempt) {
        t = trial_for(i, best);
        if (!known(t) && !contains(trials_, t)) break;
      }
      if (!known(t) && !contains(trials_, t)) ++fresh;
      trials_[i] = t;
    }
    if (fresh == 0) {
      // Converged onto known configs: half of the trials become random immigrants.
      std::vector<std::size_t> order(pop_.size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return value(pop_[a]) > value(pop_[b]); });
      const std::vector<std::size_t> immigrants = random_unknowns(std::max<std::size_t>(1, pop_.size() / 2));
      for (std::size_t k = 0; k < immigrants.size(); ++k) trials_[order[k]] = immigrants[k];
    }
    return trials_;
  }

 private:
  std::size_t pick_other(std::size_t exclude_a, std::size_t exclude_b, std::size_t exclude_c) {
    const std::size_t n = pop_.size();
    for (int attempt = 0; attempt < 16; ++attempt) {
      const std::size_t k = rng_.below(n);
      if (k != exclude_a && k != exclude_b && k != exclude_c) return k;
    }
    return rng_.below(n);  // tiny population: allow repeats
  }

  std::size_t trial_for(std::size_t i, std::size_t best) {
    const std::size_t a = pick_other(i, kNone, kNone);
    const std::size_t b = pick_other(i, a, kNone);
    const std::size_t c = pick_other(i, a, b);
    const auto& base = use_best_ ? space_.indices(best) : space_.indices(pop_[a]);
    const auto& pb = space_.indices(pop_[b]);
    const auto& pc = space_.indices(pop_[c]);
    const auto& target = space_.indices(pop_[i]);
    const std::size_t d = target.size();
    std::vector<double> x(target.begin(), target.end());
    const std::size_t forced = rng_.below(d);
    for (std::size_t j = 0; j < d; ++j) {
      if (j == forced || rng_.chance(crossover_rate_))
        x[j] = base[j] + weight_ * (static_cast<double>(pb[j]) - static_cast<double>(pc[j]));
    }
    std::size_t t = nearest(x);
    if (t == pop_[i] && d > 0) {
      // The difference vanished on the grid: move one random parameter to another value instead.
      const auto& params = space_.params();
      const std::size_t j = rng_.below(d);
      const std::size_t count = params[j].values.size();
      if (count > 1) {
        const std::size_t v = rng_.below(count - 1);
        x.assign(target.begin(), target.end());
        x[j] = static_cast<double>(v >= target[j] ? v + 1 : v);
        t = nearest(x);
      }
    }
    return t;
  }

  const std::size_t pop_size_;
  const double weight_, crossover_rate_;
  const bool use_best_;
  std::vector<std::size_t> pop_;
  std::vector<std::size_t> trials_;
};

}  // namespace

std::vector<OptionSpec> genetic_algorithm_options() {
  return {
      {"population", "20", "configs per generation", OptionKind::integer, 2, 100000, {}},
      {"elitism", "2", "best configs copied unchanged into the next generation", OptionKind::integer, 0, 100000, {}},
      {"tournament", "3", "configs drawn per tournament selection (the best of them is a parent)",
       OptionKind::integer, 1, 1000, {}},
      {"crossover", "uniform", "how two parents' parameter values are mixed", OptionKind::choice, 0, 0,
       {"uniform", "single_point", "two_point"}},
      {"crossover_rate", "0.9", "probability that a child is a crossover (otherwise a copy of one parent)",
       OptionKind::real, 0, 1, {}},
      {"mutation_rate", "0.15",
       "probability per parameter of a mutation (half of them one step in the value list, half any other value)",
       OptionKind::real, 0, 1, {}},
  };
}

std::vector<OptionSpec> particle_swarm_options() {
  return {
      {"swarm", "20", "number of particles", OptionKind::integer, 1, 100000, {}},
      {"inertia", "0.6", "weight of a particle's previous velocity", OptionKind::real, 0, 2, {}},
      {"cognitive", "1.5", "pull towards the particle's own best config", OptionKind::real, 0, 10, {}},
      {"social", "1.5", "pull towards the swarm's best config", OptionKind::real, 0, 10, {}},
      {"max_velocity", "0.3", "largest move per step and parameter, as a fraction of the parameter's value range",
       OptionKind::real, 1e-6, 1, {}},
  };
}

std::vector<OptionSpec> differential_evolution_options() {
  return {
      {"population", "20", "population size", OptionKind::integer, 1, 100000, {}},
      {"differential_weight", "0.8", "F: scale of the difference vector", OptionKind::real, 0, 2, {}},
      {"crossover_rate", "0.9", "CR: probability that a parameter comes from the mutant", OptionKind::real, 0, 1, {}},
      {"variant", "best1bin",
       "base vector of the mutant: the population's best (best1bin) or a random member (rand1bin)",
       OptionKind::choice, 0, 0, {"best1bin", "rand1bin"}},
  };
}

std::unique_ptr<Strategy> make_genetic_algorithm(const ParameterSpace& s, std::uint64_t seed,
                                                 const OptionReader& o) {
  return std::make_unique<GeneticAlgorithm>(s, seed, o);
}

std::unique_ptr<Strategy> make_particle_swarm(const ParameterSpace& s, std::uint64_t seed, const OptionReader& o) {
  return std::make_unique<ParticleSwarm>(s, seed, o);
}

std::unique_ptr<Strategy> make_differential_evolution(const ParameterSpace& s, std::uint64_t seed,
                                                      const OptionReader& o) {
  return std::make_unique<DifferentialEvolution>(s, seed, o);
}

}  // namespace autotune::search::detail
