// GPU side of the CUDA backend (see executor.hpp): the coordination of its parts over one context. The problem's
// buffers (problem_buffers.hpp), the configuration being measured (plan_run.hpp), the comparison kernels
// (verifier.hpp), the timing (event_timer.hpp) with its L2 flush (l2_flush.hpp), and the tool kernels they launch
// (tool_module.hpp), all on one stream with their allocations in device_memory.hpp.
#include "tuner/cuda/executor.hpp"

#include <optional>
#include <vector>

#include "tuner/core/check.hpp"
#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/driver.hpp"
#include "tuner/cuda/event_timer.hpp"
#include "tuner/cuda/l2_flush.hpp"
#include "tuner/cuda/messages.hpp"
#include "tuner/cuda/plan_run.hpp"
#include "tuner/cuda/problem_buffers.hpp"
#include "tuner/cuda/tool_module.hpp"
#include "tuner/cuda/verifier.hpp"
#include "tuner/cuda/worker_process.hpp"

namespace autotune::cuda::detail {
struct Executor::State {
  const Driver* d = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;  // retained primary context
  CUstream stream = nullptr;
  DeviceInfo info;
  bool lost = false;

  SharedRegion region;  // inputs, expected values and verification outputs travel through it
  // The parts, made by init() over the context and stream (in this order; none before init()).
  std::optional<DeviceMemory> memory;
  std::optional<ToolModule> tools;  // device_kernels.hpp, when the backend sent them
  std::optional<ProblemBuffers> problem;
  std::optional<PlanRun> run;
  std::optional<Verifier> verifier;
  std::optional<L2Flush> flush;
  std::optional<EventTimer> timer;

  ~State() {
    if (timer) timer->close_observers();
    if (ctx == nullptr || lost) return;  // after a fault the context is unusable; the process ends soon
    d->ctx_set_current(ctx);
    if (run) run->destroy();
    if (problem) problem->destroy();
    if (flush) flush->destroy();
    if (verifier) verifier->destroy();
    if (tools) tools->destroy();
    if (timer) timer->destroy();
    if (memory) memory->destroy();
    if (stream) d->stream_destroy(stream);
    d->primary_ctx_release(dev);
  }

  void require_init() const {
    if (ctx == nullptr || !timer) throw EnvironmentError("GPU executor used before init");
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
    memory.emplace(*d, stream);
    tools.emplace(*d);
    problem.emplace(*memory, *tools, region);
    run.emplace(*memory);
    verifier.emplace(*memory, *tools);
    flush.emplace(*memory, *tools, l2_flush_bytes(info.l2_bytes), info.sm_count);
    timer.emplace(*memory, ObserverSite{info.uuid, ordinal, ctx});
  }

  void release() {
    run->unload();
    problem->release();
    run->release();
    flush->release();
  }

  void unload_quietly() noexcept {
    if (!run) return;
    if (lost)
      run->forget();
    else
      run->unload_quietly();
  }

  /// Loads the configuration, runs it once on poisoned outputs (after a run from zeroed kernel state, where it
  /// keeps state) and brings back its outputs or the verdicts of the checks; with q.repeat, runs it once more on
  /// poisoned outputs and says whether the output bytes were the same.
  LoadRunRequest::Reply load_run(LoadRunRequest& q) {
    run->unload();
    if (q.copy_outputs &&
        (q.outputs_at > q.region_bytes || q.region_bytes - q.outputs_at < output_region_bytes(q.plan)))
      throw UsageError("the shared output region is too small");
    run->load(std::move(q.plan), q.cubin, problem->inputs());
    if (run->fill(true, 0, problem->inputs())) {
      // Kernel state starts zeroed once per loaded configuration; the kernels leave it ready for their next
      // run. The timed runs start from the state an earlier run left, so the verified run does too: one run
      // from the zeroed state, then the outputs and scratch poisoned, then the verified run.
      run->run();
      check(d->stream_synchronize(stream), "cuStreamSynchronize");
    }
    run->fill(false, kPoisonByte, problem->inputs());
    run->run();
    check(d->stream_synchronize(stream), "cuStreamSynchronize");
    LoadRunRequest::Reply reply;
    if (q.copy_outputs) reply.outputs = run->copy_outputs(region, q.fd, q.region_bytes, q.outputs_at);
    for (const OutputCheck& c : q.checks)
      reply.verdicts.push_back(verifier->compare(c, run->plan(), run->addresses(), problem->expected()));
    if (q.repeat) {  // a deterministic tune: the same inputs must give the same bytes a second time
      const std::vector<std::vector<unsigned char>> first = run->output_bytes();
      run->fill(false, kPoisonByte, problem->inputs());
      run->run();
      check(d->stream_synchronize(stream), "cuStreamSynchronize");
      reply.repeat_mismatch = run->repeat_mismatch(first);
    }
    return reply;
  }

  /// Times the module of the last load_run (event_timer.hpp), then unloads it.
  TimeRequest::Reply time(const TimeRequest& q) {
    if (!run->loaded()) throw EnvironmentError("GPU executor: time requested without a loaded module");
    TimeRequest::Reply reply = timer->time(q, *flush, [this] { run->run(); });
    run->unload();
    return reply;
  }

  void set_tool_kernels(const std::vector<unsigned char>& cubin) {
    tools->load(cubin);
    flush->allocate_sink();
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
      case Op::upload:
        problem->upload(decode<UploadRequest>(r));
        break;
      case Op::restore_inputs:
        problem->restore_inputs();
        break;
      case Op::draw:
        return encode_ok(problem->draw(decode<DrawRequest>(r).recipe));
      case Op::prefix:
        return encode_ok(problem->prefix(decode<PrefixRequest>(r).recipe));
      case Op::load_run: {
        LoadRunRequest q = decode<LoadRunRequest>(r);
        return encode_ok(load_run(q));
      }
      case Op::time: return encode_ok(time(decode<TimeRequest>(r)));
      case Op::unload:
        run->unload();
        break;
      case Op::copy_bandwidth:
        return encode_ok(CopyBandwidthRequest::Reply{timer->copy_bandwidth()});
      case Op::tool_kernels: set_tool_kernels(decode<ToolKernelsRequest>(r).cubin); break;
      case Op::compare_kernels:
        verifier->load_user_kernels(decode<CompareKernelsRequest>(r).cubin);
        break;
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
      if (run) run->forget();
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
