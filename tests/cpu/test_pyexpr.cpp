#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "strategy_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/expr/expr.hpp"
#include "tuner/core/expr/pyexpr.hpp"
#include "tuner/core/space.hpp"

using namespace autotune;
using autotune_test::strategies::make_param;

namespace {

/// Evaluates with x = 7, y = -3, f = 2.5, s = 'abc' bound and returns Python's repr of the result.
std::string py(const std::string& text) {
  const std::map<std::string, PyValue> vars = {{"x", PyValue::integer(7)},
                                               {"y", PyValue::integer(-3)},
                                               {"f", PyValue::floating(2.5)},
                                               {"s", PyValue::string("abc")}};
  return PyExpr::parse(text)
      .eval([&](const std::string& n) -> std::optional<PyValue> {
        auto it = vars.find(n);
        if (it == vars.end()) return std::nullopt;
        return it->second;
      })
      .repr();
}

struct Case {
  const char* text;
  const char* repr;
};

// The values Python 3.11 gives: repr(eval(text)) computed with python3 3.11.7 (a range result as a list).
const Case kPythonValues[] = {
    {"list(range(32, 1000+1, 32))",
     "[32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 480, 512, 544, 576, 608, 640, 672, 704, 736, "
     "768, 800, 832, 864, 896, 928, 960, 992]"},
    {"[1] + [2*i for i in range(1,11)]", "[1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20]"},
    {"[2**i for i in range(0, 6)]", "[1, 2, 4, 8, 16, 32]"},
    {"[i for i in range(3,35,2)]", "[3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33]"},
    {"['a','b']", "['a', 'b']"},
    {"\"['a','b']\"", "\"['a','b']\""},
    {"list(range(5))", "[0, 1, 2, 3, 4]"},
    {"list(range(2, 8))", "[2, 3, 4, 5, 6, 7]"},
    {"list(range(10, 0, -3))", "[10, 7, 4, 1]"},
    {"list(range(0, -10, -2))", "[0, -2, -4, -6, -8]"},
    {"list(range(5, 0))", "[]"},
    {"list(range(0))", "[]"},
    {"list(range(-3, 3))", "[-3, -2, -1, 0, 1, 2]"},
    {"list(range(1, 2, 5))", "[1]"},
    {"range(10, 0, -1)[2:5]", "[8, 7, 6]"},
    {"len(range(0, 100, 7))", "15"},
    {"[i for i in range(20) if i % 3 == 0]", "[0, 3, 6, 9, 12, 15, 18]"},
    {"[i * j for i in range(1, 4) for j in range(1, 4) if i != j]", "[2, 3, 2, 6, 3, 6]"},
    {"[[k for k in range(i)] for i in range(4)]", "[[], [0], [0, 1], [0, 1, 2]]"},
    {"[x for x in range(10) if x > 2 if x < 7]", "[3, 4, 5, 6]"},
    {"[a + b for a in 'ab' for b in 'xy']", "['ax', 'ay', 'bx', 'by']"},
    {"[i for i in [1, 2, 3] for i in range(i)]", "[0, 0, 1, 0, 1, 2]"},
    {"[2**i * 3**j for i in range(3) for j in range(2)]", "[1, 3, 2, 6, 4, 12]"},
    {"[i if i % 2 else -i for i in range(5)]", "[0, 1, -2, 3, -4]"},
    {"[v for v in [16, 32, 64] if v * 2 <= 64]", "[16, 32]"},
    {"[[i, j] for i in range(3) for j in range(i, 3)]", "[[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 2]]"},
    {"[a * b for a, b in [[1, 2], [3, 4]]]", "[2, 12]"},
    {"sum(i for i in range(5))", "10"},
    {"max(i % 4 for i in range(10))", "3"},
    {"-7 // 2", "-4"},
    {"7 // -2", "-4"},
    {"-7 % 2", "1"},
    {"7 % -2", "-1"},
    {"-7 % -2", "-1"},
    {"-8 // 4", "-2"},
    {"-1 // 3", "-1"},
    {"-7.5 // 2", "-4.0"},
    {"7.5 // -2", "-4.0"},
    {"-7.5 % 2", "0.5"},
    {"7.5 % -2", "-0.5"},
    {"-0.0 % 5", "0.0"},
    {"5 % -0.5", "-0.0"},
    {"-1e-20 % 1", "1.0"},
    {"3 % 1.5", "0.0"},
    {"-3 // 1.5", "-2.0"},
    {"7 / 2", "3.5"},
    {"-7 / 2", "-3.5"},
    {"10 / 5", "2.0"},
    {"1 / 3", "0.3333333333333333"},
    {"2 ** 10", "1024"},
    {"2 ** -1", "0.5"},
    {"(-2) ** 3", "-8"},
    {"-2 ** 2", "-4"},
    {"2 ** 3 ** 2", "512"},
    {"2.0 ** 0.5", "1.4142135623730951"},
    {"10 ** 18", "1000000000000000000"},
    {"4 ** 0.5", "2.0"},
    {"(-8) ** (1/1)", "-8.0"},
    {"0 ** 0", "1"},
    {"1 < 2 < 3", "True"},
    {"1 < 3 < 2", "False"},
    {"3 > 2 == 2", "True"},
    {"1 < 2 > 0 != 5", "True"},
    {"1 == 1.0", "True"},
    {"1 == True", "True"},
    {"[1, 2] == [1.0, 2.0]", "True"},
    {"2**53 + 1 == 2.0**53", "False"},
    {"1 and 2", "2"},
    {"0 and 2", "0"},
    {"1 or 2", "1"},
    {"0 or ''", "''"},
    {"'' or [] or 0", "0"},
    {"[] and 1", "[]"},
    {"None or 'x'", "'x'"},
    {"not []", "True"},
    {"not 'a'", "False"},
    {"3 in [1, 2, 3]", "True"},
    {"4 not in [1, 2, 3]", "True"},
    {"'bc' in 'abcd'", "True"},
    {"'x' in 'abc'", "False"},
    {"[1] in [[1], [2]]", "True"},
    {"min([3, 1, 2])", "1"},
    {"max(3, 7, 5)", "7"},
    {"min(2, 1.0, 1)", "1.0"},
    {"max('hello')", "'o'"},
    {"min('b', 'a', 'c')", "'a'"},
    {"max([1, 2], [1, 3])", "[1, 3]"},
    {"'abc' < 'abd'", "True"},
    {"'abc' < 'ab'", "False"},
    {"'B' < 'a'", "True"},
    {"'a' * 3 == 'aaa'", "True"},
    {"[1, 2] + [3]", "[1, 2, 3]"},
    {"[1, 2] * 3", "[1, 2, 1, 2, 1, 2]"},
    {"3 * [0]", "[0, 0, 0]"},
    {"[1] * -1", "[]"},
    {"[1, 2] < [1, 3]", "True"},
    {"[1, 2] < [1, 2, 0]", "True"},
    {"'ab' + 'cd'", "'abcd'"},
    {"bool(0.0)", "False"},
    {"bool('0')", "True"},
    {"bool([0])", "True"},
    {"bool(None)", "False"},
    {"1 if [] else 2", "2"},
    {"'yes' if 'x' else 'no'", "'yes'"},
    {"1 if 0 else 2 if 0 else 3", "3"},
    {"round(2.5)", "2"},
    {"round(3.5)", "4"},
    {"round(-2.5)", "-2"},
    {"round(0.5)", "0"},
    {"round(1.4999999999999999)", "2"},
    {"round(2.675, 2)", "2.67"},
    {"round(1234.5678, -2)", "1200.0"},
    {"round(25, -1)", "20"},
    {"round(35, -1)", "40"},
    {"round(-25, -1)", "-20"},
    {"round(-0.4, 0)", "-0.0"},
    {"round(7, 2)", "7"},
    {"round(0.125, 2)", "0.12"},
    {"round(1e300, -299)", "1e+300"},
    {"abs(-5)", "5"},
    {"abs(-2.5)", "2.5"},
    {"int(3.9)", "3"},
    {"int(-3.9)", "-3"},
    {"int('  -42 ')", "-42"},
    {"int(True)", "1"},
    {"float('1.5')", "1.5"},
    {"float(3)", "3.0"},
    {"str(1.5)", "'1.5'"},
    {"str(1e16)", "'1e+16'"},
    {"str(1e-05)", "'1e-05'"},
    {"str([1, 'a', 2.0, None, True])", "\"[1, 'a', 2.0, None, True]\""},
    {"str(0.1 + 0.2)", "'0.30000000000000004'"},
    {"str(\"it's\")", "\"it's\""},
    {"len([1, 2, 3])", "3"},
    {"len('hello')", "5"},
    {"sum([1, 2, 3])", "6"},
    {"sum([0.1] * 10)", "0.9999999999999999"},
    {"sum([1, 2.5])", "3.5"},
    {"sum([[1], [2]], [])", "[1, 2]"},
    {"[1, 2, 3][-1]", "3"},
    {"[1, 2, 3][::-1]", "[3, 2, 1]"},
    {"'abcdef'[1:4]", "'bcd'"},
    {"'abcdef'[::2]", "'ace'"},
    {"[0, 1, 2, 3, 4, 5, 6, 7, 8, 9][8:1:-3]", "[8, 5, 2]"},
    {"[1, 2, 3][-100:100]", "[1, 2, 3]"},
    {"'abc'[5:1:-1]", "'c'"},
    {"list('abc')", "['a', 'b', 'c']"},
    {"any([0, '', 1])", "True"},
    {"all([1, 'a', []])", "False"},
    {"True + True", "2"},
    {"True * 3", "3"},
    {"-True", "-1"},
    {"~5", "-6"},
    {"5 & 3", "1"},
    {"6 | 3", "7"},
    {"5 ^ 3", "6"},
    {"1 << 10", "1024"},
    {"-16 >> 2", "-4"},
    {"True & False", "False"},
    {"0x10 + 0o17 + 0b101", "36"},
    {"1_000_000", "1000000"},
    {"1e3", "1000.0"},
    {".5", "0.5"},
    {"1.", "1.0"},
    {"'\\x41\\101\\t'", "'AA\\t'"},
    {"r'\\n'", "'\\\\n'"},
    {"'a' 'b'", "'ab'"},
    {"None is None", "True"},
    {"0 is not None", "True"},
    {"[] == []", "True"},
};

}  // namespace

TEST_CASE("Python expressions give the values Python gives", "[cpu][pyexpr]") {
  for (const Case& c : kPythonValues) {
    INFO(c.text);
    CHECK(py(c.text) == c.repr);
  }
  CHECK(sizeof kPythonValues / sizeof kPythonValues[0] >= 80);
}

TEST_CASE("Python expressions read bound variables", "[cpu][pyexpr]") {
  CHECK(py("(x % ((x * x) // y)) == 0") == "False");
  CHECK(py("x // y") == "-3");
  CHECK(py("x % y") == "-2");
  CHECK(py("y == 0 or (x % 32 != 0)") == "True");
  CHECK(py("1 < x <= 7") == "True");
  CHECK(py("f * 2") == "5.0");
  CHECK(py("s[1:] + s[0]") == "'bca'");
  CHECK(py("[s, f, x]") == "['abc', 2.5, 7]");
  CHECK(py("min(x, f, y)") == "-3");
  CHECK(py("round(f)") == "2");
  CHECK(py("x if s else y") == "7");
  // Names are looked up when read: a side that short-circuiting skips may name an unbound variable.
  CHECK(py("x or unbound") == "7");
  CHECK(py("0 and unbound") == "0");
  CHECK(py("x if True else unbound") == "7");
}

TEST_CASE("Python expressions list their free variables", "[cpu][pyexpr]") {
  CHECK(PyExpr::parse("(KWG % ((MDIMC * NDIMC) // MDIMA)) == 0").variables() ==
        std::set<std::string>{"KWG", "MDIMA", "MDIMC", "NDIMC"});
  // Comprehension variables and function names are not free; the first iterable is read outside.
  CHECK(PyExpr::parse("[i * N for i in range(M) if i < L]").variables() == std::set<std::string>{"L", "M", "N"});
  CHECK(PyExpr::parse("[x for x in x]").variables() == std::set<std::string>{"x"});
  CHECK(PyExpr::parse("[[j for j in range(i)] for i in range(n)]").variables() == std::set<std::string>{"n"});
  CHECK(PyExpr::parse("max(a for a in b) + len(c)").variables() == std::set<std::string>{"b", "c"});
  CHECK(PyExpr::parse("True or None").variables().empty());
  CHECK(PyExpr::parse("  1 + 2  # comment").text() == "  1 + 2  # comment");
}

TEST_CASE("Python values print, compare and convert as Python's", "[cpu][pyexpr]") {
  CHECK(PyValue::floating(0.1).repr() == "0.1");
  CHECK(PyValue::floating(1e22).repr() == "1e+22");
  CHECK(PyValue::floating(123456789012345678.0).repr() == "1.2345678901234568e+17");
  CHECK(PyValue::floating(-0.0).repr() == "-0.0");
  CHECK(PyValue::floating(5e-324).repr() == "5e-324");
  CHECK(PyValue::string("a'b").repr() == "\"a'b\"");
  CHECK(PyValue::string("a'b\"").repr() == "'a\\'b\"'");
  CHECK(PyValue::string("x").str() == "x");
  CHECK(PyValue::none().repr() == "None");
  CHECK(PyValue::list({PyValue::integer(1), PyValue::boolean(true)}).repr() == "[1, True]");
  CHECK(PyValue::integer(1).equals(PyValue::floating(1.0)));
  CHECK(PyValue::boolean(true).equals(PyValue::integer(1)));
  CHECK_FALSE(PyValue::string("1").equals(PyValue::integer(1)));
  CHECK_FALSE(PyValue::integer(9007199254740993).equals(PyValue::floating(9007199254740992.0)));
  CHECK_FALSE(PyValue::none().truthy());
  CHECK(PyValue::floating(-0.5).truthy());
  CHECK_FALSE(PyValue::list({}).truthy());
  CHECK(PyValue::integer(3).as_int() == 3);
  CHECK_THROWS_AS(PyValue::boolean(true).as_int(), PyExprError);
  CHECK(PyValue::integer(3).type_name() == std::string("int"));
  CHECK_THROWS_WITH(PyValue::string("\xc3\xa9").repr(), Catch::Contains("non-ASCII"));
}

TEST_CASE("Python syntax errors name the text and the position", "[cpu][pyexpr]") {
  CHECK_THROWS_AS(PyExpr::parse("1 +"), PyExprError);
  CHECK_THROWS_AS(PyExpr::parse("1 +"), ExprError);
  CHECK_THROWS_WITH(PyExpr::parse("1 +"), Catch::Contains("\"1 +\" at position 4: unexpected end"));
  CHECK_THROWS_WITH(PyExpr::parse("(1 + 2"), Catch::Contains("position 7: expected ')'"));
  CHECK_THROWS_WITH(PyExpr::parse("[1, 2"), Catch::Contains("expected ']'"));
  CHECK_THROWS_WITH(PyExpr::parse("a = 1"), Catch::Contains("position 3: unexpected '='"));
  CHECK_THROWS_WITH(PyExpr::parse("a && b"), Catch::Contains("position 3: '&&' is not Python: use 'and'"));
  CHECK_THROWS_WITH(PyExpr::parse("!a"), Catch::Contains("use 'not'"));
  CHECK_THROWS_WITH(PyExpr::parse("01"), Catch::Contains("leading zeros"));
  CHECK_THROWS_WITH(PyExpr::parse("1abc"), Catch::Contains("invalid number literal"));
  CHECK_THROWS_WITH(PyExpr::parse("1j"), Catch::Contains("complex"));
  CHECK_THROWS_WITH(PyExpr::parse("'abc"), Catch::Contains("position 1: unterminated string"));
  CHECK_THROWS_WITH(PyExpr::parse("foo(1)"), Catch::Contains("unknown function 'foo'"));
  CHECK_THROWS_WITH(PyExpr::parse("range()"), Catch::Contains("range() takes 1 to 3 argument(s), 0 given"));
  CHECK_THROWS_WITH(PyExpr::parse("round(1, ndigits=2)"), Catch::Contains("keyword arguments"));
  CHECK_THROWS_WITH(PyExpr::parse("a.b"), Catch::Contains("attribute"));
  CHECK_THROWS_WITH(PyExpr::parse("lambda: 1"), Catch::Contains("'lambda' is not supported"));
  CHECK_THROWS_WITH(PyExpr::parse("{1: 2}"), Catch::Contains("dict and set"));
  CHECK_THROWS_WITH(PyExpr::parse("f'{x}'"), Catch::Contains("f-strings"));
  CHECK_THROWS_WITH(PyExpr::parse("a if b"), Catch::Contains("expected 'else'"));
  CHECK_THROWS_WITH(PyExpr::parse("[x for in y]"), Catch::Contains("expected a name after 'for'"));
  CHECK_THROWS_WITH(PyExpr::parse("99999999999999999999"), Catch::Contains("does not fit in 64 bits"));
  CHECK_THROWS_WITH(PyExpr::parse(""), Catch::Contains("empty expression"));
  // -2^63 is a literal Python reads, 2^63 is not an int64.
  CHECK(py("-9223372036854775808") == "-9223372036854775808");
  CHECK_THROWS_AS(PyExpr::parse("9223372036854775808"), PyExprError);
}

TEST_CASE("Python evaluation errors name the expression and the problem", "[cpu][pyexpr]") {
  CHECK_THROWS_WITH(py("unknown_name + 1"), Catch::Contains("\"unknown_name + 1\": unknown variable 'unknown_name'"));
  CHECK_THROWS_WITH(py("1 // 0"), Catch::Contains("\"1 // 0\": division by zero"));
  CHECK_THROWS_WITH(py("x % (y + 3)"), Catch::Contains("division by zero"));
  CHECK_THROWS_WITH(py("1 / 0.0"), Catch::Contains("division by zero"));
  CHECK_THROWS_WITH(py("5.0 % 0"), Catch::Contains("division by zero"));
  CHECK_THROWS_WITH(py("0 ** -1"), Catch::Contains("division by zero"));
  CHECK_THROWS_WITH(py("2 ** 63"), Catch::Contains("64 bits"));
  CHECK_THROWS_WITH(py("9223372036854775807 + 1"), Catch::Contains("64 bits"));
  CHECK_THROWS_WITH(py("-9223372036854775808 // -1"), Catch::Contains("64 bits"));
  CHECK_THROWS_WITH(py("1 + 'a'"), Catch::Contains("unsupported operand type(s) for +: 'int' and 'str'"));
  CHECK_THROWS_WITH(py("'a' < 1"), Catch::Contains("'<' not supported between instances of 'str' and 'int'"));
  CHECK_THROWS_WITH(py("[1, 2][2]"), Catch::Contains("list index out of range"));
  CHECK_THROWS_WITH(py("min([])"), Catch::Contains("empty sequence"));
  CHECK_THROWS_WITH(py("int('1.5')"), Catch::Contains("invalid literal for int()"));
  CHECK_THROWS_WITH(py("range(1, 5, 0)"), Catch::Contains("must not be zero"));
  CHECK_THROWS_WITH(py("range(1.5)"), Catch::Contains("'float' object cannot be interpreted as an integer"));
  CHECK_THROWS_WITH(py("len(5)"), Catch::Contains("has no len()"));
  CHECK_THROWS_WITH(py("[a for a in 5]"), Catch::Contains("'int' object is not iterable"));
  CHECK_THROWS_WITH(py("(-8) ** 0.5"), Catch::Contains("complex"));
  CHECK_THROWS_WITH(py("10.0 ** 400"), Catch::Contains("overflow"));
  CHECK_THROWS_WITH(py("int(float('nan'))"), Catch::Contains("NaN"));
  CHECK_THROWS_WITH(py("x is 7"), Catch::Contains("None, True and False"));
  CHECK_THROWS_WITH(py("'%d' % 5"), Catch::Contains("string formatting"));
}

TEST_CASE("Python expressions are bounded in nesting, length and work", "[cpu][pyexpr]") {
  const int deep = PyExpr::kMaxNesting + 10;
  CHECK_THROWS_WITH(PyExpr::parse(std::string(static_cast<std::size_t>(deep), '(') + "1" +
                                  std::string(static_cast<std::size_t>(deep), ')')),
                    Catch::Contains("nested too deeply"));
  CHECK_THROWS_WITH(PyExpr::parse(std::string(static_cast<std::size_t>(deep), '[') + "1" +
                                  std::string(static_cast<std::size_t>(deep), ']')),
                    Catch::Contains("nested too deeply"));
  CHECK_THROWS_WITH(PyExpr::parse(std::string(static_cast<std::size_t>(deep) * 4, '-') + "1"),
                    Catch::Contains("nested too deeply"));
  std::string chain = "1";
  for (int i = 0; i < deep; ++i) chain += " + 1";
  CHECK_THROWS_WITH(PyExpr::parse(chain), Catch::Contains("nested too deeply"));
  std::string powers = "1";
  for (int i = 0; i < deep; ++i) powers += " ** 1";
  CHECK_THROWS_WITH(PyExpr::parse(powers), Catch::Contains("nested too deeply"));
  // Just inside the limits.
  const int fine = PyExpr::kMaxNesting / 2;
  CHECK(py(std::string(static_cast<std::size_t>(fine), '(') + "1" + std::string(static_cast<std::size_t>(fine), ')')) ==
        "1");
  CHECK_THROWS_WITH(py("range(10**8)"), Catch::Contains("a range of 100000000 elements is longer than the limit"));
  CHECK_THROWS_WITH(py("[0] * 10**8"), Catch::Contains("longer than the limit"));
  CHECK_THROWS_WITH(py("'ab' * 10**7"), Catch::Contains("longer than the limit"));
  CHECK_THROWS_WITH(py("len([1 for a in range(10**4) for b in range(10**4)])"), Catch::Contains("too much work"));
  CHECK_THROWS_WITH(py("[1 for a in range(10**4) for b in range(10**4) if 0]"), Catch::Contains("too much work"));
  CHECK(py("[] * 10**18") == "[]");
  CHECK(py("len(range(10**6))") == "1000000");
  CHECK(py("len(range(10**7))") == "10000000");  // the longest list, and all the work one evaluation may do
}

TEST_CASE("Expr::python decodes labelled and float parameters", "[cpu][pyexpr][expr]") {
  PyDecoders decoders;
  decoders["layout"] = {{0, PyValue::string("row")}, {1, PyValue::string("col")}};
  decoders["scale"] = {{10, PyValue::floating(0.5)}, {11, PyValue::floating(1.5)}};
  std::map<std::string, std::int64_t> stored;
  const VarLookup lookup = [&](const std::string& n) -> std::optional<std::int64_t> {
    auto it = stored.find(n);
    if (it == stored.end()) return std::nullopt;
    return it->second;
  };
  const Expr e = Expr::python("layout == 'row' and block * scale >= 64", decoders);
  CHECK(e.is_python());
  CHECK_FALSE(Expr::parse("1").is_python());
  CHECK(e.variables() == std::set<std::string>{"block", "layout", "scale"});
  CHECK(e.text() == "layout == 'row' and block * scale >= 64");
  stored = {{"layout", 0}, {"block", 128}, {"scale", 10}};
  CHECK(e.eval(lookup) == 1);
  stored["scale"] = 11;
  CHECK(e.eval(lookup) == 1);
  stored["block"] = 32;
  CHECK(e.eval(lookup) == 0);  // 32 * 1.5 < 64
  stored = {{"layout", 1}, {"block", 128}, {"scale", 11}};
  CHECK(e.eval(lookup) == 0);
  stored["layout"] = 5;  // a code the decoder does not know
  CHECK_THROWS_WITH(e.eval(lookup), Catch::Contains("variable 'layout' has no Python value for stored value 5"));
  stored.erase("layout");
  CHECK_THROWS_WITH(e.eval(lookup), Catch::Contains("unknown variable 'layout'"));

  // Results: an int as it is, a bool as 1/0, an integral float as an int, others by their truth.
  stored = {{"n", 10}};
  CHECK(Expr::python("n // 3").eval(lookup) == 3);
  CHECK(Expr::python("n - 20").eval(lookup) == -10);
  CHECK(Expr::python("n > 3").eval(lookup) == 1);
  CHECK(Expr::python("n / 5").eval(lookup) == 2);
  CHECK_THROWS_WITH(Expr::python("n / 4").eval(lookup), Catch::Contains("gives the float 2.5, not an integer"));
  CHECK(Expr::python("[n] if n > 20 else []").eval(lookup) == 0);
  CHECK(Expr::python("'yes' if n else ''").eval(lookup) == 1);
  CHECK(Expr::python("None").eval(lookup) == 0);
  CHECK_THROWS_AS(Expr::python("n +"), PyExprError);
  // Copies share the parsed form and evaluate alike.
  const Expr copy = e;
  stored = {{"layout", 0}, {"block", 256}, {"scale", 10}};
  CHECK(copy.eval(lookup) == 1);
}

TEST_CASE("Expr::python's int path gives what the full evaluation gives", "[cpu][pyexpr][expr]") {
  // Expr::python evaluates over ints first (PyExpr::eval_int) and falls back to PyExpr::eval; both must agree,
  // in values and in errors, also where bools, overflow, true division or non-int values appear.
  const char* const texts[] = {"a % b == 0 and a // b >= 1",
                               "(a % ((b * c) // d)) == 0",
                               "a < b <= c != d",
                               "a and b or c",
                               "not a or b - c",
                               "(a > b) + (b > c) * 2",
                               "a ** 2 - b ** c",
                               "a << b | c >> 1 & ~d ^ 3",
                               "a if b > c else -d",
                               "min(a, b, c) + max(a, d) * abs(b - c)",
                               "a / b",
                               "a // (b - c)",
                               "2 ** a ** 2",
                               "-a * 4611686018427387904",
                               "a in [b, c]",
                               "True + a",
                               "a == 1.0",
                               "a == 1 or [a] == [b]"};
  const std::int64_t values[] = {-3, 0, 1, 2, 5};
  for (const char* text : texts) {
    const Expr fast = Expr::python(text, {});
    const PyExpr full = PyExpr::parse(text);
    for (std::int64_t a : values)
      for (std::int64_t b : values)
        for (std::int64_t c : values)
          for (std::int64_t d : values) {
            INFO(text << " with a=" << a << " b=" << b << " c=" << c << " d=" << d);
            const std::map<std::string, std::int64_t> ints = {{"a", a}, {"b", b}, {"c", c}, {"d", d}};
            std::optional<std::int64_t> expected;
            std::string error;
            try {
              const PyValue v = full.eval(
                  [&](const std::string& n) -> std::optional<PyValue> { return PyValue::integer(ints.at(n)); });
              if (v.is_float() && v.as_float() != std::trunc(v.as_float()))
                error = "not an integer";
              else if (v.is_float())
                expected = static_cast<std::int64_t>(v.as_float());
              else if (v.is_int())
                expected = v.as_int();
              else
                expected = v.truthy() ? 1 : 0;
            } catch (const PyExprError& e) {
              error = e.what();
            }
            const VarLookup lookup = [&](const std::string& n) -> std::optional<std::int64_t> {
              auto it = ints.find(n);
              if (it == ints.end()) return std::nullopt;
              return it->second;
            };
            if (expected)
              CHECK(fast.eval(lookup) == *expected);
            else
              CHECK_THROWS_AS(fast.eval(lookup), PyExprError);
          }
  }
}

TEST_CASE("a T1-style space with Python conditions has the valid count Python gives", "[cpu][pyexpr][space]") {
  const std::vector<Param> params = {make_param("MWG", {16, 32, 64, 128}),
                                     make_param("NWG", {16, 32, 64, 128}),
                                     make_param("KWG", {16, 32}),
                                     make_param("MDIMC", {8, 16, 32}),
                                     make_param("NDIMC", {8, 16, 32}),
                                     make_param("MDIMA", {8, 16, 32}),
                                     make_param("NDIMB", {8, 16, 32}),
                                     make_param("KWI", {2, 8}),
                                     make_param("SA", {0, 1}),
                                     make_param("SB", {0, 1})};
  std::vector<Expr> conditions;
  for (const char* c : {"KWG % KWI == 0", "MWG % MDIMC == 0", "NWG % NDIMC == 0", "MWG % MDIMA == 0",
                        "NWG % NDIMB == 0", "(KWG % ((MDIMC * NDIMC) // MDIMA)) == 0",
                        "KWG % ((MDIMC * NDIMC) // NDIMB) == 0 and (SA == 0 or SB == 1 or MWG * NWG <= 64 * 64)"})
    conditions.push_back(Expr::python(c, {}));
  const ParameterSpace space(params, conditions, {});
  // Python 3.11: sum(all(eval(c, {}, env) for c in conditions) for env in itertools.product(...)) over the
  // 20736 combinations.
  CHECK(space.size() == 9688);
  CHECK(space.cartesian_size() == 20736);
}

TEST_CASE("a space with string- and float-valued parameters has the valid count Python gives", "[cpu][pyexpr][space]") {
  Param layout = make_param("layout", {0, 1, 2});
  layout.labels = {{0, "row"}, {1, "col"}, {2, "tiled"}};
  Param scale = make_param("scale", {0, 1, 2, 3});
  scale.labels = {{0, "0.5"}, {1, "1.0"}, {2, "1.5"}, {3, "2.0"}};
  PyDecoders decoders;
  for (const auto& [code, label] : layout.labels) decoders["layout"][code] = PyValue::string(label);
  for (const auto& [code, label] : scale.labels) decoders["scale"][code] = PyValue::floating(std::stod(label));
  std::vector<Expr> conditions;
  for (const char* c : {"layout != 'tiled' or block >= 64", "block * scale <= 256",
                        "(layout in ['row', 'col']) == (unroll < 4) or scale == 2.0",
                        "[1, 2, 4][min(unroll, 2)] * block // 32 in [4, 8, 16, 32]"})
    conditions.push_back(Expr::python(c, decoders));
  const ParameterSpace space({layout, scale, make_param("block", {32, 64, 128, 256}), make_param("unroll", {1, 2, 4})},
                             conditions, {});
  // Python 3.11 over layout in ['row', 'col', 'tiled'], scale in [0.5, 1.0, 1.5, 2.0], block in [32, 64, 128, 256],
  // unroll in [1, 2, 4].
  CHECK(space.size() == 68);
  for (std::size_t i = 0; i < space.size(); ++i) {
    const Config c = space.config(i);
    CHECK((c.at("layout") != 2 || c.at("block") >= 64));
  }
}
