#include "tuner/core/text.hpp"

#include <cstdio>

namespace autotune {

std::string trim(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const std::size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string gib_text(double bytes) { return fmt("%.2f", bytes / 1073741824.0); }

}  // namespace autotune
