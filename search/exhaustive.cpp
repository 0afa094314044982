// brute_force and random_sample.
#include "search/base.hpp"

namespace autotune::search::detail {

namespace {

/// Every valid config once, in enumeration order or in the covering order (computed at construction). If
/// some proposals were lost (never observed), a second pass from the start picks them up.
class BruteForce final : public StrategyBase {
 public:
  BruteForce(const ParameterSpace& space, std::uint64_t seed, bool covering)
      : StrategyBase("brute_force", space, seed) {
    if (covering) order_ = covering_order(space, rng_).order;
  }
  bool fixed_order() const override { return true; }

 protected:
  bool independent_steps() const override { return true; }

  std::vector<std::size_t> step(std::size_t hint) override {
    std::vector<std::size_t> out;
    for (int pass = 0; pass < 2 && out.size() < hint; ++pass) {
      while (cursor_ < size() && out.size() < hint) {
        const std::size_t i = at(cursor_++);
        if (!known(i) && !pending(i)) out.push_back(i);
      }
      if (out.empty() && unknown_count() > 0) cursor_ = 0;  // lost proposals: scan again
      else break;
    }
    return out;
  }

  std::vector<std::size_t> peek(std::size_t n) const override {
    std::vector<std::size_t> out;
    for (std::size_t k = cursor_; k < size() && out.size() < n; ++k) {
      const std::size_t i = at(k);
      if (!known(i) && !pending(i)) out.push_back(i);
    }
    return out;
  }

 private:
  /// The config at position k of the walk.
  std::size_t at(std::size_t k) const { return order_.empty() ? k : order_[k]; }

  std::vector<std::size_t> order_;  // empty = enumeration order
  std::size_t cursor_ = 0;  // position in the walk
};

/// Uniformly random unobserved configs (sampling without replacement).
class RandomSample final : public StrategyBase {
 public:
  RandomSample(const ParameterSpace& space, std::uint64_t seed) : StrategyBase("random_sample", space, seed) {}

 protected:
  bool independent_steps() const override { return true; }
  std::vector<std::size_t> step(std::size_t hint) override { return random_unknowns(hint); }
};

}  // namespace

std::vector<OptionSpec> brute_force_options() {
  return {{"order", "enumeration",
           "'enumeration' = the space's order (index 0, 1, 2, ...); 'covering' = a seeded stratified random "
           "permutation whose first configs hold every value of every parameter (every VARIANT early), for runs "
           "cut short by a budget or time limit",
           OptionKind::choice, 0, 0, {"enumeration", "covering"}}};
}
std::vector<OptionSpec> random_sample_options() { return {}; }

std::unique_ptr<Strategy> make_brute_force(const ParameterSpace& s, std::uint64_t seed, const OptionReader& o) {
  return std::make_unique<BruteForce>(s, seed, o.choice("order") == "covering");
}

std::unique_ptr<Strategy> make_random_sample(const ParameterSpace& s, std::uint64_t seed, const OptionReader&) {
  return std::make_unique<RandomSample>(s, seed);
}

}  // namespace autotune::search::detail
