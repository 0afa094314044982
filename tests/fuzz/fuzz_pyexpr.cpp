// libFuzzer target: PyExpr::parse on arbitrary text, then eval with a few bound names of every type. Any input
// may be rejected with PyExprError; anything else (a crash, a sanitizer report, another exception type, a hang,
// memory past the limit) is a bug, and so is an eval_int value that eval does not give.
// Build: scripts/fuzz.sh (CMake option AUTOTUNE_FUZZ, clang).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "tuner/core/error.hpp"
#include "tuner/core/expr/pyexpr.hpp"

namespace {

std::optional<autotune::PyValue> bound(const std::string& name) {
  using autotune::PyValue;
  if (name == "n") return PyValue::integer(1000003);
  if (name == "BLOCK_SIZE") return PyValue::integer(256);
  if (name == "zero") return PyValue::integer(0);
  if (name == "neg") return PyValue::integer(-7);
  if (name == "big") return PyValue::integer(std::numeric_limits<std::int64_t>::max());
  if (name == "small") return PyValue::integer(std::numeric_limits<std::int64_t>::min());
  if (name == "flag") return PyValue::boolean(true);
  if (name == "fl") return PyValue::floating(2.5);
  if (name == "inf") return PyValue::floating(HUGE_VAL);
  if (name == "nan") return PyValue::floating(std::nan(""));
  if (name == "s") return PyValue::string("abc");
  if (name == "lst") return PyValue::list({PyValue::integer(1), PyValue::floating(-0.5), PyValue::string("x")});
  if (name == "nothing") return PyValue::none();
  return std::nullopt;
}

class Source final : public autotune::PyVariableSource {
 public:
  std::optional<autotune::PyValue> value(std::size_t, const std::string& name) const override { return bound(name); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  autotune::PyExpr e;
  try {
    e = autotune::PyExpr::parse(text);
  } catch (const autotune::PyExprError&) {
    return 0;
  }
  for (const std::string& v : e.variables())
    if (v.empty()) std::abort();
  const Source source;
  std::optional<std::int64_t> as_int;
  try {
    as_int = e.eval_int(source);
  } catch (const autotune::PyExprError&) {
    std::abort();  // the source throws nothing, and eval_int leaves every error to eval
  }
  try {
    const autotune::PyValue v = e.eval(source);
    // The int path agrees with the full evaluation.
    if (as_int && !((v.is_int() && v.as_int() == *as_int) || (v.is_bool() && (v.as_bool() ? 1 : 0) == *as_int)))
      std::abort();
    // Evaluation is deterministic, and copies evaluate alike (compared by Python's ==, NaN aside).
    const autotune::PyExpr copy = e;
    const autotune::PyValue w = copy.eval(source);
    if (v.type() != w.type()) std::abort();
    try {
      if (v.repr() != w.repr()) std::abort();
    } catch (const autotune::PyExprError&) {  // a string with non-ASCII characters, or a text past the limit
    }
    (void)v.truthy();
    (void)v.str().size();
  } catch (const autotune::PyExprError&) {
    if (as_int) std::abort();  // eval_int gave a value where Python raises
  }
  return 0;
}
