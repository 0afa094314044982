#include "tuner/cuda/nvml.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <mutex>

namespace autotune::cuda::detail {
namespace {

template <typename Fn>
bool resolve(void* lib, Fn* slot, const char* symbol) {
  *slot = reinterpret_cast<Fn>(dlsym(lib, symbol));
  return *slot != nullptr;
}

}  // namespace

std::string Nvml::error_text(Return r) const {
  const char* s = error_string != nullptr ? error_string(r) : nullptr;
  return (s != nullptr ? std::string(s) : std::string("NVML error")) + " (" + std::to_string(r) + ")";
}

std::unique_ptr<Nvml> load_nvml(const std::string& library, std::string* why) {
  // RTLD_LOCAL keeps NVML's symbols out of the global namespace; the handle is never closed.
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    *why = library + " cannot be loaded (" + (err ? err : "unknown dlopen error") + ")";
    return nullptr;
  }
  auto n = std::make_unique<Nvml>();
  n->library = library;
  const char* missing = nullptr;
  auto need = [&](auto* slot, const char* symbol) {
    if (missing == nullptr && !resolve(lib, slot, symbol)) missing = symbol;
  };
  need(&n->init, "nvmlInit_v2");
  need(&n->error_string, "nvmlErrorString");
  need(&n->device_get_handle_by_uuid, "nvmlDeviceGetHandleByUUID");
  need(&n->device_get_clock_info, "nvmlDeviceGetClockInfo");
  need(&n->device_get_power_usage, "nvmlDeviceGetPowerUsage");
  need(&n->device_get_total_energy_consumption, "nvmlDeviceGetTotalEnergyConsumption");
  need(&n->device_get_temperature, "nvmlDeviceGetTemperature");
  need(&n->device_get_enforced_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  if (!resolve(lib, &n->device_get_clock_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
    need(&n->device_get_clock_event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (missing != nullptr) {
    *why = library + " has no " + missing;
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
  static std::unique_ptr<Nvml> loaded;
  static std::string reason;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("AUTOTUNE_NVML");
    const std::string library = env != nullptr && *env != '\0' ? env : "libnvidia-ml.so.1";
    if (library == "off") {
      reason = "NVML is switched off (AUTOTUNE_NVML=off)";
      return;
    }
    loaded = load_nvml(library, &reason);
  });
  if (loaded == nullptr && why != nullptr) *why = reason;
  return loaded.get();
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
