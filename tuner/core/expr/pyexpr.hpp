// A subset of Python expressions, for the `Values` and `Conditions` of Kernel Tuner T1 files: Kernel Tuner
// evaluates them with Python's eval, so every result here is the value Python gives, or a PyExprError.
//
// Values (PyValue): None, bool, int (64-bit signed: a result beyond 64 bits is an error, never wrapped), float
// (double), str, list (a tuple is a list). Expressions: literals (ints in decimal, 0x, 0o, 0b, with `_`;
// floats such as 1.5, .5, 1e3; strings in '...', "...", triple quotes, r-prefix, with Python's escapes),
// True/False/None, list displays, tuples in parentheses, list comprehensions and generator expressions (one or
// more `for` clauses with name or tuple targets, `if` filters), the operators of Python with its precedence
// (`a if c else b`, or, and, not, comparisons and their chains with in/not in/is/is not, | ^ &, << >>, + -,
// * / // %, unary - + ~, **), indexing with negative indexes and slices, and the built-in functions abs, all,
// any, bool, float, int, len, list, max, min, range, round, str, sum and tuple (positional arguments only).
// See PyExpr for the limits.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tuner/core/error.hpp"

namespace autotune {

/// A Python expression cannot be parsed, or its evaluation raised (Python's TypeError, ValueError,
/// ZeroDivisionError, IndexError, ...) or went beyond a limit of this subset. what() names the expression.
class PyExprError : public ExprError {
 public:
  using ExprError::ExprError;
};

/// An immutable Python value. Copies share a string's or list's storage; safe to read from several threads.
/// None, bool, int and float values are held in place (making and copying them never allocates).
class PyValue {
 public:
  enum class Type : std::uint8_t { none, boolean, integer, floating, string, list };
  using List = std::vector<PyValue>;

  PyValue() = default;  ///< None
  static PyValue none() { return PyValue(); }
  static PyValue boolean(bool b) {
    PyValue v;
    v.type_ = Type::boolean;
    v.b_ = b;
    return v;
  }
  static PyValue integer(std::int64_t i) {
    PyValue v;
    v.type_ = Type::integer;
    v.i_ = i;
    return v;
  }
  static PyValue floating(double d) {
    PyValue v;
    v.type_ = Type::floating;
    v.f_ = d;
    return v;
  }
  static PyValue string(std::string s);
  static PyValue list(List items);

  Type type() const { return type_; }
  bool is_none() const { return type() == Type::none; }
  bool is_bool() const { return type() == Type::boolean; }
  bool is_int() const { return type() == Type::integer; }
  bool is_float() const { return type() == Type::floating; }
  bool is_str() const { return type() == Type::string; }
  bool is_list() const { return type() == Type::list; }

  /// The value as the type asked for; throws PyExprError naming both types when it is another type (no
  /// conversion: as_int() of a bool throws).
  bool as_bool() const;
  std::int64_t as_int() const;
  double as_float() const;
  const std::string& as_str() const;
  const List& as_list() const;
  /// The value when it has that type, else nullptr (no conversion: if_int() of a bool is nullptr).
  const bool* if_bool() const { return type_ == Type::boolean ? &b_ : nullptr; }
  const std::int64_t* if_int() const { return type_ == Type::integer ? &i_ : nullptr; }
  const double* if_float() const { return type_ == Type::floating ? &f_ : nullptr; }
  const std::string* if_str() const {
    return type_ == Type::string ? static_cast<const std::string*>(object_.get()) : nullptr;
  }
  const List* if_list() const { return type_ == Type::list ? static_cast<const List*>(object_.get()) : nullptr; }

  /// Python's bool(v): None, False, 0, 0.0, '' and [] are false.
  bool truthy() const;
  /// Python's v == w: numbers compare by value across bool, int and float (exactly, also beyond 2^53);
  /// lists element-wise; values of other different types are unequal.
  bool equals(const PyValue& other) const;
  /// Python's repr(v) (floats in the shortest form that reads back, strings quoted as Python quotes them).
  /// Throws PyExprError for a string with non-ASCII characters (Python's rules for which of them print are not
  /// reproduced) and past 10^7 characters.
  std::string repr() const;
  /// Python's str(v): a string itself, anything else as repr().
  std::string str() const;
  /// Python's name of the type: NoneType, bool, int, float, str, list.
  const char* type_name() const;

 private:
  Type type_ = Type::none;
  union {
    std::int64_t i_ = 0;
    bool b_;
    double f_;
  };
  std::shared_ptr<const void> object_;  // the std::string or List of a string or list
};

/// Looks a variable up by name; nullopt = not bound (evaluation then fails naming the variable).
using PyLookup = std::function<std::optional<PyValue>(const std::string&)>;

/// Looks variables up by their position in PyExpr::variables() (the set's order), for callers that prepare a
/// table per variable once and evaluate many times.
class PyVariableSource {
 public:
  virtual ~PyVariableSource() = default;
  /// The value of the index-th entry of variables(), which is `name`; nullopt = not bound. May throw.
  virtual std::optional<PyValue> value(std::size_t index, const std::string& name) const = 0;
};

/// A parsed Python expression. Immutable after parse; copies share the tree; eval is safe to call from several
/// threads at once (if the lookup is).
///
/// Limits (each a PyExprError naming the limit): brackets, parentheses, unary operators and calls nested more
/// than kMaxNesting deep, or a syntax tree deeper than that (a chain of that many binary operators); a list or
/// string longer than kMaxLength elements (range, `*`, `+`, comprehensions, str); more than kMaxWork element
/// steps in one evaluation (list elements made, compared or iterated). Where Python would go beyond 64-bit ints
/// the result is an error, not a big integer.
class PyExpr {
 public:
  static constexpr int kMaxNesting = 200;
  static constexpr std::size_t kMaxLength = 10'000'000;
  static constexpr std::uint64_t kMaxWork = 10'000'000;

  struct Node;
  PyExpr();
  ~PyExpr();
  PyExpr(const PyExpr&);
  PyExpr& operator=(const PyExpr&);
  PyExpr(PyExpr&&) noexcept;
  PyExpr& operator=(PyExpr&&) noexcept;

  /// Parses text; throws PyExprError "cannot parse Python expression "TEXT" at position N: PROBLEM" (N 1-based,
  /// in bytes). Unsupported Python (lambda, attributes, dicts, keyword arguments, unknown functions, ...) is
  /// refused here with a message that says so.
  static PyExpr parse(const std::string& text);

  /// Evaluates; throws PyExprError naming the expression when a variable it reads is unbound, on division by
  /// zero, on any error Python would raise, and past the limits. Names are looked up when read, so a name on
  /// a side that short-circuiting skips need not be bound.
  PyValue eval(const PyLookup& vars) const;
  PyValue eval(const PyVariableSource& vars) const;

  /// The value as an int (a bool as 0 or 1) where the expression stays within ints: it uses only arithmetic,
  /// comparisons (not in/is), and/or/not, conditional expressions, abs and min/max of several arguments; every
  /// value it meets is an int or a bool; and Python would neither raise nor leave the ints (true division, a
  /// negative power, 64-bit overflow). nullopt otherwise; eval() then gives the value or the error. Where it
  /// gives a value, that is eval()'s value as an int. Allocates nothing; about twice as fast as eval().
  std::optional<std::int64_t> eval_int(const PyVariableSource& vars) const;

  /// Every free name the expression reads (comprehension variables and function names excluded), sorted.
  const std::set<std::string>& variables() const { return vars_; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
  std::set<std::string> vars_;
  std::size_t locals_ = 0;    // comprehension variables (slots) of the tree
  bool int_capable_ = false;  // the tree uses only what eval_int covers
};

/// Python values of a variable that is stored as an integer code (a string- or float-valued parameter): code
/// -> value.
using PyDecoder = std::map<std::int64_t, PyValue>;
/// Decoders by variable name; a variable without one is a plain int.
using PyDecoders = std::map<std::string, PyDecoder>;

}  // namespace autotune
