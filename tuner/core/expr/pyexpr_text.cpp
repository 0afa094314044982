#include "tuner/core/expr/pyexpr_ops.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

// The text of the Python subset's values (repr) and the numbers read from text (int() and float() of a string):
// the parts of pyexpr_ops.hpp that deal in text.
namespace autotune::pyexpr_detail {

// ---------------------------------------------------------------- text of values

namespace {

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

}  // namespace

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

namespace {

std::string quoted(const std::string& s) {
  try {
    std::string out;
    string_repr(s.size() > 200 ? s.substr(0, 200) : s, out);
    return out;
  } catch (const Failure&) {
    return "'" + s + "'";
  }
}

}  // namespace

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

// ---------------------------------------------------------------- text to numbers (int(), float())

/// Python's white space for int() and float() of a string (ASCII).
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

namespace {

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

}  // namespace

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

}  // namespace autotune::pyexpr_detail
