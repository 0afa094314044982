// Helpers shared by the test tiers.
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace autotune_test {

/// tests/data: $AUTOTUNE_TEST_DATA_DIR when set (tests carried to another machine), else the source tree's.
inline std::string data_dir() {
  const char* env = std::getenv("AUTOTUNE_TEST_DATA_DIR");
  return env && *env ? env : AUTOTUNE_TEST_DATA_DIR;
}

/// The contents of the file `name` of tests/data (data_dir()); the test fails when it cannot be read.
inline std::string read_data(const std::string& name) {
  std::ifstream in(data_dir() + "/" + name);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace autotune_test
