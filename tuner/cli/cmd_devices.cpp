// `autotune devices`: the GPUs the NVIDIA driver reports.
#include <cstdio>

#include "tuner/cli/args.hpp"
#include "tuner/cuda/runtime.hpp"

namespace autotune::cli {

int run_devices() {
  auto devs = cuda::list_devices();
  for (std::size_t i = 0; i < devs.size(); ++i) {
    const auto& d = devs[i];
    std::printf("%zu: %s  cc %d.%d  %d SMs  %.1f GiB  L2 %.0f MiB  driver %d  uuid %s\n", i, d.name.c_str(), d.cc / 10,
                d.cc % 10, d.sm_count, static_cast<double>(d.total_memory) / 1073741824.0, d.l2_bytes / 1048576.0,
                d.driver_version, d.uuid.c_str());
  }
  return 0;
}

}  // namespace autotune::cli
