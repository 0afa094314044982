#include <catch2/catch.hpp>

#include "tuner/core/error.hpp"
#include "tuner/core/space.hpp"

using namespace autotune;

namespace {
Param P(std::string name, std::vector<Value> values) {
  Param p;
  p.name = std::move(name);
  p.values = std::move(values);
  p.default_value = p.values.front();
  return p;
}
std::vector<Expr> C(std::initializer_list<const char*> cs) {
  std::vector<Expr> out;
  for (auto c : cs) out.push_back(Expr::parse(c));
  return out;
}
}  // namespace

TEST_CASE("space enumerates exactly the valid configurations", "[cpu][space]") {
  ParameterSpace s({P("A", {1, 2, 4, 8}), P("B", {1, 2, 4, 8}), P("C", {0, 1})},
                   C({"A * B <= 16", "C == 0 || A == 1"}), {});
  // brute-force count for comparison
  std::size_t expected = 0;
  for (int a : {1, 2, 4, 8})
    for (int b : {1, 2, 4, 8})
      for (int c : {0, 1})
        if (a * b <= 16 && (c == 0 || a == 1)) ++expected;
  CHECK(s.size() == expected);
  CHECK(s.cartesian_size() == 32);
  for (std::size_t i = 0; i < s.size(); ++i) {
    Config c = s.config(i);
    CHECK(c.at("A") * c.at("B") <= 16);
    CHECK((c.at("C") == 0 || c.at("A") == 1));
    CHECK(s.find(c) == static_cast<std::ptrdiff_t>(i));
    CHECK(s.is_valid(c));
  }
  Config bad({{"A", 8}, {"B", 8}, {"C", 0}});
  CHECK(s.find(bad) == -1);
  CHECK_FALSE(s.is_valid(bad));
}

TEST_CASE("constraints see fixed variables (problem and device)", "[cpu][space]") {
  ParameterSpace s({P("BLOCK", {64, 128, 256, 512, 1024, 2048})}, C({"BLOCK <= max_threads_per_block", "BLOCK <= n"}),
                   {{"max_threads_per_block", 1024}, {"n", 300}});
  CHECK(s.size() == 3);
}

TEST_CASE("a constraint on fixed variables alone can empty the space", "[cpu][space]") {
  ParameterSpace s({P("A", {1, 2})}, C({"n > 1000"}), {{"n", 10}});
  CHECK(s.empty());
  CHECK(s.default_index() == -1);
}

TEST_CASE("unknown names in constraints are errors naming them", "[cpu][space]") {
  CHECK_THROWS_WITH(ParameterSpace({P("A", {1, 2})}, C({"A < BLOCK_SZ"}), {}), Catch::Contains("BLOCK_SZ"));
}

TEST_CASE("pruning is done per depth, not on the Cartesian product", "[cpu][space]") {
  // 10 parameters of 10 values: 10^10 Cartesian; the first constraint leaves only A0 == 0, the rest is
  // constrained to a line. A filtered product would never finish.
  std::vector<Param> ps;
  std::vector<Value> vals{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<const char*> cons = {"A0 == 0", "A1 == A0", "A2 == A1", "A3 == A2", "A4 == A3",
                                   "A5 == A4", "A6 == A5", "A7 == A6", "A8 == A7", "A9 <= 9"};
  for (int i = 0; i < 10; ++i) ps.push_back(P("A" + std::to_string(i), vals));
  std::vector<Expr> es;
  for (auto c : cons) es.push_back(Expr::parse(c));
  ParameterSpace s(ps, es, {});
  CHECK(s.size() == 10);
  CHECK(s.cartesian_size() == Approx(1e10));
  CHECK(s.build_seconds() < 5.0);
}

TEST_CASE("neighbours and adjacent configurations are valid", "[cpu][space]") {
  ParameterSpace s({P("A", {1, 2, 4}), P("B", {1, 2, 4})}, C({"A * B <= 8"}), {});
  std::ptrdiff_t i = s.find(Config({{"A", 2}, {"B", 2}}));
  REQUIRE(i >= 0);
  auto nb = s.neighbours(static_cast<std::size_t>(i));
  CHECK(nb.size() == 4);  // A=1, A=4, B=1, B=4
  auto adj = s.adjacent(static_cast<std::size_t>(i));
  CHECK(adj.size() == 4);
  std::ptrdiff_t j = s.find(Config({{"A", 4}, {"B", 2}}));
  auto adj2 = s.adjacent(static_cast<std::size_t>(j));
  CHECK(adj2.size() == 2);  // A=2,B=2 and A=4,B=1 (A=4,B=4 invalid)
}
