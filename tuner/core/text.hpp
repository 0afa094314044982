// Small text helpers of the modules' messages and tables, each defined once here. Pure functions, thread-safe.
#pragma once
#include <string>

namespace autotune {

/// s without its leading and trailing spaces and tabs.
std::string trim(const std::string& s);

/// One number through a printf format with one double conversion, e.g. fmt("%.2f s", 1.5) == "1.50 s"; at most
/// 63 characters (the rest is cut).
std::string fmt(const char* format, double v);

/// A size in bytes as GiB with two decimals, e.g. "1.50" for 1.5 * 2^30.
std::string gib_text(double bytes);

}  // namespace autotune
