// Launcher: modules and launch plans in the primary context, for the application launch API.
#include "tuner/cuda/launcher.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "tuner/cuda/driver.hpp"
#include "tuner/cuda/runtime.hpp"

namespace autotune::cuda {

namespace {

using detail::check;
using detail::driver;
using detail::throw_call_error;

// Dynamic shared memory above this needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (as in executor.cpp).
constexpr std::uint32_t kDefaultSharedLimit = 48 * 1024;
// Arguments of one kernel launch: packed on the stack in run(), so bounded.
constexpr std::size_t kMaxArgs = 32;

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

template <typename T>
std::uint64_t to_slot(T v) {
  std::uint64_t slot = 0;
  std::memcpy(&slot, &v, sizeof v);
  return slot;
}

std::string dims_text(const std::array<std::uint32_t, 3>& a) {
  return std::to_string(a[0]) + "x" + std::to_string(a[1]) + "x" + std::to_string(a[2]);
}

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

struct PreparedPlan::Step {
  LaunchStep::Kind kind = LaunchStep::Kind::kernel;
  std::string name;  // for messages
  CUfunction fn = nullptr;
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t shared_bytes = 0;
  std::vector<std::uint64_t> args;  // scalar values; buffer slots hold the offset until patched
  struct Patch {
    std::size_t slot;
    std::size_t buffer;
  };
  std::vector<Patch> patches;
  // memset32
  std::size_t buffer = 0;
  std::uint32_t value = 0;
  std::size_t count = 0;
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
    throw ModuleLoadError(static_cast<int>(r), "cuModuleLoadData failed: " + detail::error_text(r));
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
  return out;
}

std::shared_ptr<const PreparedPlan> Launcher::prepare(std::shared_ptr<const Module> module,
                                                      const LaunchPlan& plan) const {
  if (!module) throw UsageError("Launcher::prepare: no module");
  const auto& d = driver();
  ScopedContext scope(ctx_);
  std::shared_ptr<PreparedPlan> out(new PreparedPlan());
  out->plan_ = plan;
  out->module_ = module;
  auto buffer_index = [&](const std::string& name) {
    for (std::size_t i = 0; i < plan.buffers.size(); ++i)
      if (plan.buffers[i].name == name) return i;
    throw UsageError("launch plan refers to undeclared buffer '" + name + "'");
  };
  std::map<std::string, CUfunction> functions;
  std::map<std::string, std::uint32_t> max_shared;
  for (const auto& s : plan.steps) {
    PreparedPlan::Step st;
    st.kind = s.kind;
    if (s.kind == LaunchStep::Kind::memset32) {
      st.name = "memset32(" + s.buffer + ")";
      st.buffer = buffer_index(s.buffer);
      if (s.count * 4 > plan.buffers[st.buffer].bytes)
        throw UsageError("launch plan: " + st.name + " writes beyond the buffer's " +
                         std::to_string(plan.buffers[st.buffer].bytes) + " bytes");
      st.value = s.value;
      st.count = s.count;
      out->steps_.push_back(std::move(st));
      continue;
    }
    st.name = s.kernel;
    auto fit = functions.find(s.kernel);
    if (fit == functions.end()) {
      CUfunction fn = nullptr;
      const CUresult r = d.module_get_function(&fn, static_cast<CUmodule>(module->handle()), s.kernel.c_str());
      if (r != CUDA_SUCCESS) throw_call_error(r, "cuModuleGetFunction(" + s.kernel + ")");
      fit = functions.emplace(s.kernel, fn).first;
    }
    st.fn = fit->second;
    st.grid = s.grid;
    st.block = s.block;
    st.shared_bytes = s.shared_bytes;
    auto& ms = max_shared[s.kernel];
    ms = std::max(ms, s.shared_bytes);
    if (s.args.size() > kMaxArgs)
      throw UsageError("launch plan: kernel " + s.kernel + " has more than " + std::to_string(kMaxArgs) + " arguments");
    for (const auto& a : s.args) {
      switch (a.kind) {
        case KernelArg::Kind::buffer: {
          const std::size_t b = buffer_index(a.buffer);
          if (a.offset_bytes > plan.buffers[b].bytes)
            throw UsageError("launch plan: kernel " + s.kernel + " points beyond buffer '" + a.buffer + "'");
          st.patches.push_back({st.args.size(), b});
          st.args.push_back(a.offset_bytes);
          break;
        }
        case KernelArg::Kind::i32: st.args.push_back(to_slot(static_cast<std::int32_t>(a.i))); break;
        case KernelArg::Kind::u32: st.args.push_back(to_slot(static_cast<std::uint32_t>(a.i))); break;
        case KernelArg::Kind::i64: st.args.push_back(to_slot(static_cast<std::int64_t>(a.i))); break;
        case KernelArg::Kind::u64: st.args.push_back(to_slot(static_cast<std::uint64_t>(a.i))); break;
        case KernelArg::Kind::f32: st.args.push_back(to_slot(static_cast<float>(a.f))); break;
        case KernelArg::Kind::f64: st.args.push_back(to_slot(static_cast<double>(a.f))); break;
      }
    }
    out->steps_.push_back(std::move(st));
  }
  for (const auto& [kernel, bytes] : max_shared) {
    if (bytes <= kDefaultSharedLimit) continue;
    const CUresult r = d.func_set_attribute(functions.at(kernel), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(bytes));
    if (r != CUDA_SUCCESS)
      throw_call_error(r, "cuFuncSetAttribute(" + kernel + ", MAX_DYNAMIC_SHARED_SIZE_BYTES=" + std::to_string(bytes) + ")");
  }
  return out;
}

void Launcher::run(const PreparedPlan& p, const std::uintptr_t* buffers, void* stream) const {
  const auto& d = driver();
  ScopedContext scope(ctx_);
  auto s = static_cast<CUstream>(stream);
  std::array<std::uint64_t, kMaxArgs> slots;
  std::array<void*, kMaxArgs> ptrs;
  for (const auto& st : p.steps_) {
    if (st.kind == LaunchStep::Kind::memset32) {
      const CUresult r = d.memset_d32_async(static_cast<CUdeviceptr>(buffers[st.buffer]), st.value, st.count, s);
      if (r != CUDA_SUCCESS) throw_call_error(r, "cuMemsetD32Async(" + st.name + ")");
      continue;
    }
    const std::size_t n = st.args.size();
    for (std::size_t i = 0; i < n; ++i) {
      slots[i] = st.args[i];
      ptrs[i] = &slots[i];
    }
    for (const auto& patch : st.patches)
      slots[patch.slot] = to_slot<CUdeviceptr>(static_cast<CUdeviceptr>(buffers[patch.buffer]) + st.args[patch.slot]);
    const CUresult r = d.launch_kernel(st.fn, st.grid[0], st.grid[1], st.grid[2], st.block[0], st.block[1],
                                       st.block[2], st.shared_bytes, s, n ? ptrs.data() : nullptr, nullptr);
    if (r != CUDA_SUCCESS)
      throw_call_error(r, "cuLaunchKernel(" + st.name + ", grid " + dims_text(st.grid) + ", block " +
                              dims_text(st.block) + ", " + std::to_string(st.shared_bytes) + " B dynamic shared)");
  }
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

std::vector<std::string> build_options(const std::vector<std::string>& adapter_options, const Config& c,
                                       const std::map<std::string, std::string>& spec_defines) {
  std::vector<std::string> o = adapter_options;
  for (auto& s : config_defines(c)) o.push_back(std::move(s));
  for (const auto& [name, value] : spec_defines) o.push_back(value.empty() ? "-D" + name : "-D" + name + "=" + value);
  return o;
}

}  // namespace autotune::cuda
