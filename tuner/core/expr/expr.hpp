// Integer expressions for constraints and launch geometry.
// Grammar (C precedence): || && ! == != < <= > >= + - * / % unary -, parentheses, integer literals,
// identifiers, and calls min(a,b,...), max(a,b,...), ceil_div(a,b). Values are 64-bit signed integers;
// comparisons and logic yield 0/1. Division and modulo by zero raise ExprError.
// Expr::python wraps a Python expression (tuner/core/expr/pyexpr.hpp) behind the same interface, for T1 conditions.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "tuner/core/expr/pyexpr.hpp"

namespace autotune {

/// Looks a variable up; nullopt = not bound (yet).
using VarLookup = std::function<std::optional<std::int64_t>(const std::string&)>;

class Expr {
 public:
  struct Node;
  Expr();
  ~Expr();
  Expr(const Expr&);
  Expr& operator=(const Expr&);
  Expr(Expr&&) noexcept;
  Expr& operator=(Expr&&) noexcept;

  /// Parses text; throws ExprError naming the position and the problem.
  static Expr parse(const std::string& text);

  /// A Python expression (PyExpr::parse; throws PyExprError) evaluated with each variable's stored integer
  /// decoded to its Python value by `decoders` (a variable without a decoder is a plain int). eval() gives
  /// an int result as it is, a bool as 1/0, an integral float as that int, None and str/list results by their
  /// truth (1/0), and throws PyExprError for a non-integral float or a stored value its decoder lacks.
  static Expr python(const std::string& text, PyDecoders decoders = {});

  /// Evaluates; throws ExprError if a variable is unbound or on division by zero.
  std::int64_t eval(const VarLookup& vars) const;

  /// True for an expression made by python().
  bool is_python() const { return python_ != nullptr; }

  /// Every identifier the expression reads (function names excluded).
  const std::set<std::string>& variables() const { return vars_; }
  const std::string& text() const { return text_; }

 private:
  struct Python;
  std::int64_t eval_python(const VarLookup& vars) const;

  std::string text_;
  std::shared_ptr<const Node> root_;
  std::shared_ptr<const Python> python_;
  std::set<std::string> vars_;
};

}  // namespace autotune
