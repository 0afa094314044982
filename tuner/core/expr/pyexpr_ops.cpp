#include "tuner/core/expr/pyexpr_ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <utility>

// The value semantics of the Python subset (pyexpr_ops.hpp), and the members of PyValue; the text of values and
// the numbers read from text are in pyexpr_text.cpp.
namespace autotune {
namespace pyexpr_detail {

void fail(std::string message) { throw Failure{std::move(message)}; }

void overflow() { fail("integer overflow: the result does not fit in 64 bits"); }
void division_by_zero() { fail("division by zero"); }

void check_length(std::uint64_t n, const char* what) {
  if (n > PyExpr::kMaxLength)
    fail(std::string(what) + " of " + std::to_string(n) + " elements is longer than the limit of " +
         std::to_string(PyExpr::kMaxLength));
}

bool is_ascii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

/// Lengths, indexes and iteration count bytes; they equal Python's character counts for ASCII only.
void require_ascii(const std::string& s) {
  if (!is_ascii(s)) fail("strings with non-ASCII characters cannot be measured, indexed or iterated here");
}

// ---------------------------------------------------------------- numbers

bool to_num(const PyValue& v, Num& out) {
  if (const auto* i = v.if_int()) {
    out = {false, *i, 0};
  } else if (const auto* f = v.if_float()) {
    out = {true, 0, *f};
  } else if (const auto* b = v.if_bool()) {
    out = {false, *b ? 1 : 0, 0};
  } else {
    return false;
  }
  return true;
}

namespace {

/// -1, 0 or 1 as i is below, equal to or above f (not NaN), exactly (also where f or i exceed 2^53).
int compare_int_float(std::int64_t i, double f) {
  if (f >= kTwo63) return -1;
  if (f < -kTwo63) return 1;
  const double t = std::trunc(f);
  const auto ti = static_cast<std::int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  const double frac = f - t;  // exact
  return frac > 0 ? -1 : (frac < 0 ? 1 : 0);
}

/// a <=> b as -1/0/1; nullopt when a NaN makes them unordered.
std::optional<int> compare_numbers(const Num& a, const Num& b) {
  if (!a.is_float && !b.is_float) return (a.i > b.i) - (a.i < b.i);
  if (a.is_float && b.is_float) {
    if (std::isnan(a.f) || std::isnan(b.f)) return std::nullopt;
    return (a.f > b.f) - (a.f < b.f);
  }
  if (a.is_float) {
    if (std::isnan(a.f)) return std::nullopt;
    return -compare_int_float(b.i, a.f);
  }
  if (std::isnan(b.f)) return std::nullopt;
  return compare_int_float(a.i, b.f);
}

}  // namespace

std::int64_t float_to_int(double d) {
  if (std::isnan(d)) fail("cannot convert float NaN to integer");
  if (std::isinf(d)) fail("cannot convert float infinity to integer");
  const double t = std::trunc(d);
  if (t < -kTwo63 || t >= kTwo63) overflow();
  return static_cast<std::int64_t>(t);
}

namespace {

int bit_length(std::uint64_t v) { return v == 0 ? 0 : 64 - __builtin_clzll(v); }

std::uint64_t magnitude(std::int64_t v) {
  return v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
}

/// a / b correctly rounded, as Python divides ints (b != 0).
double int_true_divide(std::int64_t a, std::int64_t b) {
  constexpr std::int64_t k53 = std::int64_t{1} << 53;
  if (a >= -k53 && a <= k53 && b >= -k53 && b <= k53) return static_cast<double>(a) / static_cast<double>(b);
  // Scale |a| so that the integer quotient has 56 to 57 bits, and fold the remainder into its last bit: the
  // conversion to double then rounds as the exact quotient would (the dropped bits hold a sticky bit).
  const bool negative = (a < 0) != (b < 0);
  const std::uint64_t d = magnitude(b);
  const std::uint64_t n0 = magnitude(a);
  if (n0 == 0) return negative ? -0.0 : 0.0;
  const int shift = std::max(0, 56 + bit_length(d) - bit_length(n0));
  const unsigned __int128 n = static_cast<unsigned __int128>(n0) << shift;
  auto q = static_cast<std::uint64_t>(n / d);
  if (n % d != 0) q |= 1;
  const double r = std::ldexp(static_cast<double>(q), -shift);
  return negative ? -r : r;
}

}  // namespace

std::int64_t int_floor_divide(std::int64_t a, std::int64_t b) {
  if (b == 0) division_by_zero();
  if (a == std::numeric_limits<std::int64_t>::min() && b == -1) overflow();
  std::int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

std::int64_t int_modulo(std::int64_t a, std::int64_t b) {
  if (b == 0) division_by_zero();
  if (b == -1) return 0;
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

namespace {

/// Floor quotient and remainder of floats with the remainder's sign that of b, as Python's // and %.
std::pair<double, double> float_divmod(double a, double b) {
  if (b == 0) division_by_zero();
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 || std::isnan(mod)) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  if (div != 0 || std::isnan(div)) {
    double whole = std::floor(div);
    if (div - whole > 0.5) whole += 1.0;
    div = whole;
  } else {
    div = std::copysign(0.0, a / b);
  }
  return {div, mod};
}

double float_power(double x, double y) {
  if (y == 0) return 1.0;
  if (std::isnan(x)) return x;
  if (std::isnan(y)) return x == 1.0 ? 1.0 : y;
  if (std::isinf(x) || std::isinf(y)) return std::pow(x, y);  // the C rules for infinities are Python's
  if (x == 0) {
    if (y < 0) fail("division by zero: 0.0 cannot be raised to a negative power");
    return std::pow(x, y);
  }
  if (x < 0 && y != std::floor(y)) fail("a negative number raised to a fractional power is complex (not supported)");
  const double r = std::pow(x, y);
  if (std::isinf(r)) fail("float overflow in '**'");
  return r;
}

}  // namespace

/// base ** exp for exp >= 0, false where the result does not fit in 64 bits.
bool try_int_power(std::int64_t base, std::int64_t exp, std::int64_t& out) {
  std::int64_t result = 1;
  while (exp > 0) {
    if ((exp & 1) && __builtin_mul_overflow(result, base, &result)) return false;
    exp >>= 1;
    // Squaring past 64 bits while bits remain means the result is past 64 bits too (|base| >= 2 then).
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) return false;
  }
  out = result;
  return true;
}

/// a << s for s >= 0, false where the result does not fit in 64 bits.
bool try_shift_left(std::int64_t a, std::int64_t s, std::int64_t& out) {
  if (a == 0) {
    out = 0;
    return true;
  }
  if (s >= 63) return false;
  out = static_cast<std::int64_t>(static_cast<std::uint64_t>(a) << s);
  return (out >> s) == a;
}

std::int64_t shift_right(std::int64_t a, std::int64_t s) {
  if (s < 0) fail("negative shift count");
  if (s >= 63) return a < 0 ? -1 : 0;
  return a >> s;  // arithmetic: the floor, as Python's
}

/// Python's round(x, ndigits) for a finite float: the exact decimal value of x rounded half to even at ndigits,
/// read back as the nearest double.
double round_float(double x, std::int64_t ndigits) {
  if (!std::isfinite(x) || x == 0.0) return x;
  if (ndigits > 323) return x;  // beyond the digits of any double
  if (ndigits < -308) return 0.0 * x;
  // Every double has a finite decimal expansion of at most 1074 fraction digits; glibc prints it exactly.
  std::vector<char> buffer(1500);
  const int len = std::snprintf(buffer.data(), buffer.size(), "%.1074f", std::fabs(x));
  const std::string printed(buffer.data(), static_cast<std::size_t>(len));
  const std::size_t dot = printed.find('.');
  const std::string digits = printed.substr(0, dot) + printed.substr(dot + 1);
  const std::int64_t keep = static_cast<std::int64_t>(dot) + ndigits;  // digits that stay
  if (keep < 0) return std::copysign(0.0, x);
  const auto k = static_cast<std::size_t>(keep);
  if (k >= digits.size()) return x;
  bool up = digits[k] > '5';
  if (digits[k] == '5') {
    const bool above_half = digits.find_first_not_of('0', k + 1) != std::string::npos;
    up = above_half || (k > 0 && (digits[k - 1] - '0') % 2 == 1);
  }
  std::string kept = k == 0 ? "0" : digits.substr(0, k);
  if (up) {
    std::size_t i = kept.size();
    while (i > 0 && kept[i - 1] == '9') kept[--i] = '0';
    if (i == 0)
      kept.insert(kept.begin(), '1');
    else
      ++kept[i - 1];
  }
  const double r = std::strtod((kept + "e" + std::to_string(-ndigits)).c_str(), nullptr);
  if (std::isinf(r)) fail("rounded value too large to represent");
  return std::copysign(r, x);
}

/// Python's round(v, ndigits) for an int and ndigits < 0: half to even at a multiple of 10^-ndigits.
std::int64_t round_int(std::int64_t v, std::int64_t ndigits) {
  if (ndigits >= 0) return v;
  if (ndigits < -38) return 0;  // 10^39 > 2 |v|
  __int128 p = 1;
  for (std::int64_t i = 0; i < -ndigits; ++i) p *= 10;
  const __int128 x = v;
  __int128 q = x / p;
  __int128 r = x - q * p;
  if (r < 0) {
    q -= 1;
    r += p;
  }
  if (2 * r > p || (2 * r == p && (q & 1) != 0)) q += 1;
  const __int128 result = q * p;
  if (result > std::numeric_limits<std::int64_t>::max() || result < std::numeric_limits<std::int64_t>::min())
    overflow();
  return static_cast<std::int64_t>(result);
}

std::int64_t round_half_even(double x) {
  if (std::isnan(x)) fail("cannot convert float NaN to integer");
  if (std::isinf(x)) fail("cannot convert float infinity to integer");
  return float_to_int(std::nearbyint(x));  // the default rounding mode: to nearest, ties to even
}

// ---------------------------------------------------------------- comparison

namespace {

bool values_equal(const PyValue& a, const PyValue& b, Budget& budget);

bool same_list(const PyValue& a, const PyValue& b) {
  // Shared elements are equal (NaN aside, as Python's identity test of list elements).
  return a.if_list() == b.if_list();
}

bool values_equal(const PyValue& a, const PyValue& b, Budget& budget) {
  Num x, y;
  if (to_num(a, x) && to_num(b, y)) {
    const auto c = compare_numbers(x, y);
    return c && *c == 0;
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case PyValue::Type::none:
      return true;
    case PyValue::Type::string:
      return *a.if_str() == *b.if_str();
    case PyValue::Type::list: {
      if (same_list(a, b)) return true;
      const auto& l = *a.if_list();
      const auto& r = *b.if_list();
      if (l.size() != r.size()) return false;
      for (std::size_t i = 0; i < l.size(); ++i) {
        budget.spend(1);
        if (!values_equal(l[i], r[i], budget)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

const char* cmp_text(CmpOp op) {
  static const char* const names[] = {"==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not"};
  return names[static_cast<int>(op)];
}

bool apply_order(CmpOp op, int c) {
  switch (op) {
    case CmpOp::lt:
      return c < 0;
    case CmpOp::le:
      return c <= 0;
    case CmpOp::gt:
      return c > 0;
    default:
      return c >= 0;
  }
}

}  // namespace

/// Python's <, <=, >, >= (op is one of them).
bool ordered(CmpOp op, const PyValue& a, const PyValue& b, Budget& budget) {
  Num x, y;
  if (to_num(a, x) && to_num(b, y)) {
    const auto c = compare_numbers(x, y);
    return c && apply_order(op, *c);
  }
  if (a.is_str() && b.is_str()) return apply_order(op, a.if_str()->compare(*b.if_str()));
  if (a.is_list() && b.is_list()) {
    const auto& l = *a.if_list();
    const auto& r = *b.if_list();
    if (!same_list(a, b)) {
      for (std::size_t i = 0; i < l.size() && i < r.size(); ++i) {
        budget.spend(1);
        if (!values_equal(l[i], r[i], budget)) return ordered(op, l[i], r[i], budget);
      }
    }
    return apply_order(op, (l.size() > r.size()) - (l.size() < r.size()));
  }
  fail(std::string("'") + cmp_text(op) + "' not supported between instances of '" + a.type_name() + "' and '" +
       b.type_name() + "'");
}

namespace {

/// Whether needle occurs in text, in time linear in their lengths (Knuth-Morris-Pratt; std::string::find can
/// take the product of the lengths).
bool has_substring(const std::string& text, const std::string& needle) {
  if (needle.empty()) return true;
  std::vector<std::size_t> border(needle.size(), 0);  // longest proper border of needle[0..i]
  for (std::size_t i = 1, k = 0; i < needle.size(); ++i) {
    while (k > 0 && needle[i] != needle[k]) k = border[k - 1];
    if (needle[i] == needle[k]) ++k;
    border[i] = k;
  }
  for (std::size_t i = 0, k = 0; i < text.size(); ++i) {
    while (k > 0 && text[i] != needle[k]) k = border[k - 1];
    if (text[i] == needle[k]) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

bool contains(const PyValue& container, const PyValue& item, Budget& budget) {
  if (const auto* l = container.if_list()) {
    for (const PyValue& e : *l) {
      budget.spend(1);
      if (values_equal(item, e, budget)) return true;
    }
    return false;
  }
  if (const auto* s = container.if_str()) {
    const auto* sub = item.if_str();
    if (!sub) fail(std::string("'in <string>' requires string as left operand, not ") + item.type_name());
    budget.spend(s->size() + sub->size());
    return has_substring(*s, *sub);
  }
  fail(std::string("argument of type '") + container.type_name() + "' is not iterable");
}

/// `is` for the singletons None, True and False; other values have no identity here.
bool identical(const PyValue& a, const PyValue& b) {
  if (a.is_none() || b.is_none()) return a.is_none() && b.is_none();
  if (a.is_bool() || b.is_bool()) return a.is_bool() && b.is_bool() && *a.if_bool() == *b.if_bool();
  fail("'is' is supported only with None, True and False here");
}

}  // namespace

bool compare(CmpOp op, const PyValue& a, const PyValue& b, Budget& budget) {
  switch (op) {
    case CmpOp::eq:
      return values_equal(a, b, budget);
    case CmpOp::ne:
      return !values_equal(a, b, budget);
    case CmpOp::in:
      return contains(b, a, budget);
    case CmpOp::not_in:
      return !contains(b, a, budget);
    case CmpOp::is:
      return identical(a, b);
    case CmpOp::is_not:
      return !identical(a, b);
    default:
      return ordered(op, a, b, budget);
  }
}

// ---------------------------------------------------------------- arithmetic

namespace {

const char* binop_text(BinOp op) {
  static const char* const names[] = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^"};
  return names[static_cast<int>(op)];
}

[[noreturn]] void bad_operands(BinOp op, const PyValue& a, const PyValue& b) {
  fail(std::string("unsupported operand type(s) for ") + binop_text(op) + ": '" + a.type_name() + "' and '" +
       b.type_name() + "'");
}

}  // namespace

PyValue int_binary(BinOp op, std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  switch (op) {
    case BinOp::add:
      if (__builtin_add_overflow(a, b, &r)) overflow();
      return PyValue::integer(r);
    case BinOp::sub:
      if (__builtin_sub_overflow(a, b, &r)) overflow();
      return PyValue::integer(r);
    case BinOp::mul:
      if (__builtin_mul_overflow(a, b, &r)) overflow();
      return PyValue::integer(r);
    case BinOp::truediv:
      if (b == 0) division_by_zero();
      return PyValue::floating(int_true_divide(a, b));
    case BinOp::floordiv:
      return PyValue::integer(int_floor_divide(a, b));
    case BinOp::mod:
      return PyValue::integer(int_modulo(a, b));
    case BinOp::pow:
      if (b < 0) {
        if (a == 0) fail("division by zero: 0 cannot be raised to a negative power");
        return PyValue::floating(float_power(static_cast<double>(a), static_cast<double>(b)));
      }
      if (!try_int_power(a, b, r)) overflow();
      return PyValue::integer(r);
    case BinOp::lshift:
      if (b < 0) fail("negative shift count");
      if (!try_shift_left(a, b, r)) overflow();
      return PyValue::integer(r);
    case BinOp::rshift:
      return PyValue::integer(shift_right(a, b));
    case BinOp::bit_and:
      return PyValue::integer(a & b);
    case BinOp::bit_or:
      return PyValue::integer(a | b);
    case BinOp::bit_xor:
      return PyValue::integer(a ^ b);
  }
  return PyValue();
}

namespace {

PyValue float_binary(BinOp op, double a, double b, const PyValue& x, const PyValue& y) {
  switch (op) {
    case BinOp::add:
      return PyValue::floating(a + b);
    case BinOp::sub:
      return PyValue::floating(a - b);
    case BinOp::mul:
      return PyValue::floating(a * b);
    case BinOp::truediv:
      if (b == 0) division_by_zero();
      return PyValue::floating(a / b);
    case BinOp::floordiv:
      return PyValue::floating(float_divmod(a, b).first);
    case BinOp::mod:
      return PyValue::floating(float_divmod(a, b).second);
    case BinOp::pow:
      return PyValue::floating(float_power(a, b));
    default:
      bad_operands(op, x, y);
  }
}

std::int64_t repeat_count(const PyValue& v) {
  if (const auto* i = v.if_int()) return *i;
  return *v.if_bool() ? 1 : 0;
}

/// size x times (times > 0), or the largest uint64 where it is larger.
std::uint64_t product(std::size_t size, std::int64_t times) {
  const unsigned __int128 p = static_cast<unsigned __int128>(size) * static_cast<std::uint64_t>(times);
  return p > std::numeric_limits<std::uint64_t>::max() ? std::numeric_limits<std::uint64_t>::max()
                                                       : static_cast<std::uint64_t>(p);
}

PyValue repeat(const PyValue& seq, std::int64_t times, Budget& budget) {
  const auto* l = seq.if_list();
  if (times <= 0 || (l ? l->empty() : seq.if_str()->empty())) return l ? PyValue::list({}) : PyValue::string("");
  if (const auto* s = seq.if_str()) {
    check_length(product(s->size(), times), "a string");
    std::string out;
    const std::size_t total = s->size() * static_cast<std::size_t>(times);
    budget.spend(total);
    out.reserve(total);
    for (std::int64_t i = 0; i < times; ++i) out += *s;
    return PyValue::string(std::move(out));
  }
  check_length(product(l->size(), times), "a list");
  const std::size_t total = l->size() * static_cast<std::size_t>(times);
  budget.spend(total);
  PyValue::List out;
  out.reserve(total);
  for (std::int64_t i = 0; i < times; ++i) out.insert(out.end(), l->begin(), l->end());
  return PyValue::list(std::move(out));
}

}  // namespace

PyValue binary(BinOp op, const PyValue& a, const PyValue& b, Budget& budget) {
  Num x, y;
  if (to_num(a, x) && to_num(b, y)) {
    if (!x.is_float && !y.is_float) {
      // bool op bool stays a bool for & | ^, as in Python.
      if (a.is_bool() && b.is_bool() && (op == BinOp::bit_and || op == BinOp::bit_or || op == BinOp::bit_xor))
        return PyValue::boolean(int_binary(op, x.i, y.i).as_int() != 0);
      return int_binary(op, x.i, y.i);
    }
    return float_binary(op, x.as_double(), y.as_double(), a, b);
  }
  if (op == BinOp::add) {
    if (a.is_str() && b.is_str()) {
      const std::string& l = *a.if_str();
      const std::string& r = *b.if_str();
      check_length(l.size() + r.size(), "a string");
      budget.spend(l.size() + r.size());
      return PyValue::string(l + r);
    }
    if (a.is_list() && b.is_list()) {
      const auto& l = *a.if_list();
      const auto& r = *b.if_list();
      check_length(l.size() + r.size(), "a list");
      budget.spend(l.size() + r.size());
      PyValue::List out;
      out.reserve(l.size() + r.size());
      out.insert(out.end(), l.begin(), l.end());
      out.insert(out.end(), r.begin(), r.end());
      return PyValue::list(std::move(out));
    }
  }
  if (op == BinOp::mul) {
    const bool a_seq = a.is_str() || a.is_list();
    const bool b_seq = b.is_str() || b.is_list();
    const bool a_int = a.is_int() || a.is_bool();
    const bool b_int = b.is_int() || b.is_bool();
    if (a_seq && b_int) return repeat(a, repeat_count(b), budget);
    if (a_int && b_seq) return repeat(b, repeat_count(a), budget);
  }
  if (op == BinOp::mod && a.is_str()) fail("string formatting with '%' is not supported");
  bad_operands(op, a, b);
}

PyValue unary(UnOp op, const PyValue& v) {
  Num x;
  const bool floating_ok = op != UnOp::invert;
  if (to_num(v, x) && (!x.is_float || floating_ok)) {
    if (x.is_float) return PyValue::floating(op == UnOp::neg ? -x.f : x.f);
    switch (op) {
      case UnOp::neg:
        if (x.i == std::numeric_limits<std::int64_t>::min()) overflow();
        return PyValue::integer(-x.i);
      case UnOp::pos:
        return PyValue::integer(x.i);
      case UnOp::invert:
        return PyValue::integer(~x.i);
    }
  }
  static const char* const names[] = {"-", "+", "~"};
  fail(std::string("bad operand type for unary ") + names[static_cast<int>(op)] + ": '" + v.type_name() + "'");
}

}  // namespace pyexpr_detail

using namespace pyexpr_detail;

// ---------------------------------------------------------------- PyValue

PyValue PyValue::string(std::string s) {
  PyValue v;
  v.type_ = Type::string;
  v.object_ = std::make_shared<const std::string>(std::move(s));
  return v;
}
PyValue PyValue::list(List items) {
  PyValue v;
  v.type_ = Type::list;
  v.object_ = std::make_shared<const List>(std::move(items));
  return v;
}

namespace {
[[noreturn]] void wrong_type(const char* wanted, const PyValue& v) {
  throw PyExprError(std::string("expected a Python ") + wanted + ", got " + v.type_name());
}
}  // namespace

bool PyValue::as_bool() const {
  if (const auto* p = if_bool()) return *p;
  wrong_type("bool", *this);
}
std::int64_t PyValue::as_int() const {
  if (const auto* p = if_int()) return *p;
  wrong_type("int", *this);
}
double PyValue::as_float() const {
  if (const auto* p = if_float()) return *p;
  wrong_type("float", *this);
}
const std::string& PyValue::as_str() const {
  if (const auto* p = if_str()) return *p;
  wrong_type("str", *this);
}
const PyValue::List& PyValue::as_list() const {
  if (const auto* p = if_list()) return *p;
  wrong_type("list", *this);
}

bool PyValue::truthy() const {
  switch (type()) {
    case Type::none:
      return false;
    case Type::boolean:
      return *if_bool();
    case Type::integer:
      return *if_int() != 0;
    case Type::floating:
      return *if_float() != 0.0;
    case Type::string:
      return !if_str()->empty();
    case Type::list:
      return !if_list()->empty();
  }
  return false;
}

bool PyValue::equals(const PyValue& other) const {
  Budget budget;
  try {
    return values_equal(*this, other, budget);
  } catch (const Failure& f) {
    throw PyExprError(f.message);
  }
}

std::string PyValue::repr() const {
  std::string out;
  try {
    repr_into(*this, out);
  } catch (const Failure& f) {
    throw PyExprError(f.message);
  }
  return out;
}

std::string PyValue::str() const {
  if (const auto* s = if_str()) return *s;
  return repr();
}

const char* PyValue::type_name() const {
  static const char* const names[] = {"NoneType", "bool", "int", "float", "str", "list"};
  return names[static_cast<int>(type_)];
}

}  // namespace autotune
