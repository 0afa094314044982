#include "tuner/cuda/online_device.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "tuner/core/error.hpp"
#include "tuner/core/hash.hpp"
#include "tuner/core/text.hpp"
#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/driver.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/cuda/scoped_context.hpp"

namespace autotune::cuda {

using detail::check;
using detail::driver;
using detail::ScopedContext;
using detail::throw_call_error;

namespace {

std::uint64_t blocks_for(std::uint64_t count) {
  return std::clamp<std::uint64_t>((count + detail::kCompareMinChunk - 1) / detail::kCompareMinChunk, 1,
                                   detail::kCompareMaxBlocks);
}

}  // namespace

struct OnlineDevice::Impl {
  struct Timing {
    CUevent start = nullptr, end = nullptr;
    bool busy = false;
  };
  struct Comparison {
    CUdeviceptr results = 0;            // 2 x kCompareMaxBlocks u64 per check
    std::uint64_t* host = nullptr;      // pinned, the same size
    std::size_t checks = 0;             // capacity, in checks
    std::vector<std::uint64_t> blocks;  // blocks of each check of the comparison in flight
    CUevent done = nullptr;
    bool busy = false;
  };

  explicit Impl(const Launcher& l) : ctx(l.ctx_), arch(l.arch()) {}

  void* ctx;
  std::string arch;
  std::vector<Timing> timings;
  std::vector<std::pair<CUevent, bool>> marks;  // (event, in use)
  std::vector<Comparison> comparisons;
  std::map<std::size_t, std::pair<CUdeviceptr, std::size_t>> shadows;  // slot -> (address, bytes)
  std::mutex module_mu;                                                // load_comparisons() against compare()
  std::atomic<bool> loaded{false};
  CUmodule module = nullptr;
  std::map<std::string, CUfunction> functions;

  CUfunction function(const std::string& name) {
    auto it = functions.find(name);
    if (it != functions.end()) return it->second;
    CUfunction f = nullptr;
    check(driver().module_get_function(&f, module, name.c_str()), "cuModuleGetFunction(comparison kernel)");
    return functions.emplace(name, f).first->second;
  }
};

OnlineDevice::OnlineDevice(const Launcher& launcher) : impl_(std::make_unique<Impl>(launcher)) {}

OnlineDevice::~OnlineDevice() {
  const detail::Driver* d = detail::try_driver(nullptr);
  if (d == nullptr) return;
  try {
    ScopedContext scope(impl_->ctx);
    d->ctx_synchronize();
    for (auto& t : impl_->timings) {
      d->event_destroy(t.start);
      d->event_destroy(t.end);
    }
    for (auto& [e, used] : impl_->marks) d->event_destroy(e);
    for (auto& c : impl_->comparisons) {
      if (c.results != 0) d->mem_free(c.results);
      if (c.host != nullptr) d->mem_free_host(c.host);
      if (c.done != nullptr) d->event_destroy(c.done);
    }
    for (auto& [slot, s] : impl_->shadows) d->mem_free(s.first);
    if (impl_->module != nullptr) d->module_unload(impl_->module);
  } catch (...) {
    // Teardown after a context loss: nothing useful to report.
  }
}

int OnlineDevice::begin_timing(void* stream) {
  const auto& d = driver();
  ScopedContext scope(impl_->ctx);
  std::size_t i = 0;
  while (i < impl_->timings.size() && impl_->timings[i].busy) ++i;
  if (i == impl_->timings.size()) {
    Impl::Timing t;
    check(d.event_create(&t.start, CU_EVENT_DEFAULT), "cuEventCreate");
    const CUresult r = d.event_create(&t.end, CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS) {
      d.event_destroy(t.start);
      throw_call_error(r, "cuEventCreate");
    }
    impl_->timings.push_back(t);
  }
  check(d.event_record(impl_->timings[i].start, static_cast<CUstream>(stream)), "cuEventRecord");
  impl_->timings[i].busy = true;
  return static_cast<int>(i);
}

void OnlineDevice::end_timing(int token, void* stream) {
  ScopedContext scope(impl_->ctx);
  check(driver().event_record(impl_->timings.at(static_cast<std::size_t>(token)).end, static_cast<CUstream>(stream)),
        "cuEventRecord");
}

std::optional<double> OnlineDevice::elapsed_ms(int token) {
  const auto& d = driver();
  ScopedContext scope(impl_->ctx);
  Impl::Timing& t = impl_->timings.at(static_cast<std::size_t>(token));
  const CUresult q = d.event_query(t.end);
  if (q == CUDA_ERROR_NOT_READY) return std::nullopt;
  t.busy = false;
  check(q, "cuEventQuery");
  float ms = 0;
  check(d.event_elapsed_time(&ms, t.start, t.end), "cuEventElapsedTime");
  return static_cast<double>(ms);
}

void OnlineDevice::wait_timing(int token) {
  ScopedContext scope(impl_->ctx);
  check(driver().event_synchronize(impl_->timings.at(static_cast<std::size_t>(token)).end), "cuEventSynchronize");
}

int OnlineDevice::mark(void* stream) {
  const auto& d = driver();
  ScopedContext scope(impl_->ctx);
  std::size_t i = 0;
  while (i < impl_->marks.size() && impl_->marks[i].second) ++i;
  if (i == impl_->marks.size()) {
    CUevent e = nullptr;
    check(d.event_create(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    impl_->marks.emplace_back(e, false);
  }
  check(d.event_record(impl_->marks[i].first, static_cast<CUstream>(stream)), "cuEventRecord");
  impl_->marks[i].second = true;
  return static_cast<int>(i);
}

void OnlineDevice::wait_mark(int token) {
  ScopedContext scope(impl_->ctx);
  auto& m = impl_->marks.at(static_cast<std::size_t>(token));
  m.second = false;
  check(driver().event_synchronize(m.first), "cuEventSynchronize");
}

void OnlineDevice::wait_verdict(int token) {
  ScopedContext scope(impl_->ctx);
  check(driver().event_synchronize(impl_->comparisons.at(static_cast<std::size_t>(token)).done), "cuEventSynchronize");
}

std::uintptr_t OnlineDevice::shadow(std::size_t slot, std::size_t bytes) {
  const auto& d = driver();
  ScopedContext scope(impl_->ctx);
  auto& s = impl_->shadows[slot];
  if (s.second >= bytes && s.first != 0) return static_cast<std::uintptr_t>(s.first);
  if (s.first != 0) {
    check(d.ctx_synchronize(), "cuCtxSynchronize");  // work in flight may still use the old buffer
    d.mem_free(s.first);
    s = {0, 0};
  }
  CUdeviceptr p = 0;
  const CUresult r = d.mem_alloc(&p, std::max<std::size_t>(bytes, 4));
  if (r != CUDA_SUCCESS)
    throw_call_error(r, "cuMemAlloc(" + std::to_string(bytes) + " bytes of shadow output for online tuning)");
  s = {p, bytes};
  return static_cast<std::uintptr_t>(p);
}

void OnlineDevice::copy_async(std::uintptr_t dst, std::uintptr_t src, std::size_t bytes, void* stream) const {
  if (bytes == 0) return;
  ScopedContext scope(impl_->ctx);
  check(driver().memcpy_dtod_async(static_cast<CUdeviceptr>(dst), static_cast<CUdeviceptr>(src), bytes,
                                   static_cast<CUstream>(stream)),
        "cuMemcpyDtoDAsync(shadow copy)");
}

std::string OnlineDevice::comparisons_key() const {
  std::string text = detail::tool_kernels_source();
  for (const std::string& o : detail::tool_kernels_options()) text += '\n' + o;
  return "online-comparisons:" + impl_->arch + ":" + content_hash(text);
}

bool OnlineDevice::load_comparisons(const std::vector<unsigned char>& cubin) {
  std::lock_guard<std::mutex> lock(impl_->module_mu);
  if (impl_->loaded) return true;
  ScopedContext scope(impl_->ctx);
  CUmodule m = nullptr;
  if (driver().module_load_data(&m, cubin.data()) != CUDA_SUCCESS) return false;
  impl_->module = m;
  impl_->loaded = true;
  return true;
}

std::vector<unsigned char> OnlineDevice::compile_comparisons() {
  std::lock_guard<std::mutex> lock(impl_->module_mu);
  if (impl_->loaded) return {};
  CompileResult r =
      compile(detail::tool_kernels_source(), {}, "autotune_tools.cu", detail::tool_kernels_options(), impl_->arch);
  if (!r.ok) throw EnvironmentError("the tuner's comparison kernels do not compile for " + impl_->arch + ":\n" + r.log);
  ScopedContext scope(impl_->ctx);
  CUmodule m = nullptr;
  check(driver().module_load_data(&m, r.cubin.data()), "cuModuleLoadData(comparison kernels)");
  impl_->module = m;
  impl_->loaded = true;
  return std::move(r.cubin);
}

bool OnlineDevice::comparisons_loaded() const { return impl_->loaded; }

int OnlineDevice::compare(const std::vector<OutputCheck>& checks, const std::vector<std::uintptr_t>& got,
                          const std::vector<std::uintptr_t>& want, void* stream) {
  if (!impl_->loaded) throw EnvironmentError("online tuning: the comparison kernels are not loaded yet");
  if (got.size() != checks.size() || want.size() != checks.size())
    throw UsageError("online tuning: one output and one reference per comparison");
  for (const OutputCheck& c : checks)
    if (c.kind == OutputCheck::Kind::abs_tolerance || c.kind == OutputCheck::Kind::user_kernel)
      throw UsageError(
          std::string("online tuning cannot verify output '") + c.output + "' (" +
          (c.kind == OutputCheck::Kind::user_kernel ? "a comparison kernel of the spec's" : "a per-element tolerance") +
          ")");
  const auto& d = driver();
  ScopedContext scope(impl_->ctx);
  std::size_t i = 0;
  while (i < impl_->comparisons.size() && impl_->comparisons[i].busy) ++i;
  if (i == impl_->comparisons.size()) {
    impl_->comparisons.emplace_back();
    check(d.event_create(&impl_->comparisons.back().done, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  }
  Impl::Comparison& c = impl_->comparisons[i];
  const std::size_t words = 2 * detail::kCompareMaxBlocks;
  if (c.checks < checks.size()) {
    if (c.results != 0) d.mem_free(c.results);
    if (c.host != nullptr) d.mem_free_host(c.host);
    c.results = 0;
    c.host = nullptr;
    c.checks = 0;
    check(d.mem_alloc(&c.results, checks.size() * words * sizeof(std::uint64_t)), "cuMemAlloc(comparison results)");
    void* host = nullptr;
    check(d.mem_alloc_host(&host, checks.size() * words * sizeof(std::uint64_t)), "cuMemAllocHost(comparison results)");
    c.host = static_cast<std::uint64_t*>(host);
    c.checks = checks.size();
  }
  c.blocks.assign(checks.size(), 0);
  for (std::size_t k = 0; k < checks.size(); ++k) {
    const OutputCheck& oc = checks[k];
    if (oc.count == 0) continue;
    const std::uint64_t blocks = blocks_for(oc.count);
    c.blocks[k] = blocks;
    CUdeviceptr got_arg = got[k], want_arg = want[k], tol_arg = 0;
    unsigned long long count = oc.count, chunk = (oc.count + blocks - 1) / blocks;
    unsigned es = oc.element_bytes;
    double relative = oc.relative, absolute = oc.absolute;
    CUdeviceptr results = c.results + k * words * sizeof(std::uint64_t);
    void* args[] = {&got_arg, &want_arg, &tol_arg, &count, &chunk, &es, &relative, &absolute, &results};
    const std::string name = detail::compare_kernel_name(oc);
    CUfunction f = nullptr;
    {
      std::lock_guard<std::mutex> lock(impl_->module_mu);
      f = impl_->function(name);
    }
    const CUresult r = d.launch_kernel(f, static_cast<unsigned>(blocks), 1, 1, detail::kCompareBlockThreads, 1, 1, 0,
                                       static_cast<CUstream>(stream), args, nullptr);
    if (r != CUDA_SUCCESS) throw_call_error(r, "cuLaunchKernel(" + name + ")");
    check(d.memcpy_dtoh_async(c.host + k * words, results, 2 * blocks * sizeof(std::uint64_t),
                              static_cast<CUstream>(stream)),
          "cuMemcpyDtoHAsync(comparison results)");
  }
  check(d.event_record(c.done, static_cast<CUstream>(stream)), "cuEventRecord");
  c.busy = true;
  return static_cast<int>(i);
}

std::optional<std::vector<std::uint64_t>> OnlineDevice::verdict(int token) {
  const auto& d = driver();
  ScopedContext scope(impl_->ctx);
  Impl::Comparison& c = impl_->comparisons.at(static_cast<std::size_t>(token));
  const CUresult q = d.event_query(c.done);
  if (q == CUDA_ERROR_NOT_READY) return std::nullopt;
  c.busy = false;
  check(q, "cuEventQuery");
  const std::size_t words = 2 * detail::kCompareMaxBlocks;
  std::vector<std::uint64_t> out(c.blocks.size(), 0);
  for (std::size_t k = 0; k < c.blocks.size(); ++k)
    for (std::uint64_t b = 0; b < c.blocks[k]; ++b) out[k] += c.host[k * words + 2 * b];
  return out;
}

}  // namespace autotune::cuda
