// libFuzzer target: TuningSpec::from_json_text on arbitrary text (sources not loaded). Rejection must be a
// SpecError (or ExprError/UsageError from the space); an accepted spec is taken further: its space for a
// fixed device, its first problem size and workload, the default configuration and its launch expressions.
// Anything else (a crash, a sanitizer report, another exception type, a hang) is a bug.
// Build: scripts/fuzz.sh (CMake option AUTOTUNE_FUZZ, clang).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tuner/core/error.hpp"
#include "tuner/core/spec.hpp"

namespace {

autotune::DeviceInfo device() {
  autotune::DeviceInfo d;
  d.name = "Fuzz GPU";
  d.cc = 90;
  d.sm_count = 132;
  return d;
}

void exercise(const autotune::TuningSpec& s) {
  using namespace autotune;
  (void)s.spec_hash();
  (void)s.source_hash();
  const Config def = s.default_config();
  if (Config::from_json(def.to_json()) != def) std::abort();  // canonical JSON round trip
  (void)def.hash();
  (void)def.str(&s.params);

  // Enumerate only small spaces: a large one is legitimate but slow, not a bug.
  double cartesian = 1;
  for (const auto& p : s.params) cartesian *= static_cast<double>(p.values.size());
  if (cartesian > 4096) return;
  ProblemKey p;
  if (!s.problem_sizes.empty()) {
    p = s.problem_sizes.front();
  } else {
    for (const auto& d : s.problem_dims) p.dims[d] = 1024;
  }
  const Workload& w = s.workloads.front();
  try {
    const ParameterSpace space = s.space(p, device(), w);
    for (std::size_t i = 0; i < space.size() && i < 64; ++i) {
      const Config c = space.config(i);
      if (space.find(c) != static_cast<std::ptrdiff_t>(i)) std::abort();
      (void)space.neighbours(i);
      for (const auto& l : s.launches) {
        try {
          (void)eval_expr(l.grid_x, c, p, device(), w);
          (void)eval_expr(l.block_x, c, p, device(), w);
          (void)eval_expr(l.shared_bytes, c, p, device(), w);
        } catch (const ExprError&) {
        }
      }
      if (s.bytes_moved) {
        try {
          (void)eval_expr(*s.bytes_moved, c, p, device(), w);
        } catch (const ExprError&) {
        }
      }
    }
    (void)space.default_index();
  } catch (const ExprError&) {
  } catch (const UsageError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const autotune::TuningSpec s = autotune::TuningSpec::from_json_text(text, ".", false);
    exercise(s);
  } catch (const autotune::SpecError&) {
  }
  return 0;
}
