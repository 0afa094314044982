// Tests of tuner/cuda/nvml.cpp and observer.cpp with a fake NVML (tests/tools/fake_nvml.cpp) loaded through
// the same dlopen boundary as libnvidia-ml.so.1: loading, the device by UUID, sampling, the energy window
// (counter and sampled power), throttle flags.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <thread>

#include "tools/fake_nvml.hpp"
#include "tuner/cuda/nvml.hpp"
#include "tuner/cuda/observer.hpp"

using namespace autotune;
using namespace autotune::cuda::detail;

namespace {

constexpr const char* kUuidHex = "00112233445566778899aabbccddeeff";

/// The fake's control block, reset to its defaults.
fake_nvml::Control& control() {
  void* lib = dlopen(FAKE_NVML_LIB, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lib != nullptr);
  auto fn = reinterpret_cast<fake_nvml::ControlFn>(dlsym(lib, "fake_nvml_control"));
  REQUIRE(fn != nullptr);
  *fn() = fake_nvml::Control{};
  return *fn();
}

const Nvml& fake_api() {
  static std::unique_ptr<Nvml> api = [] {
    std::string why;
    auto a = load_nvml(FAKE_NVML_LIB, &why);
    INFO(why);
    REQUIRE(a != nullptr);
    return a;
  }();
  return *api;
}

/// An observed "measurement": samples for a few ms, then an energy window of `window_ms` with `runs` runs.
Observation observe(Observer& o, int window_ms, std::uint64_t runs) {
  o.start(std::chrono::microseconds(1000));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (window_ms > 0) {
    o.energy_begin();
    std::this_thread::sleep_for(std::chrono::milliseconds(window_ms));
    o.energy_end(runs);
  }
  return o.stop();
}

/// observe() on an Observer opened on the fake's device, which must open, as the fake's control block stands now.
Observation observe_fake_device(int window_ms, std::uint64_t runs) {
  std::string why;
  auto o = Observer::open(fake_api(), kUuidHex, &why);
  REQUIRE(o);
  return observe(*o, window_ms, runs);
}

}  // namespace

TEST_CASE("nvml: a missing library is no error, only a reason", "[nvrtc][observer]") {
  std::string why;
  CHECK(load_nvml("/nonexistent/libnvidia-ml.so.1", &why) == nullptr);
  CHECK_THAT(why, Catch::Contains("cannot be loaded"));
}

TEST_CASE("nvml: a library that fails to initialise is refused with NVML's reason", "[nvrtc][observer]") {
  control().init_result = 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  std::string why;
  CHECK(load_nvml(FAKE_NVML_LIB, &why) == nullptr);
  CHECK_THAT(why, Catch::Contains("nvmlInit_v2 failed"));
  control();
}

TEST_CASE("nvml: UUIDs in NVML's form", "[nvrtc][observer]") {
  CHECK(nvml_uuid(kUuidHex) == "GPU-00112233-4455-6677-8899-aabbccddeeff");
  CHECK(nvml_uuid("").empty());
  CHECK(nvml_uuid("xyz").empty());
  CHECK(nvml_uuid(std::string(32, 'g')).empty());
}

TEST_CASE("observer: the device is found by UUID", "[nvrtc][observer]") {
  control();
  std::string why;
  CHECK(Observer::open(fake_api(), kUuidHex, &why) != nullptr);
  CHECK(Observer::open(fake_api(), "ffffffffffffffffffffffffffffffff", &why) == nullptr);
  CHECK_THAT(why, Catch::Contains("nvmlDeviceGetHandleByUUID"));
  CHECK(Observer::open(fake_api(), "", &why) == nullptr);
}

TEST_CASE("observer: clocks, power and energy per run from the energy counter", "[nvrtc][observer]") {
  auto& c = control();
  c.power_mw = 400000;
  const Observation ob = observe_fake_device(60, 1000);
  INFO(ob.method);
  CHECK(ob.observed());
  CHECK_THAT(ob.method, Catch::Contains("energy=counter") && Catch::Contains("runs=1000"));
  CHECK(ob.sm_clock_mhz == 1980);
  CHECK(ob.sm_clock_min_mhz == 1980);
  CHECK(ob.mem_clock_mhz == 2619);
  CHECK(ob.temperature_c == 45);
  CHECK(ob.power_limit_w == 700);
  // The counter integrates 400 W over wall time (whole mJ): the mean power of the window, within rounding.
  CHECK(ob.power_w == Approx(400).epsilon(0.05));
  CHECK(ob.energy_j == Approx(400 * 0.06 / 1000).epsilon(0.25));  // sleep_for may oversleep
  CHECK(ob.has_energy());
  CHECK_FALSE(ob.throttled());
}

TEST_CASE("observer: without the energy counter, energy comes from the sampled power", "[nvrtc][observer]") {
  auto& c = control();
  c.energy_supported = false;
  c.power_mw = 250000;
  const Observation ob = observe_fake_device(40, 100);
  CHECK_THAT(ob.method, Catch::Contains("energy=power"));
  CHECK(ob.power_w == Approx(250));
  CHECK(ob.energy_j == Approx(250 * 0.04 / 100).epsilon(0.25));
  control();
}

TEST_CASE("observer: no energy window, power only", "[nvrtc][observer]") {
  control();
  const Observation ob = observe_fake_device(0, 0);
  CHECK_THAT(ob.method, Catch::Contains("energy=none"));
  CHECK(ob.power_w == Approx(350));
  CHECK(std::isnan(ob.energy_j));
  CHECK_FALSE(ob.has_energy());
}

TEST_CASE("observer: power and thermal throttle reasons flag the measurement, idle does not", "[nvrtc][observer]") {
  {
    auto& c = control();
    c.reasons = kThrottleGpuIdle;
    const Observation ob = observe_fake_device(5, 10);
    CHECK(ob.throttle_reasons == kThrottleGpuIdle);
    CHECK_FALSE(ob.throttled());
  }
  for (std::uint64_t r : {kThrottleSwPowerCap, kThrottleHwThermal, kThrottleSwThermal, kThrottleHwSlowdown}) {
    auto& c = control();
    c.reasons = r;
    const Observation ob = observe_fake_device(5, 10);
    CHECK(ob.throttled());
    CHECK(ob.throttle_reasons == r);
  }
  control();
  CHECK(throttle_reason_names(kThrottleSwPowerCap | kThrottleHwThermal) == "sw_power_cap,hw_thermal");
  CHECK(throttle_reason_names(0) == "none");
  CHECK(throttle_reason_names(0x10000) == "0x10000");
}

TEST_CASE("observer: a summary takes median and minimum clocks over the samples", "[nvrtc][observer]") {
  const double nan = std::nan("");
  std::vector<NvmlSample> s = {
      {1980, 2619, 300, 40, 0, false},
      {1755, 2619, 310, 44, kThrottleSwPowerCap, false},
      {1980, 2619, 500, 50, 0, true},
      {nan, nan, nan, nan, 0, true},
      {1900, 2600, 520, 47, 0, true},
  };
  const Observation o = summarise(s, 1000.0, 2.0, 100, 700);
  CHECK(o.sm_clock_mhz == Approx(1940));  // median of 1980, 1755, 1980, 1900
  CHECK(o.sm_clock_min_mhz == 1755);
  CHECK(o.mem_clock_min_mhz == 2600);
  CHECK(o.temperature_c == 50);
  CHECK(o.throttled());
  CHECK(o.power_w == Approx(0.5));        // 1 J over 2 s from the counter
  CHECK(o.energy_j == Approx(0.01));      // 1 J over 100 runs
  const Observation p = summarise(s, -1, 2.0, 100, 700);  // no counter: the window's samples (500, 520 W)
  CHECK(p.power_w == Approx(510));
  CHECK(p.energy_j == Approx(510 * 2.0 / 100));
}
