// CudaBackend, host side: the coordination of its parts. Compile requests (config_compiler.hpp: NVRTC on the
// compile threads, cached), the tool kernels (tool_loader.hpp), a problem's set-up (problem_setup.hpp: inputs,
// references, where outputs are verified), verification and timing requests to the GPU executor
// (executor_client.hpp), which runs in a worker process by default (executor.hpp explains why) or in-process, and
// its replies as trials (trial_reply.hpp). Outputs are compared on the GPU by comparison kernels against expected
// values kept there (TimingOptions::verify), or copied back and compared on the CPU.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tuner/core/check.hpp"
#include "tuner/core/compile.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/timer.hpp"
#include "tuner/cuda/config_compiler.hpp"
#include "tuner/cuda/executor_client.hpp"
#include "tuner/cuda/launcher.hpp"
#include "tuner/cuda/problem_data.hpp"
#include "tuner/cuda/problem_setup.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/cuda/tool_loader.hpp"
#include "tuner/cuda/trial_reply.hpp"

namespace autotune::cuda {

namespace {

double seconds_since(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

struct CudaBackend::Impl {
  std::shared_ptr<const KernelAdapter> adapter;
  TimingOptions opt;
  DeviceInfo info;
  detail::ToolLoader tools;  // device_kernels.hpp for the GPU's architecture

  detail::SharedRegion region;  // the problem's inputs (unless drawn on the GPU), then outputs or expected values
  std::unique_ptr<detail::ExecutorClient> executor;
  std::unique_ptr<detail::ProblemData> data;  // where the problem's data lie, over region and executor
  std::unique_ptr<detail::ProblemSetup> setup;

  bool prepared = false;
  detail::PreparedProblem current;  // the problem prepared, or expected and being prepared
  HostBuffers outputs;              // verification outputs on the host path, reused (no allocation per trial)
  std::string observer_note;        // why observers asked for observe nothing (no NVML ...), each distinct note once
  double best_run_seconds = 0;  // fastest verification run of a configuration that verified (0: none yet)
  // The best fully sampled median of the prepared problem and its spread, for racing (0: none yet).
  double race_best_ms = 0, race_best_spread = 0;
  std::string expected_for;  // case_key() of the last expect() not yet prepared

  detail::ConfigCompiler compiler;
  BackendStats counters;  // verify and benchmark parts; the compile part comes from the pipeline

  Impl(std::shared_ptr<const KernelAdapter> a, TimingOptions o, BinaryCache* c)
      : adapter(std::move(a)), opt(std::move(o)), compiler(adapter, opt.jobs, c, opt.compile_processes) {
    if (!adapter) throw UsageError("CudaBackend needs a kernel adapter");
    if (opt.samples < 1) opt.samples = 1;
    if (opt.warmup < 0) opt.warmup = 0;
    region.create();
    {
      ScopedTimer start_time(counters.setup_ms["start"]);
      executor = std::make_unique<detail::ExecutorClient>(opt.isolate, opt.device, region);
    }
    info = executor->device();
    data = std::make_unique<detail::ProblemData>(region, *executor);
    setup = std::make_unique<detail::ProblemSetup>(
        *adapter, opt, info, compiler, *data, *executor, tools, counters, current,
        [this](const LaunchPlan& plan, const CompileResult& cr, HostBuffers& out) {
          auto r = load_run(plan, cr, true);
          if (!r.ok()) return r.message;
          out = outputs;
          return std::string();
        });
    executor->on_restart([this] { restore_after_restart(); });
    compiler.set_arch("sm_" + std::to_string(info.cc));
    tools.begin_compile(compiler.arch());  // runs while the caller goes on; prepare() installs the kernels
  }

  /// A replacement worker gets the tool kernels and, if a problem is prepared, its inputs (regenerated from
  /// the seed) and expected values again.
  void restore_after_restart() {
    tools.reinstall(*executor);
    if (!prepared) return;
    data->restore_inputs([this] { return adapter->make_inputs(current.workload, current.problem, current.seed); });
    if (current.compare_installed) setup->install_compare_kernels();
    if (!current.checks.empty()) data->upload_expected(current.expected, setup->expected_names());
  }

  void prepare(const Workload& w, const ProblemKey& p, std::uint64_t s) {
    adapter->validate_inputs(w, p);  // files the inputs come from: a SpecError before anything else
    data->reset();                   // waits for the previous problem's allocation ahead, if it still runs
    // Compile options depend on the workload: what was queued for another one is of no use now. What expect()
    // queued for this problem compiles on while the inputs are made.
    if (expected_for != case_key(w, p)) compiler.pipeline().cancel();
    expected_for.clear();
    prepared = false;
    current.expected.clear();
    current.checks.clear();
    current.compare_cubin.clear();
    current.compare_installed = false;
    current.workload = w;
    current.problem = p;
    current.seed = s;
    race_best_ms = 0;
    race_best_spread = 0;
    executor->call_ok(detail::ReleaseRequest{}, "releasing the previous problem failed");
    setup->make();
    tools.install_once(*executor);
    if (!current.checks.empty()) {
      double ms = 0;
      {
        ScopedTimer t(ms);
        data->upload_expected(current.expected, setup->expected_names());
      }
      counters.setup_ms["expected_upload"] = ms;
    }
    prepared = true;
  }

  /// Loads the binary, runs the plan once on poisoned outputs and synchronises; then, with copy_outputs, the
  /// outputs are in `outputs` (copied out of the shared region into buffers reused from trial to trial), and
  /// the verdict of every check comes back.
  detail::Outcome<detail::LoadRunRequest::Reply> load_run(const LaunchPlan& plan, const CompileResult& cr,
                                                           bool copy_outputs) {
    detail::LoadRunRequest q;
    q.plan = plan;
    q.cubin = cr.cubin;
    q.fd = executor->region_fd();
    q.copy_outputs = copy_outputs;
    q.region_bytes = data->inputs_end() + (copy_outputs ? detail::output_region_bytes(plan) : 0);
    q.outputs_at = data->inputs_end();
    if (!copy_outputs) q.checks = current.checks;
    q.repeat = opt.repeat_check;
    region.reserve(q.region_bytes);
    auto r = executor->call(q, effective_timeout(opt, best_run_seconds));
    if (r.ok() && copy_outputs) take_outputs(r.body.outputs, q.region_bytes);
    return r;
  }

  void take_outputs(const std::vector<detail::OutputPlace>& places, std::size_t region_bytes) {
    const unsigned char* base = region.map(region.fd(), region_bytes);
    std::set<std::string> seen;
    for (const detail::OutputPlace& o : places) {
      if (o.offset > region_bytes || o.bytes > region_bytes - o.offset)
        throw EnvironmentError("the GPU executor placed output '" + o.name + "' outside the shared region");
      std::vector<unsigned char>& host = outputs[o.name];
      host.resize(o.bytes);  // keeps its capacity from earlier trials: no allocation, no page faults
      if (o.bytes != 0) std::memcpy(host.data(), base + o.offset, o.bytes);
      seen.insert(o.name);
    }
    for (auto it = outputs.begin(); it != outputs.end();)
      it = seen.count(it->first) != 0 ? std::next(it) : outputs.erase(it);
  }

  // ---- evaluation ------------------------------------------------------------------------------------

  /// Before prepare(w, p): the compile threads start on the first configurations (the options need only the
  /// workload), so the first binaries are ready when the set-up ends.
  void expect(const Workload& w, const ProblemKey& p, const std::vector<Config>& configs) {
    compiler.pipeline().cancel();
    prepared = false;
    current.workload = w;
    current.problem = p;
    expected_for = case_key(w, p);
    compiler.pipeline().prefetch(compiler.items(w, configs));
  }

  void prefetch(const std::vector<Config>& configs) {
    if (!prepared) return;
    compiler.pipeline().prefetch(compiler.items(current.workload, configs));
  }

  std::vector<Measurement> evaluate(const std::vector<Config>& configs) {
    if (!prepared) throw UsageError("CudaBackend::evaluate() called before prepare()");
    std::vector<LaunchPlan> plans;
    plans.reserve(configs.size());
    for (const Config& c : configs) plans.push_back(adapter->plan(c, current.workload, current.problem, info));
    // The GPU measures whichever configuration's binary is ready first while the compile threads work on the
    // others (compile times differ by configuration: in order, the GPU would wait for every slow one).
    std::vector<Measurement> out(configs.size());
    compiler.pipeline().consume_as_ready(
        compiler.items(current.workload, configs),
        [&](std::size_t i, const CompileResult& binary) { out[i] = measure(plans[i], binary); });
    return out;
  }

  BackendStats stats() const {
    BackendStats st = counters;
    st.compile = compiler.pipeline().stats();
    st.compile_jobs = compiler.pipeline().jobs();
    return st;
  }

  /// "" if the verification run's outputs match; else the mismatch message (is_verification_failure(), or
  /// mismatches that the checks' policies accept: kAcceptedPrefix).
  std::string mismatch_of(const detail::LoadRunRequest::Reply& reply) const {
    const std::string where = " (" + current.workload.key() + ", " + current.problem.key() + ")";
    if (current.checks.empty()) return adapter->verify(outputs, current.expected, current.workload, current.problem);
    if (reply.verdicts.size() != current.checks.size())
      throw EnvironmentError("the GPU executor returned a wrong number of verdicts");
    return verdict_message(current.checks, reply.verdicts, where);
  }

  Measurement measure(const LaunchPlan& plan, const CompileResult& cr) {
    Measurement m;
    m.protocol = detail::timing_protocol(opt, setup->flush_bytes() != 0);
    m.compile_ms = cr.cached ? 0.0 : cr.ms;
    if (!cr.ok) {
      // A configuration past the hardware's limits is one the device cannot run, as a launch past them is.
      m.status = exceeds_hardware_limits(cr.log) ? TrialStatus::invalid_resources : TrialStatus::compile_error;
      m.log = detail::excerpt(cr.log, detail::kLogExcerpt);
      return m;
    }

    // Verification run on poisoned outputs.
    const auto verify_start = std::chrono::steady_clock::now();
    ++counters.verified;
    std::optional<ScopedTimer> verify_time;
    verify_time.emplace(counters.verify_ms);
    auto r = load_run(plan, cr, current.checks.empty());
    if (detail::failed(r, m)) return m;
    const double run_seconds = seconds_since(verify_start);
    std::string mismatch = mismatch_of(r.body);
    if (!is_verification_failure(mismatch) && !r.body.repeat_mismatch.empty())
      mismatch = "not bit-reproducible run to run: a second run on the same inputs gave other bytes (" +
                 r.body.repeat_mismatch + ")";
    m.verify_ms = seconds_since(verify_start) * 1e3;
    if (is_verification_failure(mismatch)) {
      m.status = TrialStatus::wrong_result;
      m.log = detail::excerpt(mismatch, detail::kLogExcerpt);
      executor->call_ok(detail::UnloadRequest{}, "unloading a module failed");
      // A wrong kernel may have written into its inputs.
      executor->call_ok(detail::RestoreInputsRequest{}, "restoring the inputs failed");
      return m;
    }
    verify_time.reset();
    if (best_run_seconds <= 0 || run_seconds < best_run_seconds) best_run_seconds = run_seconds;
    time(m, run_seconds);
    if (!mismatch.empty() && m.ok()) m.log = detail::excerpt(mismatch, detail::kLogExcerpt);  // accepted, kept
    return m;
  }

  /// Warm-up and timed samples of the module loaded by the verification run.
  void time(Measurement& m, double run_seconds) {
    ++counters.timed;
    ScopedTimer benchmark_time(counters.benchmark_ms);
    const detail::TimeRequest q = detail::time_request(opt, race_best_ms, race_best_spread);
    auto r = executor->call(q, detail::time_limit(opt, best_run_seconds, q, run_seconds));
    if (detail::failed(r, m)) return;
    const bool raced = detail::record_samples(r.body, q.rule, m);
    if (!raced && (race_best_ms <= 0 || m.median_ns / 1e6 < race_best_ms)) {
      race_best_ms = m.median_ns / 1e6;
      race_best_spread = m.spread;
    }
    // Each distinct note once (an observer that opened may fail later, e.g. the counters where profiling is refused).
    const std::string& note = r.body.observer_note;
    if (!note.empty() && observer_note.find(note) == std::string::npos && observer_note.size() < 4000)
      observer_note += (observer_note.empty() ? "" : "; ") + note;
  }

  // ---- the final pick's interleaved re-timing (Backend::time_interleaved) ------------------------------------

  /// The executor keeps one module loaded at a time, so each sample is a load with one run (the run also warms
  /// the kernel up; no outputs copied, no checks: the configuration verified before), then a time request of one
  /// warm-up and one sample, L2 flushed before it as always, no observers, no racing.
  std::vector<std::vector<double>> time_interleaved(const std::vector<Config>& configs, int rounds,
                                                    double max_seconds) {
    if (!prepared) throw UsageError("CudaBackend::time_interleaved() called before prepare()");
    const std::size_t n = configs.size();
    std::vector<LaunchPlan> plans;
    plans.reserve(n);
    for (const Config& c : configs) plans.push_back(adapter->plan(c, current.workload, current.problem, info));
    std::vector<CompileResult> binaries(n);
    compiler.pipeline().consume_in_order(compiler.items(current.workload, configs),
                                         [&](std::size_t i, CompileResult cr) { binaries[i] = std::move(cr); });
    detail::TimeRequest q = detail::time_request(opt, 0, 0);
    q.warmup = 1;
    q.rule.min_samples = q.rule.max_samples = 1;
    q.rule.stable_ci = 0;
    q.observe = false;
    q.energy_ms = 0;
    q.metrics.clear();
    const double run_s = best_run_seconds > 0 ? best_run_seconds : 1.0;
    std::vector<std::vector<double>> out(n);
    std::vector<bool> dropped(n, false);
    for (std::size_t i = 0; i < n; ++i) dropped[i] = !binaries[i].ok;
    const auto start = std::chrono::steady_clock::now();
    ScopedTimer benchmark_time(counters.benchmark_ms);
    for (int r = 0; r < rounds; ++r) {
      for (std::size_t i = 0; i < n; ++i) {
        if (dropped[i]) continue;
        detail::LoadRunRequest lq;
        lq.plan = plans[i];
        lq.cubin = binaries[i].cubin;
        lq.fd = executor->region_fd();
        lq.copy_outputs = false;
        lq.region_bytes = data->inputs_end();
        lq.outputs_at = data->inputs_end();
        region.reserve(lq.region_bytes);
        auto lr = executor->call(lq, effective_timeout(opt, best_run_seconds));
        if (!lr.ok()) {
          dropped[i] = true;
          continue;
        }
        auto tr = executor->call(q, detail::time_limit(opt, best_run_seconds, q, run_s));
        if (!tr.ok() || tr.body.samples_ms.empty()) {
          dropped[i] = true;
          continue;
        }
        out[i].push_back(tr.body.samples_ms.front() * 1e6);
      }
      if (r + 1 >= 3 && seconds_since(start) > max_seconds) break;
    }
    for (std::size_t i = 0; i < n; ++i)
      if (dropped[i]) out[i].clear();
    return out;
  }
};

double effective_timeout(const TimingOptions& options, double best_run_seconds) {
  if (options.timeout_seconds > 0) return options.timeout_seconds;
  if (!(best_run_seconds > 0)) return kAutoTimeoutCeiling;
  return std::min(kAutoTimeoutCeiling, std::max(kAutoTimeoutFloor, kAutoTimeoutFactor * best_run_seconds));
}

CudaBackend::CudaBackend(std::shared_ptr<const KernelAdapter> adapter, TimingOptions options, BinaryCache* cache)
    : impl_(std::make_unique<Impl>(std::move(adapter), std::move(options), cache)) {}

CudaBackend::~CudaBackend() = default;

DeviceInfo CudaBackend::device() const { return impl_->info; }

std::string CudaBackend::compiler_version() const { return nvrtc_version(); }

void CudaBackend::prepare(const Workload& w, const ProblemKey& p, std::uint64_t seed) {
  impl_->prepare(w, p, seed);
}

double CudaBackend::copy_bandwidth_gbps() { return impl_->setup->copy_bandwidth(); }

std::uint64_t CudaBackend::free_device_memory_bytes() { return impl_->setup->free_memory(); }

std::vector<Measurement> CudaBackend::evaluate(const std::vector<Config>& configs) {
  return impl_->evaluate(configs);
}

std::optional<std::vector<std::vector<double>>> CudaBackend::time_interleaved(const std::vector<Config>& configs,
                                                                              int rounds, double max_seconds) {
  return impl_->time_interleaved(configs, rounds, max_seconds);
}

void CudaBackend::prefetch(const std::vector<Config>& configs) { impl_->prefetch(configs); }

bool CudaBackend::ready(const Config& c) {
  return impl_->prepared && impl_->compiler.pipeline().ready(impl_->compiler.key_of(impl_->current.workload, c));
}

bool CudaBackend::wait_ready(const std::vector<Config>& configs, double seconds) {
  if (!impl_->prepared) return true;
  std::vector<std::string> keys;
  keys.reserve(configs.size());
  for (const Config& c : configs) keys.push_back(impl_->compiler.key_of(impl_->current.workload, c));
  return impl_->compiler.pipeline().wait_any_for(keys, seconds);
}

void CudaBackend::expect(const Workload& w, const ProblemKey& p, const std::vector<Config>& configs) {
  impl_->expect(w, p, configs);
}

BackendStats CudaBackend::stats() const { return impl_->stats(); }

std::string CudaBackend::verification() const { return impl_->current.verification; }
std::string CudaBackend::observer_note() const { return impl_->observer_note; }

}  // namespace autotune::cuda
