#include "tuner/core/expr/expr.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tuner/core/error.hpp"

namespace autotune {

struct Expr::Node {
  enum class Op { lit, var, neg, lnot, add, sub, mul, div, mod, lt, le, gt, ge, eq, ne, land, lor, min, max, ceil_div };
  Op op = Op::lit;
  std::int64_t value = 0;
  std::string name;
  std::vector<std::shared_ptr<const Node>> kids;
  int depth = 1;  // levels of the tree below and including this node
};

namespace {

using NodeP = std::shared_ptr<const Expr::Node>;
using Op = Expr::Node::Op;

/// Limits that keep parsing, evaluation and destruction (all recursive) far from the stack's end on any
/// input: parentheses, unary operators and calls nested deeper than this, or a tree deeper than this
/// (e.g. a chain of that many binary operators), are rejected. Real constraints are a few levels deep;
/// found by fuzz_expr (a stack overflow on ~1400 nested parentheses).
constexpr int kMaxNesting = 256;

class Parser {
 public:
  Parser(const std::string& text, std::set<std::string>& vars) : s_(text), vars_(vars) {}

  NodeP parse() {
    NodeP n = parse_or();
    skip();
    if (pos_ != s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ExprError("cannot parse expression \"" + s_ + "\" at position " + std::to_string(pos_ + 1) + ": " + what);
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(const char* tok) {
    skip();
    std::size_t len = std::char_traits<char>::length(tok);
    if (s_.compare(pos_, len, tok) != 0) return false;
    // Do not take '<' from "<=", '!' from "!=", '=' alone is never valid.
    if (len == 1 && pos_ + 1 < s_.size() && s_[pos_ + 1] == '=' && (tok[0] == '<' || tok[0] == '>' || tok[0] == '!'))
      return false;
    pos_ += len;
    return true;
  }
  NodeP make(Op op, std::vector<NodeP> kids) const {
    auto n = std::make_shared<Expr::Node>();
    n->op = op;
    for (const NodeP& k : kids) n->depth = std::max(n->depth, k->depth + 1);
    if (n->depth > kMaxNesting)
      fail("expression is nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
    n->kids = std::move(kids);
    return n;
  }
  NodeP parse_or() {
    NodeP l = parse_and();
    while (eat("||")) l = make(Op::lor, {l, parse_and()});
    return l;
  }
  NodeP parse_and() {
    NodeP l = parse_eq();
    while (eat("&&")) l = make(Op::land, {l, parse_eq()});
    return l;
  }
  NodeP parse_eq() {
    NodeP l = parse_rel();
    for (;;) {
      if (eat("==")) l = make(Op::eq, {l, parse_rel()});
      else if (eat("!=")) l = make(Op::ne, {l, parse_rel()});
      else return l;
    }
  }
  NodeP parse_rel() {
    NodeP l = parse_add();
    for (;;) {
      if (eat("<=")) l = make(Op::le, {l, parse_add()});
      else if (eat(">=")) l = make(Op::ge, {l, parse_add()});
      else if (eat("<")) l = make(Op::lt, {l, parse_add()});
      else if (eat(">")) l = make(Op::gt, {l, parse_add()});
      else return l;
    }
  }
  NodeP parse_add() {
    NodeP l = parse_mul();
    for (;;) {
      if (eat("+")) l = make(Op::add, {l, parse_mul()});
      else if (eat("-")) l = make(Op::sub, {l, parse_mul()});
      else return l;
    }
  }
  NodeP parse_mul() {
    NodeP l = parse_unary();
    for (;;) {
      if (eat("*")) l = make(Op::mul, {l, parse_unary()});
      else if (eat("/")) l = make(Op::div, {l, parse_unary()});
      else if (eat("%")) l = make(Op::mod, {l, parse_unary()});
      else return l;
    }
  }
  /// Counts the parser's recursion: every nested level (parentheses, unary operator, call) passes
  /// through parse_unary.
  struct NestingGuard {
    explicit NestingGuard(Parser& p) : p_(p) {
      if (++p_.nesting_ > kMaxNesting)
        p_.fail("expression is nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
    }
    ~NestingGuard() { --p_.nesting_; }
    Parser& p_;
  };

  NodeP parse_unary() {
    NestingGuard guard(*this);
    if (eat("-")) return make(Op::neg, {parse_unary()});
    if (eat("+")) return parse_unary();
    if (eat("!")) return make(Op::lnot, {parse_unary()});
    return parse_primary();
  }
  NodeP parse_primary() {
    skip();
    if (pos_ >= s_.size()) fail("unexpected end of expression");
    char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      NodeP n = parse_or();
      if (!eat(")")) fail("expected ')'");
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        int d = s_[pos_] - '0';
        if (v > (INT64_MAX - d) / 10) fail("integer literal too large");
        v = v * 10 + d;
        ++pos_;
      }
      if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.'))
        fail("only integer literals are allowed");
      auto n = std::make_shared<Expr::Node>();
      n->op = Op::lit;
      n->value = v;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t start = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
      std::string name = s_.substr(start, pos_ - start);
      skip();
      if (pos_ < s_.size() && s_[pos_] == '(') {
        ++pos_;
        Op op;
        if (name == "min") op = Op::min;
        else if (name == "max") op = Op::max;
        else if (name == "ceil_div") op = Op::ceil_div;
        else { pos_ = start; fail("unknown function '" + name + "' (known: min, max, ceil_div)"); }
        std::vector<NodeP> args{parse_or()};
        while (eat(",")) args.push_back(parse_or());
        if (!eat(")")) fail("expected ')' or ',' in call of " + name);
        if (op == Op::ceil_div && args.size() != 2) fail("ceil_div takes two arguments");
        return make(op, std::move(args));
      }
      vars_.insert(name);
      auto n = std::make_shared<Expr::Node>();
      n->op = Op::var;
      n->name = name;
      return n;
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& s_;
  std::set<std::string>& vars_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
};

[[noreturn]] void overflow(const std::string& text) {
  throw ExprError("expression \"" + text + "\": integer overflow");
}

std::int64_t eval_node(const Expr::Node& n, const VarLookup& vars, const std::string& text) {
  auto k = [&](std::size_t i) { return eval_node(*n.kids[i], vars, text); };
  switch (n.op) {
    case Op::lit: return n.value;
    case Op::var: {
      auto v = vars(n.name);
      if (!v) throw ExprError("expression \"" + text + "\": unknown variable '" + n.name + "'");
      return *v;
    }
    case Op::neg: {
      std::int64_t a = k(0);
      if (a == INT64_MIN) overflow(text);
      return -a;
    }
    case Op::lnot: return k(0) == 0;
    case Op::add:
    case Op::sub:
    case Op::mul: {
      std::int64_t a = k(0), b = k(1), r = 0;
      bool bad = n.op == Op::add ? __builtin_add_overflow(a, b, &r)
               : n.op == Op::sub ? __builtin_sub_overflow(a, b, &r)
                                 : __builtin_mul_overflow(a, b, &r);
      if (bad) overflow(text);
      return r;
    }
    case Op::div:
    case Op::mod:
    case Op::ceil_div: {
      std::int64_t a = k(0), b = k(1);
      if (b == 0) throw ExprError("expression \"" + text + "\": division by zero");
      if (a == INT64_MIN && b == -1) overflow(text);
      if (n.op == Op::div) return a / b;
      if (n.op == Op::mod) return a % b;
      // Ceiling of a / b for any signs, without the overflow of (a + b - 1) / b (found by fuzz_expr).
      return a / b + ((a % b != 0 && (a < 0) == (b < 0)) ? 1 : 0);
    }
    case Op::lt: return k(0) < k(1);
    case Op::le: return k(0) <= k(1);
    case Op::gt: return k(0) > k(1);
    case Op::ge: return k(0) >= k(1);
    case Op::eq: return k(0) == k(1);
    case Op::ne: return k(0) != k(1);
    case Op::land: return k(0) != 0 && k(1) != 0;  // short-circuit
    case Op::lor: return k(0) != 0 || k(1) != 0;
    case Op::min:
    case Op::max: {
      std::int64_t r = k(0);
      for (std::size_t i = 1; i < n.kids.size(); ++i) {
        std::int64_t v = k(i);
        r = n.op == Op::min ? std::min(r, v) : std::max(r, v);
      }
      return r;
    }
  }
  return 0;
}

}  // namespace

Expr::Expr() = default;
Expr::~Expr() = default;
Expr::Expr(const Expr&) = default;
Expr& Expr::operator=(const Expr&) = default;
Expr::Expr(Expr&&) noexcept = default;
Expr& Expr::operator=(Expr&&) noexcept = default;

Expr Expr::parse(const std::string& text) {
  Expr e;
  e.text_ = text;
  Parser p(text, e.vars_);
  e.root_ = p.parse();
  return e;
}

std::int64_t Expr::eval(const VarLookup& vars) const {
  if (python_) return eval_python(vars);
  if (!root_) throw ExprError("empty expression");
  return eval_node(*root_, vars, text_);
}

struct Expr::Python {
  PyExpr expr;
  PyDecoders decoders;
  std::vector<const PyDecoder*> by_index;  // per entry of expr.variables(): its decoder, or null
  bool int_values = true;                  // every decoder gives ints or bools: PyExpr::eval_int first
};

namespace {

/// The variables of a Python condition from the integer lookup of the space builder, decoded where a table is
/// given. Returns an int without allocating.
class DecodingSource final : public PyVariableSource {
 public:
  DecodingSource(const VarLookup& vars, const std::vector<const PyDecoder*>& decoders, const std::string& text)
      : vars_(vars), decoders_(decoders), text_(text) {}
  std::optional<PyValue> value(std::size_t index, const std::string& name) const override {
    const std::optional<std::int64_t> stored = vars_(name);
    if (!stored) return std::nullopt;
    const PyDecoder* decoder = decoders_[index];
    if (!decoder) return PyValue::integer(*stored);
    const auto it = decoder->find(*stored);
    if (it == decoder->end())
      throw PyExprError("expression \"" + text_ + "\": variable '" + name + "' has no Python value for stored value " +
                        std::to_string(*stored));
    return it->second;
  }

 private:
  const VarLookup& vars_;
  const std::vector<const PyDecoder*>& decoders_;
  const std::string& text_;
};

}  // namespace

Expr Expr::python(const std::string& text, PyDecoders decoders) {
  auto py = std::make_shared<Python>();
  py->expr = PyExpr::parse(text);
  py->decoders = std::move(decoders);
  for (const std::string& v : py->expr.variables()) {
    const auto it = py->decoders.find(v);
    py->by_index.push_back(it == py->decoders.end() ? nullptr : &it->second);
    if (it != py->decoders.end())
      for (const auto& entry : it->second)
        if (!entry.second.is_int() && !entry.second.is_bool()) py->int_values = false;
  }
  Expr e;
  e.text_ = text;
  e.vars_ = py->expr.variables();
  e.python_ = std::move(py);
  return e;
}

std::int64_t Expr::eval_python(const VarLookup& vars) const {
  const DecodingSource source(vars, python_->by_index, text_);
  if (python_->int_values)
    if (const std::optional<std::int64_t> r = python_->expr.eval_int(source)) return *r;
  const PyValue v = python_->expr.eval(source);
  if (const auto* i = v.if_int()) return *i;
  if (const auto* f = v.if_float()) {
    if (std::isfinite(*f) && *f == std::trunc(*f) && *f >= -9223372036854775808.0 && *f < 9223372036854775808.0)
      return static_cast<std::int64_t>(*f);
    throw PyExprError("expression \"" + text_ + "\" gives the float " + v.repr() + ", not an integer");
  }
  return v.truthy() ? 1 : 0;
}

}  // namespace autotune
