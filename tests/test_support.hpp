// Helpers shared by the test tiers.
#pragma once
#include <cstdlib>
#include <string>

namespace autotune_test {

/// tests/data: $AUTOTUNE_TEST_DATA_DIR when set (tests carried to another machine), else the source tree's.
inline std::string data_dir() {
  const char* env = std::getenv("AUTOTUNE_TEST_DATA_DIR");
  return env && *env ? env : AUTOTUNE_TEST_DATA_DIR;
}

}  // namespace autotune_test
