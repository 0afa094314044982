// The parser of the Python subset (tuner/core/expr/pyexpr.hpp): the recursive descent over the tokens of
// pyexpr_lex.hpp into the syntax tree of pyexpr_tree.hpp, and the names' resolution (free variables and
// comprehension slots).
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "tuner/core/expr/pyexpr.hpp"
#include "tuner/core/expr/pyexpr_lex.hpp"
#include "tuner/core/expr/pyexpr_tree.hpp"

namespace autotune {

namespace {

using namespace pyexpr_detail;

/// A built-in function: its name and how many (positional) arguments it takes.
struct BuiltinInfo {
  const char* name;
  Builtin id;
  std::size_t min_args, max_args;
};

constexpr std::size_t kMany = static_cast<std::size_t>(-1);
constexpr BuiltinInfo kBuiltins[] = {
    {"abs", Builtin::abs, 1, 1},     {"all", Builtin::all, 1, 1},      {"any", Builtin::any, 1, 1},
    {"bool", Builtin::bool_, 0, 1},  {"float", Builtin::float_, 0, 1}, {"int", Builtin::int_, 0, 1},
    {"len", Builtin::len, 1, 1},     {"list", Builtin::list, 0, 1},    {"max", Builtin::max, 1, kMany},
    {"min", Builtin::min, 1, kMany}, {"range", Builtin::range, 1, 3},  {"round", Builtin::round, 1, 2},
    {"str", Builtin::str, 0, 1},     {"sum", Builtin::sum, 1, 2},      {"tuple", Builtin::tuple, 0, 1},
};

const BuiltinInfo* find_builtin(const std::string& name) {
  for (const BuiltinInfo& b : kBuiltins)
    if (name == b.name) return &b;
  return nullptr;
}

// ---------------------------------------------------------------- parser

class Parser : TokenCursor {
 public:
  explicit Parser(const std::string& text) : TokenCursor(text) {}

  NodePtr parse() {
    if (peek().kind == Tok::end) fail_here("empty expression");
    NodePtr first = expression();
    NodePtr n = is_op(",") ? tuple_rest(std::move(first), nullptr) : std::move(first);
    if (peek().kind != Tok::end) unexpected();
    return n;
  }

 private:
  struct NestingGuard {
    explicit NestingGuard(Parser& p) : p_(p) {
      if (++p_.nesting_ > PyExpr::kMaxNesting)
        p_.fail_here("expression is nested too deeply (more than " + std::to_string(PyExpr::kMaxNesting) + " levels)");
    }
    ~NestingGuard() { --p_.nesting_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;
    Parser& p_;
  };

  NodePtr make(Kind kind, std::vector<NodePtr> kids, std::uint8_t op = 0) const {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->op = op;
    for (const NodePtr& k : kids)
      if (k) n->depth = std::max(n->depth, k->depth + 1);
    n->kids = std::move(kids);
    check_depth(*n);
    return n;
  }
  void check_depth(const Node& n) const {
    if (n.depth > PyExpr::kMaxNesting)
      fail_here("expression is nested too deeply (more than " + std::to_string(PyExpr::kMaxNesting) + " levels)");
  }
  static NodePtr constant(PyValue v) {
    auto n = std::make_unique<Node>();
    n->value = std::move(v);
    return n;
  }
  NodePtr binary_node(BinOp op, NodePtr a, NodePtr b) const {
    std::vector<NodePtr> kids;
    kids.push_back(std::move(a));
    kids.push_back(std::move(b));
    return make(Kind::binary, std::move(kids), static_cast<std::uint8_t>(op));
  }

  /// The rest of a tuple after its first element and a comma (closing: the token that ends it, or null at top).
  NodePtr tuple_rest(NodePtr first, const char* closing) {
    std::vector<NodePtr> items;
    items.push_back(std::move(first));
    while (eat_op(",")) {
      if (closing ? is_op(closing) : peek().kind == Tok::end) break;
      items.push_back(expression());
    }
    return make(Kind::list, std::move(items));
  }

  // expression: disjunction ['if' disjunction 'else' expression]
  NodePtr expression() {
    NestingGuard guard(*this);
    NodePtr body = disjunction();
    if (!eat_kw("if")) return body;
    NodePtr test = disjunction();
    if (!eat_kw("else")) fail_here("expected 'else' in a conditional expression");
    std::vector<NodePtr> kids;
    kids.push_back(std::move(body));
    kids.push_back(std::move(test));
    kids.push_back(expression());
    return make(Kind::conditional, std::move(kids));
  }

  NodePtr logic(Kind kind, const char* keyword, NodePtr (Parser::*operand)()) {
    NodePtr first = (this->*operand)();
    if (!is_kw(keyword)) return first;
    std::vector<NodePtr> kids;
    kids.push_back(std::move(first));
    while (eat_kw(keyword)) kids.push_back((this->*operand)());
    return make(kind, std::move(kids));
  }
  NodePtr disjunction() { return logic(Kind::logic_or, "or", &Parser::conjunction); }
  NodePtr conjunction() { return logic(Kind::logic_and, "and", &Parser::inversion); }

  NodePtr inversion() {
    if (!eat_kw("not")) return comparison();
    NestingGuard guard(*this);
    std::vector<NodePtr> kids;
    kids.push_back(inversion());
    return make(Kind::logic_not, std::move(kids));
  }

  std::optional<CmpOp> comparison_operator() {
    static const std::pair<const char*, CmpOp> ops[] = {{"==", CmpOp::eq}, {"!=", CmpOp::ne}, {"<", CmpOp::lt},
                                                        {"<=", CmpOp::le}, {">", CmpOp::gt},  {">=", CmpOp::ge}};
    for (const auto& [text, op] : ops)
      if (eat_op(text)) return op;
    if (eat_kw("in")) return CmpOp::in;
    if (is_kw("not") && is_kw("in", 1)) {
      skip(2);
      return CmpOp::not_in;
    }
    if (eat_kw("is")) return eat_kw("not") ? CmpOp::is_not : CmpOp::is;
    return std::nullopt;
  }

  NodePtr comparison() {
    NodePtr first = bit_or();
    std::optional<CmpOp> op = comparison_operator();
    if (!op) return first;
    std::vector<NodePtr> kids;
    std::vector<CmpOp> ops;
    kids.push_back(std::move(first));
    while (op) {
      ops.push_back(*op);
      kids.push_back(bit_or());
      op = comparison_operator();
    }
    NodePtr n = make(Kind::compare, std::move(kids));
    n->cmp = std::move(ops);
    return n;
  }

  template <typename Next>
  NodePtr left_binary(Next next, std::initializer_list<std::pair<const char*, BinOp>> ops) {
    NodePtr l = (this->*next)();
    for (;;) {
      bool matched = false;
      for (const auto& [text, op] : ops)
        if (eat_op(text)) {
          l = binary_node(op, std::move(l), (this->*next)());
          matched = true;
          break;
        }
      if (!matched) return l;
    }
  }
  NodePtr bit_or() { return left_binary(&Parser::bit_xor, {{"|", BinOp::bit_or}}); }
  NodePtr bit_xor() { return left_binary(&Parser::bit_and, {{"^", BinOp::bit_xor}}); }
  NodePtr bit_and() { return left_binary(&Parser::shift, {{"&", BinOp::bit_and}}); }
  NodePtr shift() { return left_binary(&Parser::sum, {{"<<", BinOp::lshift}, {">>", BinOp::rshift}}); }
  NodePtr sum() { return left_binary(&Parser::term, {{"+", BinOp::add}, {"-", BinOp::sub}}); }
  NodePtr term() {
    return left_binary(&Parser::factor,
                       {{"*", BinOp::mul}, {"//", BinOp::floordiv}, {"/", BinOp::truediv}, {"%", BinOp::mod}});
  }

  NodePtr factor() {
    std::optional<UnOp> op;
    if (eat_op("-"))
      op = UnOp::neg;
    else if (eat_op("+"))
      op = UnOp::pos;
    else if (eat_op("~"))
      op = UnOp::invert;
    if (!op) return power();
    NestingGuard guard(*this);
    // A negated number literal is a constant (and the only place 9223372036854775808 may appear).
    if (*op == UnOp::neg && peek().kind == Tok::number && !is_op("**", 1) && !is_op("[", 1) && !is_op("(", 1)) {
      const Token& t = take();
      if (t.int_2_63) return constant(t.number);
      if (const auto* f = t.number.if_float()) return constant(PyValue::floating(-*f));
      return constant(PyValue::integer(-*t.number.if_int()));
    }
    std::vector<NodePtr> kids;
    kids.push_back(factor());
    return make(Kind::unary, std::move(kids), static_cast<std::uint8_t>(*op));
  }

  NodePtr power() {
    NodePtr base = primary();
    if (!eat_op("**")) return base;
    NestingGuard guard(*this);  // the exponent recurses: 2 ** 2 ** 2 ...
    return binary_node(BinOp::pow, std::move(base), factor());
  }

  NodePtr primary() {
    NodePtr n = atom();
    for (;;) {
      if (eat_op("[")) {
        n = subscript(std::move(n));
      } else if (is_op("(")) {
        fail_here("only the built-in functions can be called");
      } else if (is_op(".")) {
        unexpected();
      } else {
        return n;
      }
    }
  }

  NodePtr subscript(NodePtr object) {
    std::vector<NodePtr> kids;
    kids.push_back(std::move(object));
    NodePtr lower = is_op(":") ? nullptr : expression();
    if (!eat_op(":")) {
      if (is_op(",")) fail_here("tuple indexes are not supported");
      expect_op("]", "after the index");
      kids.push_back(std::move(lower));
      return make(Kind::index, std::move(kids));
    }
    kids.push_back(std::move(lower));
    kids.push_back(is_op("]") || is_op(":") ? nullptr : expression());
    NodePtr step;
    if (eat_op(":") && !is_op("]")) step = expression();
    kids.push_back(std::move(step));
    expect_op("]", "after the slice");
    return make(Kind::slice, std::move(kids));
  }

  NodePtr atom() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::end:
        unexpected();
      case Tok::number:
        if (t.int_2_63) fail_here("integer literal does not fit in 64 bits");
        skip();
        return constant(t.number);
      case Tok::string: {
        std::string s;
        while (peek().kind == Tok::string) s += take().text;  // adjacent literals join
        check_length(s.size(), "a string");
        return constant(PyValue::string(std::move(s)));
      }
      case Tok::name:
        return name();
      case Tok::op:
        break;
    }
    if (is_op("(")) return parenthesized();
    if (is_op("[")) return bracketed();
    unexpected();
  }

  NodePtr name() {
    const Token& t = peek();
    if (t.text == "True" || t.text == "False") {
      skip();
      return constant(PyValue::boolean(t.text == "True"));
    }
    if (t.text == "None") {
      skip();
      return constant(PyValue::none());
    }
    if (t.text == "lambda" || t.text == "yield" || t.text == "await") fail_here("'" + t.text + "' is not supported");
    if (is_keyword(t.text)) unexpected();
    if (is_op("(", 1)) return call();
    skip();
    auto n = std::make_unique<Node>();
    n->kind = Kind::free_var;  // resolved later: it may name a comprehension variable
    n->name = t.text;
    return n;
  }

  NodePtr call() {
    const Token& callee = peek();
    const BuiltinInfo* b = find_builtin(callee.text);
    if (!b) {
      std::string known;
      for (const BuiltinInfo& k : kBuiltins) known += std::string(known.empty() ? "" : ", ") + k.name;
      fail_here("unknown function '" + callee.text + "' (supported: " + known + ")");
    }
    skip(2);  // name and '('
    std::vector<NodePtr> args;
    while (!is_op(")")) {
      if (is_op("*") || is_op("**")) fail_here("argument unpacking is not supported");
      if (peek().kind == Tok::name && is_op("=", 1)) fail_here("keyword arguments are not supported");
      NodePtr arg = expression();
      if (is_kw("for")) {
        if (!args.empty()) fail_here("a generator expression must be the only argument unless parenthesized");
        arg = comprehension(std::move(arg));
        args.push_back(std::move(arg));
        break;
      }
      args.push_back(std::move(arg));
      if (!eat_op(",")) break;
    }
    expect_op(")", std::string("to close the call of " + callee.text + "()").c_str());
    if (args.size() < b->min_args || args.size() > b->max_args) {
      const std::string wanted = b->min_args == b->max_args ? std::to_string(b->min_args)
                                 : b->max_args == kMany
                                     ? "at least " + std::to_string(b->min_args)
                                     : std::to_string(b->min_args) + " to " + std::to_string(b->max_args);
      fail_at(text(), callee.pos,
              std::string(b->name) + "() takes " + wanted + " argument(s), " + std::to_string(args.size()) + " given");
    }
    if (b->id == Builtin::int_ && args.size() > 1) fail_here("int() with a base is not supported");
    return make(Kind::call, std::move(args), static_cast<std::uint8_t>(b->id));
  }

  NodePtr parenthesized() {
    skip();
    if (eat_op(")")) return make(Kind::list, {});
    NodePtr first = expression();
    NodePtr n;
    if (is_kw("for"))
      n = comprehension(std::move(first));
    else if (is_op(","))
      n = tuple_rest(std::move(first), ")");
    else
      n = std::move(first);
    expect_op(")", "to close '('");
    return n;
  }

  NodePtr bracketed() {
    skip();
    if (eat_op("]")) return make(Kind::list, {});
    NodePtr first = expression();
    NodePtr n = is_kw("for") ? comprehension(std::move(first)) : tuple_rest(std::move(first), "]");
    expect_op("]", "to close '['");
    return n;
  }

  /// for_if_clauses after the element: ('for' targets 'in' disjunction ('if' disjunction)*)+
  NodePtr comprehension(NodePtr element) {
    auto n = std::make_unique<Node>();
    n->kind = Kind::comprehension;
    n->depth = element->depth + 1;
    n->kids.push_back(std::move(element));
    while (eat_kw("for")) {
      Node::Clause c;
      const bool parens = eat_op("(");
      for (;;) {
        const Token& t = peek();
        if (t.kind != Tok::name || is_keyword(t.text)) fail_here("expected a name after 'for'");
        c.names.push_back(t.text);
        skip();
        if (!eat_op(",")) break;
        c.unpack = true;
        if (is_kw("in") || is_op(")")) break;
      }
      if (parens) {
        c.unpack = true;
        expect_op(")", "after the names of 'for'");
      }
      if (!eat_kw("in")) fail_here("expected 'in' after the names of 'for'");
      c.iter = disjunction();
      n->depth = std::max(n->depth, c.iter->depth + 1);
      while (eat_kw("if")) {
        c.filters.push_back(disjunction());
        n->depth = std::max(n->depth, c.filters.back()->depth + 1);
      }
      n->clauses.push_back(std::move(c));
      ++n->depth;  // each clause is one more level of evaluation
      check_depth(*n);
    }
    if (is_kw("async")) fail_here("'async for' is not supported");
    return n;
  }

  int nesting_ = 0;
};

/// Binds names to comprehension variables (innermost first) or marks them free; numbers the comprehension
/// variables. The first iterable of a comprehension is read in the enclosing scope, as in Python.
class Resolver {
 public:
  Resolver(std::set<std::string>& free, std::vector<Node*>& free_nodes) : free_(free), free_nodes_(free_nodes) {}
  std::size_t locals() const { return next_slot_; }

  void resolve(Node& n) {
    switch (n.kind) {
      case Kind::free_var: {
        for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
          if (it->first == n.name) {
            n.kind = Kind::local_var;
            n.slot = it->second;
            return;
          }
        free_.insert(n.name);
        free_nodes_.push_back(&n);
        return;
      }
      case Kind::comprehension: {
        const std::size_t mark = scope_.size();
        for (Node::Clause& c : n.clauses) {
          resolve(*c.iter);
          for (const std::string& name : c.names) {
            c.slots.push_back(next_slot_);
            scope_.emplace_back(name, next_slot_++);
          }
          for (NodePtr& f : c.filters) resolve(*f);
        }
        resolve(*n.kids[0]);
        scope_.resize(mark);
        return;
      }
      default:
        for (NodePtr& k : n.kids)
          if (k) resolve(*k);
    }
  }

 private:
  std::set<std::string>& free_;
  std::vector<Node*>& free_nodes_;
  std::vector<std::pair<std::string, std::size_t>> scope_;
  std::size_t next_slot_ = 0;
};

}  // namespace

PyExpr PyExpr::parse(const std::string& text) {
  PyExpr e;
  e.text_ = text;
  Parser parser(text);
  std::unique_ptr<Node> root = parser.parse();
  std::vector<Node*> free_nodes;
  Resolver resolver(e.vars_, free_nodes);
  resolver.resolve(*root);
  for (Node* n : free_nodes) n->slot = static_cast<std::size_t>(std::distance(e.vars_.begin(), e.vars_.find(n->name)));
  e.locals_ = resolver.locals();
  e.int_capable_ = int_capable(*root);
  e.root_ = std::move(root);
  return e;
}

}  // namespace autotune
