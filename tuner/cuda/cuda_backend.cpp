// CudaBackend, host side: plans, inputs and references from the adapter; NVRTC compilation (parallel,
// cached); verification and timing requests to the GPU executor (executor_client.hpp), which runs in a worker
// process by default (executor.hpp explains why) or in-process. Outputs are compared on the GPU by comparison
// kernels against expected values kept there (TimingOptions::verify), or copied back and compared on the CPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "tuner/core/compile.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/sampling.hpp"
#include "tuner/core/stats.hpp"
#include "tuner/core/text.hpp"
#include "tuner/core/timer.hpp"
#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/driver.hpp"
#include "tuner/cuda/executor_client.hpp"
#include "tuner/cuda/launcher.hpp"
#include "tuner/cuda/plan_binding.hpp"
#include "tuner/cuda/problem_data.hpp"
#include "tuner/cuda/runtime.hpp"

namespace autotune::cuda {
using detail::CallStatus;

namespace {

// Device memory left free when checking that a problem fits (modules, stacks, lazily allocated driver
// memory).
constexpr std::size_t kMemoryReserve = std::size_t{256} << 20;
constexpr std::size_t kLogExcerpt = 2000;
constexpr double kCopyTimeoutS = 300;
constexpr double kToolsTimeoutS = 300;

std::string excerpt(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return text.substr(0, max_chars) + "\n... (" + std::to_string(text.size() - max_chars) + " more characters)";
}

double seconds_since(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::string basename_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Inputs of this size and more are drawn on the GPU where the adapter can (KernelAdapter::device_draws): below
/// it the host makes them in milliseconds, while the draw kernel's one thread per chunk takes a few either way.
constexpr std::size_t kDeviceDrawFrom = std::size_t{64} << 20;

/// Fills status and log of m from a failed request; false if it succeeded.
bool failed(const CallStatus& r, Measurement& m) {
  switch (r.kind) {
    case CallStatus::Kind::ok: return false;
    case CallStatus::Kind::cuda_error:
      m.status = !r.sticky && r.message.rfind(detail::kInvalidResourcesPrefix, 0) == 0 ? TrialStatus::invalid_resources
                 : !r.sticky                                                               ? TrialStatus::launch_error
                 : r.code == CUDA_ERROR_LAUNCH_TIMEOUT                                     ? TrialStatus::timeout
                                                                                           : TrialStatus::runtime_fault;
      break;
    case CallStatus::Kind::timeout: m.status = TrialStatus::timeout; break;
    case CallStatus::Kind::died: m.status = TrialStatus::runtime_fault; break;
  }
  m.log = r.message;
  m.median_ns = m.min_ns = m.spread = 0;
  m.samples = 0;
  return true;
}

}  // namespace

struct CudaBackend::Impl {
  std::shared_ptr<const KernelAdapter> adapter;
  TimingOptions opt;
  BinaryCache* cache = nullptr;
  DeviceInfo info;
  std::string arch;  // "sm_90"
  std::vector<unsigned char> tools_cubin;           // device_kernels.hpp for arch
  std::shared_future<CompileResult> tools_compile;  // its compilation, started once the arch is known
  bool tools_installed = false;                     // the executor has them (set by the first prepare())

  detail::SharedRegion region;  // the problem's inputs (unless drawn on the GPU), then outputs or expected values
  std::unique_ptr<detail::ExecutorClient> executor;
  std::unique_ptr<detail::ProblemData> data;  // where the problem's data lie, over region and executor

  bool prepared = false;
  Workload workload;
  ProblemKey problem;
  std::uint64_t seed = 0;
  HostBuffers expected;
  std::vector<OutputCheck> checks;  // non-empty: outputs are compared on the GPU
  std::vector<unsigned char> compare_cubin;  // the reference's module, holding the spec's comparison kernels
  bool compare_installed = false;            // the executor has compare_cubin loaded
  std::string verification = "host";
  HostBuffers outputs;  // verification outputs on the host path, reused (no allocation per trial)
  std::optional<double> copy_gbps;
  std::string observer_note;  // why the GPU worker observes nothing (no NVML ...), from its first timing
  double best_run_seconds = 0;  // fastest verification run of a configuration that verified (0: none yet)
  // The best fully sampled median of the prepared problem and its spread, for racing (0: none yet).
  double race_best_ms = 0, race_best_spread = 0;
  std::string expected_for;                                      // case_key() of the last expect() not yet prepared
  std::unordered_map<std::string, std::string> keys_by_options;  // compile_item(): binary key by the options

  CompilePipeline pipeline;
  BackendStats counters;  // verify and benchmark parts; the compile part comes from the pipeline

  Impl(std::shared_ptr<const KernelAdapter> a, TimingOptions o, BinaryCache* c)
      : adapter(std::move(a)), opt(o), cache(c), pipeline(o.jobs, c) {
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
    executor->on_restart([this] { restore_after_restart(); });
    begin_tools_compile();  // runs while the caller goes on; prepare() installs the kernels
  }

  // ---- tool kernels and restarts ---------------------------------------------------------------------

  /// Starts compiling the tool kernels (L2 flush, comparisons) for this GPU on a thread of its own (once).
  void begin_tools_compile() {
    arch = "sm_" + std::to_string(info.cc);
    if (!tools_cubin.empty() || tools_compile.valid()) return;
    tools_compile = std::async(std::launch::async, [a = arch] {
                      return compile(detail::tool_kernels_source(), {}, "autotune_tools.cu",
                                     detail::tool_kernels_options(), a);
                    }).share();
  }

  /// Hands the tool kernels (compiled once) to the executor: the L2 flush reads a 2x L2 buffer before each
  /// timed run instead of writing it, and the comparison kernels verify outputs on the device.
  void install_tool_kernels() {
    if (tools_cubin.empty()) {
      begin_tools_compile();
      CompileResult r = tools_compile.get();
      if (!r.ok)
        throw EnvironmentError("the tuner's own kernels do not compile for " + arch + ":\n" +
                               excerpt(r.log, kLogExcerpt));
      tools_cubin = std::move(r.cubin);
    }
    detail::ToolKernelsRequest q;
    q.cubin = tools_cubin;
    executor->call_ok(q, "loading the tool kernels failed", kToolsTimeoutS);
  }

  /// A replacement worker gets the tool kernels and, if a problem is prepared, its inputs (regenerated from
  /// the seed) and expected values again.
  void restore_after_restart() {
    if (tools_installed) install_tool_kernels();
    if (!prepared) return;
    data->restore_inputs([this] { return adapter->make_inputs(workload, problem, seed); });
    if (compare_installed) install_compare_kernels();
    if (!checks.empty()) data->upload_expected(expected, expected_names());
  }

  /// Hands the module with the spec's comparison kernels (the reference kernel's, built by
  /// run_reference_kernel) to the executor.
  void install_compare_kernels() {
    if (compare_cubin.empty())
      throw UsageError("kernel '" + adapter->spec().name + "' names comparison kernels but its reference source was "
                       "not compiled");
    detail::CompareKernelsRequest q;
    q.cubin = compare_cubin;
    executor->call_ok(q, "loading the comparison kernels failed", kToolsTimeoutS);
    compare_installed = true;
  }

  // ---- problem ---------------------------------------------------------------------------------------

  std::size_t flush_bytes() const { return opt.flush_l2 ? detail::l2_flush_bytes(info.l2_bytes) : 0; }

  /// The recipes of the problem's inputs when the GPU is to draw them: the adapter can, the option allows it and
  /// they are large enough to be worth it. Empty: make_inputs() on the host.
  std::vector<DrawRecipe> device_draws() const {
    if (!opt.draw_on_device) return {};
    // An adapter whose reference needs every input (it has a device recipe) draws on the GPU only when the GPU
    // makes the expected values too: device_reference() alone says when.
    if (adapter->device_reference(workload, problem) && !device_reference()) return {};
    std::vector<DrawRecipe> draws = adapter->device_draws(workload, problem, seed);
    std::size_t bytes = 0;
    for (const DrawRecipe& r : draws) bytes += r.bytes();
    if (bytes < kDeviceDrawFrom) draws.clear();
    return draws;
  }

  /// Names of the expected buffers the checks read (values and tolerances), each once, but those the GPU made
  /// itself (ProblemData::make_expected): the ones that go from the host to the device.
  std::set<std::string> expected_names() const {
    std::set<std::string> names;
    for (const OutputCheck& c : checks) {
      names.insert(c.expected);
      if (c.kind == OutputCheck::Kind::abs_tolerance) names.insert(c.tolerance);
    }
    for (const std::string& made : data->expected_made()) names.erase(made);
    return names;
  }

  std::size_t expected_device_bytes() const {
    std::size_t total = 0;
    for (const std::string& name : expected_names()) total += expected.at(name).size();
    return total;
  }

  /// The recipe of the expected values the GPU is to make from drawn inputs (KernelAdapter::device_reference),
  /// when they are to be verified there (the one place that ties making them on the GPU to --verify).
  std::optional<PrefixRecipe> device_reference() const {
    if (opt.verify == TimingOptions::Verify::host) return std::nullopt;
    return adapter->device_reference(workload, problem);
  }

  std::uint64_t free_memory() {
    return executor->call_ok(detail::MemInfoRequest{}, "querying free device memory failed").free_bytes;
  }

  void check_fits(std::size_t needed) {
    const std::uint64_t free_bytes = free_memory();
    if (needed + kMemoryReserve > free_bytes) {
      throw UsageError(problem.key() + " needs " + gib_text(static_cast<double>(needed)) + " GiB but the GPU has " +
                       gib_text(static_cast<double>(free_bytes)) + " GiB free");
    }
  }

  std::vector<std::string> options_for(const Config& c, bool reference = false) const {
    return kernel_compile_options(*adapter, workload, c, reference);
  }

  std::string program_name() const {
    const TuningSpec& spec = adapter->spec();
    if (!spec.source_path.empty()) return basename_of(spec.source_path);
    return (spec.name.empty() ? std::string("kernel") : spec.name) + ".cu";
  }

  /// The default configuration's plan for the problem (its buffers give the device bytes the problem needs and
  /// where its data will lie in the shared region); nullopt when it cannot be planned for this device.
  std::optional<LaunchPlan> default_plan() const {
    try {
      return adapter->plan(adapter->spec().default_config(), workload, problem, info);
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception&) {
      return std::nullopt;  // checked with the inputs alone once they are made
    }
  }

  void prepare(const Workload& w, const ProblemKey& p, std::uint64_t s) {
    adapter->validate_inputs(w, p);  // files the inputs come from: a SpecError before anything else
    data->reset();                   // waits for the previous problem's allocation ahead, if it still runs
    // Compile options depend on the workload: what was queued for another one is of no use now. What expect()
    // queued for this problem compiles on while the inputs are made.
    if (expected_for != case_key(w, p)) pipeline.cancel();
    expected_for.clear();
    prepared = false;
    expected.clear();
    checks.clear();
    compare_cubin.clear();
    compare_installed = false;
    workload = w;
    problem = p;
    seed = s;
    race_best_ms = 0;
    race_best_spread = 0;
    executor->call_ok(detail::ReleaseRequest{}, "releasing the previous problem failed");
    std::vector<DrawRecipe> draws = device_draws();
    const std::optional<PrefixRecipe> made = draws.empty() ? std::nullopt : device_reference();

    // Size check before any host or device allocation, from the plan of the default configuration.
    const std::optional<LaunchPlan> plan = default_plan();
    std::size_t needed = flush_bytes();
    if (plan) {
      for (const auto& b : plan->buffers) needed += b.bytes;
      check_fits(needed);
      // Expected values made on the GPU must fit there next to the problem; else the host makes everything.
      if (made && needed + made->expected_bytes() + kMemoryReserve > free_memory()) draws.clear();
      // With everything made on the GPU, nothing of this problem passes through the region.
      if (!(made && !draws.empty())) data->prefault(*plan, !draws.empty());
    }
    if (draws.empty())
      make_and_upload(plan.has_value(), needed);
    else
      draw_inputs(draws, made, plan.has_value(), needed);
    choose_verification(needed);
    const std::string against = adapter->spec().reference_text();
    if (!against.empty()) verification += ", against " + against;
    if (!tools_installed) {
      install_tool_kernels();
      tools_installed = true;
    }
    if (!checks.empty()) {
      double ms = 0;
      {
        ScopedTimer t(ms);
        data->upload_expected(expected, expected_names());
      }
      counters.setup_ms["expected_upload"] = ms;
    }
    prepared = true;
  }

  /// Makes the inputs (on all its cores) while the GPU worker measures the copy bandwidth (once per backend; only
  /// when the size check has passed) and ProblemData::prefault allocates the region's pages, and computes the
  /// reference while the inputs travel to the GPU: together the set-up takes about as long as its longest part.
  /// needed grows by the inputs when the size check could not be made from a plan (estimated == false).
  void make_and_upload(bool estimated, std::size_t& needed) {
    double inputs_ms = 0, reference_ms = 0;
    HostBuffers inputs;
    {
      std::future<HostBuffers> made = std::async(std::launch::async, [&] {
        ScopedTimer t(inputs_ms);
        return adapter->make_inputs(workload, problem, seed);
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
        return adapter->reference(inputs, workload, problem);
      });
      try {
        double upload_ms = 0;
        {
          ScopedTimer t(upload_ms);
          data->upload_inputs(inputs);
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
    expected = expected_values(std::move(ref));
  }

  /// Draws the inputs on the GPU (after the copy bandwidth, which needs the device to itself) and makes the
  /// expected values from the draws' summaries, or on the GPU from the drawn inputs (`made`): no input is made
  /// on the host or travels through the region.
  void draw_inputs(const std::vector<DrawRecipe>& draws, const std::optional<PrefixRecipe>& made, bool estimated,
                   std::size_t& needed) {
    if (estimated) copy_bandwidth();
    if (!estimated) {
      for (const DrawRecipe& r : draws) needed += r.bytes();
      check_fits(needed + (made ? made->expected_bytes() : 0));
    }
    if (!tools_installed) {
      ScopedTimer t(counters.setup_ms["tools"]);
      install_tool_kernels();
      tools_installed = true;
    }
    DrawSummaries summaries;
    {
      ScopedTimer t(counters.setup_ms["draw"]);
      summaries = data->draw(draws);
    }
    std::optional<HostBuffers> ref;
    {
      ScopedTimer t(counters.setup_ms["reference"]);
      if (made) {
        data->make_expected(*made);
        ref = HostBuffers{};
      } else {
        ref = adapter->reference_of_draws(summaries, workload, problem);
      }
    }
    if (!ref)
      throw UsageError("kernel '" + adapter->spec().name +
                       "' draws its inputs on the GPU but has no reference of them");
    expected = expected_values(std::move(ref));
  }

  /// The expected values: those of the adapter's CPU reference (or files), and the reference kernel's outputs for
  /// the outputs it leaves out, where the adapter has a reference kernel.
  HostBuffers expected_values(std::optional<HostBuffers> ref) {
    const TuningSpec& spec = adapter->spec();
    std::optional<LaunchPlan> plan = adapter->reference_plan(workload, problem, info);
    if (!plan && !ref)
      throw UsageError("kernel '" + spec.name + "' has neither a CPU reference nor a reference kernel");
    if (!plan) {
      // Comparison kernels are entry points of the reference's source: compiled here when no reference kernel is.
      if (!spec.compare_kernels().empty()) compare_cubin = compile_reference().cubin;
      return std::move(*ref);
    }
    HostBuffers out = run_reference_kernel(*plan);
    if (ref)
      for (auto& [name, bytes] : *ref) out[name] = std::move(bytes);
    return out;
  }

  /// Sets checks (GPU comparisons) when asked for and possible, and says which verification is used.
  void choose_verification(std::size_t needed) {
    checks.clear();
    const std::vector<std::string> compare = adapter->spec().compare_kernels();
    const std::string gpu_only = compare.empty() ? "" : "kernel '" + adapter->spec().name +
                                 "' is verified by its comparison kernel '" + compare.front() +
                                 "' (verification.compare), which runs on the GPU only";
    if (opt.verify == TimingOptions::Verify::host && !compare.empty())
      throw UsageError(gpu_only + ": --verify host cannot run it");
    if (opt.verify == TimingOptions::Verify::host) {
      verification = "host (--verify host)";
      return;
    }
    std::vector<OutputCheck> wanted = adapter->checks(expected, workload, problem);
    if (wanted.empty()) {
      verification = "host (the kernel's adapter describes no comparison kernels)";
      return;
    }
    checks = std::move(wanted);
    // The inputs are on the device already: the configurations' other buffers and the expected values must
    // fit in what is free now.
    const std::size_t extra = expected_device_bytes();
    const std::size_t still_needed = needed - std::min(needed, data->device_input_bytes());
    if (extra + still_needed + kMemoryReserve > free_memory()) {
      if (!data->expected_made().empty())
        throw UsageError(problem.key() +
                         ": the expected values made on the GPU leave no room to verify there; "
                         "--inputs-on host makes them on the host");
      if (!compare.empty())
        throw UsageError(gpu_only + ", but the expected values (" + gib_text(static_cast<double>(extra)) +
                         " GiB) do not fit on the GPU next to the problem");
      checks.clear();
      verification = "host (the expected values, " + gib_text(static_cast<double>(extra)) +
                     " GiB, do not fit on the GPU next to the problem)";
      return;
    }
    verification = "device";
    if (!compare.empty()) {
      install_compare_kernels();
      verification += " (comparison kernel " + compare.front() + (compare.size() > 1 ? ", ..." : "") + ")";
    }
  }

  /// The reference's source compiled with the -D macros of the spec's reference configuration (the default one
  /// unless the reference is another configuration of the tuned kernel).
  CompileResult compile_reference() {
    const TuningSpec& spec = adapter->spec();
    std::string source = adapter->reference_source();
    if (source.empty()) source = spec.source_text;
    CompileResult cr =
        compile(source, spec.headers, spec.name + "_reference.cu", options_for(spec.reference_config(), true), arch);
    if (!cr.ok) {
      throw SpecError("/reference", "the reference kernel of '" + spec.name + "' (" + reference_what() +
                                        ") does not compile for " + arch + ":\n" + excerpt(cr.log, kLogExcerpt));
    }
    return cr;
  }

  /// What the reference is, for messages: "the default configuration (B=128)", "the reference kernel k", ...
  std::string reference_what() const {
    const std::string text = adapter->spec().reference_text();
    return text.empty() ? "its reference kernel" : text;
  }

  HostBuffers run_reference_kernel(const LaunchPlan& plan) {
    const TuningSpec& spec = adapter->spec();
    CompileResult cr = compile_reference();
    if (!spec.compare_kernels().empty()) compare_cubin = cr.cubin;
    auto r = load_run(plan, cr, true);
    if (!r.ok())
      throw UsageError("the reference of '" + spec.name + "' (" + reference_what() + ") failed: " + r.message);
    HostBuffers out = outputs;
    executor->call_ok(detail::UnloadRequest{}, "unloading the reference kernel failed");
    return out;
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
    if (!copy_outputs) q.checks = checks;
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

  /// The binary-cache key of a configuration compiled with these options. The key hashes the whole source and its
  /// headers (tens of KB) and a configuration is named several times (upcoming, its batch, the readiness checks of
  /// a time-limited batch, evaluated), so keys are kept by their options (which include the workload's macros).
  const std::string& key_for(const std::vector<std::string>& options) {
    std::string joined;
    for (const std::string& o : options) {
      joined += o;
      joined += '\0';
    }
    auto known = keys_by_options.find(joined);
    if (known == keys_by_options.end())
      known = keys_by_options.emplace(std::move(joined), spec_binary_key(adapter->spec(), options, arch)).first;
    return known->second;
  }

  /// The key alone, for the readiness checks (no compile task is built).
  const std::string& key_of(const Config& c) { return key_for(options_for(c)); }

  /// The compile task of a configuration and its binary-cache key.
  CompilePipeline::Item compile_item(const Config& c) {
    std::vector<std::string> options = options_for(c);
    CompilePipeline::Item item;
    item.key = key_for(options);
    item.task = [spec = &adapter->spec(), name = program_name(), options = std::move(options), a = arch,
                 processes = opt.compile_processes] {
      return processes ? compile_in_worker(spec->source_text, spec->headers, name, options, a)
                       : compile(spec->source_text, spec->headers, name, options, a);
    };
    return item;
  }

  /// Before prepare(w, p): the compile threads start on the first configurations (the options need only the
  /// workload), so the first binaries are ready when the set-up ends.
  void expect(const Workload& w, const ProblemKey& p, const std::vector<Config>& configs) {
    pipeline.cancel();
    prepared = false;
    workload = w;
    problem = p;
    expected_for = case_key(w, p);
    std::vector<CompilePipeline::Item> items;
    items.reserve(configs.size());
    for (const Config& c : configs) items.push_back(compile_item(c));
    pipeline.prefetch(std::move(items));
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
    // The GPU measures whichever configuration's binary is ready first while the compile threads work on the
    // others (compile times differ by configuration: in order, the GPU would wait for every slow one).
    std::vector<Measurement> out(configs.size());
    pipeline.consume_as_ready(std::move(items),
                              [&](std::size_t i, const CompileResult& binary) { out[i] = measure(plans[i], binary); });
    return out;
  }

  BackendStats stats() const {
    BackendStats st = counters;
    st.compile = pipeline.stats();
    st.compile_jobs = pipeline.jobs();
    return st;
  }

  /// "" if the verification run's outputs match; else the mismatch message (is_verification_failure(), or
  /// mismatches that the checks' policies accept: kAcceptedPrefix).
  std::string mismatch_of(const detail::LoadRunRequest::Reply& reply) const {
    const std::string where = " (" + workload.key() + ", " + problem.key() + ")";
    if (checks.empty()) return adapter->verify(outputs, expected, workload, problem);
    if (reply.verdicts.size() != checks.size())
      throw EnvironmentError("the GPU executor returned a wrong number of verdicts");
    return verdict_message(checks, reply.verdicts, where);
  }

  Measurement measure(const LaunchPlan& plan, const CompileResult& cr) {
    Measurement m;
    m.protocol = protocol();
    m.compile_ms = cr.cached ? 0.0 : cr.ms;
    if (!cr.ok) {
      // A configuration past the hardware's limits is one the device cannot run, as a launch past them is.
      m.status = exceeds_hardware_limits(cr.log) ? TrialStatus::invalid_resources : TrialStatus::compile_error;
      m.log = excerpt(cr.log, kLogExcerpt);
      return m;
    }

    // Verification run on poisoned outputs.
    const auto verify_start = std::chrono::steady_clock::now();
    ++counters.verified;
    std::optional<ScopedTimer> verify_time;
    verify_time.emplace(counters.verify_ms);
    auto r = load_run(plan, cr, checks.empty());
    if (failed(r, m)) return m;
    const double run_seconds = seconds_since(verify_start);
    const std::string mismatch = mismatch_of(r.body);
    m.verify_ms = seconds_since(verify_start) * 1e3;
    if (is_verification_failure(mismatch)) {
      m.status = TrialStatus::wrong_result;
      m.log = excerpt(mismatch, kLogExcerpt);
      executor->call_ok(detail::UnloadRequest{}, "unloading a module failed");
      // A wrong kernel may have written into its inputs.
      executor->call_ok(detail::RestoreInputsRequest{}, "restoring the inputs failed");
      return m;
    }
    verify_time.reset();
    if (best_run_seconds <= 0 || run_seconds < best_run_seconds) best_run_seconds = run_seconds;
    time(m, run_seconds);
    if (!mismatch.empty() && m.ok()) m.log = excerpt(mismatch, kLogExcerpt);  // accepted mismatches, kept
    return m;
  }

  /// Warm-up and timed samples of the module loaded by the verification run.
  void time(Measurement& m, double run_seconds) {
    ++counters.timed;
    ScopedTimer benchmark_time(counters.benchmark_ms);
    detail::TimeRequest q;
    q.warmup = opt.warmup;
    q.flush_l2 = opt.flush_l2;
    q.rule = sampling();
    if (opt.race_margin > 0 && race_best_ms > 0) {
      q.rule.race_above_ms = race_best_ms * (1 + std::max(opt.race_margin, 2 * race_best_spread));
      q.rule.race_probe_factor = kRaceProbeFactor;
    }
    q.observe = opt.observe;
    q.energy_ms = opt.observe ? opt.energy_ms : 0.0;
    const double time_limit = effective_timeout(opt, best_run_seconds) + opt.max_seconds_per_config +
                              2.0 * q.energy_ms / 1e3 +
                              2.0 * (opt.warmup + std::min(opt.samples, std::max(opt.min_samples, 1))) * run_seconds;
    auto r = executor->call(q, time_limit);
    if (failed(r, m)) return;
    std::vector<double>& ms = r.body.samples_ms;
    if (ms.empty()) throw EnvironmentError("the GPU executor returned no samples");
    const bool probed_out = r.body.lost_probe;
    const bool raced = probed_out || q.rule.lost_race(ms);
    std::sort(ms.begin(), ms.end());
    m.status = TrialStatus::ok;
    m.median_ns = stats::median_sorted(ms) * 1e6;
    m.min_ns = ms.front() * 1e6;
    m.spread = stats::relative_spread_sorted(ms);
    m.samples = static_cast<int>(ms.size());
    m.observed = r.body.observed;
    if (raced) {
      m.protocol += probed_out ? ";raced>" + fmt("%.4g", kRaceProbeFactor * q.rule.race_above_ms) + "ms@probe"
                               : ";raced>" + fmt("%.4g", q.rule.race_above_ms) + "ms";
    } else if (race_best_ms <= 0 || m.median_ns / 1e6 < race_best_ms) {
      race_best_ms = m.median_ns / 1e6;
      race_best_spread = m.spread;
    }
    if (!r.body.observer_note.empty() && observer_note.empty()) observer_note = r.body.observer_note;
  }

  double copy_bandwidth() {
    if (copy_gbps) return *copy_gbps;
    ScopedTimer t(counters.setup_ms["copy_bandwidth"]);
    auto r = executor->call(detail::CopyBandwidthRequest{}, kCopyTimeoutS);
    if (!r.ok()) throw EnvironmentError("measuring the copy bandwidth failed: " + r.message);
    copy_gbps = r.body.gbps;
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

bool CudaBackend::ready(const Config& c) { return impl_->prepared && impl_->pipeline.ready(impl_->key_of(c)); }

bool CudaBackend::wait_ready(const std::vector<Config>& configs, double seconds) {
  if (!impl_->prepared) return true;
  std::vector<std::string> keys;
  keys.reserve(configs.size());
  for (const Config& c : configs) keys.push_back(impl_->key_of(c));
  return impl_->pipeline.wait_any_for(keys, seconds);
}

void CudaBackend::expect(const Workload& w, const ProblemKey& p, const std::vector<Config>& configs) {
  impl_->expect(w, p, configs);
}

BackendStats CudaBackend::stats() const { return impl_->stats(); }

std::string CudaBackend::verification() const { return impl_->verification; }
std::string CudaBackend::observer_note() const { return impl_->observer_note; }

}  // namespace autotune::cuda
