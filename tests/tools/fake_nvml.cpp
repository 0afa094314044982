// A fake libnvidia-ml.so for the cpu tier: the entry points the observer loads (tuner/cuda/nvml.cpp), answering
// from a control block that tests change through fake_nvml_control() (dlsym on the same handle). The energy
// counter integrates the set power over wall time, like the real one (mW x s = mJ).
#include <chrono>
#include <cstring>

#include "tools/fake_nvml.hpp"

namespace {

using fake_nvml::Control;
Control g_control;
int g_device_token = 0;
const auto g_start = std::chrono::steady_clock::now();

constexpr int kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kNotFound = 6;

bool ours(void* device) { return device == &g_device_token; }

}  // namespace

extern "C" {

// The control block the tests change.


Control* fake_nvml_control() { return &g_control; }

int nvmlInit_v2() { return g_control.init_result; }

const char* nvmlErrorString(int r) {
  switch (r) {
    case kSuccess: return "Success";
    case kInvalidArgument: return "Invalid Argument";
    case kNotSupported: return "Not Supported";
    case kNotFound: return "Not Found";
    default: return "Unknown Error";
  }
}

int nvmlDeviceGetHandleByUUID(const char* uuid, void** device) {
  ++g_control.handle_calls;
  if (uuid == nullptr || device == nullptr) return kInvalidArgument;
  if (std::strcmp(uuid, g_control.uuid) != 0) return kNotFound;
  *device = &g_device_token;
  return kSuccess;
}

int nvmlDeviceGetClockInfo(void* device, int type, unsigned* mhz) {
  if (!ours(device) || mhz == nullptr) return kInvalidArgument;
  if (type == 1) *mhz = g_control.sm_mhz;
  else if (type == 2) *mhz = g_control.mem_mhz;
  else return kNotSupported;
  return kSuccess;
}

int nvmlDeviceGetPowerUsage(void* device, unsigned* mw) {
  if (!ours(device) || mw == nullptr) return kInvalidArgument;
  *mw = g_control.power_mw;
  return kSuccess;
}

int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* mj) {
  if (!ours(device) || mj == nullptr) return kInvalidArgument;
  if (!g_control.energy_supported) return kNotSupported;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
  *mj = 1000000ull + static_cast<unsigned long long>(g_control.power_mw * s);
  return kSuccess;
}

int nvmlDeviceGetTemperature(void* device, int sensor, unsigned* c) {
  if (!ours(device) || c == nullptr || sensor != 0) return kInvalidArgument;
  *c = g_control.temperature_c;
  return kSuccess;
}

int nvmlDeviceGetCurrentClocksEventReasons(void* device, unsigned long long* reasons) {
  if (!ours(device) || reasons == nullptr) return kInvalidArgument;
  *reasons = g_control.reasons;
  return kSuccess;
}

int nvmlDeviceGetEnforcedPowerLimit(void* device, unsigned* mw) {
  if (!ours(device) || mw == nullptr) return kInvalidArgument;
  *mw = g_control.power_limit_mw;
  return kSuccess;
}

}  // extern "C"
