// Launcher: modules and launch plans in the primary context, for the application launch API.
#include "tuner/cuda/launcher.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "tuner/cuda/driver.hpp"
#include "tuner/cuda/plan_binding.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/cuda/scoped_context.hpp"

namespace autotune::cuda {

namespace {

using detail::check;
using detail::driver;
using detail::ScopedContext;
using detail::throw_call_error;

}  // namespace

// ---- Module ---------------------------------------------------------------------------------------------

Module::~Module() {
  const detail::Driver* d = detail::try_driver(nullptr);
  if (d == nullptr || module_ == nullptr) return;
  try {
    ScopedContext scope(ctx_);
    d->module_unload(static_cast<CUmodule>(module_));
  } catch (...) {
    // Unloading during teardown after a context loss: nothing useful to report.
  }
}

// ---- PreparedPlan ---------------------------------------------------------------------------------------

struct PreparedPlan::Bound {
  detail::BoundPlan plan;
};

PreparedPlan::PreparedPlan() = default;
PreparedPlan::~PreparedPlan() = default;

// ---- Launcher -------------------------------------------------------------------------------------------

Launcher::Launcher(int ordinal) {
  const auto& d = driver();
  if (ordinal < 0) {
    ordinal = 0;
    CUcontext cur = nullptr;
    check(d.ctx_get_current(&cur), "cuCtxGetCurrent");
    if (cur != nullptr) {
      CUdevice dev = 0;
      check(d.ctx_get_device(&dev), "cuCtxGetDevice");
      for (int i = 0; i < d.device_count; ++i) {
        CUdevice candidate = 0;
        check(d.device_get(&candidate, i), "cuDeviceGet");
        if (candidate == dev) ordinal = i;
      }
    }
  }
  info_ = detail::query_device(ordinal);  // UsageError for a bad ordinal
  ordinal_ = ordinal;
  CUdevice dev = 0;
  check(d.device_get(&dev, ordinal), "cuDeviceGet");
  device_ = dev;
  CUcontext ctx = nullptr;
  check(d.primary_ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  ctx_ = ctx;
}

Launcher::~Launcher() {
  if (const detail::Driver* d = detail::try_driver(nullptr); d != nullptr && ctx_ != nullptr)
    d->primary_ctx_release(static_cast<CUdevice>(device_));
}

std::shared_ptr<const Module> Launcher::load(const std::vector<unsigned char>& image) const {
  const auto& d = driver();
  if (image.empty()) throw ModuleLoadError(CUDA_ERROR_INVALID_IMAGE, "cuModuleLoadData refused an empty image");
  ScopedContext scope(ctx_);
  CUmodule m = nullptr;
  const CUresult r = d.module_load_data(&m, image.data());
  if (r != CUDA_SUCCESS)
    throw ModuleLoadError(static_cast<int>(r), detail::call_error_text(r, "cuModuleLoadData"));
  // The module keeps the primary context alive on its own (it may outlive this Launcher).
  CUcontext ctx = nullptr;
  const CUresult rr = d.primary_ctx_retain(&ctx, static_cast<CUdevice>(device_));
  if (rr != CUDA_SUCCESS) {
    d.module_unload(m);
    throw_call_error(rr, "cuDevicePrimaryCtxRetain");
  }
  std::shared_ptr<Module> out(new Module(), [dev = device_](Module* p) {
    delete p;
    if (const detail::Driver* drv = detail::try_driver(nullptr)) drv->primary_ctx_release(static_cast<CUdevice>(dev));
  });
  out->module_ = m;
  out->ctx_ = ctx;
  out->parameters_ = detail::cubin_parameter_sizes(image.data(), image.size());
  return out;
}

std::shared_ptr<const PreparedPlan> Launcher::prepare(std::shared_ptr<const Module> module,
                                                      const LaunchPlan& plan) const {
  if (!module) throw UsageError("Launcher::prepare: no module");
  const auto& d = driver();
  ScopedContext scope(ctx_);
  std::shared_ptr<PreparedPlan> out(new PreparedPlan());
  out->plan_ = plan;
  out->module_ = std::move(module);
  out->bound_ = std::make_unique<PreparedPlan::Bound>();
  const auto& parameters = out->module_->parameters_;
  out->bound_->plan =
      detail::bind_plan(d, static_cast<CUmodule>(out->module_->handle()), plan, parameters ? &*parameters : nullptr);
  out->bound_->plan.constants = detail::bind_constants(d, static_cast<CUmodule>(out->module_->handle()), plan);
  return out;
}

void Launcher::run(const PreparedPlan& p, const std::uintptr_t* buffers, void* stream,
                   const std::uint64_t* scalars) const {
  const auto& d = driver();
  ScopedContext scope(ctx_);
  if (!p.bound_->plan.constants.empty())
    detail::copy_constants(d, p.bound_->plan.constants, buffers, static_cast<CUstream>(stream));
  detail::enqueue(d, p.bound_->plan, buffers, static_cast<CUstream>(stream), scalars);
}

void Launcher::run(const PreparedPlan& p, const std::map<std::string, std::uintptr_t>& buffers, void* stream) const {
  std::vector<std::uintptr_t> ptrs;
  for (const auto& b : p.plan().buffers) {
    auto it = buffers.find(b.name);
    if (it == buffers.end()) throw UsageError("no device pointer given for buffer '" + b.name + "'");
    ptrs.push_back(it->second);
  }
  run(p, ptrs.data(), stream);
}

void Launcher::fill32_async(std::uintptr_t ptr, std::uint32_t value, std::size_t count, void* stream) const {
  if (count == 0) return;
  const auto& d = driver();
  ScopedContext scope(ctx_);
  const CUresult r = d.memset_d32_async(static_cast<CUdeviceptr>(ptr), value, count, static_cast<CUstream>(stream));
  if (r != CUDA_SUCCESS) throw_call_error(r, "cuMemsetD32Async(" + std::to_string(count) + " words)");
}

void Launcher::order_after(void* stream, void* previous) const {
  if (stream == previous) return;
  const auto& d = driver();
  ScopedContext scope(ctx_);
  CUevent ev = nullptr;
  check(d.event_create(&ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  CUresult r = d.event_record(ev, static_cast<CUstream>(previous));
  if (r == CUDA_SUCCESS) r = d.stream_wait_event(static_cast<CUstream>(stream), ev, 0);
  d.event_destroy(ev);  // released once the wait has completed
  if (r != CUDA_SUCCESS) {
    // The previous stream may be gone (destroyed by the application): wait for the whole context instead.
    check(d.ctx_synchronize(), "cuCtxSynchronize");
  }
}

std::uintptr_t Launcher::allocate(std::size_t bytes) const {
  const auto& d = driver();
  ScopedContext scope(ctx_);
  CUdeviceptr p = 0;
  const CUresult r = d.mem_alloc(&p, bytes == 0 ? 4 : bytes);
  if (r != CUDA_SUCCESS) throw_call_error(r, "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
  return static_cast<std::uintptr_t>(p);
}

void Launcher::free(std::uintptr_t ptr) const noexcept {
  if (ptr == 0) return;
  const detail::Driver* d = detail::try_driver(nullptr);
  if (d == nullptr) return;
  try {
    ScopedContext scope(ctx_);
    d->mem_free(static_cast<CUdeviceptr>(ptr));
  } catch (...) {
  }
}

void Launcher::copy_to_device(std::uintptr_t dst, const void* src, std::size_t bytes) const {
  if (bytes == 0) return;
  ScopedContext scope(ctx_);
  check(driver().memcpy_htod(static_cast<CUdeviceptr>(dst), src, bytes), "cuMemcpyHtoD");
}

void Launcher::copy_to_host(void* dst, std::uintptr_t src, std::size_t bytes) const {
  if (bytes == 0) return;
  ScopedContext scope(ctx_);
  check(driver().memcpy_dtoh(dst, static_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH");
}

void Launcher::synchronize(void* stream) const {
  ScopedContext scope(ctx_);
  check(driver().stream_synchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
}

void Launcher::synchronize_context() const {
  ScopedContext scope(ctx_);
  check(driver().ctx_synchronize(), "cuCtxSynchronize");
}

}  // namespace autotune::cuda
