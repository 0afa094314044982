// CudaBackend, host side: plans, inputs and references from the adapter; NVRTC compilation (parallel,
// cached); verification and timing requests to the GPU executor, which runs in a worker process by default
// (executor.hpp explains why) or in-process.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <cstring>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tuner/core/compile.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/sampling.hpp"
#include "tuner/core/timer.hpp"
#include "tuner/cuda/driver.hpp"
#include "tuner/cuda/executor.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/cuda/launcher.hpp"

namespace autotune::cuda {
using detail::Op;
using detail::Reader;
using detail::ReplyStatus;
using detail::Writer;

namespace {

constexpr std::size_t kGiB = std::size_t{1} << 30;
// Device memory left free when checking that a problem fits (modules, stacks, lazily allocated driver
// memory).
constexpr std::size_t kMemoryReserve = std::size_t{256} << 20;
constexpr std::size_t kLogExcerpt = 2000;
constexpr double kInitTimeoutS = 300;  // driver initialisation of a fresh worker
constexpr double kCopyTimeoutS = 300;

std::string gib_text(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes / static_cast<double>(kGiB));
  return buf;
}

std::string excerpt(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return text.substr(0, max_chars) + "\n... (" + std::to_string(text.size() - max_chars) + " more characters)";
}

double seconds_since(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Linear interpolation between closest ranks; v sorted, non-empty.
double quantile(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::string basename_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Outcome of one request to the executor.
struct Reply {
  enum class Kind { ok, cuda_error, timeout, died };
  Kind kind = Kind::ok;
  std::string payload;  // whole reply; the body starts at offset 1 when ok
  int code = 0;         // CUresult
  bool sticky = false;
  std::string message;
};

}  // namespace

struct CudaBackend::Impl {
  std::shared_ptr<const KernelAdapter> adapter;
  TimingOptions opt;
  BinaryCache* cache = nullptr;
  DeviceInfo info;
  std::string arch;  // "sm_90"
  std::vector<unsigned char> flush_cubin;  // the L2 flush kernel for arch
  std::shared_future<CompileResult> flush_compile;  // its compilation, started once the arch is known
  bool flush_installed = false;                     // the executor has it (set by the first prepare())

  std::unique_ptr<detail::Executor> local;  // opt.isolate == false
  detail::WorkerProcess worker;             // opt.isolate == true; pid < 0 when none runs
  int workers_started = 0;

  bool prepared = false;
  Workload workload;
  ProblemKey problem;
  std::uint64_t seed = 0;
  HostBuffers expected;
  HostBuffers outputs;            // verification outputs, reused (no allocation per trial)
  detail::SharedRegion region;    // inputs [0, inputs_end), where the executor finds them; then the outputs
  std::size_t inputs_end = 0;     // 64-byte aligned
  std::optional<double> copy_gbps;
  double best_run_seconds = 0;  // fastest verification run of a configuration that verified (0: none yet)

  CompilePipeline pipeline;
  BackendStats counters;  // verify and benchmark parts; the compile part comes from the pipeline

  Impl(std::shared_ptr<const KernelAdapter> a, TimingOptions o, BinaryCache* c)
      : adapter(std::move(a)), opt(o), cache(c), pipeline(o.jobs, c) {
    if (!adapter) throw UsageError("CudaBackend needs a kernel adapter");
    if (opt.samples < 1) opt.samples = 1;
    if (opt.warmup < 0) opt.warmup = 0;
    region.create();
    ScopedTimer start_time(counters.setup_ms["start"]);
    if (opt.isolate) {
      try {
        start_worker(false);
      } catch (...) {
        stop_worker(false);
        throw;
      }
    } else {
      local = std::make_unique<detail::Executor>();
      info = init_executor();
    }
    begin_flush_compile();  // runs while the caller goes on; prepare() installs the kernel
  }

  ~Impl() {
    if (worker.pid > 0) {
      Writer w;
      w.u8(static_cast<std::uint8_t>(Op::quit));
      detail::send_frame(worker.fd, w.buffer());
      stop_worker(false);
    }
  }

  // ---- executor transport ----------------------------------------------------------------------------

  DeviceInfo init_executor() {
    Writer w;
    w.u8(static_cast<std::uint8_t>(Op::init));
    w.i32(opt.device);
    Reply r = raw_call(w.buffer(), kInitTimeoutS);
    if (r.kind != Reply::Kind::ok) {
      throw EnvironmentError("the GPU worker could not initialise device " + std::to_string(opt.device) + ": " +
                             r.message);
    }
    Reader rd(r.payload, 1);
    return detail::read_device(rd);
  }

  /// Starts compiling the L2 flush kernel for this GPU on a thread of its own (once).
  void begin_flush_compile() {
    arch = "sm_" + std::to_string(info.cc);
    if (!opt.flush_l2 || !flush_cubin.empty() || flush_compile.valid()) return;
    flush_compile = std::async(std::launch::async, [a = arch] {
                      return compile(detail::l2_flush_source(), "autotune_l2_flush.cu", {}, a);
                    }).share();
  }

  /// Hands the L2 flush kernel (compiled once) to the executor, which then flushes the L2 before each timed
  /// run by reading a 2x L2 buffer instead of writing it (see l2_flush_source()).
  void install_flush_kernel() {
    arch = "sm_" + std::to_string(info.cc);
    if (!opt.flush_l2) return;
    if (flush_cubin.empty()) {
      begin_flush_compile();
      CompileResult r = flush_compile.get();
      if (!r.ok) {
        throw EnvironmentError("the L2 flush kernel does not compile for " + arch + ":\n" + excerpt(r.log, kLogExcerpt));
      }
      flush_cubin = std::move(r.cubin);
    }
    Writer w;
    w.u8(static_cast<std::uint8_t>(Op::flush_kernel));
    w.bytes(flush_cubin.data(), flush_cubin.size());
    Reply r = raw_call(w.buffer(), kInitTimeoutS);
    if (r.kind != Reply::Kind::ok) throw EnvironmentError("loading the L2 flush kernel failed: " + r.message);
  }

  /// Starts a worker process and initialises it; a replacement (restart) also gets the L2 flush kernel and,
  /// if a problem is prepared, its inputs again (regenerated from the seed).
  void start_worker(bool restart = true) {
    worker = detail::spawn_worker(region.fd());
    ++workers_started;
    info = init_executor();
    if (!restart) return;
    if (flush_installed) install_flush_kernel();
    if (prepared) upload_inputs(adapter->make_inputs(workload, problem, seed));
  }

  /// Ends the worker (kill_now: SIGKILL first, for a hung one) and returns how it ended.
  std::string stop_worker(bool kill_now) { return detail::stop_helper(worker, kill_now); }

  static Reply parse(std::string payload) {
    Reply r;
    r.payload = std::move(payload);
    Reader rd(r.payload);
    const auto status = static_cast<ReplyStatus>(rd.u8());
    switch (status) {
      case ReplyStatus::ok: r.kind = Reply::Kind::ok; break;
      case ReplyStatus::cuda_error:
        r.kind = Reply::Kind::cuda_error;
        r.code = rd.i32();
        r.sticky = rd.u8() != 0;
        r.message = rd.str();
        break;
      case ReplyStatus::usage_error: throw UsageError(rd.str());
      case ReplyStatus::environment_error: throw EnvironmentError(rd.str());
      default: throw EnvironmentError("malformed reply from the GPU executor");
    }
    return r;
  }

  /// One request, no restart. Timeouts apply to the worker process only (timeout_s <= 0: none).
  Reply raw_call(const std::string& request, double timeout_s) {
    if (local) return parse(local->handle(request));
    Reply r;
    if (!detail::send_frame(worker.fd, request)) {
      r.kind = Reply::Kind::died;
      r.message = "the GPU worker process ended unexpectedly (" + stop_worker(false) + ")";
      return r;
    }
    std::string payload;
    switch (detail::recv_frame(worker.fd, payload, timeout_s)) {
      case detail::RecvResult::ok: break;
      case detail::RecvResult::timeout:
        r.kind = Reply::Kind::timeout;
        stop_worker(true);
        r.message = "no answer from the GPU within " + std::to_string(static_cast<int>(std::ceil(timeout_s))) +
                    " s; the worker process was killed";
        return r;
      case detail::RecvResult::closed:
        r.kind = Reply::Kind::died;
        r.message = "the GPU worker process ended unexpectedly (" + stop_worker(false) + ")";
        return r;
    }
    r = parse(std::move(payload));
    if (r.kind == Reply::Kind::cuda_error && r.sticky) stop_worker(false);  // it exits after a fault
    return r;
  }

  /// One request; starts a new worker first if the previous one ended.
  Reply call(const std::string& request, double timeout_s) {
    if (!local && worker.pid <= 0) start_worker();
    return raw_call(request, timeout_s);
  }

  /// A request that must succeed (buffer management): failures become EnvironmentError.
  Reply call_ok(const std::string& request, const char* what, double timeout_s = 0) {
    Reply r = call(request, timeout_s);
    if (r.kind != Reply::Kind::ok) throw EnvironmentError(std::string(what) + ": " + r.message);
    return r;
  }

  static std::string simple(Op op) {
    Writer w;
    w.u8(static_cast<std::uint8_t>(op));
    return std::move(w.buffer());
  }

  // ---- problem ---------------------------------------------------------------------------------------

  std::size_t flush_bytes() const {
    if (!opt.flush_l2 || info.l2_bytes <= 0) return 0;
    return 2 * static_cast<std::size_t>(info.l2_bytes);
  }

  /// The inputs go through the start of the shared region, not the socket, and stay there for the
  /// problem's lifetime (the executor restores inputs from there; outputs go after them).
  void upload_inputs(const HostBuffers& inputs) {
    std::vector<std::pair<const HostBuffers::value_type*, std::size_t>> placed;  // input, offset
    std::size_t end = 0;
    for (const auto& in : inputs) {
      placed.emplace_back(&in, end);
      end += (in.second.size() + 63) / 64 * 64;
    }
    region.reserve(end);
    unsigned char* base = region.map(region.fd(), end);
    for (const auto& [in, offset] : placed) parallel_copy(base + offset, in->second.data(), in->second.size());
    inputs_end = end;
    for (const auto& [in, offset] : placed) {
      Writer w;
      w.u8(static_cast<std::uint8_t>(Op::upload));
      w.str(in->first);
      w.i32(local ? region.fd() : detail::kWorkerRegionFd);
      w.u64(end);
      w.u64(offset);
      w.u64(in->second.size());
      call_ok(w.buffer(), "uploading the inputs failed");
    }
  }

  /// memcpy on up to 16 threads (the first touch of fresh shared pages dominates a large copy).
  static void parallel_copy(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
    constexpr std::size_t kPiece = std::size_t{16} << 20;
    const std::size_t pieces = (bytes + kPiece - 1) / kPiece;
    const std::size_t threads = std::min<std::size_t>(pieces, std::min(16u, std::max(1u, std::thread::hardware_concurrency())));
    if (threads <= 1) {
      if (bytes != 0) std::memcpy(dst, src, bytes);
      return;
    }
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t p = next++; p < pieces; p = next++)
        std::memcpy(dst + p * kPiece, src + p * kPiece, std::min(kPiece, bytes - p * kPiece));
    };
    std::vector<std::thread> pool;
    try {
      for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    } catch (...) {  // fewer threads: the ones started and this one copy everything
    }
    work();
    for (auto& t : pool) t.join();
  }

  std::uint64_t free_memory() {
    Reply r = call_ok(simple(Op::mem_info), "querying free device memory failed");
    Reader rd(r.payload, 1);
    return rd.u64();
  }

  void check_fits(std::size_t needed) {
    const std::uint64_t free_bytes = free_memory();
    if (needed + kMemoryReserve > free_bytes) {
      throw UsageError(problem.key() + " needs " + gib_text(static_cast<double>(needed)) + " GiB but the GPU has " +
                       gib_text(static_cast<double>(free_bytes)) + " GiB free");
    }
  }

  std::vector<std::string> options_for(const Config& c) const {
    return build_options(adapter->compile_options(workload), c, adapter->spec().defines);
  }

  std::string program_name() const {
    const TuningSpec& spec = adapter->spec();
    if (!spec.source_path.empty()) return basename_of(spec.source_path);
    return (spec.name.empty() ? std::string("kernel") : spec.name) + ".cu";
  }

  void prepare(const Workload& w, const ProblemKey& p, std::uint64_t s) {
    pipeline.cancel();  // compile options depend on the workload: what was queued is of no use now
    prepared = false;
    expected.clear();
    workload = w;
    problem = p;
    seed = s;
    call_ok(simple(Op::release), "releasing the previous problem failed");
    inputs_end = 0;
    const TuningSpec& spec = adapter->spec();

    // Size check before any host or device allocation, from the plan of the default configuration.
    std::size_t needed = flush_bytes();
    bool estimated = false;
    try {
      LaunchPlan plan = adapter->plan(spec.default_config(), w, p, info);
      for (const auto& b : plan.buffers) needed += b.bytes;
      estimated = true;
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception&) {
      // The default config may not be plannable for this device; check with the inputs alone below.
    }
    if (estimated) check_fits(needed);

    // The host makes the inputs (on all its cores) while the GPU worker measures the copy bandwidth (once per
    // backend; only when the size check above has passed), and computes the reference while the inputs travel
    // to the GPU: together the set-up takes about as long as its longest part.
    double inputs_ms = 0, reference_ms = 0;
    HostBuffers inputs;
    {
      std::future<HostBuffers> made = std::async(std::launch::async, [&] {
        ScopedTimer t(inputs_ms);
        return adapter->make_inputs(w, p, s);
      });
      try {
        if (estimated) copy_bandwidth();
      } catch (...) {
        made.wait();
        throw;
      }
      inputs = made.get();
    }
    counters.setup_ms["inputs"] = inputs_ms;
    if (!estimated) {
      for (const auto& [name, data] : inputs) needed += data.size();
      check_fits(needed);
    }
    std::optional<HostBuffers> ref;
    {
      std::future<std::optional<HostBuffers>> computed = std::async(std::launch::async, [&] {
        ScopedTimer t(reference_ms);
        return adapter->reference(inputs, w, p);
      });
      try {
        double upload_ms = 0;
        {
          ScopedTimer t(upload_ms);
          upload_inputs(inputs);
        }
        counters.setup_ms["upload"] = upload_ms;
      } catch (...) {
        computed.wait();
        throw;
      }
      ref = computed.get();
    }
    counters.setup_ms["reference"] = reference_ms;
    inputs.clear();
    expected = ref ? std::move(*ref) : run_reference_kernel();
    if (!flush_installed) {
      install_flush_kernel();
      flush_installed = true;
    }
    prepared = true;
  }

  HostBuffers run_reference_kernel() {
    const TuningSpec& spec = adapter->spec();
    std::optional<LaunchPlan> plan = adapter->reference_plan(workload, problem, info);
    if (!plan) throw UsageError("kernel '" + spec.name + "' has neither a CPU reference nor a reference kernel");
    std::string source = adapter->reference_source();
    if (source.empty()) source = spec.source_text;
    CompileResult cr = compile(source, spec.name + "_reference.cu", options_for(spec.default_config()), arch);
    if (!cr.ok) {
      throw SpecError("/reference", "the reference kernel of '" + spec.name + "' does not compile for " + arch +
                                        ":\n" + excerpt(cr.log, kLogExcerpt));
    }
    Reply r = load_run(*plan, cr);
    if (r.kind != Reply::Kind::ok) {
      throw UsageError("the reference kernel of '" + spec.name + "' failed: " + r.message);
    }
    HostBuffers out = outputs;
    call_ok(simple(Op::unload), "unloading the reference kernel failed");
    return out;
  }

  /// Loads the binary, runs the plan once on poisoned outputs and synchronises; on success the outputs are in
  /// `outputs` (copied out of the shared region into buffers reused from trial to trial).
  Reply load_run(const LaunchPlan& plan, const CompileResult& cr) {
    const std::size_t region_bytes = inputs_end + detail::output_region_bytes(plan);
    region.reserve(region_bytes);
    Writer w;
    w.u8(static_cast<std::uint8_t>(Op::load_run));
    detail::write_plan(w, plan);
    w.bytes(cr.cubin.data(), cr.cubin.size());
    w.i32(local ? region.fd() : detail::kWorkerRegionFd);
    w.u64(region_bytes);
    w.u64(inputs_end);
    Reply r = call(w.buffer(), effective_timeout(opt, best_run_seconds));
    if (r.kind != Reply::Kind::ok) return r;
    Reader rd(r.payload, 1);
    const unsigned char* base = region.map(region.fd(), region_bytes);
    std::set<std::string> seen;
    for (std::uint64_t n = rd.u64(); n > 0; --n) {
      std::string name = rd.str();
      const std::uint64_t offset = rd.u64();
      const std::uint64_t bytes = rd.u64();
      if (offset > region_bytes || bytes > region_bytes - offset) {
        throw EnvironmentError("the GPU executor placed output '" + name + "' outside the shared region");
      }
      std::vector<unsigned char>& host = outputs[name];
      host.resize(bytes);  // keeps its capacity from earlier trials: no allocation, no page faults
      if (bytes != 0) std::memcpy(host.data(), base + offset, bytes);
      seen.insert(std::move(name));
    }
    for (auto it = outputs.begin(); it != outputs.end();) {
      it = seen.count(it->first) != 0 ? std::next(it) : outputs.erase(it);
    }
    r.payload.clear();
    return r;
  }

  // ---- evaluation ------------------------------------------------------------------------------------

  SamplingRule sampling() const {
    SamplingRule rule;
    rule.min_samples = opt.min_samples;
    rule.max_samples = opt.samples;
    rule.stable_ci = opt.stable_ci;
    rule.max_seconds = opt.max_seconds_per_config;
    return rule;
  }

  std::string protocol() const {
    return "events;warmup=" + std::to_string(opt.warmup) + ";" + sampling().describe() +
           ";l2=" + (flush_bytes() != 0 ? "flush-read" : "warm");
  }

  /// The compile task of a configuration and its binary-cache key.
  CompilePipeline::Item compile_item(const Config& c) const {
    std::vector<std::string> options = options_for(c);
    CompilePipeline::Item item;
    item.key = binary_key(adapter->spec().source_text, options, arch);
    item.task = [source = &adapter->spec().source_text, name = program_name(), options = std::move(options),
                 a = arch, processes = opt.compile_processes] {
      return processes ? compile_in_worker(*source, name, options, a) : compile(*source, name, options, a);
    };
    return item;
  }

  void prefetch(const std::vector<Config>& configs) {
    if (!prepared) return;
    std::vector<CompilePipeline::Item> items;
    items.reserve(configs.size());
    for (const Config& c : configs) items.push_back(compile_item(c));
    pipeline.prefetch(std::move(items));
  }

  std::vector<Measurement> evaluate(const std::vector<Config>& configs) {
    if (!prepared) throw UsageError("CudaBackend::evaluate() called before prepare()");
    std::vector<LaunchPlan> plans;
    plans.reserve(configs.size());
    for (const Config& c : configs) plans.push_back(adapter->plan(c, workload, problem, info));
    std::vector<CompilePipeline::Item> items;
    items.reserve(configs.size());
    for (const Config& c : configs) items.push_back(compile_item(c));
    // The GPU measures configuration i while the compile threads work on the ones after it.
    std::vector<Measurement> out;
    out.reserve(configs.size());
    pipeline.consume_in_order(std::move(items), [&](std::size_t i, const CompileResult& binary) {
      out.push_back(measure(plans[i], binary));
    });
    return out;
  }

  BackendStats stats() const {
    BackendStats st = counters;
    st.compile = pipeline.stats();
    st.compile_jobs = pipeline.jobs();
    return st;
  }

  /// Fills status and log from a failed reply; false if the reply was ok.
  static bool failed(const Reply& r, Measurement& m) {
    switch (r.kind) {
      case Reply::Kind::ok: return false;
      case Reply::Kind::cuda_error:
        m.status = !r.sticky ? TrialStatus::launch_error
                   : r.code == CUDA_ERROR_LAUNCH_TIMEOUT ? TrialStatus::timeout
                                                         : TrialStatus::runtime_fault;
        break;
      case Reply::Kind::timeout: m.status = TrialStatus::timeout; break;
      case Reply::Kind::died: m.status = TrialStatus::runtime_fault; break;
    }
    m.log = r.message;
    m.median_ns = m.min_ns = m.spread = 0;
    m.samples = 0;
    return true;
  }

  Measurement measure(const LaunchPlan& plan, const CompileResult& cr) {
    Measurement m;
    m.protocol = protocol();
    m.compile_ms = cr.cached ? 0.0 : cr.ms;
    if (!cr.ok) {
      m.status = TrialStatus::compile_error;
      m.log = excerpt(cr.log, kLogExcerpt);
      return m;
    }

    // Verification run on poisoned outputs.
    const auto verify_start = std::chrono::steady_clock::now();
    ++counters.verified;
    std::optional<ScopedTimer> verify_time;
    verify_time.emplace(counters.verify_ms);
    Reply r = load_run(plan, cr);
    if (failed(r, m)) return m;
    const double run_seconds = seconds_since(verify_start);
    const std::string mismatch = adapter->verify(outputs, expected, workload, problem);
    m.verify_ms = seconds_since(verify_start) * 1e3;
    if (!mismatch.empty()) {
      m.status = TrialStatus::wrong_result;
      m.log = mismatch;
      call_ok(simple(Op::unload), "unloading a module failed");
      // A wrong kernel may have written into its inputs.
      call_ok(simple(Op::restore_inputs), "restoring the inputs failed");
      return m;
    }

    verify_time.reset();
    if (best_run_seconds <= 0 || run_seconds < best_run_seconds) best_run_seconds = run_seconds;

    // Timing.
    ++counters.timed;
    ScopedTimer benchmark_time(counters.benchmark_ms);
    Writer t;
    t.u8(static_cast<std::uint8_t>(Op::time));
    t.i32(opt.warmup);
    t.i32(opt.samples);
    t.u8(opt.flush_l2 ? 1 : 0);
    t.f64(opt.max_seconds_per_config);
    t.i32(opt.min_samples);
    t.f64(opt.stable_ci);
    const double time_limit = effective_timeout(opt, best_run_seconds) + opt.max_seconds_per_config +
                              2.0 * (opt.warmup + std::min(opt.samples, std::max(opt.min_samples, 1))) * run_seconds;
    r = call(t.buffer(), time_limit);
    if (failed(r, m)) return m;
    Reader samples(r.payload, 1);
    std::vector<double> ms(samples.u64());
    for (auto& v : ms) v = samples.f64();
    if (ms.empty()) throw EnvironmentError("the GPU executor returned no samples");
    std::sort(ms.begin(), ms.end());
    const std::size_t n = ms.size();
    const double median = n % 2 == 1 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    m.status = TrialStatus::ok;
    m.median_ns = median * 1e6;
    m.min_ns = ms.front() * 1e6;
    m.spread = median > 0 ? (quantile(ms, 0.9) - quantile(ms, 0.1)) / median : 0.0;
    m.samples = static_cast<int>(n);
    return m;
  }

  double copy_bandwidth() {
    if (copy_gbps) return *copy_gbps;
    ScopedTimer t(counters.setup_ms["copy_bandwidth"]);
    Reply r = call(simple(Op::copy_bandwidth), kCopyTimeoutS);
    if (r.kind != Reply::Kind::ok) throw EnvironmentError("measuring the copy bandwidth failed: " + r.message);
    Reader rd(r.payload, 1);
    copy_gbps = rd.f64();
    return *copy_gbps;
  }
};

double effective_timeout(const TimingOptions& options, double best_run_seconds) {
  if (options.timeout_seconds > 0) return options.timeout_seconds;
  if (!(best_run_seconds > 0)) return kAutoTimeoutCeiling;
  return std::min(kAutoTimeoutCeiling, std::max(kAutoTimeoutFloor, kAutoTimeoutFactor * best_run_seconds));
}

CudaBackend::CudaBackend(std::shared_ptr<const KernelAdapter> adapter, TimingOptions options, BinaryCache* cache)
    : impl_(std::make_unique<Impl>(std::move(adapter), options, cache)) {}

CudaBackend::~CudaBackend() = default;

DeviceInfo CudaBackend::device() const { return impl_->info; }

std::string CudaBackend::compiler_version() const { return nvrtc_version(); }

void CudaBackend::prepare(const Workload& w, const ProblemKey& p, std::uint64_t seed) {
  impl_->prepare(w, p, seed);
}

double CudaBackend::copy_bandwidth_gbps() { return impl_->copy_bandwidth(); }

std::uint64_t CudaBackend::free_device_memory_bytes() { return impl_->free_memory(); }

std::vector<Measurement> CudaBackend::evaluate(const std::vector<Config>& configs) {
  return impl_->evaluate(configs);
}

void CudaBackend::prefetch(const std::vector<Config>& configs) { impl_->prefetch(configs); }

BackendStats CudaBackend::stats() const { return impl_->stats(); }

}  // namespace autotune::cuda
