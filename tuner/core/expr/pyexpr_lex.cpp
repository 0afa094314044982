// The tokens of the Python subset (tuner/core/expr/pyexpr_lex.hpp): names, numbers, strings and operators, with an
// error that names the position for what the subset does not read.
#include "tuner/core/expr/pyexpr_lex.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "tuner/core/expr/pyexpr_ops.hpp"

namespace autotune {
namespace pyexpr_detail {

namespace {

const char* const kKeywords[] = {"False",  "None",   "True",    "and",      "as",       "assert", "async",
                                 "await",  "break",  "class",   "continue", "def",      "del",    "elif",
                                 "else",   "except", "finally", "for",      "from",     "global", "if",
                                 "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
                                 "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};

}  // namespace

bool is_keyword(const std::string& s) {
  return std::any_of(std::begin(kKeywords), std::end(kKeywords), [&](const char* k) { return s == k; });
}

namespace {

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

  [[noreturn]] void fail_at(std::size_t pos, const std::string& what) const { pyexpr_detail::fail_at(s_, pos, what); }

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

}  // namespace

std::vector<Token> lex(const std::string& text) { return Lexer(text).run(); }

void fail_at(const std::string& text, std::size_t pos, const std::string& what) {
  throw PyExprError("cannot parse Python expression \"" + text + "\" at position " + std::to_string(pos + 1) + ": " +
                    what);
}

bool TokenCursor::is_op(const char* o, std::size_t ahead) const {
  const Token& t = peek(ahead);
  return t.kind == Tok::op && t.text == o;
}

bool TokenCursor::is_kw(const char* k, std::size_t ahead) const {
  const Token& t = peek(ahead);
  return t.kind == Tok::name && t.text == k;
}

bool TokenCursor::eat_op(const char* o) {
  if (!is_op(o)) return false;
  ++pos_;
  return true;
}

bool TokenCursor::eat_kw(const char* k) {
  if (!is_kw(k)) return false;
  ++pos_;
  return true;
}

void TokenCursor::expect_op(const char* o, const char* context) {
  if (!eat_op(o)) fail_here(std::string("expected '") + o + "' " + context);
}

void TokenCursor::fail_here(const std::string& what) const { fail_at(text_, peek().pos, what); }

void TokenCursor::unexpected() const {
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

}  // namespace pyexpr_detail
}  // namespace autotune
