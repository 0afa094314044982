// The control block of the fake NVML (fake_nvml.cpp): tests reach it through the library's
// fake_nvml_control(), found with dlsym on the handle the observer's dlopen also gets.
#pragma once

namespace fake_nvml {

struct Control {
  int init_result = 0;                 // nvmlInit_v2's answer
  char uuid[96] = "GPU-00112233-4455-6677-8899-aabbccddeeff";
  unsigned power_mw = 350000;          // 350 W
  unsigned power_limit_mw = 700000;    // 700 W
  unsigned sm_mhz = 1980, mem_mhz = 2619, temperature_c = 45;
  unsigned long long reasons = 0;      // clock event reasons
  bool energy_supported = true;        // nvmlDeviceGetTotalEnergyConsumption
  int handle_calls = 0;
};

/// Signature of fake_nvml_control().
using ControlFn = Control* (*)();

}  // namespace fake_nvml
