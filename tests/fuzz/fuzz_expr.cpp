// libFuzzer target: Expr::parse on arbitrary text, then eval with a few bound variables. Any input may be
// rejected with ExprError; anything else (a crash, a sanitizer report, another exception type, a hang)
// is a bug. Build: scripts/fuzz.sh (CMake option AUTOTUNE_FUZZ, clang).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "tuner/core/error.hpp"
#include "tuner/core/expr/expr.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  autotune::Expr e;
  try {
    e = autotune::Expr::parse(text);
  } catch (const autotune::ExprError&) {
    return 0;
  }
  // Bound: a few small and extreme values, so overflow paths are reached. Unbound names throw.
  auto vars = [](const std::string& name) -> std::optional<std::int64_t> {
    if (name == "n") return 1000003;
    if (name == "BLOCK_SIZE") return 256;
    if (name == "zero") return 0;
    if (name == "neg") return -7;
    if (name == "big") return INT64_MAX;
    if (name == "small") return INT64_MIN;
    return std::nullopt;
  };
  try {
    const std::int64_t a = e.eval(vars);
    // Evaluation is deterministic, and copies evaluate alike.
    autotune::Expr copy = e;
    if (copy.eval(vars) != a) std::abort();
  } catch (const autotune::ExprError&) {
  }
  for (const std::string& v : e.variables())
    if (v.empty()) std::abort();
  return 0;
}
