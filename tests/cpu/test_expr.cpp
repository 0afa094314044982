#include <catch2/catch.hpp>
#include <map>

#include "tuner/core/error.hpp"
#include "tuner/core/expr/expr.hpp"

using namespace autotune;

namespace {
std::int64_t ev(const std::string& text, std::map<std::string, std::int64_t> vars = {}) {
  return Expr::parse(text).eval([&](const std::string& n) -> std::optional<std::int64_t> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}
}  // namespace

TEST_CASE("expressions follow C precedence and integer semantics", "[cpu][expr]") {
  CHECK(ev("1 + 2 * 3") == 7);
  CHECK(ev("(1 + 2) * 3") == 9);
  CHECK(ev("7 / 2") == 3);
  CHECK(ev("7 % 4") == 3);
  CHECK(ev("-7 / 2") == -3);
  CHECK(ev("2 - 3 - 4") == -5);
  CHECK(ev("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3") == 1);
  CHECK(ev("1 == 2 || 2 != 2") == 0);
  CHECK(ev("!0 + !5") == 1);
  CHECK(ev("1 + 2 == 3") == 1);
  CHECK(ev("min(5, 3, 9)") == 3);
  CHECK(ev("max(5, 3, 9)") == 9);
  CHECK(ev("ceil_div(10, 4)") == 3);
  CHECK(ev("--3") == 3);
}

TEST_CASE("expressions read variables and report them", "[cpu][expr]") {
  Expr e = Expr::parse("BLOCK_SIZE * ITEMS_PER_THREAD <= 8192 && BLOCK_SIZE % warp_size == 0");
  CHECK(e.variables() == std::set<std::string>{"BLOCK_SIZE", "ITEMS_PER_THREAD", "warp_size"});
  CHECK(ev(e.text(), {{"BLOCK_SIZE", 256}, {"ITEMS_PER_THREAD", 8}, {"warp_size", 32}}) == 1);
  CHECK(ev(e.text(), {{"BLOCK_SIZE", 256}, {"ITEMS_PER_THREAD", 64}, {"warp_size", 32}}) == 0);
}

TEST_CASE("logical operators short-circuit", "[cpu][expr]") {
  CHECK(ev("0 && 1 / 0") == 0);
  CHECK(ev("1 || 1 / 0") == 1);
  CHECK(ev("0 && unknown") == 0);
}

TEST_CASE("expression errors name the problem", "[cpu][expr]") {
  CHECK_THROWS_WITH(Expr::parse("1 +"), Catch::Contains("unexpected end"));
  CHECK_THROWS_WITH(Expr::parse("(1 + 2"), Catch::Contains("expected ')'"));
  CHECK_THROWS_WITH(Expr::parse("1 = 2"), Catch::Contains("unexpected '='"));
  CHECK_THROWS_WITH(Expr::parse("foo(1)"), Catch::Contains("unknown function 'foo'"));
  CHECK_THROWS_WITH(Expr::parse("1.5 * 2"), Catch::Contains("integer"));
  CHECK_THROWS_WITH(Expr::parse("ceil_div(1)"), Catch::Contains("two arguments"));
  CHECK_THROWS_AS(Expr::parse("99999999999999999999"), ExprError);
  CHECK_THROWS_WITH(ev("x + 1"), Catch::Contains("unknown variable 'x'"));
  CHECK_THROWS_WITH(ev("1 / 0"), Catch::Contains("division by zero"));
  CHECK_THROWS_WITH(ev("5 % 0"), Catch::Contains("division by zero"));
  CHECK_THROWS_WITH(ev("9223372036854775807 + 1"), Catch::Contains("overflow"));
  CHECK_THROWS_WITH(ev("4611686018427387904 * 4"), Catch::Contains("overflow"));
}

TEST_CASE("inputs found by fuzz_expr: ceil_div at the limits, deep nesting", "[cpu][expr][fuzz]") {
  // ceil_div is the ceiling of a / b for any signs and never overflows.
  CHECK(ev("ceil_div(9223372036854775807, 2)") == 4611686018427387904);
  CHECK(ev("ceil_div(10, 3)") == 4);
  CHECK(ev("ceil_div(9, 3)") == 3);
  CHECK(ev("ceil_div(0, 7)") == 0);
  CHECK(ev("ceil_div(-7, 2)") == -3);
  CHECK(ev("ceil_div(7, -2)") == -3);
  CHECK(ev("ceil_div(-7, -2)") == 4);
  // Nesting is bounded, so no input can exhaust the stack (parse, eval and destruction all recurse).
  CHECK(ev(std::string(200, '(') + "1" + std::string(200, ')')) == 1);
  CHECK_THROWS_WITH(Expr::parse(std::string(5000, '(') + "1" + std::string(5000, ')')),
                    Catch::Contains("nested too deeply"));
  CHECK_THROWS_WITH(Expr::parse(std::string(5000, '-') + "1"), Catch::Contains("nested too deeply"));
  std::string chain = "1";
  for (int i = 0; i < 5000; ++i) chain += "+1";
  CHECK_THROWS_WITH(Expr::parse(chain), Catch::Contains("nested too deeply"));
}
