// Internal to the Python expressions of tuner/core/expr/pyexpr.hpp (not installed: cmake/Install.cmake leaves it out):
// the tokens of an expression's text, which the parser (pyexpr_parse.cpp) reads.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tuner/core/expr/pyexpr.hpp"

namespace autotune {
namespace pyexpr_detail {

enum class Tok : std::uint8_t { end, name, number, string, op };

struct Token {
  Tok kind = Tok::end;
  std::size_t pos = 0;  // byte offset in the text
  std::string text;     // name, operator or the string's value
  PyValue number;
  bool int_2_63 = false;  // the literal 9223372036854775808: valid only after a unary minus
};

/// Whether s is a Python keyword (reserved: never a name).
bool is_keyword(const std::string& s);

/// The tokens of text, the last one Tok::end. Throws PyExprError, naming the position, for text that is not Python
/// or uses what the subset leaves out (bytes literals, f-strings, dict and set displays, ':=').
std::vector<Token> lex(const std::string& text);

/// Throws the PyExprError of text at byte offset pos (shown counting from 1).
[[noreturn]] void fail_at(const std::string& text, std::size_t pos, const std::string& what);

/// The parser's place in the tokens of a text: looking ahead, taking tokens, and the errors that name the place.
/// Keeps a reference to the text, which must outlive it.
class TokenCursor {
 public:
  /// Throws PyExprError as lex() does.
  explicit TokenCursor(const std::string& text) : text_(text), tokens_(lex(text)) {}

  const std::string& text() const { return text_; }
  /// The token `ahead` places on (Tok::end past the last).
  const Token& peek(std::size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  /// The current token; moves past it.
  const Token& take() { return tokens_[pos_++]; }
  void skip(std::size_t n = 1) { pos_ += n; }
  bool is_op(const char* o, std::size_t ahead = 0) const;
  bool is_kw(const char* k, std::size_t ahead = 0) const;
  /// Takes the operator (keyword) o if it is next.
  bool eat_op(const char* o);
  bool eat_kw(const char* k);
  /// Takes o or throws "expected 'o' <context>".
  void expect_op(const char* o, const char* context);
  /// Throws the PyExprError of the current token's place.
  [[noreturn]] void fail_here(const std::string& what) const;
  /// Throws what is wrong with the current token where the grammar expects none of its kind.
  [[noreturn]] void unexpected() const;

 private:
  const std::string& text_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

}  // namespace pyexpr_detail
}  // namespace autotune
