// Helpers of the scan tests, shared by the cpu and gpu tiers (test_scan.cpp, test_scan_gpu.cpp, test_verify_gpu.cpp).
#pragma once
#include <cstdint>

#include "tuner/core/config.hpp"
#include "tuner/core/keys.hpp"

namespace autotune_test {

/// The problem of n elements (the one dimension of the scan and reduction families).
inline autotune::ProblemKey size_n(std::int64_t n) {
  autotune::ProblemKey p;
  p.dims = {{"n", n}};
  return p;
}

/// A configuration with every parameter of the scan spec (no look-back delay, L2 prefetch hint or state clearing).
inline autotune::Config scan_config(autotune::Value variant, autotune::Value block, autotune::Value items,
                                    autotune::Value vec = 1, autotune::Value padding = 0,
                                    autotune::Value min_threads = 0, autotune::Value streaming = 0,
                                    autotune::Value stages = 1, autotune::Value reg_rows = 0) {
  return autotune::Config({{"VARIANT", variant},
                           {"BLOCK_SIZE", block},
                           {"ITEMS_PER_THREAD", items},
                           {"VEC", vec},
                           {"PADDING", padding},
                           {"LOOKBACK_DELAY", 0},
                           {"MIN_THREADS_PER_SM", min_threads},
                           {"STREAMING", streaming},
                           {"L2_PREFETCH", 0},
                           {"CLEAR_STATE", 0},
                           {"STAGES", stages},
                           {"REG_ROWS", reg_rows}});
}

}  // namespace autotune_test
