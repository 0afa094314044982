#include "tuner/cuda/nvml.hpp"

#include <cctype>

#include "tuner/cuda/dl_library.hpp"

namespace autotune::cuda::detail {

std::string Nvml::error_text(Return r) const {
  const char* s = error_string != nullptr ? error_string(r) : nullptr;
  return (s != nullptr ? std::string(s) : std::string("NVML error")) + " (" + std::to_string(r) + ")";
}

std::unique_ptr<Nvml> load_nvml(const std::string& library, std::string* why) {
  DlLibrary lib;
  if (!lib.open(library, why)) return nullptr;
  auto n = std::make_unique<Nvml>();
  n->library = library;
  lib.need(&n->init, "nvmlInit_v2");
  lib.need(&n->error_string, "nvmlErrorString");
  lib.need(&n->device_get_handle_by_uuid, "nvmlDeviceGetHandleByUUID");
  lib.need(&n->device_get_clock_info, "nvmlDeviceGetClockInfo");
  lib.need(&n->device_get_power_usage, "nvmlDeviceGetPowerUsage");
  lib.need(&n->device_get_total_energy_consumption, "nvmlDeviceGetTotalEnergyConsumption");
  lib.need(&n->device_get_temperature, "nvmlDeviceGetTemperature");
  lib.need(&n->device_get_enforced_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  if (!lib.resolve(&n->device_get_clock_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
    lib.need(&n->device_get_clock_event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (lib.missing() != nullptr) {
    *why = library + " has no " + lib.missing();
    return nullptr;
  }
  const Nvml::Return r = n->init();
  if (r != nvml_abi::kSuccess) {
    *why = "nvmlInit_v2 failed: " + n->error_text(r);
    return nullptr;
  }
  return n;
}

const Nvml* nvml(std::string* why) {
  static LoadedOnce<Nvml> once;
  return once.get(why, [](std::string* reason) -> std::unique_ptr<Nvml> {
    const LibraryChoice choice = library_choice("AUTOTUNE_NVML");
    if (choice.off) {
      *reason = "NVML is switched off (AUTOTUNE_NVML=off)";
      return nullptr;
    }
    return load_nvml(choice.library.empty() ? "libnvidia-ml.so.1" : choice.library, reason);
  });
}

std::string nvml_uuid(const std::string& uuid_hex) {
  if (uuid_hex.size() != 32) return "";
  for (char c : uuid_hex)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
  std::string out = "GPU-";
  const int groups[] = {8, 4, 4, 4, 12};
  std::size_t at = 0;
  for (int g : groups) {
    if (at != 0) out += '-';
    out += uuid_hex.substr(at, static_cast<std::size_t>(g));
    at += static_cast<std::size_t>(g);
  }
  return out;
}

}  // namespace autotune::cuda::detail
