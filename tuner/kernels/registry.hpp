// The adapter factory of the kernel families (specs by name: tuner/specs/specs.hpp).
#pragma once
#include <memory>

#include "tuner/core/adapter.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::kernels {

/// Host adapter for spec.family ("reduction", "user", ...). Throws UsageError for an unknown family and for a
/// spec stub (nothing to run until it is completed).
std::shared_ptr<const KernelAdapter> make_adapter(const TuningSpec& spec);

// Factories of the individual families (one source file each).
std::shared_ptr<const KernelAdapter> make_reduction_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_user_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_scan_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_transpose_adapter(const TuningSpec& spec);
std::shared_ptr<const KernelAdapter> make_compaction_adapter(const TuningSpec& spec);

}  // namespace autotune::kernels
