// Internal to tuner/cuda: NVML (the NVIDIA Management Library) loaded at run time with
// dlopen("libnvidia-ml.so.1"), like the driver: nothing links it, and where it is missing the tuner measures
// time only. Used by the observer (observer.hpp) to read clocks, power, energy, temperature and throttle
// reasons while a configuration is measured. Read-only queries only: the tuner never changes clocks or power
// limits.
//
// Debian's CUDA toolkit ships no nvml.h, so the few types and entry points used are declared here; their
// values and signatures are NVML's stable C ABI (nvml.h of CUDA 12.x).
#pragma once
#include <memory>
#include <string>

namespace autotune::cuda::detail {

namespace nvml_abi {
struct nvmlDevice_st;
using Device = nvmlDevice_st*;  // nvmlDevice_t
using Return = int;             // nvmlReturn_t
constexpr Return kSuccess = 0;
constexpr Return kNotSupported = 3;
constexpr int kClockSm = 1;          // NVML_CLOCK_SM
constexpr int kClockMem = 2;         // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;   // NVML_TEMPERATURE_GPU
}  // namespace nvml_abi

/// NVML entry points. Immutable once loaded; NVML itself is thread-safe.
struct Nvml {
  using Device = nvml_abi::Device;
  using Return = nvml_abi::Return;
  std::string library;  // what was loaded, e.g. "libnvidia-ml.so.1"

  Return (*init)() = nullptr;  // nvmlInit_v2
  const char* (*error_string)(Return) = nullptr;
  Return (*device_get_handle_by_uuid)(const char* uuid, Device* device) = nullptr;
  Return (*device_get_clock_info)(Device, int type, unsigned* mhz) = nullptr;
  Return (*device_get_power_usage)(Device, unsigned* milliwatts) = nullptr;
  Return (*device_get_total_energy_consumption)(Device, unsigned long long* millijoules) = nullptr;
  Return (*device_get_temperature)(Device, int sensor, unsigned* celsius) = nullptr;
  /// nvmlDeviceGetCurrentClocksEventReasons, or its older name nvmlDeviceGetCurrentClocksThrottleReasons.
  Return (*device_get_clock_event_reasons)(Device, unsigned long long* reasons) = nullptr;
  Return (*device_get_enforced_power_limit)(Device, unsigned* milliwatts) = nullptr;

  /// "NVML_ERROR_NOT_SUPPORTED"-style text of r (nvmlErrorString), or the number.
  std::string error_text(Return r) const;
};

/// Loads `library` (a name for dlopen or a path) and calls nvmlInit_v2. nullptr and *why when the library is
/// missing, lacks an entry point or fails to initialise. The library is never unloaded. Thread-safe.
std::unique_ptr<Nvml> load_nvml(const std::string& library, std::string* why);

/// The process's NVML, loaded on first use: the library named by the environment variable AUTOTUNE_NVML
/// (a path, or "off" to measure time only), else "libnvidia-ml.so.1". nullptr and *why when unavailable
/// (remembered). Thread-safe.
const Nvml* nvml(std::string* why);

/// NVML's form of a device UUID ("GPU-8-4-4-4-12" hex groups) from DeviceInfo::uuid (32 hex digits);
/// "" when uuid_hex is not 32 hex digits.
std::string nvml_uuid(const std::string& uuid_hex);

}  // namespace autotune::cuda::detail
