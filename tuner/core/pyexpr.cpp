#include "tuner/core/pyexpr.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

namespace autotune {

namespace {

/// An evaluation error before the expression's text is put in front of it (PyExpr::eval does that).
struct Failure {
  std::string message;
};

[[noreturn]] void fail(std::string message) { throw Failure{std::move(message)}; }

constexpr double kTwo63 = 9223372036854775808.0;

[[noreturn]] void overflow() { fail("integer overflow: the result does not fit in 64 bits"); }
[[noreturn]] void division_by_zero() { fail("division by zero"); }

/// Counts the element steps of one evaluation (list elements made, compared, iterated, printed).
struct Budget {
  std::uint64_t used = 0;
  void spend(std::uint64_t n) {
    used += n;
    if (used > PyExpr::kMaxWork)
      fail("the expression does too much work (more than " + std::to_string(PyExpr::kMaxWork) + " element steps)");
  }
};

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

/// A bool, int or float operand (a bool is the int 0 or 1, as in Python's arithmetic).
struct Num {
  bool is_float = false;
  std::int64_t i = 0;
  double f = 0;
  double as_double() const { return is_float ? f : static_cast<double>(i); }
};

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

std::int64_t float_to_int(double d) {
  if (std::isnan(d)) fail("cannot convert float NaN to integer");
  if (std::isinf(d)) fail("cannot convert float infinity to integer");
  const double t = std::trunc(d);
  if (t < -kTwo63 || t >= kTwo63) overflow();
  return static_cast<std::int64_t>(t);
}

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

// ---------------------------------------------------------------- text of values

/// Python's repr of a float: the shortest digits that read back, in fixed notation for decimal exponents
/// from -5 to 15 and in scientific notation (at least two exponent digits) otherwise.
std::string float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  char buffer[64];
  const auto res = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::scientific);
  const std::string sci(buffer, res.ptr);
  std::string out = x < 0 ? "-" : "";
  const std::size_t e = sci.find('e');
  std::string digits;
  for (std::size_t i = x < 0 ? 1 : 0; i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  const int exponent = std::atoi(sci.c_str() + e + 1);
  const int point = exponent + 1;  // digits before the decimal point
  const int n = static_cast<int>(digits.size());
  if (point <= -4 || point > 16) {
    out += digits[0];
    if (n > 1) out += "." + digits.substr(1);
    char exp_text[16];
    std::snprintf(exp_text, sizeof exp_text, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp_text;
  }
  if (point <= 0) return out + "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
  if (point >= n) return out + digits + std::string(static_cast<std::size_t>(point - n), '0') + ".0";
  return out + digits.substr(0, static_cast<std::size_t>(point)) + "." + digits.substr(static_cast<std::size_t>(point));
}

void string_repr(const std::string& s, std::string& out) {
  if (!is_ascii(s)) fail("repr of a string with non-ASCII characters is not supported");
  const char quote = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  out += quote;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  out += quote;
}

void repr_into(const PyValue& v, std::string& out) {
  if (out.size() > PyExpr::kMaxLength) fail("a text longer than " + std::to_string(PyExpr::kMaxLength) + " characters");
  switch (v.type()) {
    case PyValue::Type::none:
      out += "None";
      return;
    case PyValue::Type::boolean:
      out += *v.if_bool() ? "True" : "False";
      return;
    case PyValue::Type::integer:
      out += std::to_string(*v.if_int());
      return;
    case PyValue::Type::floating:
      out += float_repr(*v.if_float());
      return;
    case PyValue::Type::string:
      string_repr(*v.if_str(), out);
      return;
    case PyValue::Type::list: {
      out += '[';
      bool first = true;
      for (const PyValue& e : *v.if_list()) {
        if (!first) out += ", ";
        first = false;
        repr_into(e, out);
      }
      out += ']';
      return;
    }
  }
}

std::string quoted(const std::string& s) {
  try {
    std::string out;
    string_repr(s.size() > 200 ? s.substr(0, 200) : s, out);
    return out;
  } catch (const Failure&) {
    return "'" + s + "'";
  }
}

/// The one-character string c (ASCII), shared: iterating or indexing a string allocates nothing.
const PyValue& character(char c) {
  static const std::vector<PyValue> table = [] {
    std::vector<PyValue> t;
    t.reserve(128);
    for (int i = 0; i < 128; ++i) t.push_back(PyValue::string(std::string(1, static_cast<char>(i))));
    return t;
  }();
  return table[static_cast<unsigned char>(c) & 0x7f];
}

// ---------------------------------------------------------------- comparison

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

enum class CmpOp : std::uint8_t { eq, ne, lt, le, gt, ge, in, not_in, is, is_not };

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

enum class BinOp : std::uint8_t {
  add,
  sub,
  mul,
  truediv,
  floordiv,
  mod,
  pow,
  lshift,
  rshift,
  bit_and,
  bit_or,
  bit_xor
};
enum class UnOp : std::uint8_t { neg, pos, invert };

const char* binop_text(BinOp op) {
  static const char* const names[] = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^"};
  return names[static_cast<int>(op)];
}

[[noreturn]] void bad_operands(BinOp op, const PyValue& a, const PyValue& b) {
  fail(std::string("unsupported operand type(s) for ") + binop_text(op) + ": '" + a.type_name() + "' and '" +
       b.type_name() + "'");
}

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

// ---------------------------------------------------------------- text to numbers (int(), float())

/// Python's white space for int() and float() of a string (ASCII).
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string strip(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

/// Reads decimal digits with single underscores between them from s at i into out (underscores dropped), and
/// their number into count; stops before anything else (a misplaced underscore included).
void read_digits(const std::string& s, std::size_t& i, std::string& out, std::size_t& count) {
  count = 0;
  while (i < s.size()) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      out += s[i++];
      ++count;
    } else if (s[i] == '_' && count > 0 && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
      ++i;
    } else {
      break;
    }
  }
}

std::int64_t parse_int_text(const std::string& text) {
  const std::string s = strip(text);
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  std::string digits;
  std::size_t count = 0;
  read_digits(s, i, digits, count);
  if (count == 0 || i != s.size()) fail("invalid literal for int() with base 10: " + quoted(text));
  unsigned __int128 v = 0;
  for (char c : digits) {
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > (static_cast<unsigned __int128>(1) << 63)) overflow();
  }
  if (!negative && v == (static_cast<unsigned __int128>(1) << 63)) overflow();
  return negative ? static_cast<std::int64_t>(-static_cast<__int128>(v)) : static_cast<std::int64_t>(v);
}

double parse_float_text(const std::string& text) {
  const std::string s = strip(text);
  std::size_t i = 0;
  std::string clean;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) clean += s[i++];
  std::string word = s.substr(i);
  std::transform(word.begin(), word.end(), word.begin(), [](char c) { return static_cast<char>(std::tolower(c)); });
  if (word == "inf" || word == "infinity") return clean == "-" ? -HUGE_VAL : HUGE_VAL;
  if (word == "nan") return std::nan("");
  std::size_t whole = 0, fraction = 0, exponent = 0;
  read_digits(s, i, clean, whole);
  if (i < s.size() && s[i] == '.') {
    clean += s[i++];
    read_digits(s, i, clean, fraction);
  }
  bool ok = whole + fraction > 0;
  if (ok && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    clean += s[i++];
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) clean += s[i++];
    read_digits(s, i, clean, exponent);
    ok = exponent > 0;
  }
  if (!ok || i != s.size()) fail("could not convert string to float: " + quoted(text));
  return std::strtod(clean.c_str(), nullptr);
}

}  // namespace

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

// ---------------------------------------------------------------- syntax tree

namespace {
enum class Builtin : std::uint8_t {
  abs,
  all,
  any,
  bool_,
  float_,
  int_,
  len,
  list,
  max,
  min,
  range,
  round,
  str,
  sum,
  tuple
};

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
}  // namespace

struct PyExpr::Node {
  enum class Kind : std::uint8_t {
    constant,       // value
    free_var,       // name, slot = position in variables()
    local_var,      // name, slot = comprehension variable
    list,           // kids: elements
    unary,          // op: UnOp; kids[0]
    binary,         // op: BinOp; kids[0], kids[1]
    logic_and,      // kids: operands
    logic_or,       // kids: operands
    logic_not,      // kids[0]
    compare,        // kids: operands; cmp: operators between them
    conditional,    // kids: body, test, else
    index,          // kids: object, index
    slice,          // kids: object, lower, upper, step (null when absent)
    call,           // op: Builtin; kids: arguments
    comprehension,  // kids[0]: element; clauses
  };
  struct Clause {
    std::vector<std::string> names;  // targets
    bool unpack = false;             // targets were a tuple ("for a, b in ...")
    std::vector<std::size_t> slots;
    std::unique_ptr<Node> iter;
    std::vector<std::unique_ptr<Node>> filters;
  };

  Kind kind = Kind::constant;
  std::uint8_t op = 0;
  int depth = 1;
  std::size_t slot = 0;
  PyValue value;
  std::string name;
  std::vector<std::unique_ptr<Node>> kids;
  std::vector<CmpOp> cmp;
  std::vector<Clause> clauses;
};

namespace {

using Node = PyExpr::Node;
using NodePtr = std::unique_ptr<Node>;
using Kind = Node::Kind;

// ---------------------------------------------------------------- tokens

enum class Tok : std::uint8_t { end, name, number, string, op };

struct Token {
  Tok kind = Tok::end;
  std::size_t pos = 0;  // byte offset in the text
  std::string text;     // name, operator or the string's value
  PyValue number;
  bool int_2_63 = false;  // the literal 9223372036854775808: valid only after a unary minus
};

const char* const kKeywords[] = {"False",  "None",   "True",    "and",      "as",       "assert", "async",
                                 "await",  "break",  "class",   "continue", "def",      "del",    "elif",
                                 "else",   "except", "finally", "for",      "from",     "global", "if",
                                 "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
                                 "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};

bool is_keyword(const std::string& s) {
  return std::any_of(std::begin(kKeywords), std::end(kKeywords), [&](const char* k) { return s == k; });
}

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  explicit Lexer(const std::string& text) : s_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip();
      Token t;
      t.pos = pos_;
      if (pos_ >= s_.size()) {
        out.push_back(t);
        return out;
      }
      const char c = s_[pos_];
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1])))) {
        number(t);
      } else if (ident_start(c)) {
        const std::size_t start = pos_;
        while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
        t.text = s_.substr(start, pos_ - start);
        if (pos_ < s_.size() && (s_[pos_] == '\'' || s_[pos_] == '"')) {
          std::string prefix = t.text;
          std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                         [](char ch) { return static_cast<char>(std::tolower(ch)); });
          if (prefix == "r" || prefix == "u") {
            string(t, prefix == "r");
          } else if (prefix == "b" || prefix == "br" || prefix == "rb") {
            fail_at(start, "bytes literals are not supported");
          } else if (prefix == "f" || prefix == "fr" || prefix == "rf") {
            fail_at(start, "f-strings are not supported");
          } else {
            t.kind = Tok::name;
          }
        } else {
          t.kind = Tok::name;
        }
      } else if (c == '\'' || c == '"') {
        string(t, false);
      } else {
        op(t);
      }
      out.push_back(std::move(t));
    }
  }

  [[noreturn]] void fail_at(std::size_t pos, const std::string& what) const {
    throw PyExprError("cannot parse Python expression \"" + s_ + "\" at position " + std::to_string(pos + 1) + ": " +
                      what);
  }

 private:
  void skip() {
    for (;;) {
      while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
      if (pos_ < s_.size() && s_[pos_] == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (pos_ + 1 < s_.size() && s_[pos_] == '\\' && s_[pos_ + 1] == '\n') {
        pos_ += 2;
      } else {
        return;
      }
    }
  }

  /// Digits of `base` with single underscores between them (and one allowed right after a 0x prefix).
  std::string digits(int base, bool after_prefix) {
    std::string out;
    auto is_digit = [base](char c) {
      if (base == 16) return std::isxdigit(static_cast<unsigned char>(c)) != 0;
      return c >= '0' && c < static_cast<char>('0' + base);
    };
    while (pos_ < s_.size()) {
      if (is_digit(s_[pos_])) {
        out += s_[pos_++];
      } else if (s_[pos_] == '_' && (!out.empty() || after_prefix) && pos_ + 1 < s_.size() && is_digit(s_[pos_ + 1])) {
        ++pos_;
      } else {
        break;
      }
    }
    return out;
  }

  void number(Token& t) {
    t.kind = Tok::number;
    const std::size_t start = pos_;
    int base = 10;
    if (s_[pos_] == '0' && pos_ + 1 < s_.size()) {
      const char p = static_cast<char>(std::tolower(s_[pos_ + 1]));
      base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 10;
    }
    bool is_float = false;
    std::string text;
    if (base != 10) {
      pos_ += 2;
      text = digits(base, true);
      if (text.empty()) fail_at(start, "invalid number literal");
    } else {
      text = digits(10, false);
      if (pos_ < s_.size() && s_[pos_] == '.') {
        is_float = true;
        text += s_[pos_++];
        text += digits(10, false);
      }
      if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
        std::size_t look = pos_ + 1;
        if (look < s_.size() && (s_[look] == '+' || s_[look] == '-')) ++look;
        if (look < s_.size() && std::isdigit(static_cast<unsigned char>(s_[look]))) {
          is_float = true;
          text += 'e';
          if (s_[pos_ + 1] == '+' || s_[pos_ + 1] == '-') text += s_[pos_ + 1];
          pos_ = look;
          text += digits(10, false);
        }
      }
    }
    if (pos_ < s_.size() && (s_[pos_] == 'j' || s_[pos_] == 'J')) fail_at(start, "complex numbers are not supported");
    if (pos_ < s_.size() && ident_char(s_[pos_])) {
      // Python reads "1if x else 2" as "1 if x else 2"; any other letter right after a number is an error.
      std::size_t end = pos_;
      while (end < s_.size() && ident_char(s_[end])) ++end;
      const std::string word = s_.substr(pos_, end - pos_);
      static const char* const joinable[] = {"and", "or", "if", "else", "in", "is", "not", "for"};
      if (std::none_of(std::begin(joinable), std::end(joinable), [&](const char* k) { return word == k; }))
        fail_at(start, "invalid number literal");
    }
    if (is_float) {
      t.number = PyValue::floating(std::strtod(text.c_str(), nullptr));
      return;
    }
    if (base == 10 && text.size() > 1 && text[0] == '0' && text.find_first_not_of('0') != std::string::npos)
      fail_at(start, "leading zeros in decimal integer literals are not permitted");
    unsigned __int128 v = 0;
    const unsigned __int128 limit = static_cast<unsigned __int128>(1) << 63;
    for (char c : text) {
      const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10;
      v = v * static_cast<unsigned>(base) + static_cast<unsigned>(d);
      if (v > limit) fail_at(start, "integer literal does not fit in 64 bits");
    }
    if (v == limit) {
      t.int_2_63 = true;
      t.number = PyValue::integer(std::numeric_limits<std::int64_t>::min());
    } else {
      t.number = PyValue::integer(static_cast<std::int64_t>(v));
    }
  }

  std::uint32_t hex_escape(std::size_t count, std::size_t start) {
    std::uint32_t cp = 0;
    for (std::size_t i = 0; i < count; ++i, ++pos_) {
      if (pos_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_])))
        fail_at(start, "truncated \\x, \\u or \\U escape");
      const char c = static_cast<char>(std::tolower(s_[pos_]));
      cp = cp * 16 + static_cast<std::uint32_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : c - 'a' + 10);
    }
    return cp;
  }

  void string(Token& t, bool raw) {
    t.kind = Tok::string;
    const std::size_t start = pos_;
    const char quote = s_[pos_];
    const std::string triple(3, quote);
    const bool is_triple = s_.compare(pos_, 3, triple) == 0;
    pos_ += is_triple ? 3 : 1;
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail_at(start, "unterminated string literal");
      const char c = s_[pos_];
      if (is_triple && s_.compare(pos_, 3, triple) == 0) {
        pos_ += 3;
        break;
      }
      if (!is_triple && c == quote) {
        ++pos_;
        break;
      }
      if (!is_triple && c == '\n') fail_at(start, "unterminated string literal");
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= s_.size()) fail_at(start, "unterminated string literal");
      const char e = s_[pos_ + 1];
      if (raw) {
        out += c;
        out += e;
        pos_ += 2;
        continue;
      }
      const std::size_t escape = pos_;
      pos_ += 2;
      switch (e) {
        case '\n':
          break;
        case '\\':
          out += '\\';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'v':
          out += '\v';
          break;
        case 'x':
          append_utf8(out, hex_escape(2, escape));
          break;
        case 'u':
        case 'U': {
          const std::uint32_t cp = hex_escape(e == 'u' ? 4 : 8, escape);
          if (cp > 0x10FFFF) fail_at(escape, "illegal Unicode character in \\U escape");
          if (cp >= 0xD800 && cp <= 0xDFFF) fail_at(escape, "surrogate characters are not supported");
          append_utf8(out, cp);
          break;
        }
        case 'N':
          fail_at(escape, "\\N{...} escapes are not supported");
        default:
          if (e >= '0' && e <= '7') {
            std::uint32_t cp = static_cast<std::uint32_t>(e - '0');
            for (int i = 0; i < 2 && pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '7'; ++i)
              cp = cp * 8 + static_cast<std::uint32_t>(s_[pos_++] - '0');
            append_utf8(out, cp);
          } else {
            out += '\\';  // an unknown escape keeps its backslash, as in Python
            out += e;
          }
      }
    }
    t.text = std::move(out);
  }

  void op(Token& t) {
    t.kind = Tok::op;
    static const char* const two[] = {"**", "//", "==", "!=", "<=", ">=", "<<", ">>"};
    for (const char* o : two)
      if (s_.compare(pos_, 2, o) == 0) {
        t.text = o;
        pos_ += 2;
        return;
      }
    if (s_.compare(pos_, 2, "&&") == 0) fail_at(pos_, "'&&' is not Python: use 'and'");
    if (s_.compare(pos_, 2, "||") == 0) fail_at(pos_, "'||' is not Python: use 'or'");
    if (s_.compare(pos_, 2, ":=") == 0) fail_at(pos_, "assignment expressions (':=') are not supported");
    if (s_.compare(pos_, 2, "<>") == 0) fail_at(pos_, "'<>' is not Python: use '!='");
    const char c = s_[pos_];
    if (c == '!') fail_at(pos_, "'!' is not Python: use 'not'");
    if (c == '{' || c == '}') fail_at(pos_, "dict and set displays are not supported");
    if (std::strchr("+-*/%<>()[],:&|^~.=", c) == nullptr || c == '\0')
      fail_at(pos_, "unexpected character '" + std::string(1, c) + "'");
    t.text = std::string(1, c);
    ++pos_;
  }

  const std::string& s_;
  std::size_t pos_ = 0;
};

// ---------------------------------------------------------------- parser

class Parser {
 public:
  explicit Parser(const std::string& text) : lexer_(text), tokens_(lexer_.run()) {}

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

  const Token& peek(std::size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  bool is_op(const char* o, std::size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == Tok::op && t.text == o;
  }
  bool is_kw(const char* k, std::size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == Tok::name && t.text == k;
  }
  bool eat_op(const char* o) {
    if (!is_op(o)) return false;
    ++pos_;
    return true;
  }
  bool eat_kw(const char* k) {
    if (!is_kw(k)) return false;
    ++pos_;
    return true;
  }
  void expect_op(const char* o, const char* context) {
    if (!eat_op(o)) fail_here(std::string("expected '") + o + "' " + context);
  }
  [[noreturn]] void fail_here(const std::string& what) const { lexer_.fail_at(peek().pos, what); }
  [[noreturn]] void unexpected() const {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::end:
        fail_here("unexpected end of expression");
      case Tok::number:
        fail_here("unexpected number");
      case Tok::string:
        fail_here("unexpected string");
      case Tok::name:
        if (is_keyword(t.text)) fail_here("unexpected keyword '" + t.text + "'");
        fail_here("unexpected name '" + t.text + "'");
      case Tok::op:
        if (t.text == "=") fail_here("unexpected '=' (comparison is '==')");
        if (t.text == ".") fail_here("attribute access ('.name') is not supported");
        fail_here("unexpected '" + t.text + "'");
    }
    fail_here("unexpected token");
  }

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
      pos_ += 2;
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
      const Token& t = tokens_[pos_++];
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
        ++pos_;
        return constant(t.number);
      case Tok::string: {
        std::string s;
        while (peek().kind == Tok::string) s += tokens_[pos_++].text;  // adjacent literals join
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
    const Token& t = tokens_[pos_];
    if (t.text == "True" || t.text == "False") {
      ++pos_;
      return constant(PyValue::boolean(t.text == "True"));
    }
    if (t.text == "None") {
      ++pos_;
      return constant(PyValue::none());
    }
    if (t.text == "lambda" || t.text == "yield" || t.text == "await") fail_here("'" + t.text + "' is not supported");
    if (is_keyword(t.text)) unexpected();
    if (is_op("(", 1)) return call();
    ++pos_;
    auto n = std::make_unique<Node>();
    n->kind = Kind::free_var;  // resolved later: it may name a comprehension variable
    n->name = t.text;
    return n;
  }

  NodePtr call() {
    const Token& callee = tokens_[pos_];
    const BuiltinInfo* b = find_builtin(callee.text);
    if (!b) {
      std::string known;
      for (const BuiltinInfo& k : kBuiltins) known += std::string(known.empty() ? "" : ", ") + k.name;
      fail_here("unknown function '" + callee.text + "' (supported: " + known + ")");
    }
    pos_ += 2;  // name and '('
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
      lexer_.fail_at(callee.pos, std::string(b->name) + "() takes " + wanted + " argument(s), " +
                                     std::to_string(args.size()) + " given");
    }
    if (b->id == Builtin::int_ && args.size() > 1) fail_here("int() with a base is not supported");
    return make(Kind::call, std::move(args), static_cast<std::uint8_t>(b->id));
  }

  NodePtr parenthesized() {
    ++pos_;
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
    ++pos_;
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
        ++pos_;
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

  Lexer lexer_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
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
