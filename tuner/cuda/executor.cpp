// GPU side of the CUDA backend: buffers, module loading, poisoned verification runs, event timing,
// and the worker process that hosts them (see executor.hpp for why a process).
#include "tuner/cuda/executor.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>

#include "tuner/core/sampling.hpp"
#include "tuner/cuda/driver.hpp"

extern char** environ;

namespace autotune::cuda::detail {
namespace {

constexpr const char* kWorkerEnv = "AUTOTUNE_CUDA_WORKER_FD";
constexpr int kWorkerFd = 200;  // the socket's number in the worker
constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kGiB = std::size_t{1} << 30;
// Dynamic shared memory above this needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
constexpr std::uint32_t kDefaultSharedLimit = 48 * 1024;
constexpr int kCopyWarmup = 3;
constexpr int kCopySamples = 15;
constexpr unsigned char kPoisonByte = 0xFF;  // NaN for floats, -1 for signed integers

struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  std::size_t bytes = 0;  // allocated size
};

// One plan step with everything resolved for cuLaunchKernel / cuMemsetD32Async.
struct ResolvedStep {
  LaunchStep::Kind kind = LaunchStep::Kind::kernel;
  std::string kernel;
  CUfunction fn = nullptr;
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t shared_bytes = 0;
  std::vector<std::uint64_t> arg_storage;  // one 8-byte slot per argument (every KernelArg type fits)
  std::vector<void*> arg_ptrs;             // into arg_storage; set by finalize()
  CUdeviceptr dst = 0;                     // memset32
  std::uint32_t value = 0;
  std::size_t count = 0;

  void finalize() {
    arg_ptrs.clear();
    for (auto& slot : arg_storage) arg_ptrs.push_back(&slot);
  }
  std::string describe() const {
    auto dims = [](const std::array<std::uint32_t, 3>& a) {
      return std::to_string(a[0]) + "x" + std::to_string(a[1]) + "x" + std::to_string(a[2]);
    };
    return "cuLaunchKernel(" + kernel + ", grid " + dims(grid) + ", block " + dims(block) + ", " +
           std::to_string(shared_bytes) + " B dynamic shared)";
  }
};

template <typename T>
std::uint64_t to_slot(T v) {
  std::uint64_t slot = 0;
  std::memcpy(&slot, &v, sizeof v);
  return slot;
}

std::string gib_text(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes / static_cast<double>(kGiB));
  return buf;
}

}  // namespace

// ---- messages ------------------------------------------------------------------------------------------

void write_plan(Writer& w, const LaunchPlan& plan) {
  w.u64(plan.buffers.size());
  for (const auto& b : plan.buffers) {
    w.str(b.name);
    w.u64(b.bytes);
    w.u8(static_cast<std::uint8_t>(b.role));
  }
  w.u64(plan.steps.size());
  for (const auto& s : plan.steps) {
    w.u8(static_cast<std::uint8_t>(s.kind));
    w.str(s.kernel);
    for (auto v : s.grid) w.u32(v);
    for (auto v : s.block) w.u32(v);
    w.u32(s.shared_bytes);
    w.u64(s.args.size());
    for (const auto& a : s.args) {
      w.u8(static_cast<std::uint8_t>(a.kind));
      w.str(a.buffer);
      w.i64(a.i);
      w.f64(a.f);
      w.u64(a.offset_bytes);
    }
    w.str(s.buffer);
    w.u32(s.value);
    w.u64(s.count);
  }
}

LaunchPlan read_plan(Reader& r) {
  LaunchPlan plan;
  plan.buffers.resize(r.u64());
  for (auto& b : plan.buffers) {
    b.name = r.str();
    b.bytes = r.u64();
    const std::uint8_t role = r.u8();
    if (role > static_cast<std::uint8_t>(BufferRole::state))
      throw UsageError("launch plan buffer '" + b.name + "' has an unknown role " + std::to_string(role));
    b.role = static_cast<BufferRole>(role);
  }
  plan.steps.resize(r.u64());
  for (auto& s : plan.steps) {
    s.kind = static_cast<LaunchStep::Kind>(r.u8());
    s.kernel = r.str();
    for (auto& v : s.grid) v = r.u32();
    for (auto& v : s.block) v = r.u32();
    s.shared_bytes = r.u32();
    s.args.resize(r.u64());
    for (auto& a : s.args) {
      a.kind = static_cast<KernelArg::Kind>(r.u8());
      a.buffer = r.str();
      a.i = r.i64();
      a.f = r.f64();
      a.offset_bytes = r.u64();
    }
    s.buffer = r.str();
    s.value = r.u32();
    s.count = r.u64();
  }
  return plan;
}

void write_device(Writer& w, const DeviceInfo& d) {
  w.str(d.name);
  w.i32(d.cc);
  w.i32(d.sm_count);
  w.i32(d.max_threads_per_block);
  w.i32(d.max_shared_memory_per_block);
  w.i32(d.max_shared_memory_per_block_optin);
  w.i32(d.warp_size);
  w.i32(d.l2_bytes);
  w.u64(d.total_memory);
  w.i32(d.driver_version);
  w.str(d.uuid);
  w.i32(d.clock_khz);
  w.i32(d.memory_clock_khz);
  w.i32(d.memory_bus_width);
}

DeviceInfo read_device(Reader& r) {
  DeviceInfo d;
  d.name = r.str();
  d.cc = r.i32();
  d.sm_count = r.i32();
  d.max_threads_per_block = r.i32();
  d.max_shared_memory_per_block = r.i32();
  d.max_shared_memory_per_block_optin = r.i32();
  d.warp_size = r.i32();
  d.l2_bytes = r.i32();
  d.total_memory = r.u64();
  d.driver_version = r.i32();
  d.uuid = r.str();
  d.clock_khz = r.i32();
  d.memory_clock_khz = r.i32();
  d.memory_bus_width = r.i32();
  return d;
}

// ---- executor ------------------------------------------------------------------------------------------

struct Executor::State {
  const Driver* d = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;  // retained primary context
  CUstream stream = nullptr;
  CUevent ev_start = nullptr;
  CUevent ev_end = nullptr;
  DeviceInfo info;
  bool lost = false;

  SharedRegion region;                         // where verification outputs go
  struct HostInput {
    int fd = -1;  // the shared region that holds it for the problem's lifetime
    std::uint64_t region_bytes = 0, offset = 0, bytes = 0;
  };
  std::map<std::string, HostInput> inputs_host;  // for restore_inputs
  std::map<std::string, DeviceBuffer> inputs;  // exact sizes
  std::map<std::string, DeviceBuffer> work;    // outputs and scratch, reused while large enough
  DeviceBuffer flush;                          // 2x L2
  DeviceBuffer flush_sink;                     // 4 bytes the flush kernel could write
  CUmodule flush_module = nullptr;             // kL2FlushKernel, when the backend sent it
  CUfunction flush_fn = nullptr;
  CUmodule module = nullptr;
  LaunchPlan plan;                             // of the loaded module
  std::vector<ResolvedStep> steps;
  std::vector<double> samples_ms;              // of the timing request, reused
  std::vector<std::pair<CUevent, CUevent>> sample_events;  // start and end of each sample, created on demand

  ~State() {
    if (ctx == nullptr || lost) return;  // after a fault the context is unusable; the process ends soon
    d->ctx_set_current(ctx);
    unload_quietly();
    for (auto& [name, b] : inputs) free_quietly(b);
    for (auto& [name, b] : work) free_quietly(b);
    free_quietly(flush);
    free_quietly(flush_sink);
    if (flush_module != nullptr) d->module_unload(flush_module);
    for (auto& [start, end] : sample_events) {
      d->event_destroy(start);
      d->event_destroy(end);
    }
    if (ev_start) d->event_destroy(ev_start);
    if (ev_end) d->event_destroy(ev_end);
    if (stream) d->stream_destroy(stream);
    d->primary_ctx_release(dev);
  }

  void require_init() const {
    if (ctx == nullptr) throw EnvironmentError("GPU executor used before init");
  }

  void init(int ordinal) {
    if (ctx != nullptr) throw EnvironmentError("GPU executor initialised twice");
    d = &driver();
    info = query_device(ordinal);
    check(d->device_get(&dev, ordinal), "cuDeviceGet");
    check(d->primary_ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(d->ctx_set_current(ctx), "cuCtxSetCurrent");
    // A blocking stream: it orders after the legacy default stream, where cuMemsetD8 and the synchronous
    // copies run.
    check(d->stream_create(&stream, CU_STREAM_DEFAULT), "cuStreamCreate");
    check(d->event_create(&ev_start, CU_EVENT_DEFAULT), "cuEventCreate");
    check(d->event_create(&ev_end, CU_EVENT_DEFAULT), "cuEventCreate");
  }

  // -- buffers --

  void free_quietly(DeviceBuffer& b) noexcept {
    if (b.ptr != 0) d->mem_free(b.ptr);
    b = {};
  }

  DeviceBuffer allocate(std::size_t bytes) {
    DeviceBuffer b;
    check(d->mem_alloc(&b.ptr, std::max<std::size_t>(bytes, 4)), "cuMemAlloc");
    b.bytes = bytes;
    return b;
  }

  void ensure_work(const std::string& name, std::size_t bytes) {
    DeviceBuffer& b = work[name];
    if (b.ptr != 0 && b.bytes >= bytes) return;
    if (b.ptr != 0) check(d->mem_free(b.ptr), "cuMemFree");
    b = {};
    b = allocate(bytes);
  }

  void release() {
    unload();
    for (auto& [name, b] : inputs) {
      if (b.ptr != 0) check(d->mem_free(b.ptr), "cuMemFree");
    }
    for (auto& [name, b] : work) {
      if (b.ptr != 0) check(d->mem_free(b.ptr), "cuMemFree");
    }
    if (flush.ptr != 0) check(d->mem_free(flush.ptr), "cuMemFree");
    flush = {};
    inputs.clear();
    work.clear();
    inputs_host.clear();
  }

  /// An input buffer from the shared region to the device. The backend leaves it there for the problem's
  /// lifetime (outputs go after the inputs), so restore_inputs copies it again from there.
  void upload(Reader& r) {
    const std::string name = r.str();
    HostInput h;
    h.fd = r.i32();
    h.region_bytes = r.u64();
    h.offset = r.u64();
    h.bytes = r.u64();
    if (h.offset > h.region_bytes || h.bytes > h.region_bytes - h.offset)
      throw UsageError("input '" + name + "' lies beyond the shared region");
    const std::uint64_t bytes = h.bytes;
    const unsigned char* data = region.map(h.fd, h.region_bytes) + h.offset;
    DeviceBuffer& b = inputs[name];
    if (b.ptr != 0 && b.bytes != bytes) {
      check(d->mem_free(b.ptr), "cuMemFree");
      b = {};
    }
    if (b.ptr == 0) b = allocate(bytes);
    if (bytes != 0) check(d->memcpy_htod(b.ptr, data, bytes), "cuMemcpyHtoD");
    inputs_host[name] = h;
  }

  void restore_inputs() {
    for (const auto& [name, h] : inputs_host) {
      if (h.bytes == 0) continue;
      const unsigned char* data = region.map(h.fd, h.region_bytes) + h.offset;
      check(d->memcpy_htod(inputs.at(name).ptr, data, h.bytes), "cuMemcpyHtoD");
    }
  }

  CUdeviceptr buffer_ptr(const std::string& name, std::size_t offset, std::size_t access_bytes) {
    const BufferDecl* decl = plan.find(name);
    if (decl == nullptr) throw UsageError("launch plan refers to undeclared buffer '" + name + "'");
    if (offset > decl->bytes || access_bytes > decl->bytes - offset) {
      throw UsageError("launch plan accesses buffer '" + name + "' beyond its " + std::to_string(decl->bytes) +
                       " bytes");
    }
    const DeviceBuffer& b = decl->role == BufferRole::input ? inputs.at(name) : work.at(name);
    return b.ptr + offset;
  }

  // -- modules and runs --

  void unload() {
    steps.clear();
    if (module != nullptr) {
      CUmodule m = module;
      module = nullptr;
      check(d->module_unload(m), "cuModuleUnload");
    }
  }

  void unload_quietly() noexcept {
    steps.clear();
    if (module != nullptr && !lost) d->module_unload(module);
    module = nullptr;
  }

  /// Allocates the plan's buffers, loads the module, resolves its kernels and packs the arguments.
  void load(const std::vector<unsigned char>& cubin) {
    for (const auto& b : plan.buffers) {
      if (b.role == BufferRole::input) {
        auto it = inputs.find(b.name);
        if (it == inputs.end() || it->second.bytes < b.bytes) {
          throw UsageError("launch plan input buffer '" + b.name + "' (" + std::to_string(b.bytes) +
                           " bytes) was not provided by the adapter's make_inputs()");
        }
      } else {
        ensure_work(b.name, b.bytes);
      }
    }
    check(d->module_load_data(&module, cubin.data()), "cuModuleLoadData");

    std::map<std::string, CUfunction> functions;
    std::map<std::string, std::uint32_t> max_shared;
    for (const auto& s : plan.steps) {
      ResolvedStep r;
      r.kind = s.kind;
      if (s.kind == LaunchStep::Kind::memset32) {
        r.kernel = "memset32(" + s.buffer + ")";
        r.dst = buffer_ptr(s.buffer, 0, s.count * 4);
        r.value = s.value;
        r.count = s.count;
        steps.push_back(std::move(r));
        continue;
      }
      r.kernel = s.kernel;
      auto fit = functions.find(s.kernel);
      if (fit == functions.end()) {
        CUfunction fn = nullptr;
        CUresult res = d->module_get_function(&fn, module, s.kernel.c_str());
        if (res != CUDA_SUCCESS) throw_call_error(res, "cuModuleGetFunction(" + s.kernel + ")");
        fit = functions.emplace(s.kernel, fn).first;
      }
      r.fn = fit->second;
      r.grid = s.grid;
      r.block = s.block;
      r.shared_bytes = s.shared_bytes;
      auto& ms = max_shared[s.kernel];
      ms = std::max(ms, s.shared_bytes);
      for (const auto& a : s.args) {
        switch (a.kind) {
          case KernelArg::Kind::buffer:
            r.arg_storage.push_back(to_slot<CUdeviceptr>(buffer_ptr(a.buffer, a.offset_bytes, 0)));
            break;
          case KernelArg::Kind::i32: r.arg_storage.push_back(to_slot(static_cast<std::int32_t>(a.i))); break;
          case KernelArg::Kind::u32: r.arg_storage.push_back(to_slot(static_cast<std::uint32_t>(a.i))); break;
          case KernelArg::Kind::i64: r.arg_storage.push_back(to_slot(static_cast<std::int64_t>(a.i))); break;
          case KernelArg::Kind::u64: r.arg_storage.push_back(to_slot(static_cast<std::uint64_t>(a.i))); break;
          case KernelArg::Kind::f32: r.arg_storage.push_back(to_slot(static_cast<float>(a.f))); break;
          case KernelArg::Kind::f64: r.arg_storage.push_back(to_slot(static_cast<double>(a.f))); break;
        }
      }
      steps.push_back(std::move(r));
    }
    for (auto& s : steps) s.finalize();
    for (const auto& [kernel, bytes] : max_shared) {
      if (bytes <= kDefaultSharedLimit) continue;
      CUresult res = d->func_set_attribute(functions.at(kernel), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           static_cast<int>(bytes));
      if (res != CUDA_SUCCESS) {
        throw_call_error(res, "cuFuncSetAttribute(" + kernel + ", MAX_DYNAMIC_SHARED_SIZE_BYTES=" +
                                  std::to_string(bytes) + ")");
      }
    }
  }

  void run_steps() {
    for (auto& s : steps) {
      if (s.kind == LaunchStep::Kind::memset32) {
        CUresult r = d->memset_d32_async(s.dst, s.value, s.count, stream);
        if (r != CUDA_SUCCESS) throw_call_error(r, "cuMemsetD32Async(" + s.kernel + ")");
        continue;
      }
      CUresult r = d->launch_kernel(s.fn, s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2],
                                    s.shared_bytes, stream, s.arg_ptrs.empty() ? nullptr : s.arg_ptrs.data(),
                                    nullptr);
      if (r != CUDA_SUCCESS) throw_call_error(r, s.describe());
    }
  }

  void load_run(Reader& r, Writer& out) {
    unload();
    plan = read_plan(r);
    const std::vector<unsigned char> cubin = r.bytes();
    const int region_fd = r.i32();
    const std::uint64_t region_bytes = r.u64();
    const std::uint64_t outputs_at = r.u64();  // the inputs lie before this offset
    if (outputs_at > region_bytes || region_bytes - outputs_at < output_region_bytes(plan))
      throw UsageError("the shared output region is too small");
    unsigned char* base = region.map(region_fd, region_bytes);
    load(cubin);
    // memsets every kernel-state buffer (state = true) or every output and scratch buffer with `byte`;
    // returns whether there was such a buffer.
    auto fill = [&](bool state, unsigned char byte) {
      bool any = false;
      for (const auto& b : plan.buffers) {
        if (b.role == BufferRole::input || (b.role == BufferRole::state) != state || b.bytes == 0) continue;
        check(d->memset_d8(work.at(b.name).ptr, byte, b.bytes), "cuMemsetD8");
        any = true;
      }
      return any;
    };
    fill(false, kPoisonByte);
    if (fill(true, 0)) {
      // Kernel state starts zeroed once per loaded configuration; the kernels leave it ready for their next
      // run. The timed runs start from the state an earlier run left, so the verified run does too: one run
      // from the zeroed state, the outputs and scratch poisoned again, then the verified run.
      run_steps();
      check(d->stream_synchronize(stream), "cuStreamSynchronize");
      fill(false, kPoisonByte);
    }
    run_steps();
    check(d->stream_synchronize(stream), "cuStreamSynchronize");
    std::vector<const BufferDecl*> outputs;
    for (const auto& b : plan.buffers) {
      if (b.role == BufferRole::output) outputs.push_back(&b);
    }
    out.u64(outputs.size());
    std::size_t offset = outputs_at;
    for (const BufferDecl* b : outputs) {
      if (b->bytes != 0) check(d->memcpy_dtoh(base + offset, work.at(b->name).ptr, b->bytes), "cuMemcpyDtoH");
      out.str(b->name);
      out.u64(offset);
      out.u64(b->bytes);
      offset += (b->bytes + 63) / 64 * 64;
    }
  }

  void ensure_sample_events(std::size_t n) {
    while (sample_events.size() < n) {
      CUevent start = nullptr, end = nullptr;
      check(d->event_create(&start, CU_EVENT_DEFAULT), "cuEventCreate");
      if (CUresult res = d->event_create(&end, CU_EVENT_DEFAULT); res != CUDA_SUCCESS) {
        d->event_destroy(start);
        throw_call_error(res, "cuEventCreate");
      }
      sample_events.emplace_back(start, end);
    }
  }

  std::size_t flush_bytes() const {
    if (info.l2_bytes <= 0) return 0;
    return (2 * static_cast<std::size_t>(info.l2_bytes) + 3) / 4 * 4;
  }

  /// Warm-up, then samples between events, each after an L2 flush, until the SamplingRule says enough: a
  /// stable median, the GPU-time budget spent, or the most samples taken.
  void time(Reader& r, Writer& out) {
    const int warmup = std::max(0, r.i32());
    SamplingRule rule;
    rule.max_samples = std::max(1, r.i32());
    const bool flush_l2 = r.u8() != 0;
    rule.max_seconds = r.f64();
    rule.min_samples = r.i32();
    rule.stable_ci = r.f64();
    if (module == nullptr) throw EnvironmentError("GPU executor: time requested without a loaded module");
    if (flush_l2 && flush.ptr == 0 && flush_bytes() != 0) {
      flush = allocate(flush_bytes());
      check(d->memset_d32_async(flush.ptr, 0x3f800000u, flush.bytes / 4, stream), "cuMemsetD32Async");
    }
    for (int i = 0; i < warmup; ++i) run_steps();
    // The first min_samples samples are queued back to back with one synchronisation; after that one at a
    // time, since each further sample depends on whether the rule is satisfied.
    std::vector<double>& ms = samples_ms;
    ms.clear();
    const int first = std::max(1, std::min(rule.min_samples, rule.max_samples));
    auto queue_sample = [&](int i) {
      ensure_sample_events(static_cast<std::size_t>(i) + 1);
      if (flush_l2 && flush.ptr != 0) flush_l2_cache(static_cast<unsigned>(i));
      check(d->event_record(sample_events[i].first, stream), "cuEventRecord");
      run_steps();
      check(d->event_record(sample_events[i].second, stream), "cuEventRecord");
    };
    auto collect = [&](int from, int to) {
      check(d->event_synchronize(sample_events[to - 1].second), "cuEventSynchronize");
      for (int i = from; i < to; ++i) {
        float t = 0;
        check(d->event_elapsed_time(&t, sample_events[i].first, sample_events[i].second), "cuEventElapsedTime");
        ms.push_back(t);
      }
    };
    for (int i = 0; i < first; ++i) queue_sample(i);
    collect(0, first);
    for (int i = first; !rule.done(ms); ++i) {
      queue_sample(i);
      collect(i, i + 1);
    }
    unload();
    out.u64(ms.size());
    for (double t : ms) out.f64(t);
  }

  /// Evicts the L2 before a timed run: with the flush kernel, by reading the 2x L2 buffer (no dirty line is
  /// left to be written back during the timed run); without it, by overwriting the buffer with a memset.
  void flush_l2_cache(unsigned sample) {
    if (flush_fn == nullptr) {
      check(d->memset_d32_async(flush.ptr, 0x9e3779b9u + sample, flush.bytes / 4, stream),
            "cuMemsetD32Async(L2 flush)");
      return;
    }
    CUdeviceptr buffer = flush.ptr;
    unsigned long long n = flush.bytes / 16;
    CUdeviceptr sink = flush_sink.ptr;
    void* args[] = {&buffer, &n, &sink};
    const unsigned blocks = static_cast<unsigned>(std::max(1, info.sm_count) * 4);
    CUresult r = d->launch_kernel(flush_fn, blocks, 1, 1, 256, 1, 1, 0, stream, args, nullptr);
    if (r != CUDA_SUCCESS) throw_call_error(r, "cuLaunchKernel(L2 flush)");
  }

  void set_flush_kernel(const std::vector<unsigned char>& cubin) {
    if (flush_module != nullptr) {
      CUmodule m = flush_module;
      flush_module = nullptr;
      flush_fn = nullptr;
      check(d->module_unload(m), "cuModuleUnload");
    }
    check(d->module_load_data(&flush_module, cubin.data()), "cuModuleLoadData(L2 flush)");
    check(d->module_get_function(&flush_fn, flush_module, kL2FlushKernel), "cuModuleGetFunction(L2 flush)");
    if (flush_sink.ptr == 0) flush_sink = allocate(4);
  }

  double copy_bandwidth() {
    std::size_t free_bytes = 0, total_bytes = 0;
    check(d->mem_get_info(&free_bytes, &total_bytes), "cuMemGetInfo");
    const std::size_t bytes = std::min(kGiB, free_bytes / 4) / 256 * 256;
    if (bytes < 16 * kMiB) {
      throw EnvironmentError("too little free device memory (" + gib_text(static_cast<double>(free_bytes)) +
                             " GiB) to measure the copy bandwidth");
    }
    struct FreeOnExit {
      State& self;
      DeviceBuffer& buffer;
      ~FreeOnExit() { self.free_quietly(buffer); }
    };
    DeviceBuffer src, dst;
    FreeOnExit free_src{*this, src}, free_dst{*this, dst};
    src = allocate(bytes);
    dst = allocate(bytes);
    check(d->memset_d32_async(src.ptr, 0x3f800000u, bytes / 4, stream), "cuMemsetD32Async");
    for (int i = 0; i < kCopyWarmup; ++i) {
      check(d->memcpy_dtod_async(dst.ptr, src.ptr, bytes, stream), "cuMemcpyDtoDAsync");
    }
    std::vector<double> ms;
    for (int i = 0; i < kCopySamples; ++i) {
      check(d->event_record(ev_start, stream), "cuEventRecord");
      check(d->memcpy_dtod_async(dst.ptr, src.ptr, bytes, stream), "cuMemcpyDtoDAsync");
      check(d->event_record(ev_end, stream), "cuEventRecord");
      check(d->event_synchronize(ev_end), "cuEventSynchronize");
      float t = 0;
      check(d->event_elapsed_time(&t, ev_start, ev_end), "cuEventElapsedTime");
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double median_ms = 0.5 * (ms[(ms.size() - 1) / 2] + ms[ms.size() / 2]);
    if (!(median_ms > 0)) throw EnvironmentError("copy bandwidth measurement gave a zero time");
    return 2.0 * static_cast<double>(bytes) / (median_ms * 1e-3) / 1e9;
  }

  void dispatch(Op op, Reader& r, Writer& out) {
    if (op == Op::init) {
      init(r.i32());
      write_device(out, info);
      return;
    }
    if (op == Op::quit) return;
    require_init();
    check(d->ctx_set_current(ctx), "cuCtxSetCurrent");
    switch (op) {
      case Op::mem_info: {
        std::size_t free_bytes = 0, total_bytes = 0;
        check(d->mem_get_info(&free_bytes, &total_bytes), "cuMemGetInfo");
        out.u64(free_bytes);
        out.u64(total_bytes);
        return;
      }
      case Op::release: release(); return;
      case Op::upload: upload(r); return;
      case Op::restore_inputs: restore_inputs(); return;
      case Op::load_run: load_run(r, out); return;
      case Op::time: time(r, out); return;
      case Op::unload: unload(); return;
      case Op::copy_bandwidth: out.f64(copy_bandwidth()); return;
      case Op::flush_kernel: set_flush_kernel(r.bytes()); return;
      default: throw EnvironmentError("GPU executor: unknown request " + std::to_string(static_cast<int>(op)));
    }
  }
};

Executor::Executor() : s_(std::make_unique<State>()) {}
Executor::~Executor() = default;
bool Executor::lost() const { return s_->lost; }

std::string Executor::handle(const std::string& request) {
  Writer body;
  auto error_reply = [](ReplyStatus status, const std::string& message) {
    Writer w;
    w.u8(static_cast<std::uint8_t>(status));
    w.str(message);
    return std::move(w.buffer());
  };
  try {
    if (s_->lost) {
      return error_reply(ReplyStatus::environment_error,
                         "this process cannot use the GPU any more: a kernel caused a sticky fault earlier");
    }
    Reader r(request);
    const auto op = static_cast<Op>(r.u8());
    body.u8(static_cast<std::uint8_t>(ReplyStatus::ok));
    s_->dispatch(op, r, body);
    return std::move(body.buffer());
  } catch (const CudaCallError& e) {
    CUresult code = e.code();
    std::string message = e.what();
    if (!is_sticky(code) && s_->ctx != nullptr) {
      // A synchronous launch error can leave earlier steps in flight: drain them; a fault they caused
      // makes this a sticky error.
      CUresult r = s_->d->ctx_synchronize();
      if (is_sticky(r)) {
        message += "; then cuCtxSynchronize failed: " + error_text(r);
        code = r;
      }
    }
    if (is_sticky(code)) {
      s_->lost = true;
      s_->module = nullptr;
      s_->steps.clear();
    } else {
      s_->unload_quietly();
    }
    Writer w;
    w.u8(static_cast<std::uint8_t>(ReplyStatus::cuda_error));
    w.i32(static_cast<std::int32_t>(code));
    w.u8(is_sticky(code) ? 1 : 0);
    w.str(message);
    return std::move(w.buffer());
  } catch (const UsageError& e) {
    s_->unload_quietly();
    return error_reply(ReplyStatus::usage_error, e.what());
  } catch (const std::exception& e) {
    s_->unload_quietly();
    return error_reply(ReplyStatus::environment_error, e.what());
  }
}

// ---- L2 flush kernel ---------------------------------------------------------------------------------

const char* l2_flush_source() {
  return R"(
extern "C" __global__ void autotune_l2_flush(const uint4* __restrict__ buffer, unsigned long long n,
                                             unsigned* sink) {
  unsigned acc = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    const uint4 v = __ldcg(buffer + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x2545f491u) *sink = acc;  // keeps the loads; the buffer's pattern never gives this value
}
)";
}

// ---- shared output region --------------------------------------------------------------------------

SharedRegion::~SharedRegion() {
  if (base_ != nullptr) ::munmap(base_, mapped_bytes_);
  if (owned_ && fd_ >= 0) ::close(fd_);
}

void SharedRegion::create() {
  if (fd_ >= 0) return;
  fd_ = ::memfd_create("autotune-outputs", MFD_CLOEXEC);
  if (fd_ < 0) throw EnvironmentError(std::string("memfd_create for the output region failed: ") + std::strerror(errno));
  owned_ = true;
}

void SharedRegion::reserve(std::size_t bytes) {
  if (!owned_) throw EnvironmentError("SharedRegion::reserve on a region this process does not own");
  if (bytes <= file_bytes_) return;
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
    throw EnvironmentError("cannot grow the output region to " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
  }
  file_bytes_ = bytes;
}

unsigned char* SharedRegion::map(int fd, std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  if (base_ != nullptr && fd == mapped_fd_ && bytes <= mapped_bytes_) return static_cast<unsigned char*>(base_);
  if (base_ != nullptr) ::munmap(base_, mapped_bytes_);
  base_ = nullptr;
  mapped_bytes_ = 0;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw EnvironmentError(std::string("cannot map the output region: ") + std::strerror(errno));
  base_ = p;
  mapped_bytes_ = bytes;
  mapped_fd_ = fd;
  return static_cast<unsigned char*>(base_);
}

std::size_t output_region_bytes(const LaunchPlan& plan) {
  std::size_t total = 0;
  for (const auto& b : plan.buffers) {
    if (b.role == BufferRole::output) total += (b.bytes + 63) / 64 * 64;
  }
  return std::max<std::size_t>(total, 64);
}

// ---- framing and the worker process --------------------------------------------------------------------

bool send_frame(int fd, const std::string& payload) {
  std::string frame(sizeof(std::uint64_t), '\0');
  const std::uint64_t n = payload.size();
  std::memcpy(frame.data(), &n, sizeof n);
  auto send_all = [fd](const char* p, std::size_t len) {
    while (len > 0) {
      ssize_t k = ::send(fd, p, len, MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return false;
      p += k;
      len -= static_cast<std::size_t>(k);
    }
    return true;
  };
  return send_all(frame.data(), frame.size()) && send_all(payload.data(), payload.size());
}

RecvResult recv_frame(int fd, std::string& payload, double timeout_s) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                           std::chrono::duration<double>(timeout_s > 0 ? timeout_s : 0));
  auto recv_all = [&](char* p, std::size_t len) -> RecvResult {
    while (len > 0) {
      if (timeout_s > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        if (left <= 0) return RecvResult::timeout;
        pollfd pfd{fd, POLLIN, 0};
        int pr = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) return RecvResult::timeout;
        if (pr < 0) return RecvResult::closed;
      }
      ssize_t k = ::recv(fd, p, len, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return RecvResult::closed;
      p += k;
      len -= static_cast<std::size_t>(k);
    }
    return RecvResult::ok;
  };
  std::uint64_t n = 0;
  RecvResult res = recv_all(reinterpret_cast<char*>(&n), sizeof n);
  if (res != RecvResult::ok) return res;
  payload.assign(n, '\0');
  return n == 0 ? RecvResult::ok : recv_all(payload.data(), n);
}

int worker_main(int fd) {
  Executor executor;
  std::string request;
  for (;;) {
    if (recv_frame(fd, request, 0) != RecvResult::ok) return 0;  // the backend went away
    const bool quit = !request.empty() && static_cast<Op>(request[0]) == Op::quit;
    const std::string reply = executor.handle(request);
    if (!send_frame(fd, reply)) return 0;
    // After a sticky fault the process is useless; exiting lets the driver clean up.
    if (quit || executor.lost()) return executor.lost() ? 3 : 0;
  }
}

WorkerProcess spawn_helper(const char* env_var, const char* what, const std::string& hint, int region_fd) {
  const std::string name(what);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    throw EnvironmentError("cannot start " + name + ": socketpair failed: " + std::strerror(errno));
  }
  // Move the helper's end above kWorkerFd so that dup2 onto kWorkerFd cannot clobber it.
  int child_end = ::fcntl(sv[1], F_DUPFD_CLOEXEC, kWorkerFd + 1);
  ::close(sv[1]);
  if (child_end < 0) {
    ::close(sv[0]);
    throw EnvironmentError("cannot start " + name + ": fcntl failed: " + std::strerror(errno));
  }
  // Likewise the region's copy lies above both targets (kWorkerRegionFd < kWorkerFd < child_end).
  int region_copy = -1;
  if (region_fd >= 0) {
    region_copy = ::fcntl(region_fd, F_DUPFD_CLOEXEC, kWorkerFd + 1);
    if (region_copy < 0) {
      ::close(sv[0]);
      ::close(child_end);
      throw EnvironmentError("cannot start " + name + ": fcntl failed: " + std::strerror(errno));
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_end, kWorkerFd);  // dup2 clears FD_CLOEXEC
  if (region_copy >= 0) posix_spawn_file_actions_adddup2(&actions, region_copy, kWorkerRegionFd);

  const std::string prefix = std::string(env_var) + "=";
  std::vector<std::string> env_store;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) env_store.emplace_back(*e);
  }
  env_store.push_back(prefix + std::to_string(kWorkerFd));
  std::vector<char*> envp;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  char arg0[] = "autotune-cuda-worker";
  char* argv[] = {arg0, nullptr};

  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(child_end);
  if (region_copy >= 0) ::close(region_copy);
  if (rc != 0) {
    ::close(sv[0]);
    throw EnvironmentError("cannot start " + name + " (/proc/self/exe): " + std::strerror(rc) + hint);
  }
  return WorkerProcess{pid, sv[0]};
}

namespace {
std::string wait_status_text(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}
}  // namespace

std::string stop_helper(WorkerProcess& p, bool kill_now) {
  if (p.pid <= 0) return "not running";
  if (kill_now) ::kill(p.pid, SIGKILL);
  ::close(p.fd);  // the helper sees EOF and exits
  int status = 0;
  std::string how = "unknown";
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const pid_t r = ::waitpid(p.pid, &status, WNOHANG);
    if (r == p.pid) {
      how = wait_status_text(status);
      break;
    }
    if (r < 0) break;  // e.g. SIGCHLD ignored by the host program: nothing to reap
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5)) {
      ::kill(p.pid, SIGKILL);
      if (::waitpid(p.pid, &status, 0) == p.pid) how = wait_status_text(status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  p = {};
  return how;
}

void serve_as_helper(const char* env_var, int (*serve)(int fd)) {
  const char* env = std::getenv(env_var);
  if (env == nullptr) return;
  const int fd = std::atoi(env);
  ::unsetenv(env_var);
  // No PR_SET_PDEATHSIG: it fires when the spawning *thread* ends. The helper ends on EOF instead.
  const int code = serve(fd);
  std::fflush(stderr);
  std::_Exit(code);
}

WorkerProcess spawn_worker(int region_fd) {
  return spawn_helper(kWorkerEnv, "the GPU worker", "; TimingOptions::isolate = false runs GPU work in-process instead",
                      region_fd);
}

namespace {

// Runs before main() in a process started by spawn_worker(): serve, then exit without running the host
// program. Only this file's code and the C/C++ runtime are used, so static initialisation order of other
// translation units does not matter.
struct WorkerHook {
  WorkerHook() { serve_as_helper(kWorkerEnv, worker_main); }
};
WorkerHook worker_hook;

}  // namespace
}  // namespace autotune::cuda::detail
