// Helpers shared by the search strategy tests (test_strategies.cpp, test_broad.cpp): synthetic spaces and
// landscapes, a minimal session loop that drives a strategy, and summaries.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "search/base.hpp"
#include "search/strategy.hpp"
#include "tuner/core/expr/expr.hpp"

namespace autotune_test::strategies {

using namespace autotune;
using namespace autotune::search;

constexpr double kInf = std::numeric_limits<double>::infinity();

using Objective = std::function<double(std::size_t)>;

inline Param make_param(const std::string& name, std::vector<Value> values) {
  Param p;
  p.name = name;
  p.values = std::move(values);
  p.default_value = p.values.front();
  return p;
}

inline std::vector<Value> range(int n) {
  std::vector<Value> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

inline ParameterSpace make_space(std::vector<Param> params, const std::vector<std::string>& constraints,
                          SpaceLayout layout = SpaceLayout::automatic) {
  std::vector<Expr> exprs;
  for (const auto& c : constraints) exprs.push_back(Expr::parse(c));
  return ParameterSpace(std::move(params), exprs, {}, layout);
}

/// 5 parameters, three constraints, about 5000 valid configs; two groups ({A, B, C, D} and {E}), stored flat, or
/// factorised when asked.
inline ParameterSpace make_bowl_space(SpaceLayout layout) {
  return make_space({make_param("A", range(8)), make_param("B", {1, 2, 4, 8, 16, 32, 64, 128}),
                     make_param("C", range(6)), make_param("D", range(5)), make_param("E", range(4))},
                    {"A + B / 16 <= 9", "C * D <= 12", "A + C <= 10"}, layout);
}

inline const ParameterSpace& bowl_space() {
  static const ParameterSpace space = make_bowl_space(SpaceLayout::automatic);
  return space;
}

/// Separable bowl over value indices whose unconstrained minimum (6, 6, 4, 4, 1) is infeasible: the
/// optimum lies on a constraint boundary. Values look like times in ms (>= 1).
inline double bowl(const ParameterSpace& space, std::size_t i) {
  static const double centre[] = {6, 6, 4, 4, 1};
  static const double weight[] = {3.0, 2.0, 1.5, 1.0, 0.5};
  const auto& idx = space.indices(i);
  double s = 1.0;
  for (std::size_t j = 0; j < idx.size(); ++j) {
    const double span = static_cast<double>(space.params()[j].values.size() - 1);
    const double d = (idx[j] - centre[j]) / span;
    s += weight[j] * d * d * 4;
  }
  return s;
}

inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

/// Many local minima, a third of the configs fail, and an isolated narrow global minimum.
inline double deceptive(const ParameterSpace& space, std::size_t i) {
  const auto& idx = space.indices(i);
  const std::uint64_t h = mix(i + 12345);
  if (h % 3 == 0) return kInf;
  double s = 2.0;
  for (std::size_t j = 0; j < idx.size(); ++j) s += (idx[j] % 3) * 0.7 + 0.1 * idx[j];
  if (i == space.size() / 3) s = 0.5;  // isolated optimum
  return s + static_cast<double>(h % 100) / 1000.0;
}

struct RunResult {
  std::vector<std::size_t> order;  // unique configs in the order they were evaluated
  double best = kInf;
  std::size_t calls = 0;
  bool exhausted = false;  // propose() returned empty
};

/// Minimal session: propose, answer repeats from a cache without spending budget, evaluate new configs
/// until `budget` unique evaluations. Checks that every proposal is a valid index and that propose()
/// never spins without progress.
inline RunResult drive(Strategy& s, const ParameterSpace& space, const Objective& f, std::size_t budget,
                std::size_t batch = 1) {
  RunResult r;
  std::map<std::size_t, double> cache;
  std::size_t idle_calls = 0;
  while (r.order.size() < budget) {
    const std::vector<std::size_t> p = s.propose(batch);
    ++r.calls;
    if (p.empty()) {
      r.exhausted = true;
      break;
    }
    REQUIRE(p.size() <= batch);
    std::vector<Observation> obs;
    bool progress = false;
    for (std::size_t i : p) {
      REQUIRE(i < space.size());
      auto it = cache.find(i);
      if (it != cache.end()) {
        obs.push_back({i, it->second});
        continue;
      }
      if (r.order.size() == budget) break;
      const double v = f(i);
      cache[i] = v;
      r.order.push_back(i);
      r.best = std::min(r.best, v);
      obs.push_back({i, v});
      progress = true;
    }
    idle_calls = progress ? 0 : idle_calls + 1;
    REQUIRE(idle_calls < 1000);
    s.observe(obs);
  }
  return r;
}

inline std::vector<std::string> all_names() {
  std::vector<std::string> names;
  for (const auto& info : list_strategies()) names.push_back(info.name);
  return names;
}

/// Cheaper settings for the Gaussian process so the suite stays fast (defaults are for real tuning,
/// where a proposal costs far less than compiling and timing a kernel).
inline Options test_options(const std::string& name) {
  if (name == "bayesian_optimization") return {{"candidates", "200"}, {"max_points", "60"}};
  return {};
}

inline double optimum(const ParameterSpace& space, const Objective& f) {
  double best = kInf;
  for (std::size_t i = 0; i < space.size(); ++i) best = std::min(best, f(i));
  return best;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}


/// (parameter, value position) pairs held by the configs `order[0, count)`.
inline std::set<std::pair<std::size_t, std::size_t>> pairs_of(const ParameterSpace& space,
                                                        const std::vector<std::size_t>& order, std::size_t count) {
  std::set<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t k = 0; k < count && k < order.size(); ++k)
    for (std::size_t j = 0; j < space.params().size(); ++j) out.insert({j, space.indices(order[k])[j]});
  return out;
}

inline std::size_t value_count_sum(const ParameterSpace& space) {
  std::size_t n = 0;
  for (const Param& p : space.params()) n += p.values.size();
  return n;
}

/// Every proposal of a strategy run to exhaustion, in order (batch of `batch`, every result delivered).
inline std::vector<std::size_t> proposals(Strategy& s, const ParameterSpace& space, const Objective& f, std::size_t batch) {
  return drive(s, space, f, space.size() + 1, batch).order;
}

}  // namespace autotune_test::strategies
