// Public face of the CUDA module: device discovery, NVRTC compilation and the CUDA backend.
// No CUDA header is included here; the driver is loaded with dlopen("libcuda.so.1") on first use.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "tuner/core/adapter.hpp"
#include "tuner/core/backend.hpp"

namespace autotune::cuda {

/// True if libcuda.so.1 loads, cuInit succeeds and at least one GPU exists; otherwise reason says why
/// (e.g. "no NVIDIA driver/GPU found: libcuda.so.1 cannot be loaded"). Thread-safe.
bool driver_available(std::string* reason = nullptr);

/// All GPUs. Throws EnvironmentError with the reason when no driver/GPU is usable.
std::vector<DeviceInfo> list_devices();

/// NVRTC version, e.g. "13.0". Works without a GPU.
std::string nvrtc_version();

/// A compilation's outcome and the persistent store of binaries live in core (tuner/core/compile.hpp), where the
/// compile pipeline uses them; cubin holds the CUBIN and log the NVRTC log.
using CompileResult = autotune::CompileResult;
using BinaryCache = autotune::BinaryCache;
/// Named headers of a compilation: include name -> text (what a source includes in quotes).
using Headers = std::map<std::string, std::string>;

/// Compiles source to CUBIN for arch ("sm_90") with -std=c++17, the toolkit include path, and options
/// (e.g. "-DBLOCK_SIZE=256"). Failure is a result, not an exception (EnvironmentError only if NVRTC itself
/// is unusable). Thread-safe. Works without a GPU.
/// The include path is the toolkit's include directory fixed at build time plus its cccl/ subfolder (CUB,
/// libcu++), or the ':'-separated directories of the environment variable AUTOTUNE_CUDA_INCLUDE_DIR.
/// An -std= option in options replaces the default -std=c++17.
/// `headers` go to NVRTC as named headers (include name -> text: a spec's TuningSpec::headers, e.g.
/// "common/lookback.cuh"), so a source that includes them in quotes needs no include path; nothing else is added.
CompileResult compile(const std::string& source, const Headers& headers, const std::string& program_name,
                      const std::vector<std::string>& options, const std::string& arch);

/// Whether a failed compilation's log is ptxas refusing the configuration for the hardware's limits (static
/// shared memory past 48 KB, too much local memory, more registers than the launch bounds allow): the device
/// cannot run that configuration, the kernel is not broken.
bool exceeds_hardware_limits(const std::string& compile_log);

/// compile() in a compile worker process of the calling thread: this executable started again from
/// /proc/self/exe with AUTOTUNE_NVRTC_WORKER_FD set, which a static initializer of this library serves before
/// main() (NVRTC does not scale across the threads of one process, but does across processes). Started on
/// first use, kept for the thread's lifetime, replaced if it died. Same results as compile(), byte for byte.
/// A worker that dies or does not answer within 120 s is killed and the request retried once in a new one;
/// a second failure is a failed result whose log says so. If no worker can be started, compiles in-process.
/// On a CompilePipeline thread whose task was abandoned (compile_abandoned(): the pipeline was cancelled), the
/// worker is killed mid-compilation and a failed result returns at once. Thread-safe.
CompileResult compile_in_worker(const std::string& source, const Headers& headers, const std::string& program_name,
                                const std::vector<std::string>& options, const std::string& arch);

/// Prefix of the pseudo-option that names an entry point by a C++ name expression (compile() passes it to
/// nvrtcAddNameExpression, which instantiates a template such as "my_kernel<float, 4>", instead of to NVRTC's
/// options; being an option it is part of the binary cache key).
inline constexpr const char* kNameExpressionOption = "--autotune-name-expression=";

/// Whether an entry point is a C++ name expression rather than a plain identifier (extern "C" or not): it has
/// template arguments or a scope ("my_kernel<float, 4>", "ns::k").
bool is_name_expression(const std::string& entry_point);

/// kNameExpressionOption + name for every entry point that is_name_expression(), in order.
std::vector<std::string> name_expression_options(const std::vector<std::string>& entry_points);

/// An entry point's name, as a C++ name expression, matches a demangled function name: "my_kernel<float, 4>"
/// matches "void my_kernel<float, 4>(float*, int)", "cn_pnpoly" matches "cn_pnpoly(int*, float2 const*, int)"
/// (white space, the return type and the parameter list are ignored). How a loaded module finds C++ entry points.
bool entry_point_matches(const std::string& expression, const std::string& demangled);

/// "-DNAME=value" for every parameter of the config, plus "-DAUTOTUNE_STRICT=1".
/// A parameter of `params` with macro texts (string- or float-valued) gives its text instead of the number.
std::vector<std::string> config_defines(const Config& c, const std::vector<Param>& params = {});

/// Hash of source + options + NVRTC version + arch + the named headers compile() gets with it: the key of a
/// cached binary.
std::string binary_key(const std::string& source, const Headers& headers, const std::vector<std::string>& options,
                       const std::string& arch);

/// Blocks of `kernel` (an entry point of binary.cubin) that can be resident on one SM at once with
/// `block_threads` threads per block and `dynamic_shared_bytes` bytes of dynamic shared memory, as the driver
/// computes it (cuOccupancyMaxActiveBlocksPerMultiprocessor: registers, shared memory, thread and block limits).
/// 0 means the block cannot run at all. Loads the binary into the primary context of GPU `device` and unloads
/// it again. Throws EnvironmentError when no driver/GPU is usable, UsageError when binary is a failed
/// compilation, cannot be loaded, lacks `kernel`, or block_threads < 1. Thread-safe (implemented in
/// occupancy.cpp).
int max_active_blocks_per_sm(const CompileResult& binary, const std::string& kernel, int block_threads,
                             std::size_t dynamic_shared_bytes, int device = 0);

struct TimingOptions {
  int warmup = 3;            // untimed runs before sampling
  int samples = 15;          // most timed runs (>= 7 recommended); median, min, spread and the count are stored
  int min_samples = 7;       // fewest timed runs (capped at samples)
  /// Sampling stops after min_samples once the 95% confidence interval of the median is at most this fraction
  /// of the median (SamplingRule in tuner/core/sampling.hpp); 0 = always take `samples`.
  double stable_ci = 0.02;
  bool flush_l2 = true;      // overwrite a buffer of 2x the L2 size before each sample
  double max_seconds_per_config = 2.0;  // sampling stops early after this much GPU time (>= min_samples)
  /// Early rejection (racing): a configuration whose first 3 timed runs are all slower than the best median so
  /// far of this problem by more than this fraction (or by twice the best's spread, if larger) stops sampling
  /// there; it is recorded with those samples and ";raced" in its protocol. The best configuration always gets
  /// the full protocol, so the best and its median do not change. 0 = off (every configuration fully sampled).
  /// With racing on, the first warm-up run is timed as a probe: above kRaceProbeFactor x that bound, the
  /// configuration stops there, before any sample (";raced>T ms@probe").
  double race_margin = 0.0;
  /// Observe clocks, power, temperature and throttle reasons through NVML while sampling (where NVML is
  /// available; AUTOTUNE_NVML=off or a missing libnvidia-ml.so.1 measures time only). docs/observers.md.
  bool observe = true;
  /// After the samples, back-to-back runs for about this long between two readings of NVML's energy counter,
  /// for the energy per run (the counter updates coarsely: a window of many runs). 0 = no energy window (the
  /// default: the window costs about this much per configuration; `tune` opens one for energy objectives).
  double energy_ms = 0.0;
  /// Hardware counters taken per configuration in a replay after its samples (cuda/counters.hpp names, as
  /// resolve_metrics returns them; CUPTI's profiling API, where libcupti.so.13 loads and the machine allows
  /// profiling: else the trials carry none and observer_note() says why). Empty (the default) = no replay.
  /// docs/observers.md.
  std::vector<std::string> metrics;
  int jobs = 0;              // compile threads (0 = hardware concurrency)
  /// Each compile thread sends its NVRTC compilations to a compile worker process of its own
  /// (compile_in_worker); false: NVRTC runs on the compile threads themselves (slower with several threads).
  bool compile_processes = true;
  int device = 0;            // ordinal
  /// Run GPU work in a worker process (this executable, restarted after a fault): a sticky fault such as an
  /// illegal address cannot be recovered inside a process. false: in-process, and after a sticky fault the
  /// backend throws EnvironmentError on its next use.
  bool isolate = true;
  /// Where outputs are compared with the expected values. device (the default): the expected values stay on
  /// the GPU for the problem's lifetime and comparison kernels send back only a verdict, for adapters that
  /// describe their comparisons (KernelAdapter::checks()) and when the expected values fit in device memory
  /// next to the problem; otherwise, and with host, the outputs are copied back and KernelAdapter::verify()
  /// compares them on the CPU.
  enum class Verify { device, host };
  Verify verify = Verify::device;
  /// Draw the inputs on the GPU where the kernel family can (KernelAdapter::device_draws: the reduction's
  /// built-in operators, every scan workload) and they take 64 MiB or more: the same values as on the host, and
  /// expected values made from the draw's summaries (reduction) or on the GPU from the drawn inputs (scan, when
  /// verified there), so the inputs never pass through host memory. false: always on the host.
  bool draw_on_device = true;
  /// Limit for one verification run (isolate only; the timing phase gets this plus its expected duration):
  /// past it the worker is killed -> TrialStatus::timeout, and a new worker takes over.
  /// 0 (the default): derived from the session, see effective_timeout().
  double timeout_seconds = 0.0;
  /// Run-to-run check (tune --deterministic): the verified configuration runs a second time on poisoned outputs
  /// and must give the same output bytes, else it is wrong_result ("not bit-reproducible run to run: ..."). The
  /// outputs of both runs are copied to host memory for the comparison.
  bool repeat_check = false;
};

/// Racing's warm-up probe (TimingOptions::race_margin): a single run without an L2 flush loses when it is more
/// than this many times the bound of the samples' race (2.5x the best so far at the default margin of 25%).
constexpr double kRaceProbeFactor = 2.0;

/// Automatic verification timeout: before any configuration verified, kAutoTimeoutCeiling; then
/// kAutoTimeoutFactor x the fastest verification run so far (load, poisoned run, outputs back), at least
/// kAutoTimeoutFloor and at most kAutoTimeoutCeiling seconds.
constexpr double kAutoTimeoutFactor = 50.0;
constexpr double kAutoTimeoutFloor = 10.0;
constexpr double kAutoTimeoutCeiling = 60.0;
/// The limit for one verification run: options.timeout_seconds when positive, else the automatic one for the
/// fastest verification run so far (best_run_seconds <= 0: none yet).
double effective_timeout(const TimingOptions& options, double best_run_seconds);

/// NVRTC options of an adapter's source at configuration c (reference = false), or of its reference's source
/// (reference = true, c = the spec's reference_config(): the default configuration, or the configuration a
/// "reference": {"configuration": ...} names): the adapter's compile_options(w), the configuration's -D macros
/// (config_defines), the spec's defines, then the C++ entry points as name expressions: the spec's kernels
/// (unless the reference has a source of its own), the reference kernel, and for the reference the comparison
/// kernels. Entry points take c's values ("scale<BLOCK_SIZE>" -> "scale<256>"). Works without a GPU.
std::vector<std::string> kernel_compile_options(const KernelAdapter& adapter, const Workload& w, const Config& c,
                                                bool reference);

/// The binary key of the spec's source (with its headers) compiled with `options` for arch.
std::string spec_binary_key(const TuningSpec& spec, const std::vector<std::string>& options, const std::string& arch);

/// How a configuration is compiled and where its binary is cached: kernel_compile_options() and
/// spec_binary_key() of them. The one recipe of the tuner (CudaBackend), the launch API and `autotune explore`:
/// what one caches the others find. Works without a GPU.
struct CompileRecipe {
  std::vector<std::string> options;
  std::string key;
};
CompileRecipe compile_recipe(const KernelAdapter& adapter, const Workload& w, const Config& c, const std::string& arch,
                             bool reference = false);

/// Backend that compiles with NVRTC, verifies against the adapter's reference on poisoned outputs, and
/// times with CUDA events. Not thread-safe (one session at a time).
/// With TimingOptions::isolate (the default) the GPU work runs in a worker process: the host executable
/// started again from /proc/self/exe with AUTOTUNE_CUDA_WORKER_FD set, which a static initializer of this
/// library serves before main() runs. Inputs are re-created from the seed when a worker is replaced.
class CudaBackend : public Backend {
 public:
  /// Throws EnvironmentError if no driver/GPU is usable.
  CudaBackend(std::shared_ptr<const KernelAdapter> adapter, TimingOptions options,
              BinaryCache* cache = nullptr);
  ~CudaBackend() override;
  DeviceInfo device() const override;
  std::string kind() const override { return "cuda"; }
  std::string compiler_version() const override;
  void prepare(const Workload& w, const ProblemKey& p, std::uint64_t seed) override;
  double copy_bandwidth_gbps() override;
  std::vector<Measurement> evaluate(const std::vector<Config>& configs) override;
  /// Each sample a load of the configuration's module with one run, then one warm-up and one timed run after an L2
  /// flush (the executor holds one module at a time); a configuration whose load or timing fails is dropped.
  std::optional<std::vector<std::vector<double>>> time_interleaved(const std::vector<Config>& configs, int rounds,
                                                                   double max_seconds) override;
  /// Free memory of the GPU (cuMemGetInfo) as seen by the context that runs the trials (the worker's with
  /// isolate); used to check that long sessions leak neither device memory nor modules.
  std::uint64_t free_device_memory_bytes();
  /// Starts compiling these configurations on the compile threads (binary cache first).
  void prefetch(const std::vector<Config>& configs) override;
  bool ready(const Config& c) override;
  bool wait_ready(const std::vector<Config>& configs, double seconds) override;
  void expect(const Workload& w, const ProblemKey& p, const std::vector<Config>& configs) override;
  BackendStats stats() const override;
  /// Where the prepared problem's outputs are compared: "device" or "host", with the reason when the device
  /// was asked for but cannot be used (e.g. "host (the adapter describes no comparison kernels)").
  std::string verification() const override;
  std::string observer_note() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace autotune::cuda
