#include "tuner/core/host_verify.hpp"

#include <exception>
#include <memory>
#include <mutex>

#include "tuner/core/error.hpp"

namespace autotune {

namespace {

std::mutex hook_mutex;
std::shared_ptr<const HostVerifyHook> hook;

}  // namespace

void set_host_verify_hook(HostVerifyHook h) {
  const std::lock_guard<std::mutex> lock(hook_mutex);
  hook = h ? std::make_shared<const HostVerifyHook>(std::move(h)) : nullptr;
}

std::string run_host_verify_hook(const std::string& kernel, const HostBuffers& outputs, const HostBuffers& expected) {
  std::shared_ptr<const HostVerifyHook> h;
  {
    const std::lock_guard<std::mutex> lock(hook_mutex);
    h = hook;
  }
  if (!h)
    throw UsageError("kernel " + kernel +
                     " is verified by a callback (\"verification\": {\"callback\": true}), but this program "
                     "registered none: only a program that embeds the tuner can (the Python package)");
  try {
    return (*h)(kernel, outputs, expected);
  } catch (const std::exception& e) {
    return std::string("the verification callback failed: ") + e.what();
  }
}

}  // namespace autotune
