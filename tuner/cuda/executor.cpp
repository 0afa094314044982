// GPU side of the CUDA backend: buffers, module loading, poisoned verification runs with comparison kernels,
// event timing (see executor.hpp).
#include "tuner/cuda/executor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <variant>
#include <vector>

#include "tuner/core/stats.hpp"
#include "tuner/core/text.hpp"
#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/driver.hpp"
#include "tuner/cuda/host_copy.hpp"
#include "tuner/cuda/messages.hpp"
#include "tuner/cuda/observer.hpp"
#include "tuner/cuda/plan_binding.hpp"
#include "tuner/cuda/worker_process.hpp"

namespace autotune::cuda::detail {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kGiB = std::size_t{1} << 30;
constexpr int kCopyWarmup = 3;
constexpr int kCopySamples = 15;
constexpr unsigned char kPoisonByte = 0xFF;  // NaN for floats, -1 for signed integers
/// Most runs of one energy window (a kernel of 1 us at a 100 ms window needs 10^5).
constexpr std::uint64_t kMaxEnergyRuns = 1000000;
// Uploads from this size on go through pinned staging buffers of kStageBytes each (Executor::State::copy_to_device).
constexpr std::size_t kStageFrom = std::size_t{64} << 20;
constexpr std::size_t kStageBytes = std::size_t{64} << 20;

struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  std::size_t bytes = 0;  // allocated size
};

}  // namespace

struct Executor::State {
  const Driver* d = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;  // retained primary context
  CUstream stream = nullptr;
  CUevent ev_start = nullptr;
  CUevent ev_end = nullptr;
  DeviceInfo info;
  bool lost = false;

  SharedRegion region;  // inputs, expected values and verification outputs travel through it
  struct HostInput {
    int fd = -1;  // the shared region that holds it for the problem's lifetime
    std::uint64_t region_bytes = 0, offset = 0, bytes = 0;
  };
  /// Where restore_inputs() takes each input from again: the shared region or the draw kernel.
  std::map<std::string, std::variant<HostInput, DrawRecipe>> input_sources;
  std::map<std::string, DeviceBuffer> inputs;    // exact sizes
  std::map<std::string, DeviceBuffer> expected;  // expected values of the comparison kernels, exact sizes
  std::map<std::string, DeviceBuffer> work;      // outputs and scratch, reused while large enough
  DeviceBuffer flush;                            // 2x L2
  DeviceBuffer flush_sink;                       // 4 bytes the flush kernel could write
  DeviceBuffer compare_results;                  // 2 x kCompareMaxBlocks u64
  CUmodule tools = nullptr;                      // device_kernels.hpp, when the backend sent them
  CUfunction flush_fn = nullptr;
  CUfunction draw_fn = nullptr;
  CUfunction prefix_fns[3] = {};                  // totals, carries, write
  std::map<std::string, CUfunction> compare_fns;  // by entry point, resolved on first use
  CUmodule user_compare = nullptr;               // the user's comparison kernels, when the backend sent them
  std::map<std::string, CUfunction> user_compare_fns;  // by entry point, resolved on first use
  CUmodule module = nullptr;
  LaunchPlan plan;                               // of the loaded module
  BoundPlan bound;
  std::vector<std::uintptr_t> addresses;         // of plan.buffers, in order (CUdeviceptr values)
  std::vector<double> samples_ms;                // of the timing request, reused
  std::vector<std::pair<CUevent, CUevent>> sample_events;  // start and end of each sample, created on demand
  // Uploads of kStageFrom bytes and more go through two pinned buffers (made on the first such upload): the next
  // piece is copied in while the last one is on its way to the device.
  void* stage[2] = {nullptr, nullptr};
  CUevent stage_free[2] = {nullptr, nullptr};
  std::unique_ptr<Observer> observer;            // NVML, opened on the first observed timing
  bool observer_tried = false;
  std::string observer_note;                     // why there is no observer

  ~State() {
    observer.reset();
    if (ctx == nullptr || lost) return;  // after a fault the context is unusable; the process ends soon
    d->ctx_set_current(ctx);
    unload_quietly();
    for (auto* group : {&inputs, &expected, &work})
      for (auto& [name, b] : *group) free_quietly(b);
    for (DeviceBuffer* b : {&flush, &flush_sink, &compare_results}) free_quietly(*b);
    if (tools != nullptr) d->module_unload(tools);
    if (user_compare != nullptr) d->module_unload(user_compare);
    for (auto& [start, end] : sample_events) {
      d->event_destroy(start);
      d->event_destroy(end);
    }
    for (int i = 0; i < 2; ++i) {
      if (stage[i] != nullptr) d->mem_free_host(stage[i]);
      if (stage_free[i] != nullptr) d->event_destroy(stage_free[i]);
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

  void free_checked(DeviceBuffer& b) {
    if (b.ptr != 0) check(d->mem_free(b.ptr), "cuMemFree");
    b = {};
  }

  DeviceBuffer allocate(std::size_t bytes) {
    DeviceBuffer b;
    check(d->mem_alloc(&b.ptr, std::max<std::size_t>(bytes, 4)), "cuMemAlloc");
    b.bytes = bytes;
    return b;
  }

  /// A device buffer for the length of one request.
  struct Scratch {
    State& self;
    DeviceBuffer buffer;
    ~Scratch() { self.free_quietly(buffer); }
  };

  /// b at exactly `bytes` (freed and allocated again when its size differs); its contents are undefined.
  DeviceBuffer& exact_size(DeviceBuffer& b, std::size_t bytes) {
    if (b.ptr != 0 && b.bytes != bytes) free_checked(b);
    if (b.ptr == 0) b = allocate(bytes);
    return b;
  }

  void ensure_work(const std::string& name, std::size_t bytes) {
    DeviceBuffer& b = work[name];
    if (b.ptr != 0 && b.bytes >= bytes) return;
    free_checked(b);
    b = allocate(bytes);
  }

  void release() {
    unload();
    for (auto* group : {&inputs, &expected, &work}) {
      for (auto& [name, b] : *group) free_checked(b);
      group->clear();
    }
    free_checked(flush);
    input_sources.clear();
  }

  /// An input (kept in the shared region for restore_inputs) or expected values (the region may be reused)
  /// from the shared region to the device.
  void upload(const UploadRequest& q) {
    if (q.offset > q.region_bytes || q.bytes > q.region_bytes - q.offset)
      throw UsageError("buffer '" + q.name + "' lies beyond the shared region");
    const unsigned char* data = region.map(q.fd, q.region_bytes) + q.offset;
    DeviceBuffer& b = exact_size(q.expected ? expected[q.name] : inputs[q.name], q.bytes);
    copy_to_device(b.ptr, data, q.bytes);
    if (!q.expected) input_sources[q.name] = HostInput{q.fd, q.region_bytes, q.offset, q.bytes};
  }

  /// An input drawn on the device by the draw kernel; replies with its chunks' summaries.
  DrawRequest::Reply draw(const DrawRecipe& r) {
    if (draw_fn == nullptr) throw UsageError("input '" + r.name + "' cannot be drawn: the tool kernels are not loaded");
    if (r.count == 0 || r.chunk == 0)
      throw UsageError("input '" + r.name + "': a draw needs elements and a chunk size");
    DeviceBuffer& b = exact_size(inputs[r.name], r.bytes());
    input_sources[r.name] = r;
    const std::size_t words = static_cast<std::size_t>(r.chunks()) * kDrawSummaryWords;
    Scratch summary{*this, allocate(words * 8)};
    launch_draw(b.ptr, r, summary.buffer.ptr);
    std::vector<std::uint64_t> host(words);
    check(d->memcpy_dtoh(host.data(), summary.buffer.ptr, words * 8), "cuMemcpyDtoH(draw summaries)");
    DrawRequest::Reply reply;
    reply.chunks.resize(static_cast<std::size_t>(r.chunks()));
    for (std::size_t c = 0; c < reply.chunks.size(); ++c) {
      const std::uint64_t* w = host.data() + c * kDrawSummaryWords;
      DrawChunk& out = reply.chunks[c];
      double* doubles[] = {&out.sum, &out.comp, &out.max_abs, &out.min, &out.max};
      for (int k = 0; k < 5; ++k) std::memcpy(doubles[k], w + k, 8);
      out.hash = w[5];
      out.wrapped = static_cast<std::uint32_t>(w[6]);
    }
    return reply;
  }

  /// The expected values of a prefix scan of an input on the device (device_kernels.hpp's prefix kernels).
  PrefixRequest::Reply prefix(const PrefixRecipe& r) {
    if (prefix_fns[0] == nullptr)
      throw UsageError("expected values '" + r.values + "' cannot be made: the tool kernels are not loaded");
    auto in = inputs.find(r.input);
    if (in == inputs.end() || in->second.bytes != r.bytes() || r.chunk == 0 || r.values.empty() ||
        r.float_sum() == r.tolerance.empty())
      throw UsageError("expected values '" + r.values + "': no input '" + r.input + "' of " + std::to_string(r.count) +
                       " elements on the device, or a malformed prefix recipe");
    CUdeviceptr src = in->second.ptr, values = exact_size(expected[r.values], r.bytes()).ptr, tolerance = 0;
    if (r.float_sum()) tolerance = exact_size(expected[r.tolerance], r.bytes()).ptr;
    unsigned long long count = r.count, chunk = r.chunk, chunks = r.chunks();
    int elem = static_cast<int>(r.elem), is_max = r.max ? 1 : 0, exclusive = r.exclusive ? 1 : 0;
    double scale = r.scale;
    Scratch state{*this, allocate(static_cast<std::size_t>(chunks) * kPrefixStateWords * 8)};
    CUdeviceptr carries = state.buffer.ptr;
    void* totals_args[] = {&src, &count, &chunk, &elem, &is_max, &carries};
    void* carries_args[] = {&carries, &chunks, &elem, &is_max};
    void* write_args[] = {&src, &values, &tolerance, &count, &chunk, &elem, &is_max, &exclusive, &scale, &carries};
    const auto blocks = static_cast<unsigned>((chunks + kDrawBlockThreads - 1) / kDrawBlockThreads);
    const std::pair<unsigned, void**> launches[] = {{blocks, totals_args}, {1, carries_args}, {blocks, write_args}};
    for (int k = 0; k < 3; ++k) {
      CUresult e = d->launch_kernel(prefix_fns[k], launches[k].first, 1, 1, kDrawBlockThreads, 1, 1, 0, stream,
                                    launches[k].second, nullptr);
      if (e != CUDA_SUCCESS) throw_call_error(e, "cuLaunchKernel(prefix)");
    }
    PrefixRequest::Reply reply;
    std::vector<std::uint64_t> words(static_cast<std::size_t>(chunks) * kPrefixStateWords);
    check(d->memcpy_dtoh(words.data(), carries, words.size() * 8), "cuMemcpyDtoH(prefix hashes)");
    for (std::size_t c = 0; c < chunks; ++c) reply.hashes.push_back(words[c * kPrefixStateWords]);
    return reply;
  }

  /// Runs the draw kernel for r into dst and waits for it (summary 0: no summaries).
  void launch_draw(CUdeviceptr dst, const DrawRecipe& r, CUdeviceptr summary) {
    unsigned long long count = r.count, chunk = r.chunk, seed = r.seed;
    int kind = static_cast<int>(r.kind), sum = r.sum ? 1 : 0;
    long long lo = r.lo, hi = r.hi;
    void* args[] = {&dst, &count, &chunk, &seed, &kind, &lo, &hi, &sum, &summary};
    const unsigned blocks = static_cast<unsigned>((r.chunks() + kDrawBlockThreads - 1) / kDrawBlockThreads);
    CUresult e = d->launch_kernel(draw_fn, blocks, 1, 1, kDrawBlockThreads, 1, 1, 0, stream, args, nullptr);
    if (e != CUDA_SUCCESS) throw_call_error(e, "cuLaunchKernel(draw)");
    check(d->stream_synchronize(stream), "cuStreamSynchronize(draw)");
  }

  /// Host (the shared region: pageable memory) to device. From kStageFrom bytes on, in pieces of kStageBytes through
  /// the two pinned staging buffers: a pageable copy runs at a fraction of the link's speed (0.41 s for 1 GB of
  /// inputs on an H100 host), a pinned one at its full speed, and the pieces are copied in on several threads
  /// while the previous one travels.
  void copy_to_device(CUdeviceptr dst, const unsigned char* src, std::size_t bytes) {
    if (bytes < kStageFrom) {
      if (bytes != 0) check(d->memcpy_htod(dst, src, bytes), "cuMemcpyHtoD");
      return;
    }
    for (int i = 0; i < 2; ++i) {
      if (stage[i] == nullptr) check(d->mem_alloc_host(&stage[i], kStageBytes), "cuMemAllocHost");
      if (stage_free[i] == nullptr) check(d->event_create(&stage_free[i], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    }
    std::size_t piece = 0;
    for (std::size_t at = 0; at < bytes; at += kStageBytes, ++piece) {
      const std::size_t n = std::min(kStageBytes, bytes - at);
      const int i = static_cast<int>(piece % 2);
      if (piece >= 2) check(d->event_synchronize(stage_free[i]), "cuEventSynchronize");  // its last piece has left
      parallel_copy(static_cast<unsigned char*>(stage[i]), src + at, n);
      check(d->memcpy_htod_async(dst + at, stage[i], n, stream), "cuMemcpyHtoDAsync");
      check(d->event_record(stage_free[i], stream), "cuEventRecord");
    }
    check(d->stream_synchronize(stream), "cuStreamSynchronize");
  }

  void restore_inputs() {
    for (const auto& [name, source] : input_sources) {
      const CUdeviceptr ptr = inputs.at(name).ptr;
      if (const auto* r = std::get_if<DrawRecipe>(&source)) {
        launch_draw(ptr, *r, 0);
      } else if (const auto& h = std::get<HostInput>(source); h.bytes != 0) {
        copy_to_device(ptr, region.map(h.fd, h.region_bytes) + h.offset, h.bytes);
      }
    }
  }

  // -- modules and runs --

  void unload() {
    bound.steps.clear();
    if (module != nullptr) {
      CUmodule m = module;
      module = nullptr;
      check(d->module_unload(m), "cuModuleUnload");
    }
  }

  void unload_quietly() noexcept {
    bound.steps.clear();
    if (module != nullptr && !lost) d->module_unload(module);
    module = nullptr;
  }

  /// Allocates the plan's buffers, loads the module and binds the plan to it.
  void load(const std::vector<unsigned char>& cubin) {
    addresses.clear();
    for (const auto& b : plan.buffers) {
      if (b.role == BufferRole::input) {
        auto it = inputs.find(b.name);
        if (it == inputs.end() || it->second.bytes < b.bytes) {
          throw UsageError("launch plan input buffer '" + b.name + "' (" + std::to_string(b.bytes) +
                           " bytes) was not provided by the adapter's make_inputs()");
        }
        addresses.push_back(it->second.ptr);
      } else {
        ensure_work(b.name, b.bytes);
        addresses.push_back(work.at(b.name).ptr);
      }
    }
    check(d->module_load_data(&module, cubin.data()), "cuModuleLoadData");
    bound = bind_plan(*d, module, plan);
    copy_constants(*d, bind_constants(*d, module, plan), addresses.data(), stream);  // __constant__ inputs
  }

  void run_steps() { enqueue(*d, bound, addresses.data(), stream); }

  /// memsets every kernel-state buffer (state = true) or every output and scratch buffer with `byte` (an output
  /// with an initial input gets a copy of that input instead); returns whether there was such a buffer.
  bool fill(bool state, unsigned char byte) {
    bool any = false;
    for (const auto& b : plan.buffers) {
      if (b.role == BufferRole::input || (b.role == BufferRole::state) != state || b.bytes == 0) continue;
      if (!b.initial.empty()) {
        auto it = inputs.find(b.initial);
        if (it == inputs.end() || it->second.bytes < b.bytes)
          throw UsageError("the initial values '" + b.initial + "' of output '" + b.name + "' were not uploaded");
        check(d->memcpy_dtod_async(work.at(b.name).ptr, it->second.ptr, b.bytes, stream), "cuMemcpyDtoDAsync");
      } else {
        check(d->memset_d8(work.at(b.name).ptr, byte, b.bytes), "cuMemsetD8");
      }
      any = true;
    }
    return any;
  }

  LoadRunRequest::Reply load_run(LoadRunRequest& q) {
    unload();
    plan = std::move(q.plan);
    if (q.copy_outputs && (q.outputs_at > q.region_bytes || q.region_bytes - q.outputs_at < output_region_bytes(plan)))
      throw UsageError("the shared output region is too small");
    load(q.cubin);
    if (fill(true, 0)) {
      // Kernel state starts zeroed once per loaded configuration; the kernels leave it ready for their next
      // run. The timed runs start from the state an earlier run left, so the verified run does too: one run
      // from the zeroed state, then the outputs and scratch poisoned, then the verified run.
      run_steps();
      check(d->stream_synchronize(stream), "cuStreamSynchronize");
    }
    fill(false, kPoisonByte);
    run_steps();
    check(d->stream_synchronize(stream), "cuStreamSynchronize");
    LoadRunRequest::Reply reply;
    if (q.copy_outputs) reply.outputs = copy_outputs(q.fd, q.region_bytes, q.outputs_at);
    for (const OutputCheck& c : q.checks) reply.verdicts.push_back(compare(c));
    return reply;
  }

  std::vector<OutputPlace> copy_outputs(int fd, std::uint64_t region_bytes, std::uint64_t outputs_at) {
    unsigned char* base = region.map(fd, region_bytes);
    std::vector<OutputPlace> places;
    std::size_t offset = outputs_at;
    for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
      const BufferDecl& b = plan.buffers[i];
      if (b.role != BufferRole::output) continue;
      if (b.bytes != 0)
        check(d->memcpy_dtoh(base + offset, static_cast<CUdeviceptr>(addresses[i]), b.bytes), "cuMemcpyDtoH");
      places.push_back({b.name, offset, b.bytes});
      offset += (b.bytes + 63) / 64 * 64;
    }
    return places;
  }

  // -- comparison kernels --

  CUfunction compare_function(const OutputCheck& c) {
    if (c.kind == OutputCheck::Kind::user_kernel) {
      if (user_compare == nullptr)
        throw EnvironmentError("GPU executor: comparison kernel '" + c.kernel + "' requested before its module");
      auto it = user_compare_fns.find(c.kernel);
      if (it != user_compare_fns.end()) return it->second;
      return user_compare_fns.emplace(c.kernel, resolve_function(*d, user_compare, c.kernel)).first->second;
    }
    if (tools == nullptr) throw EnvironmentError("GPU executor: a comparison was requested before the tool kernels");
    const std::string name = compare_kernel_name(c);
    auto it = compare_fns.find(name);
    if (it != compare_fns.end()) return it->second;
    CUfunction fn = nullptr;
    check(d->module_get_function(&fn, tools, name.c_str()), "cuModuleGetFunction(comparison kernel)");
    return compare_fns.emplace(name, fn).first->second;
  }

  const DeviceBuffer& expected_buffer(const std::string& name) const {
    auto it = expected.find(name);
    if (it == expected.end()) throw UsageError("expected values '" + name + "' were not uploaded");
    return it->second;
  }

  /// Runs the comparison kernel of c on the loaded plan's output and brings back its verdict: the count of
  /// mismatches and, for the first mismatch of each of the first regions that have one, the elements.
  CheckVerdict compare(const OutputCheck& c) {
    const BufferDecl* out = plan.find(c.output);
    if (out == nullptr || out->role != BufferRole::output)
      throw UsageError("comparison of '" + c.output + "': not an output buffer of the launch plan");
    const auto got = static_cast<CUdeviceptr>(addresses[static_cast<std::size_t>(out - plan.buffers.data())]);
    const DeviceBuffer& want = expected_buffer(c.expected);
    const DeviceBuffer* tol = c.kind == OutputCheck::Kind::abs_tolerance ? &expected_buffer(c.tolerance) : nullptr;
    c.validate(out->bytes, want.bytes, tol != nullptr ? tol->bytes : 0);
    CheckVerdict v;
    if (c.count == 0) return v;
    if (compare_results.ptr == 0) compare_results = allocate(2 * kCompareMaxBlocks * sizeof(std::uint64_t));
    if (c.kind == OutputCheck::Kind::user_kernel) return compare_by_user_kernel(c, got, want.ptr);
    const std::uint64_t blocks =
        std::clamp<std::uint64_t>((c.count + kCompareMinChunk - 1) / kCompareMinChunk, 1, kCompareMaxBlocks);
    std::uint64_t chunk = (c.count + blocks - 1) / blocks;
    CUdeviceptr got_arg = got, want_arg = want.ptr, tol_arg = tol != nullptr ? tol->ptr : 0;
    unsigned long long count = c.count;
    unsigned es = c.element_bytes;
    double relative = c.relative, absolute = c.absolute;
    CUdeviceptr results = compare_results.ptr;
    void* args[] = {&got_arg, &want_arg, &tol_arg, &count, &chunk, &es, &relative, &absolute, &results};
    const CUresult r = d->launch_kernel(compare_function(c), static_cast<unsigned>(blocks), 1, 1, kCompareBlockThreads,
                                        1, 1, 0, stream, args, nullptr);
    if (r != CUDA_SUCCESS) throw_call_error(r, "cuLaunchKernel(" + compare_kernel_name(c) + ")");
    std::vector<std::uint64_t> per_block(2 * blocks);
    check(d->memcpy_dtoh(per_block.data(), results, per_block.size() * sizeof(std::uint64_t)), "cuMemcpyDtoH");
    for (std::uint64_t b = 0; b < blocks; ++b) {
      if (per_block[2 * b] == 0) continue;
      v.mismatches += per_block[2 * b];
      if (v.examples.size() < kMaxMismatchExamples)
        v.examples.push_back(example(c, got, want.ptr, tol, per_block[2 * b + 1]));
    }
    return v;
  }

  /// The user's comparison kernel on got and want (kUserCompareContract): its mismatch count and the element
  /// at the lowest mismatching index it reports.
  CheckVerdict compare_by_user_kernel(const OutputCheck& c, CUdeviceptr got, CUdeviceptr want) {
    const std::uint64_t start[2] = {0, ~std::uint64_t{0}};
    CUdeviceptr results = compare_results.ptr;
    check(d->memcpy_htod(results, start, sizeof start), "cuMemcpyHtoD(comparison result)");
    const std::uint64_t blocks = std::clamp<std::uint64_t>(
        (c.count + kUserCompareBlockThreads - 1) / kUserCompareBlockThreads, 1, kUserCompareMaxBlocks);
    CUdeviceptr got_arg = got, want_arg = want;
    unsigned long long count = c.count;
    void* args[] = {&got_arg, &want_arg, &count, &results};
    const CUresult r = d->launch_kernel(compare_function(c), static_cast<unsigned>(blocks), 1, 1,
                                        kUserCompareBlockThreads, 1, 1, 0, stream, args, nullptr);
    if (r != CUDA_SUCCESS) throw_call_error(r, "cuLaunchKernel(comparison kernel " + c.kernel + ")");
    std::uint64_t result[2] = {0, 0};
    check(d->memcpy_dtoh(result, results, sizeof result), "cuMemcpyDtoH(comparison result)");
    CheckVerdict v;
    v.mismatches = result[0];
    if (v.mismatches > 0 && result[1] < c.count) v.examples.push_back(example(c, got, want, nullptr, result[1]));
    return v;
  }

  Mismatch example(const OutputCheck& c, CUdeviceptr got, CUdeviceptr want, const DeviceBuffer* tol, std::uint64_t i) {
    Mismatch m;
    m.index = i;
    m.got.resize(c.element_bytes);
    m.expected.resize(c.expected_element_bytes());
    check(d->memcpy_dtoh(m.got.data(), got + i * m.got.size(), m.got.size()), "cuMemcpyDtoH");
    check(d->memcpy_dtoh(m.expected.data(), want + i * m.expected.size(), m.expected.size()), "cuMemcpyDtoH");
    if (tol != nullptr) {
      if (c.reference_bytes == 4) {
        float t = 0;
        check(d->memcpy_dtoh(&t, tol->ptr + i * 4, 4), "cuMemcpyDtoH");
        m.tolerance = t;
      } else {
        check(d->memcpy_dtoh(&m.tolerance, tol->ptr + i * 8, 8), "cuMemcpyDtoH");
      }
    }
    return m;
  }

  // -- timing --

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

  std::size_t flush_bytes() const { return l2_flush_bytes(info.l2_bytes); }

  /// Warm-up, then samples between events, each after an L2 flush, until the SamplingRule says enough: a
  /// stable median, the GPU-time budget spent, or the most samples taken.
  TimeRequest::Reply time(const TimeRequest& q) {
    const int warmup = std::max(0, q.warmup);
    SamplingRule rule = q.rule;
    rule.max_samples = std::max(1, rule.max_samples);
    if (module == nullptr) throw EnvironmentError("GPU executor: time requested without a loaded module");
    if (q.flush_l2 && flush.ptr == 0 && flush_bytes() != 0) {
      flush = allocate(flush_bytes());
      check(d->memset_d32_async(flush.ptr, 0x3f800000u, flush.bytes / 4, stream), "cuMemsetD32Async");
    }
    std::vector<double>& ms = samples_ms;
    ms.clear();
    // One timed run between the events of slot i, after an L2 flush when flush_l2; collect() reads slots [from, to).
    auto queue_sample = [&](int i, bool flush_l2) {
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
    int warm = warmup;
    if (warm > 0 && rule.race_above_ms > 0 && rule.race_probe_factor > 0) {  // the warm-up probe of racing
      queue_sample(0, false);                                                // a warm-up run: no flush
      collect(0, 1);
      --warm;
      if (rule.lost_probe(ms.back())) {
        unload();
        TimeRequest::Reply reply;
        reply.samples_ms = ms;
        reply.lost_probe = true;
        return reply;
      }
      ms.clear();
    }
    for (int i = 0; i < warm; ++i) run_steps();
    Observer* obs = q.observe ? observer_of_device() : nullptr;
    if (obs != nullptr) obs->start(std::chrono::microseconds(std::max(100, q.observe_interval_us)));
    // The first min_samples samples are queued back to back with one synchronisation; after that one at a
    // time, since each further sample depends on whether the rule is satisfied.
    const int full = std::max(1, std::min(rule.min_samples, rule.max_samples));
    // Racing: the first race_after samples decide whether the rest are taken at all.
    const int first = rule.race_above_ms > 0 ? std::max(1, std::min(full, rule.race_after)) : full;
    for (int i = 0; i < first; ++i) queue_sample(i, q.flush_l2);
    collect(0, first);
    if (first < full && !rule.lost_race(ms)) {
      for (int i = first; i < full; ++i) queue_sample(i, q.flush_l2);
      collect(first, full);
    }
    for (int i = static_cast<int>(ms.size()); !rule.done(ms); ++i) {
      queue_sample(i, q.flush_l2);
      collect(i, i + 1);
    }
    TimeRequest::Reply reply;
    if (obs != nullptr) {
      if (q.energy_ms > 0) energy_window(*obs, q.energy_ms);
      reply.observed = obs->stop();
    }
    reply.observer_note = q.observe ? observer_note : "";
    unload();
    reply.samples_ms = ms;
    return reply;
  }

  /// The observer of this GPU, opened on first use; nullptr (and observer_note) without NVML.
  Observer* observer_of_device() {
    if (!observer_tried) {
      observer_tried = true;
      std::string why;
      if (const Nvml* api = nvml(&why)) observer = Observer::open(*api, info.uuid, &why);
      if (observer == nullptr) observer_note = why;
    }
    return observer.get();
  }

  /// Back-to-back runs of the loaded plan (no L2 flush: the tool's own traffic is not charged to the kernel)
  /// for about window_ms, estimated from the median sample, between two readings of the energy counter.
  void energy_window(Observer& obs, double window_ms) {
    const double median_ms = std::max(1e-4, stats::median(samples_ms));
    const auto runs = static_cast<std::uint64_t>(
        std::clamp(std::ceil(window_ms / median_ms), 1.0, static_cast<double>(kMaxEnergyRuns)));
    check(d->stream_synchronize(stream), "cuStreamSynchronize");
    obs.energy_begin();
    for (std::uint64_t i = 0; i < runs; ++i) run_steps();
    check(d->stream_synchronize(stream), "cuStreamSynchronize");
    obs.energy_end(runs);
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

  void set_tool_kernels(const std::vector<unsigned char>& cubin) {
    if (tools != nullptr) {
      CUmodule m = tools;
      tools = nullptr;
      flush_fn = nullptr;
      draw_fn = nullptr;
      for (CUfunction& f : prefix_fns) f = nullptr;
      compare_fns.clear();
      check(d->module_unload(m), "cuModuleUnload");
    }
    check(d->module_load_data(&tools, cubin.data()), "cuModuleLoadData(tool kernels)");
    check(d->module_get_function(&flush_fn, tools, kL2FlushKernel), "cuModuleGetFunction(L2 flush)");
    check(d->module_get_function(&draw_fn, tools, kDrawKernel), "cuModuleGetFunction(draw)");
    const char* prefix_names[] = {kPrefixTotalsKernel, kPrefixCarriesKernel, kPrefixWriteKernel};
    for (int k = 0; k < 3; ++k)
      check(d->module_get_function(&prefix_fns[k], tools, prefix_names[k]), "cuModuleGetFunction(prefix)");
    if (flush_sink.ptr == 0) flush_sink = allocate(4);
  }

  void set_compare_kernels(const std::vector<unsigned char>& cubin) {
    if (user_compare != nullptr) {
      CUmodule m = user_compare;
      user_compare = nullptr;
      user_compare_fns.clear();
      check(d->module_unload(m), "cuModuleUnload(comparison kernels)");
    }
    check(d->module_load_data(&user_compare, cubin.data()), "cuModuleLoadData(comparison kernels)");
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
    const double median_ms = stats::median(ms);
    if (!(median_ms > 0)) throw EnvironmentError("copy bandwidth measurement gave a zero time");
    return 2.0 * static_cast<double>(bytes) / (median_ms * 1e-3) / 1e9;
  }

  /// Decodes the request after its Op byte, runs it and encodes the ok reply.
  std::string dispatch(Op op, Reader& r) {
    if (op == Op::init) {
      init(decode<InitRequest>(r).ordinal);
      return encode_ok(InitRequest::Reply{info});
    }
    if (op == Op::quit) return encode_ok(NoReply{});
    require_init();
    check(d->ctx_set_current(ctx), "cuCtxSetCurrent");
    switch (op) {
      case Op::mem_info: {
        MemInfoRequest::Reply m;
        std::size_t free_bytes = 0, total_bytes = 0;
        check(d->mem_get_info(&free_bytes, &total_bytes), "cuMemGetInfo");
        m.free_bytes = free_bytes;
        m.total_bytes = total_bytes;
        return encode_ok(m);
      }
      case Op::release: release(); break;
      case Op::upload: upload(decode<UploadRequest>(r)); break;
      case Op::restore_inputs: restore_inputs(); break;
      case Op::draw:
        return encode_ok(draw(decode<DrawRequest>(r).recipe));
      case Op::prefix:
        return encode_ok(prefix(decode<PrefixRequest>(r).recipe));
      case Op::load_run: {
        LoadRunRequest q = decode<LoadRunRequest>(r);
        return encode_ok(load_run(q));
      }
      case Op::time: return encode_ok(time(decode<TimeRequest>(r)));
      case Op::unload: unload(); break;
      case Op::copy_bandwidth: return encode_ok(CopyBandwidthRequest::Reply{copy_bandwidth()});
      case Op::tool_kernels: set_tool_kernels(decode<ToolKernelsRequest>(r).cubin); break;
      case Op::compare_kernels: set_compare_kernels(decode<CompareKernelsRequest>(r).cubin); break;
      default: throw EnvironmentError("GPU executor: unknown request " + std::to_string(static_cast<int>(op)));
    }
    return encode_ok(NoReply{});
  }

  /// The reply to a failed driver call; marks the process lost after a sticky fault.
  std::string cuda_error_reply(const CudaCallError& e) {
    ErrorReply err;
    CUresult code = e.code();
    err.message = e.what();
    if (!is_sticky(code) && ctx != nullptr) {
      // A synchronous launch error can leave earlier steps in flight: drain them; a fault they caused
      // makes this a sticky error.
      CUresult r = d->ctx_synchronize();
      if (is_sticky(r)) {
        err.message += "; then cuCtxSynchronize failed: " + error_text(r);
        code = r;
      }
    }
    if (is_sticky(code)) {
      lost = true;
      module = nullptr;
      bound.steps.clear();
    } else {
      unload_quietly();
    }
    err.code = static_cast<std::int32_t>(code);
    err.sticky = is_sticky(code);
    return encode_error(ReplyStatus::cuda_error, err);
  }
};

Executor::Executor() : s_(std::make_unique<State>()) {}
Executor::~Executor() = default;
bool Executor::lost() const { return s_->lost; }

std::string Executor::handle(const std::string& request) {
  auto error_reply = [](ReplyStatus status, const std::string& message) {
    ErrorReply e;
    e.message = message;
    return encode_error(status, e);
  };
  try {
    if (s_->lost) {
      return error_reply(ReplyStatus::environment_error,
                         "this process cannot use the GPU any more: a kernel caused a sticky fault earlier");
    }
    Reader r(request);
    const auto op = static_cast<Op>(r.u8());
    return s_->dispatch(op, r);
  } catch (const CudaCallError& e) {
    return s_->cuda_error_reply(e);
  } catch (const UsageError& e) {
    s_->unload_quietly();
    return error_reply(ReplyStatus::usage_error, e.what());
  } catch (const std::exception& e) {
    s_->unload_quietly();
    return error_reply(ReplyStatus::environment_error, e.what());
  }
}

}  // namespace autotune::cuda::detail
