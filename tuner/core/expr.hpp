// Integer expressions for constraints and launch geometry.
// Grammar (C precedence): || && ! == != < <= > >= + - * / % unary -, parentheses, integer literals,
// identifiers, and calls min(a,b,...), max(a,b,...), ceil_div(a,b). Values are 64-bit signed integers;
// comparisons and logic yield 0/1. Division and modulo by zero raise ExprError.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

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

  /// Evaluates; throws ExprError if a variable is unbound or on division by zero.
  std::int64_t eval(const VarLookup& vars) const;

  /// Every identifier the expression reads (function names excluded).
  const std::set<std::string>& variables() const { return vars_; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
  std::set<std::string> vars_;
};

}  // namespace autotune
