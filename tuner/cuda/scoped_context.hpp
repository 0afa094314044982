// Internal to tuner/cuda: the context of a Launcher made current for a scope (launcher.cpp, online_device.cpp).
#pragma once
#include "tuner/cuda/driver.hpp"

namespace autotune::cuda::detail {

/// Makes ctx current on this thread for the scope: set if none is current, pushed/popped if another is.
class ScopedContext {
 public:
  explicit ScopedContext(void* ctx) {
    const auto& d = driver();
    CUcontext cur = nullptr;
    check(d.ctx_get_current(&cur), "cuCtxGetCurrent");
    auto want = static_cast<CUcontext>(ctx);
    if (cur == want) return;
    if (cur == nullptr) {
      check(d.ctx_set_current(want), "cuCtxSetCurrent");
      return;
    }
    check(d.ctx_push_current(want), "cuCtxPushCurrent");
    pushed_ = true;
  }
  ~ScopedContext() {
    if (!pushed_) return;
    CUcontext popped = nullptr;
    driver().ctx_pop_current(&popped);
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace autotune::cuda::detail
