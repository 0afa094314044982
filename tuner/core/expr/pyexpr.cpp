#include "tuner/core/expr/pyexpr.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "tuner/core/expr/pyexpr_tree.hpp"

// The evaluation of the Python subset: the syntax tree (pyexpr_tree.hpp, made by pyexpr_parse.cpp) walked with the
// value semantics of pyexpr_ops.hpp, and the int path of eval_int.
namespace autotune {

namespace pyexpr_detail {

/// Whether the tree uses only what eval_int covers: arithmetic, comparisons (no in/is), logic, conditionals,
/// abs and min/max of several arguments, over constants and free variables.
bool int_capable(const Node& n) {
  switch (n.kind) {
    case Kind::constant:
    case Kind::free_var:
      return true;
    case Kind::compare:
      for (CmpOp op : n.cmp)
        if (op >= CmpOp::in) return false;
      break;
    case Kind::call: {
      const auto b = static_cast<Builtin>(n.op);
      if (!(b == Builtin::abs || ((b == Builtin::min || b == Builtin::max) && n.kids.size() >= 2))) return false;
      break;
    }
    case Kind::unary:
    case Kind::binary:
    case Kind::logic_and:
    case Kind::logic_or:
    case Kind::logic_not:
    case Kind::conditional:
      break;
    default:
      return false;
  }
  return std::all_of(n.kids.begin(), n.kids.end(), [](const NodePtr& k) { return int_capable(*k); });
}

}  // namespace pyexpr_detail

namespace {

using namespace pyexpr_detail;

// ---------------------------------------------------------------- evaluation

class Evaluator {
 public:
  Evaluator(const PyVariableSource& vars, std::size_t locals) : vars_(vars), locals_(locals) {}

  PyValue eval(const Node& n) {
    switch (n.kind) {
      case Kind::constant:
        return n.value;
      case Kind::free_var: {
        std::optional<PyValue> v = vars_.value(n.slot, n.name);
        if (!v) fail("unknown variable '" + n.name + "'");
        return std::move(*v);
      }
      case Kind::local_var:
        return locals_[n.slot];
      case Kind::list: {
        check_length(n.kids.size(), "a list");
        budget_.spend(n.kids.size());
        PyValue::List items;
        items.reserve(n.kids.size());
        for (const NodePtr& k : n.kids) items.push_back(eval(*k));
        return PyValue::list(std::move(items));
      }
      case Kind::unary:
        return unary(static_cast<UnOp>(n.op), eval(*n.kids[0]));
      case Kind::binary: {
        const PyValue a = eval(*n.kids[0]);
        const PyValue b = eval(*n.kids[1]);
        const auto* x = a.if_int();
        const auto* y = b.if_int();
        if (x && y) {
          // The common cases of conditions inline; int_binary has every case and its errors.
          std::int64_t r = 0;
          switch (static_cast<BinOp>(n.op)) {
            case BinOp::add:
              if (!__builtin_add_overflow(*x, *y, &r)) return PyValue::integer(r);
              break;
            case BinOp::sub:
              if (!__builtin_sub_overflow(*x, *y, &r)) return PyValue::integer(r);
              break;
            case BinOp::mul:
              if (!__builtin_mul_overflow(*x, *y, &r)) return PyValue::integer(r);
              break;
            case BinOp::floordiv:
              if (*y > 0) return PyValue::integer(*x / *y - (*x % *y < 0 ? 1 : 0));
              break;
            case BinOp::mod:
              if (*y > 0) return PyValue::integer(*x % *y + (*x % *y < 0 ? *y : 0));
              break;
            default:
              break;
          }
          return int_binary(static_cast<BinOp>(n.op), *x, *y);
        }
        return binary(static_cast<BinOp>(n.op), a, b, budget_);
      }
      case Kind::logic_and:
      case Kind::logic_or: {
        // Python returns the operand that decided: the first falsy one for and, the first truthy one for or.
        const bool stop_when = n.kind == Kind::logic_or;
        PyValue v = eval(*n.kids[0]);
        for (std::size_t i = 1; i < n.kids.size() && v.truthy() != stop_when; ++i) v = eval(*n.kids[i]);
        return v;
      }
      case Kind::logic_not:
        return PyValue::boolean(!eval(*n.kids[0]).truthy());
      case Kind::compare: {
        PyValue left = eval(*n.kids[0]);
        for (std::size_t i = 0; i < n.cmp.size(); ++i) {
          PyValue right = eval(*n.kids[i + 1]);
          if (!compare_values(n.cmp[i], left, right)) return PyValue::boolean(false);
          left = std::move(right);
        }
        return PyValue::boolean(true);
      }
      case Kind::conditional:
        return eval(*n.kids[1]).truthy() ? eval(*n.kids[0]) : eval(*n.kids[2]);
      case Kind::index:
        return index(eval(*n.kids[0]), eval(*n.kids[1]));
      case Kind::slice:
        return slice(n);
      case Kind::call:
        return call(n);
      case Kind::comprehension: {
        PyValue::List out;
        clause(n, 0, out);
        return PyValue::list(std::move(out));
      }
    }
    return PyValue();
  }

 private:
  bool compare_values(CmpOp op, const PyValue& a, const PyValue& b) {
    const auto* x = a.if_int();
    const auto* y = b.if_int();
    if (x && y) {
      switch (op) {
        case CmpOp::eq:
          return *x == *y;
        case CmpOp::ne:
          return *x != *y;
        case CmpOp::lt:
          return *x < *y;
        case CmpOp::le:
          return *x <= *y;
        case CmpOp::gt:
          return *x > *y;
        case CmpOp::ge:
          return *x >= *y;
        default:
          break;
      }
    }
    return compare(op, a, b, budget_);
  }

  /// Calls f on each element of an iterable (a list, or a string's characters).
  template <typename F>
  void for_each(const PyValue& v, F&& f) {
    if (const auto* l = v.if_list()) {
      for (const PyValue& e : *l) {
        budget_.spend(1);
        f(e);
      }
    } else if (const auto* s = v.if_str()) {
      require_ascii(*s);
      for (char c : *s) {
        budget_.spend(1);
        f(character(c));
      }
    } else {
      fail(std::string("'") + v.type_name() + "' object is not iterable");
    }
  }

  void clause(const Node& n, std::size_t ci, PyValue::List& out) {
    const Node::Clause& c = n.clauses[ci];
    const PyValue iterable = eval(*c.iter);
    for_each(iterable, [&](const PyValue& item) {
      bind(c, item);
      for (const NodePtr& f : c.filters)
        if (!eval(*f).truthy()) return;
      if (ci + 1 < n.clauses.size()) {
        clause(n, ci + 1, out);
      } else {
        check_length(out.size() + 1, "a list");
        out.push_back(eval(*n.kids[0]));
      }
    });
  }

  void bind(const Node::Clause& c, const PyValue& item) {
    if (!c.unpack) {
      locals_[c.slots[0]] = item;
      return;
    }
    std::vector<PyValue> parts;
    for_each(item, [&](const PyValue& e) { parts.push_back(e); });
    if (parts.size() != c.slots.size())
      fail("cannot unpack " + std::to_string(parts.size()) + " values into " + std::to_string(c.slots.size()) +
           " names");
    for (std::size_t i = 0; i < parts.size(); ++i) locals_[c.slots[i]] = std::move(parts[i]);
  }

  static std::int64_t index_value(const PyValue& v, const char* what) {
    if (const auto* i = v.if_int()) return *i;
    if (const auto* b = v.if_bool()) return *b ? 1 : 0;
    fail(std::string(what) + " must be integers or None, not " + v.type_name());
  }

  static std::size_t sequence_length(const PyValue& v) {
    if (const auto* l = v.if_list()) return l->size();
    if (const auto* s = v.if_str()) {
      require_ascii(*s);
      return s->size();
    }
    fail(std::string("'") + v.type_name() + "' object is not subscriptable");
  }

  static PyValue index(const PyValue& object, const PyValue& at) {
    const std::size_t length = sequence_length(object);
    std::int64_t i = index_value(at, "indexes");
    const auto n = static_cast<std::int64_t>(length);
    if (i < 0) i += n;
    if (i < 0 || i >= n) fail(std::string(object.is_str() ? "string" : "list") + " index out of range");
    if (const auto* l = object.if_list()) return (*l)[static_cast<std::size_t>(i)];
    return character((*object.if_str())[static_cast<std::size_t>(i)]);
  }

  PyValue slice(const Node& n) {
    const PyValue object = eval(*n.kids[0]);
    auto part = [&](std::size_t k) -> std::optional<std::int64_t> {
      if (!n.kids[k]) return std::nullopt;
      const PyValue v = eval(*n.kids[k]);
      if (v.is_none()) return std::nullopt;
      return index_value(v, "slice indices");
    };
    const std::optional<std::int64_t> lo_given = part(1), hi_given = part(2), step_given = part(3);
    const auto length = static_cast<std::int64_t>(sequence_length(object));
    std::int64_t step = step_given.value_or(1);
    if (step == 0) fail("slice step cannot be zero");
    step = std::max(step, -std::numeric_limits<std::int64_t>::max());
    // The bounds as Python adjusts them: negative ones count from the end, then clamp to the sequence.
    auto adjust = [&](std::optional<std::int64_t> given, std::int64_t fallback) {
      if (!given) return fallback;
      std::int64_t v = *given;
      if (v < 0) {
        v += length;
        if (v < 0) v = step < 0 ? -1 : 0;
      } else if (v >= length) {
        v = step < 0 ? length - 1 : length;
      }
      return v;
    };
    const std::int64_t lo = adjust(lo_given, step < 0 ? length - 1 : 0);
    const std::int64_t hi = adjust(hi_given, step < 0 ? -1 : length);
    std::int64_t count = 0;
    if (step > 0 && hi > lo) count = (hi - lo - 1) / step + 1;
    if (step < 0 && lo > hi) count = (lo - hi - 1) / (-step) + 1;
    budget_.spend(static_cast<std::uint64_t>(count));
    if (const auto* s = object.if_str()) {
      std::string out;
      for (std::int64_t k = 0; k < count; ++k) out += (*s)[static_cast<std::size_t>(lo + k * step)];
      return PyValue::string(std::move(out));
    }
    const auto& l = *object.if_list();
    PyValue::List out;
    out.reserve(static_cast<std::size_t>(count));
    for (std::int64_t k = 0; k < count; ++k) out.push_back(l[static_cast<std::size_t>(lo + k * step)]);
    return PyValue::list(std::move(out));
  }

  PyValue range(const std::vector<PyValue>& args) {
    std::int64_t v[3] = {0, 0, 1};
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i].is_int() || args[i].is_bool()) {
        v[i] = index_value(args[i], "");
      } else {
        fail(std::string("'") + args[i].type_name() + "' object cannot be interpreted as an integer");
      }
    }
    std::int64_t start = 0, stop = v[0], step = 1;
    if (args.size() >= 2) {
      start = v[0];
      stop = v[1];
    }
    if (args.size() == 3) step = v[2];
    if (step == 0) fail("range() arg 3 must not be zero");
    const __int128 lo = start, hi = stop, st = step;
    __int128 count = 0;
    if (st > 0 && hi > lo) count = (hi - lo - 1) / st + 1;
    if (st < 0 && lo > hi) count = (lo - hi - 1) / (-st) + 1;
    check_length(static_cast<std::uint64_t>(count), "a range");  // below 2^64, as |stop - start| is
    budget_.spend(static_cast<std::uint64_t>(count));
    PyValue::List out;
    out.reserve(static_cast<std::size_t>(count));
    for (__int128 k = 0; k < count; ++k) out.push_back(PyValue::integer(static_cast<std::int64_t>(lo + k * st)));
    return PyValue::list(std::move(out));
  }

  PyValue min_max(const std::vector<PyValue>& args, bool is_max) {
    const char* fname = is_max ? "max" : "min";
    std::optional<PyValue> best;
    auto consider = [&](const PyValue& v) {
      if (!best || ordered(is_max ? CmpOp::gt : CmpOp::lt, v, *best, budget_)) best = v;
    };
    if (args.size() == 1)
      for_each(args[0], consider);
    else
      for (const PyValue& a : args) consider(a);
    if (!best) fail(std::string(fname) + "() arg is an empty sequence");
    return *best;
  }

  PyValue round(const std::vector<PyValue>& args) {
    const PyValue& x = args[0];
    const bool digits_given = args.size() == 2 && !args[1].is_none();
    std::int64_t ndigits = 0;
    if (digits_given) {
      if (!args[1].is_int() && !args[1].is_bool())
        fail(std::string("'") + args[1].type_name() + "' object cannot be interpreted as an integer");
      ndigits = index_value(args[1], "");
    }
    Num v;
    if (!to_num(x, v)) fail(std::string("type ") + x.type_name() + " doesn't define __round__ method");
    if (!v.is_float) return PyValue::integer(digits_given ? round_int(v.i, ndigits) : v.i);
    if (!digits_given) return PyValue::integer(round_half_even(v.f));
    return PyValue::floating(round_float(v.f, ndigits));
  }

  PyValue call(const Node& n) {
    std::vector<PyValue> args;
    args.reserve(n.kids.size());
    for (const NodePtr& k : n.kids) args.push_back(eval(*k));
    switch (static_cast<Builtin>(n.op)) {
      case Builtin::abs: {
        Num v;
        if (!to_num(args[0], v)) fail(std::string("bad operand type for abs(): '") + args[0].type_name() + "'");
        if (v.is_float) return PyValue::floating(std::fabs(v.f));
        if (v.i == std::numeric_limits<std::int64_t>::min()) overflow();
        return PyValue::integer(v.i < 0 ? -v.i : v.i);
      }
      case Builtin::all:
      case Builtin::any: {
        const bool want = static_cast<Builtin>(n.op) == Builtin::any;
        bool found = false;
        for_each(args[0], [&](const PyValue& e) {
          if (!found && e.truthy() == want) found = true;
        });
        return PyValue::boolean(found == want);
      }
      case Builtin::bool_:
        return PyValue::boolean(!args.empty() && args[0].truthy());
      case Builtin::float_: {
        if (args.empty()) return PyValue::floating(0.0);
        Num v;
        if (to_num(args[0], v)) return PyValue::floating(v.as_double());
        if (const auto* s = args[0].if_str()) return PyValue::floating(parse_float_text(*s));
        fail(std::string("float() argument must be a string or a real number, not '") + args[0].type_name() + "'");
      }
      case Builtin::int_: {
        if (args.empty()) return PyValue::integer(0);
        Num v;
        if (to_num(args[0], v)) return PyValue::integer(v.is_float ? float_to_int(v.f) : v.i);
        if (const auto* s = args[0].if_str()) return PyValue::integer(parse_int_text(*s));
        fail(std::string("int() argument must be a string or a real number, not '") + args[0].type_name() + "'");
      }
      case Builtin::len: {
        if (!args[0].is_list() && !args[0].is_str())
          fail(std::string("object of type '") + args[0].type_name() + "' has no len()");
        return PyValue::integer(static_cast<std::int64_t>(sequence_length(args[0])));
      }
      case Builtin::list:
      case Builtin::tuple: {
        if (args.empty()) return PyValue::list({});
        if (args[0].is_list()) return args[0];
        PyValue::List out;
        for_each(args[0], [&](const PyValue& e) { out.push_back(e); });
        return PyValue::list(std::move(out));
      }
      case Builtin::max:
        return min_max(args, true);
      case Builtin::min:
        return min_max(args, false);
      case Builtin::range:
        return range(args);
      case Builtin::round:
        return round(args);
      case Builtin::str: {
        if (args.empty()) return PyValue::string("");
        if (args[0].is_str()) return args[0];
        std::string out;
        repr_into(args[0], out);
        check_length(out.size(), "a string");
        return PyValue::string(std::move(out));
      }
      case Builtin::sum: {
        PyValue total = args.size() == 2 ? args[1] : PyValue::integer(0);
        if (total.is_str()) fail("sum() can't sum strings");
        for_each(args[0], [&](const PyValue& e) {
          const auto* x = total.if_int();
          const auto* y = e.if_int();
          total = x && y ? int_binary(BinOp::add, *x, *y) : binary(BinOp::add, total, e, budget_);
        });
        return total;
      }
    }
    return PyValue();
  }

  const PyVariableSource& vars_;
  std::vector<PyValue> locals_;
  Budget budget_;
};

// ---------------------------------------------------------------- the int path

bool int_of(const PyValue& v, std::int64_t& out) {
  if (const auto* i = v.if_int()) {
    out = *i;
    return true;
  }
  if (const auto* b = v.if_bool()) {
    out = *b ? 1 : 0;
    return true;
  }
  return false;
}

/// Evaluates an int_capable tree over ints, a bool as 0/1 (Python's arithmetic and comparisons treat it so, and
/// and/or/if return the operand that decides, whose value is the same): false where a value is not an int or
/// a bool, or where Python would raise or leave the ints (true division, negative powers, overflow), so that
/// the full evaluation gives the value or the error.
bool eval_ints(const Node& n, const PyVariableSource& vars, std::int64_t& out) {
  switch (n.kind) {
    case Kind::constant:
      return int_of(n.value, out);
    case Kind::free_var: {
      const std::optional<PyValue> v = vars.value(n.slot, n.name);
      return v && int_of(*v, out);
    }
    case Kind::unary: {
      std::int64_t a = 0;
      if (!eval_ints(*n.kids[0], vars, a)) return false;
      switch (static_cast<UnOp>(n.op)) {
        case UnOp::neg:
          if (a == std::numeric_limits<std::int64_t>::min()) return false;
          out = -a;
          return true;
        case UnOp::pos:
          out = a;
          return true;
        case UnOp::invert:
          out = ~a;
          return true;
      }
      return false;
    }
    case Kind::binary: {
      std::int64_t a = 0, b = 0;
      if (!eval_ints(*n.kids[0], vars, a) || !eval_ints(*n.kids[1], vars, b)) return false;
      switch (static_cast<BinOp>(n.op)) {
        case BinOp::add:
          return !__builtin_add_overflow(a, b, &out);
        case BinOp::sub:
          return !__builtin_sub_overflow(a, b, &out);
        case BinOp::mul:
          return !__builtin_mul_overflow(a, b, &out);
        case BinOp::floordiv:
        case BinOp::mod:
          if (b == 0 || (a == std::numeric_limits<std::int64_t>::min() && b == -1)) return false;
          out = static_cast<BinOp>(n.op) == BinOp::floordiv ? int_floor_divide(a, b) : int_modulo(a, b);
          return true;
        case BinOp::pow:
          return b >= 0 && try_int_power(a, b, out);
        case BinOp::lshift:
          return b >= 0 && try_shift_left(a, b, out);
        case BinOp::rshift:
          if (b < 0) return false;
          out = shift_right(a, b);
          return true;
        case BinOp::bit_and:
          out = a & b;
          return true;
        case BinOp::bit_or:
          out = a | b;
          return true;
        case BinOp::bit_xor:
          out = a ^ b;
          return true;
        case BinOp::truediv:
          return false;
      }
      return false;
    }
    case Kind::logic_and:
    case Kind::logic_or: {
      const bool stop_when = n.kind == Kind::logic_or;
      for (const NodePtr& k : n.kids) {
        if (!eval_ints(*k, vars, out)) return false;
        if ((out != 0) == stop_when) return true;
      }
      return true;
    }
    case Kind::logic_not:
      if (!eval_ints(*n.kids[0], vars, out)) return false;
      out = out == 0 ? 1 : 0;
      return true;
    case Kind::compare: {
      std::int64_t left = 0;
      if (!eval_ints(*n.kids[0], vars, left)) return false;
      for (std::size_t i = 0; i < n.cmp.size(); ++i) {
        std::int64_t right = 0;
        if (!eval_ints(*n.kids[i + 1], vars, right)) return false;
        bool holds = false;
        switch (n.cmp[i]) {
          case CmpOp::eq:
            holds = left == right;
            break;
          case CmpOp::ne:
            holds = left != right;
            break;
          case CmpOp::lt:
            holds = left < right;
            break;
          case CmpOp::le:
            holds = left <= right;
            break;
          case CmpOp::gt:
            holds = left > right;
            break;
          case CmpOp::ge:
            holds = left >= right;
            break;
          default:
            return false;
        }
        if (!holds) {
          out = 0;
          return true;
        }
        left = right;
      }
      out = 1;
      return true;
    }
    case Kind::conditional: {
      std::int64_t test = 0;
      if (!eval_ints(*n.kids[1], vars, test)) return false;
      return eval_ints(*n.kids[test != 0 ? 0 : 2], vars, out);
    }
    case Kind::call: {
      if (!eval_ints(*n.kids[0], vars, out)) return false;
      if (static_cast<Builtin>(n.op) == Builtin::abs) {
        if (out == std::numeric_limits<std::int64_t>::min()) return false;
        out = out < 0 ? -out : out;
        return true;
      }
      const bool is_max = static_cast<Builtin>(n.op) == Builtin::max;
      for (std::size_t i = 1; i < n.kids.size(); ++i) {
        std::int64_t v = 0;
        if (!eval_ints(*n.kids[i], vars, v)) return false;
        if (is_max ? v > out : v < out) out = v;
      }
      return true;
    }
    default:
      return false;
  }
}

class NameLookup final : public PyVariableSource {
 public:
  explicit NameLookup(const PyLookup& lookup) : lookup_(lookup) {}
  std::optional<PyValue> value(std::size_t, const std::string& name) const override { return lookup_(name); }

 private:
  const PyLookup& lookup_;
};

}  // namespace

PyExpr::PyExpr() = default;
PyExpr::~PyExpr() = default;
PyExpr::PyExpr(const PyExpr&) = default;
PyExpr& PyExpr::operator=(const PyExpr&) = default;
PyExpr::PyExpr(PyExpr&&) noexcept = default;
PyExpr& PyExpr::operator=(PyExpr&&) noexcept = default;

std::optional<std::int64_t> PyExpr::eval_int(const PyVariableSource& vars) const {
  std::int64_t out = 0;
  if (!root_ || !int_capable_ || !eval_ints(*root_, vars, out)) return std::nullopt;
  return out;
}

PyValue PyExpr::eval(const PyVariableSource& vars) const {
  if (!root_) throw PyExprError("empty Python expression");
  try {
    Evaluator evaluator(vars, locals_);
    return evaluator.eval(*root_);
  } catch (const Failure& f) {
    throw PyExprError("expression \"" + text_ + "\": " + f.message);
  }
}

PyValue PyExpr::eval(const PyLookup& vars) const { return eval(NameLookup(vars)); }

}  // namespace autotune
