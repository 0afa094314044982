// Internal to the Python expressions of tuner/core/pyexpr.hpp (not installed: cmake/Install.cmake leaves it out):
// the tokens of an expression's text, which the parser (pyexpr_parse.cpp) reads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tuner/core/pyexpr.hpp"

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

}  // namespace pyexpr_detail
}  // namespace autotune
