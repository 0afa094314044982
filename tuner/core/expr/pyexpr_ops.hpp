// Internal to the Python expressions of tuner/core/expr/pyexpr.hpp (not installed: cmake/Install.cmake leaves it out):
// the value semantics that the evaluator (pyexpr.cpp) and the parser (pyexpr_parse.cpp) share, defined in
// pyexpr_ops.cpp: Python's numbers, the text of values, comparison, arithmetic and int()/float() of text, each failure
// a Failure that PyExpr::eval turns into a PyExprError naming the expression.
#pragma once
#include <cstdint>
#include <string>

#include "tuner/core/expr/pyexpr.hpp"

namespace autotune::pyexpr_detail {

constexpr double kTwo63 = 9223372036854775808.0;

/// An evaluation error before the expression's text is put in front of it (PyExpr::eval does that).
struct Failure {
  std::string message;
};

[[noreturn]] void fail(std::string message);
[[noreturn]] void overflow();
[[noreturn]] void division_by_zero();

/// Counts the element steps of one evaluation (list elements made, compared, iterated, printed).
struct Budget {
  std::uint64_t used = 0;
  void spend(std::uint64_t n) {
    used += n;
    if (used > PyExpr::kMaxWork)
      fail("the expression does too much work (more than " + std::to_string(PyExpr::kMaxWork) + " element steps)");
  }
};

/// A string or list of n elements is within PyExpr::kMaxLength; else a Failure naming `what`.
void check_length(std::uint64_t n, const char* what);
/// Whether every byte of s is ASCII (below 0x80).
bool is_ascii(const std::string& s);
/// Lengths, indexes and iteration count bytes; they equal Python's character counts for ASCII only.
void require_ascii(const std::string& s);

// ---------------------------------------------------------------- numbers

/// A bool, int or float operand (a bool is the int 0 or 1, as in Python's arithmetic).
struct Num {
  bool is_float = false;
  std::int64_t i = 0;
  double f = 0;
  double as_double() const { return is_float ? f : static_cast<double>(i); }
};

/// The bool, int or float v as a Num; false for any other type.
bool to_num(const PyValue& v, Num& out);
/// int(d): truncation; a Failure for NaN, infinities and beyond 64 bits.
std::int64_t float_to_int(double d);
/// Python's a // b and a % b of ints (the floor quotient; the remainder has b's sign); a Failure for b == 0 and
/// where the quotient leaves 64 bits.
std::int64_t int_floor_divide(std::int64_t a, std::int64_t b);
std::int64_t int_modulo(std::int64_t a, std::int64_t b);
/// base ** exp and a << s within 64 bits (exp, s >= 0); false when the result leaves them.
bool try_int_power(std::int64_t base, std::int64_t exp, std::int64_t& out);
bool try_shift_left(std::int64_t a, std::int64_t s, std::int64_t& out);
/// Python's a >> s: the floor of a / 2^s for any s >= 0; a Failure for s < 0.
std::int64_t shift_right(std::int64_t a, std::int64_t s);
/// Python's round(x, ndigits) of a finite float and of an int (ndigits < 0 rounds to tens, hundreds, ...), and
/// round(x) of a float: half to even; a Failure where the int result would be NaN, infinite or past 64 bits.
double round_float(double x, std::int64_t ndigits);
std::int64_t round_int(std::int64_t v, std::int64_t ndigits);
std::int64_t round_half_even(double x);

// ---------------------------------------------------------------- text of values

/// Appends Python's repr(v) to out.
void repr_into(const PyValue& v, std::string& out);
/// The one-character string c (shared, made once per character).
const PyValue& character(char c);

// ---------------------------------------------------------------- comparison and arithmetic

enum class CmpOp : std::uint8_t { eq, ne, lt, le, gt, ge, in, not_in, is, is_not };

/// a OP b as Python compares (chains are the caller's); ordered() for <, <=, >, >= alone.
bool compare(CmpOp op, const PyValue& a, const PyValue& b, Budget& budget);
bool ordered(CmpOp op, const PyValue& a, const PyValue& b, Budget& budget);

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

/// a OP b of two ints, with Python's results (true division gives a float; overflow is a Failure).
PyValue int_binary(BinOp op, std::int64_t a, std::int64_t b);
/// a OP b and OP v of any values, as Python computes them, or a Failure naming the types.
PyValue binary(BinOp op, const PyValue& a, const PyValue& b, Budget& budget);
PyValue unary(UnOp op, const PyValue& v);

// ---------------------------------------------------------------- text to numbers (int(), float())

/// Python's white space for int() and float() of a string (ASCII).
bool is_space(char c);
/// int(text) and float(text), or a Failure quoting the text.
std::int64_t parse_int_text(const std::string& text);
double parse_float_text(const std::string& text);

}  // namespace autotune::pyexpr_detail
