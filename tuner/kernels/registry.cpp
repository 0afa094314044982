#include "tuner/kernels/registry.hpp"

#include "tuner/core/error.hpp"

namespace autotune::kernels {

std::shared_ptr<const KernelAdapter> make_adapter(const TuningSpec& spec) {
  if (spec.is_stub())
    throw UsageError("kernel " + spec.name + " is a spec stub created by an import: it has parameters and problem "
                     "sizes but no source, entry points, arguments or launch. Replay, summarise or compare its "
                     "recorded trials (tune --simulate, summary, best, compare-strategies); to run it on a GPU, "
                     "complete the spec (docs/interop.md) and tune the completed .json file");
  if (spec.family == "reduction") return make_reduction_adapter(spec);
  if (spec.family == "user") return make_user_adapter(spec);
  if (spec.family == "transpose") return make_transpose_adapter(spec);
  if (spec.family == "scan") return make_scan_adapter(spec);
  if (spec.family == "compaction") return make_compaction_adapter(spec);
  throw UsageError("kernel " + spec.name + ": unknown family '" + spec.family +
                   "' (known: reduction, scan, transpose, compaction, user)");
}

}  // namespace autotune::kernels
