#include "tuner/cuda/problem_setup.hpp"

#include <algorithm>
#include <future>
#include <utility>

#include "tuner/core/error.hpp"
#include "tuner/core/text.hpp"
#include "tuner/core/timer.hpp"
#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/trial_reply.hpp"

namespace autotune::cuda::detail {
namespace {

// Device memory left free when checking that a problem fits (modules, stacks, lazily allocated driver
// memory).
constexpr std::size_t kMemoryReserve = std::size_t{256} << 20;
constexpr double kCopyTimeoutS = 300;

/// Inputs of this size and more are drawn on the GPU where the adapter can (KernelAdapter::device_draws): below
/// it the host makes them in milliseconds, while the draw kernel's one thread per chunk takes a few either way.
constexpr std::size_t kDeviceDrawFrom = std::size_t{64} << 20;

}  // namespace

void ProblemSetup::make() {
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
    if (!(made && !draws.empty())) data_.prefault(*plan, !draws.empty());
  }
  if (draws.empty())
    make_and_upload(plan.has_value(), needed);
  else
    draw_inputs(draws, made, plan.has_value(), needed);
  choose_verification(needed);
  const std::string against = adapter_.spec().reference_text();
  if (!against.empty()) p_.verification += ", against " + against;
}

std::size_t ProblemSetup::flush_bytes() const { return opt_.flush_l2 ? l2_flush_bytes(info_.l2_bytes) : 0; }

/// The recipes of the problem's inputs when the GPU is to draw them: the adapter can, the option allows it and
/// they are large enough to be worth it. Empty: make_inputs() on the host.
std::vector<DrawRecipe> ProblemSetup::device_draws() const {
  if (!opt_.draw_on_device) return {};
  // An adapter whose reference needs every input (it has a device recipe) draws on the GPU only when the GPU
  // makes the expected values too: device_reference() alone says when.
  if (adapter_.device_reference(p_.workload, p_.problem) && !device_reference()) return {};
  std::vector<DrawRecipe> draws = adapter_.device_draws(p_.workload, p_.problem, p_.seed);
  std::size_t bytes = 0;
  for (const DrawRecipe& r : draws) bytes += r.bytes();
  if (bytes < kDeviceDrawFrom) draws.clear();
  return draws;
}

std::set<std::string> ProblemSetup::expected_names() const {
  std::set<std::string> names;
  for (const OutputCheck& c : p_.checks) {
    names.insert(c.expected);
    if (c.kind == OutputCheck::Kind::abs_tolerance) names.insert(c.tolerance);
  }
  for (const std::string& made : data_.expected_made()) names.erase(made);
  return names;
}

std::size_t ProblemSetup::expected_device_bytes() const {
  std::size_t total = 0;
  for (const std::string& name : expected_names()) total += p_.expected.at(name).size();
  return total;
}

/// The recipe of the expected values the GPU is to make from drawn inputs (KernelAdapter::device_reference),
/// when they are to be verified there (the one place that ties making them on the GPU to --verify).
std::optional<PrefixRecipe> ProblemSetup::device_reference() const {
  if (opt_.verify == TimingOptions::Verify::host) return std::nullopt;
  return adapter_.device_reference(p_.workload, p_.problem);
}

std::uint64_t ProblemSetup::free_memory() {
  return executor_.call_ok(MemInfoRequest{}, "querying free device memory failed").free_bytes;
}

void ProblemSetup::check_fits(std::size_t needed) {
  const std::uint64_t free_bytes = free_memory();
  if (needed + kMemoryReserve > free_bytes) {
    throw UsageError(p_.problem.key() + " needs " + gib_text(static_cast<double>(needed)) + " GiB but the GPU has " +
                     gib_text(static_cast<double>(free_bytes)) + " GiB free");
  }
}

/// The default configuration's plan for the problem (its buffers give the device bytes the problem needs and
/// where its data will lie in the shared region); nullopt when it cannot be planned for this device.
std::optional<LaunchPlan> ProblemSetup::default_plan() const {
  try {
    return adapter_.plan(adapter_.spec().default_config(), p_.workload, p_.problem, info_);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception&) {
    return std::nullopt;  // checked with the inputs alone once they are made
  }
}

/// Makes the inputs (on all its cores) while the GPU worker measures the copy bandwidth (once per backend; only
/// when the size check has passed) and ProblemData::prefault allocates the region's pages, and computes the
/// reference while the inputs travel to the GPU: together the set-up takes about as long as its longest part.
/// needed grows by the inputs when the size check could not be made from a plan (estimated == false).
void ProblemSetup::make_and_upload(bool estimated, std::size_t& needed) {
  double inputs_ms = 0, reference_ms = 0;
  HostBuffers inputs;
  {
    std::future<HostBuffers> made = std::async(std::launch::async, [&] {
      ScopedTimer t(inputs_ms);
      return adapter_.make_inputs(p_.workload, p_.problem, p_.seed);
    });
    try {
      if (estimated) copy_bandwidth();
    } catch (...) {
      made.wait();
      throw;
    }
    inputs = made.get();
  }
  counters_.setup_ms["inputs"] = inputs_ms;
  if (!estimated) {
    for (const auto& [name, data] : inputs) needed += data.size();
    check_fits(needed);
  }
  std::optional<HostBuffers> ref;
  {
    std::future<std::optional<HostBuffers>> computed = std::async(std::launch::async, [&] {
      ScopedTimer t(reference_ms);
      return adapter_.reference(inputs, p_.workload, p_.problem);
    });
    try {
      double upload_ms = 0;
      {
        ScopedTimer t(upload_ms);
        data_.upload_inputs(inputs);
      }
      counters_.setup_ms["upload"] = upload_ms;
    } catch (...) {
      computed.wait();
      throw;
    }
    ref = computed.get();
  }
  counters_.setup_ms["reference"] = reference_ms;
  inputs.clear();
  p_.expected = expected_values(std::move(ref));
}

/// Draws the inputs on the GPU (after the copy bandwidth, which needs the device to itself) and makes the
/// expected values from the draws' summaries, or on the GPU from the drawn inputs (`made`): no input is made
/// on the host or travels through the region.
void ProblemSetup::draw_inputs(const std::vector<DrawRecipe>& draws, const std::optional<PrefixRecipe>& made,
                               bool estimated, std::size_t& needed) {
  if (estimated) copy_bandwidth();
  if (!estimated) {
    for (const DrawRecipe& r : draws) needed += r.bytes();
    check_fits(needed + (made ? made->expected_bytes() : 0));
  }
  if (!tools_.installed()) {
    ScopedTimer t(counters_.setup_ms["tools"]);
    tools_.install_once(executor_);
  }
  DrawSummaries summaries;
  {
    ScopedTimer t(counters_.setup_ms["draw"]);
    summaries = data_.draw(draws);
  }
  std::optional<HostBuffers> ref;
  {
    ScopedTimer t(counters_.setup_ms["reference"]);
    if (made) {
      data_.make_expected(*made);
      ref = HostBuffers{};
    } else {
      ref = adapter_.reference_of_draws(summaries, p_.workload, p_.problem);
    }
  }
  if (!ref)
    throw UsageError("kernel '" + adapter_.spec().name + "' draws its inputs on the GPU but has no reference of them");
  p_.expected = expected_values(std::move(ref));
}

/// The expected values: those of the adapter's CPU reference (or files), and the reference kernel's outputs for
/// the outputs it leaves out, where the adapter has a reference kernel.
HostBuffers ProblemSetup::expected_values(std::optional<HostBuffers> ref) {
  const TuningSpec& spec = adapter_.spec();
  std::optional<LaunchPlan> plan = adapter_.reference_plan(p_.workload, p_.problem, info_);
  if (!plan && !ref) throw UsageError("kernel '" + spec.name + "' has neither a CPU reference nor a reference kernel");
  if (!plan) {
    // Comparison kernels are entry points of the reference's source: compiled here when no reference kernel is.
    if (!spec.compare_kernels().empty()) p_.compare_cubin = compile_reference().cubin;
    return std::move(*ref);
  }
  HostBuffers out = run_reference_kernel(*plan);
  if (ref)
    for (auto& [name, bytes] : *ref) out[name] = std::move(bytes);
  return out;
}

/// Sets the checks (GPU comparisons) when asked for and possible, and says which verification is used.
void ProblemSetup::choose_verification(std::size_t needed) {
  p_.checks.clear();
  const std::vector<std::string> compare = adapter_.spec().compare_kernels();
  const std::string gpu_only = compare.empty()
                                   ? ""
                                   : "kernel '" + adapter_.spec().name + "' is verified by its comparison kernel '" +
                                         compare.front() + "' (verification.compare), which runs on the GPU only";
  if (opt_.verify == TimingOptions::Verify::host && !compare.empty())
    throw UsageError(gpu_only + ": --verify host cannot run it");
  if (opt_.verify == TimingOptions::Verify::host) {
    p_.verification = "host (--verify host)";
    return;
  }
  std::vector<OutputCheck> wanted = adapter_.checks(p_.expected, p_.workload, p_.problem);
  if (wanted.empty()) {
    p_.verification = "host (the kernel's adapter describes no comparison kernels)";
    return;
  }
  p_.checks = std::move(wanted);
  // The inputs are on the device already: the configurations' other buffers and the expected values must
  // fit in what is free now.
  const std::size_t extra = expected_device_bytes();
  const std::size_t still_needed = needed - std::min(needed, data_.device_input_bytes());
  if (extra + still_needed + kMemoryReserve > free_memory()) {
    if (!data_.expected_made().empty())
      throw UsageError(p_.problem.key() +
                       ": the expected values made on the GPU leave no room to verify there; "
                       "--inputs-on host makes them on the host");
    if (!compare.empty())
      throw UsageError(gpu_only + ", but the expected values (" + gib_text(static_cast<double>(extra)) +
                       " GiB) do not fit on the GPU next to the problem");
    p_.checks.clear();
    p_.verification = "host (the expected values, " + gib_text(static_cast<double>(extra)) +
                      " GiB, do not fit on the GPU next to the problem)";
    return;
  }
  p_.verification = "device";
  if (!compare.empty()) {
    install_compare_kernels();
    p_.verification += " (comparison kernel " + compare.front() + (compare.size() > 1 ? ", ..." : "") + ")";
  }
}

/// The reference's source compiled with the -D macros of the spec's reference configuration (the default one
/// unless the reference is another configuration of the tuned kernel).
CompileResult ProblemSetup::compile_reference() {
  const TuningSpec& spec = adapter_.spec();
  std::string source = adapter_.reference_source();
  if (source.empty()) source = spec.source_text;
  const std::string& arch = compiler_.arch();
  CompileResult cr = compile(source, spec.headers, spec.name + "_reference.cu",
                             compiler_.options_for(p_.workload, spec.reference_config(), true), arch);
  if (!cr.ok) {
    throw SpecError("/reference", "the reference kernel of '" + spec.name + "' (" + reference_what() +
                                      ") does not compile for " + arch + ":\n" + excerpt(cr.log, kLogExcerpt));
  }
  return cr;
}

/// What the reference is, for messages: "the default configuration (B=128)", "the reference kernel k", ...
std::string ProblemSetup::reference_what() const {
  const std::string text = adapter_.spec().reference_text();
  return text.empty() ? "its reference kernel" : text;
}

HostBuffers ProblemSetup::run_reference_kernel(const LaunchPlan& plan) {
  const TuningSpec& spec = adapter_.spec();
  CompileResult cr = compile_reference();
  if (!spec.compare_kernels().empty()) p_.compare_cubin = cr.cubin;
  HostBuffers out;
  const std::string failure = run_reference_(plan, cr, out);
  if (!failure.empty())
    throw UsageError("the reference of '" + spec.name + "' (" + reference_what() + ") failed: " + failure);
  executor_.call_ok(UnloadRequest{}, "unloading the reference kernel failed");
  return out;
}

void ProblemSetup::install_compare_kernels() {
  if (p_.compare_cubin.empty())
    throw UsageError("kernel '" + adapter_.spec().name +
                     "' names comparison kernels but its reference source was "
                     "not compiled");
  CompareKernelsRequest q;
  q.cubin = p_.compare_cubin;
  executor_.call_ok(q, "loading the comparison kernels failed", kToolsTimeoutS);
  p_.compare_installed = true;
}

double ProblemSetup::copy_bandwidth() {
  if (copy_gbps_) return *copy_gbps_;
  ScopedTimer t(counters_.setup_ms["copy_bandwidth"]);
  auto r = executor_.call(CopyBandwidthRequest{}, kCopyTimeoutS);
  if (!r.ok()) throw EnvironmentError("measuring the copy bandwidth failed: " + r.message);
  copy_gbps_ = r.body.gbps;
  return *copy_gbps_;
}

}  // namespace autotune::cuda::detail
