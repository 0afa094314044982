// Tests of tuner/core/text.cpp: trim, fmt and gib_text.
#include "tuner/core/text.hpp"

#include <catch2/catch.hpp>

using namespace autotune;

TEST_CASE("text: trim removes spaces and tabs at both ends only", "[cpu][text]") {
  CHECK(trim("") == "");
  CHECK(trim(" \t ") == "");
  CHECK(trim("  a b\t") == "a b");
  CHECK(trim("x") == "x");
  CHECK(trim("\tx\n") == "x\n");  // only spaces and tabs
}

TEST_CASE("text: fmt and gib_text", "[cpu][text]") {
  CHECK(fmt("%.2f s", 1.5) == "1.50 s");
  CHECK(fmt("%g%%", 2.5) == "2.5%");
  CHECK(gib_text(1.5 * 1073741824.0) == "1.50");
  CHECK(gib_text(0) == "0.00");
}
