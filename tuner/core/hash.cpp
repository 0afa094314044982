#include "tuner/core/hash.hpp"

#include <cstdio>

namespace autotune {

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace autotune
