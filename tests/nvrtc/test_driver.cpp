// Error texts of driver calls (tuner/cuda/driver.cpp): they name the call and its call site. No driver needed.
#include <catch2/catch.hpp>

#include <string>

#include "tuner/cuda/driver.hpp"

using namespace autotune;
using namespace autotune::cuda::detail;

TEST_CASE("a failed driver call names the function and its call site", "[nvrtc]") {
  const std::string here = "tests/nvrtc/test_driver.cpp:" + std::to_string(__LINE__ + 1);
  const std::string text = call_error_text(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc(64 bytes)");
  CHECK(text == "cuMemAlloc(64 bytes) failed at " + here + ": " + error_text(CUDA_ERROR_INVALID_VALUE));
  CHECK_THAT(text, Catch::Contains("CUDA_ERROR_INVALID_VALUE"));

  int line = 0;
  try {
    line = __LINE__ + 1;
    check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc");
    FAIL("check did not throw");
  } catch (const CudaCallError& e) {
    CHECK(e.code() == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(e.function() == "cuMemAlloc");
    CHECK_THAT(e.what(), Catch::StartsWith("cuMemAlloc failed at tests/nvrtc/test_driver.cpp:" + std::to_string(line) + ": "));
  }
  CHECK_NOTHROW(check(CUDA_SUCCESS, "cuMemAlloc"));
}
