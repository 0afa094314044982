// The value checks of the command line's options (CLI11 validators): every numeric option states its range in
// --help and refuses a value outside it, or one that is not a number, with a message in the command line's
// terms ("must be a positive integer (got 0)"; parse_errors.cpp puts the option's name in front). Each check
// describes itself the way CLI11's own checks do (POSITIVE, NONNEGATIVE, "INT in [7 - 100000]"), so that the
// help text shows the range after the type.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace autotune::cli {

/// Start of every message of these checks: parse_errors.cpp recognises it.
constexpr const char* kMustBe = "must be ";

/// A whole number in [lo, hi], written in decimal ("-0" reads as 0); anything else gives "must be <what> (got
/// <text>)". The value reaches the option rewritten in canonical decimal ("007" -> "7"), since CLI11 would read
/// a leading 0 as octal and "0x10" as hex. `description` is what --help shows after the type.
CLI::Validator integer_check(std::uint64_t lo, std::uint64_t hi, const std::string& what,
                             const std::string& description);

/// A finite number in [lo, hi], or in (lo, hi] when lo_open; messages as integer_check.
CLI::Validator number_check(double lo, double hi, bool lo_open, const std::string& what,
                            const std::string& description);

/// Integers of the option's type T from 1 (--n, --budget, --jobs).
template <typename T>
CLI::Validator positive_integer() {
  return integer_check(1, static_cast<std::uint64_t>(std::numeric_limits<T>::max()), "a positive integer", "POSITIVE");
}

/// Integers of the option's type T from 0 (--seed, --gpu, and --warm-start where 0 means off).
template <typename T>
CLI::Validator non_negative_integer() {
  return integer_check(0, static_cast<std::uint64_t>(std::numeric_limits<T>::max()), "0 or a positive integer",
                       "NONNEGATIVE");
}

/// Integers in [lo, hi], shown as "INT in [lo - hi]".
CLI::Validator integer_in(std::uint64_t lo, std::uint64_t hi);

/// Numbers above 0 (--time-limit, --max-seconds-per-config).
CLI::Validator positive_number();

/// Numbers in [lo, hi], shown as "FLOAT in [lo - hi]".
CLI::Validator number_in(double lo, double hi);

/// 0 (meaning off) or a number in (lo, hi] (--screen: a factor above 1).
CLI::Validator zero_or_number_above(double lo, double hi);

/// One of `choices`, shown as "{a,b,c}".
CLI::Validator one_of(const std::vector<std::string>& choices);

}  // namespace autotune::cli
