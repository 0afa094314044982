#include "tuner/cli/flag_checks.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>

namespace autotune::cli {

namespace {

/// A number as CLI11 writes it in its range descriptions (ostream defaults: 0.05, 100, 1e+09).
std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string refusal(const std::string& what, const std::string& text) { return kMustBe + what + " (got " + text + ")"; }

/// The decimal integer in text, with an optional sign: false for anything else (spaces, hex, a fraction); a
/// negative value other than -0 gives negative = true.
bool read_decimal(const std::string& text, std::uint64_t& value, bool& negative, bool& overflow) {
  const std::size_t start = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (start == text.size()) return false;
  value = 0;
  overflow = false;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) overflow = true;
    value = value * 10 + digit;
  }
  negative = text[0] == '-' && (value != 0 || overflow);
  return true;
}

/// The finite number in text (strtod's syntax, nothing before or after it).
bool read_number(const std::string& text, double& value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && errno == 0 && std::isfinite(value);
}

}  // namespace

CLI::Validator integer_check(std::uint64_t lo, std::uint64_t hi, const std::string& what,
                             const std::string& description) {
  const bool states_hi = what.find(std::to_string(hi)) != std::string::npos;
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::uint64_t v = 0;
        bool negative = false, overflow = false;
        if (!read_decimal(text, v, negative, overflow) || negative || (!overflow && v < lo)) return refusal(what, text);
        if (overflow || v > hi) return refusal(states_hi ? what : what + " up to " + std::to_string(hi), text);
        text = std::to_string(v);
        return {};
      },
      description);
}

CLI::Validator number_check(double lo, double hi, bool lo_open, const std::string& what,
                            const std::string& description) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!read_number(text, v) || v > hi || (lo_open ? v <= lo : v < lo)) return refusal(what, text);
        return {};
      },
      description);
}

CLI::Validator integer_in(std::uint64_t lo, std::uint64_t hi) {
  const std::string l = std::to_string(lo), h = std::to_string(hi);
  return integer_check(lo, hi, "an integer from " + l + " to " + h, "INT in [" + l + " - " + h + "]");
}

CLI::Validator positive_number() { return number_check(0, HUGE_VAL, true, "a positive number", "POSITIVE"); }

CLI::Validator number_in(double lo, double hi) {
  const std::string l = number_text(lo), h = number_text(hi);
  return number_check(lo, hi, false, "a number from " + l + " to " + h, "FLOAT in [" + l + " - " + h + "]");
}

CLI::Validator zero_or_number_above(double lo, double hi) {
  const std::string l = number_text(lo), h = number_text(hi);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (read_number(text, v) && (v == 0 || (v > lo && v <= hi))) return {};
        return refusal("0 (off) or a number above " + l + " up to " + h, text);
      },
      "0 or FLOAT in (" + l + " - " + h + "]");
}

CLI::Validator one_of(const std::vector<std::string>& choices) {
  std::string listed, shown;
  for (const auto& c : choices) {
    listed += (listed.empty() ? "" : ", ") + c;
    shown += (shown.empty() ? "" : ",") + c;
  }
  return CLI::Validator(
      [choices, listed](std::string& text) -> std::string {
        for (const auto& c : choices)
          if (text == c) return {};
        return refusal("one of " + listed, text);
      },
      "{" + shown + "}");
}

}  // namespace autotune::cli
