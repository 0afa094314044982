// The device that a command which runs nothing on a GPU (list, space) plans for.
#pragma once
#include <string>

#include "tuner/core/keys.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/sim/synthetic.hpp"

namespace autotune::cli {

/// The device a command without a GPU run should reason about: the real GPU if there is one, else a
/// fictional reference device (132 SMs, sm_90) that is named as such. *assumed says which.
inline DeviceInfo device_for_planning(bool* assumed) {
  std::string why;
  if (cuda::driver_available(&why)) {
    auto devs = cuda::list_devices();
    if (!devs.empty()) {
      *assumed = false;
      return devs.front();
    }
  }
  *assumed = true;
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  d.name = "assumed device (no GPU here): 132 SMs, sm_90";
  return d;
}

}  // namespace autotune::cli
