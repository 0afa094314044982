// Host side of a kernel family: inputs, CPU reference, launch plan, verification, bytes moved.
// Implementations live in tuner/kernels/ and know no CUDA types.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/check.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/draw.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/plan.hpp"
#include "tuner/core/spec.hpp"

namespace autotune {

class KernelAdapter {
 public:
  virtual ~KernelAdapter() = default;

  const TuningSpec& spec() const { return spec_; }

  /// NVRTC options besides the parameter defines (e.g. "-DT=float", "-DOP_SUM=1").
  virtual std::vector<std::string> compile_options(const Workload& w) const = 0;

  /// Buffers and steps of one run. Throws UsageError if the problem cannot be run (e.g. n == 0).
  virtual LaunchPlan plan(const Config& c, const Workload& w, const ProblemKey& p,
                          const DeviceInfo& d) const = 0;

  /// Host contents of every input buffer, deterministic in seed, random and non-zero where the type allows.
  virtual HostBuffers make_inputs(const Workload& w, const ProblemKey& p, std::uint64_t seed) const = 0;

  /// Inputs the GPU can draw itself (tuner/core/draw.hpp): one recipe per input buffer, giving exactly the bytes
  /// make_inputs() gives for this seed. Empty (the default): the inputs are made on the host. An adapter offers
  /// this only where reference_of_draws() makes the expected values from the draws' chunk summaries, or
  /// device_reference() has the GPU make them from the drawn inputs.
  virtual std::vector<DrawRecipe> device_draws(const Workload& w, const ProblemKey& p, std::uint64_t seed) const {
    (void)w;
    (void)p;
    (void)seed;
    return {};
  }

  /// The expected values that reference() would give for the inputs of device_draws(), from the chunk summaries
  /// of the drawn inputs alone (by input name). nullopt: not possible (the default).
  virtual std::optional<HostBuffers> reference_of_draws(const DrawSummaries& summaries, const Workload& w,
                                                        const ProblemKey& p) const {
    (void)summaries;
    (void)w;
    (void)p;
    return std::nullopt;
  }

  /// Expected values the GPU makes from the inputs on the device, the same bytes as reference() would give for
  /// them (tuner/core/draw.hpp): for a family whose reference needs every value (a scan's prefixes). Used with
  /// device_draws() and verification on the GPU, in place of reference_of_draws(); its buffers are the ones
  /// checks() names. nullopt: not possible (the default).
  virtual std::optional<PrefixRecipe> device_reference(const Workload& w, const ProblemKey& p) const {
    (void)w;
    (void)p;
    return std::nullopt;
  }

  /// Checks, without making them, that the inputs and expected values of this problem can be made: for a user
  /// kernel, that the files its spec names exist and hold the dtype and element count the problem needs (a
  /// .npy header or a file size at most is read). Throws SpecError with the field's JSON pointer, naming the
  /// argument and the file. Called before a problem's first compilation (the CLI, CudaBackend::prepare).
  virtual void validate_inputs(const Workload& w, const ProblemKey& p) const {
    (void)w;
    (void)p;
  }

  /// Expected outputs computed on the CPU (the adapter's own encoding; only verify() reads it).
  /// Adapters that check against a reference kernel instead return nullopt and provide reference_plan(). An
  /// adapter may return the expected values of some outputs only (a user kernel's outputs with expected values
  /// from files) and provide reference_plan() too: the reference kernel's outputs fill in the others.
  virtual std::optional<HostBuffers> reference(const HostBuffers& inputs, const Workload& w,
                                               const ProblemKey& p) const = 0;

  /// Plan of the reference kernel (compiled from reference_source() with the -D macros of the spec's
  /// reference_config()), run once per problem; its output buffers become the expected values of the outputs
  /// that reference() leaves out.
  virtual std::optional<LaunchPlan> reference_plan(const Workload&, const ProblemKey&,
                                                   const DeviceInfo&) const { return std::nullopt; }
  virtual std::string reference_source() const { return {}; }

  /// "" if outputs match expected; otherwise a one-line description of the first mismatch.
  virtual std::string verify(const HostBuffers& outputs, const HostBuffers& expected, const Workload& w,
                             const ProblemKey& p) const = 0;

  /// verify()'s comparisons as data (tuner/core/check.hpp), so that the CUDA backend can run them as
  /// comparison kernels next to expected values kept on the GPU: one OutputCheck per output, in the order a
  /// message should report them; they must accept exactly what verify() accepts. expected is what reference()
  /// (or the reference kernel) produced. Empty (the default): outputs are copied back and verify() runs.
  virtual std::vector<OutputCheck> checks(const HostBuffers& expected, const Workload& w,
                                          const ProblemKey& p) const {
    (void)expected;
    (void)w;
    (void)p;
    return {};
  }

  /// checks() from the sizes of the expected values alone (output name -> bytes), for a comparison with another
  /// configuration's outputs rather than with a reference (online tuning, tuner/runtime/online.*). Empty (the
  /// default): the family's comparisons need the expected values themselves.
  virtual std::vector<OutputCheck> checks_of_sizes(const std::map<std::string, std::size_t>& expected_bytes,
                                                   const Workload& w, const ProblemKey& p) const {
    (void)expected_bytes;
    (void)w;
    (void)p;
    return {};
  }

  /// Bytes one run must move through device memory at least (for GB/s).
  virtual double bytes_moved(const Workload& w, const ProblemKey& p) const = 0;

 protected:
  explicit KernelAdapter(TuningSpec spec) : spec_(std::move(spec)) {}
  TuningSpec spec_;
};

}  // namespace autotune
