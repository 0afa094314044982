// Verification on the GPU (comparison kernels against expected values kept on the device) and on the host
// (outputs copied back, KernelAdapter::verify()) agree, for every family and a user kernel: both accept a
// correct output, both reject planted faults: one wrong element at the end, a NaN, a wrong count. The faults
// are planted by memset steps appended to the configuration's launch plan, so they reach the output after
// the kernel wrote it, exactly where a wrong kernel would leave them.
#include <catch2/catch.hpp>

#include "scan_support.hpp"
#include "test_support.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tuner/core/compile.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using autotune_test::size_n;

namespace {

void require_gpu() {
  std::string reason;
  if (!cuda::driver_available(&reason)) FAIL("the gpu tier needs a GPU: " + reason);
}

/// A family adapter whose plans end with extra steps (the planted faults); everything else is the family's.
class PlantingAdapter : public KernelAdapter {
 public:
  PlantingAdapter(std::shared_ptr<const KernelAdapter> inner, std::vector<LaunchStep> plant)
      : KernelAdapter(inner->spec()), inner_(std::move(inner)), plant_(std::move(plant)) {}

  std::vector<std::string> compile_options(const Workload& w) const override { return inner_->compile_options(w); }
  LaunchPlan plan(const Config& c, const Workload& w, const ProblemKey& p, const DeviceInfo& d) const override {
    LaunchPlan plan = inner_->plan(c, w, p, d);
    for (const LaunchStep& s : plant_) plan.steps.push_back(s);
    return plan;
  }
  HostBuffers make_inputs(const Workload& w, const ProblemKey& p, std::uint64_t seed) const override {
    return inner_->make_inputs(w, p, seed);
  }
  void validate_inputs(const Workload& w, const ProblemKey& p) const override { inner_->validate_inputs(w, p); }
  std::optional<HostBuffers> reference(const HostBuffers& in, const Workload& w, const ProblemKey& p) const override {
    return inner_->reference(in, w, p);
  }
  std::optional<LaunchPlan> reference_plan(const Workload& w, const ProblemKey& p, const DeviceInfo& d) const override {
    return inner_->reference_plan(w, p, d);  // the reference kernel's plan: nothing planted
  }
  std::string reference_source() const override { return inner_->reference_source(); }
  std::string verify(const HostBuffers& out, const HostBuffers& expected, const Workload& w,
                     const ProblemKey& p) const override {
    return inner_->verify(out, expected, w, p);
  }
  std::vector<OutputCheck> checks(const HostBuffers& expected, const Workload& w, const ProblemKey& p) const override {
    return inner_->checks(expected, w, p);
  }
  double bytes_moved(const Workload& w, const ProblemKey& p) const override { return inner_->bytes_moved(w, p); }

 private:
  std::shared_ptr<const KernelAdapter> inner_;
  std::vector<LaunchStep> plant_;
};

/// Steps that overwrite element `index` (of element_bytes 4 or 8) of `buffer` with the bits of `value`.
std::vector<LaunchStep> overwrite(const std::string& buffer, std::size_t index, std::uint32_t element_bytes,
                                  std::uint64_t value) {
  std::vector<LaunchStep> steps;
  const std::size_t offset = index * element_bytes;
  steps.push_back(LaunchStep::fill32(buffer, static_cast<std::uint32_t>(value), 1, offset));
  if (element_bytes == 8) steps.push_back(LaunchStep::fill32(buffer, static_cast<std::uint32_t>(value >> 32), 1, offset + 4));
  return steps;
}

/// Bits of a value that no correct output holds here: 1e30 (float or double), or the largest int32.
std::uint64_t wrong_bits(std::uint32_t element_bytes, bool floating) {
  if (!floating) return 0x7fffffffu;
  if (element_bytes == 4) {
    const float f = 1e30f;
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }
  const double d = 1e30;
  std::uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

std::uint64_t nan_bits(std::uint32_t element_bytes) {
  return element_bytes == 4 ? 0x7fc00000ull : 0x7ff8000000000000ull;
}

cuda::TimingOptions options(cuda::TimingOptions::Verify verify) {
  cuda::TimingOptions opt;
  opt.warmup = 0;
  opt.samples = 1;
  opt.min_samples = 1;
  opt.flush_l2 = false;
  opt.verify = verify;
  return opt;
}

struct Case {
  std::string name;  // what is planted
  std::vector<LaunchStep> plant;
  std::string mismatch_at;  // expected in the device verdict's message, e.g. "out[1048578]"; "" = correct
};

/// Runs the default configuration of spec under each plant, once with GPU and once with host verification,
/// and checks that both reach the same verdict.
void check_agreement(const TuningSpec& spec, const Workload& w, const ProblemKey& p, const std::vector<Case>& cases) {
  const std::uint64_t seed = 20261125;
  for (const Case& c : cases) {
    TrialStatus status[2];
    std::string log[2];
    int k = 0;
    for (auto mode : {cuda::TimingOptions::Verify::device, cuda::TimingOptions::Verify::host}) {
      auto adapter = std::make_shared<PlantingAdapter>(kernels::make_adapter(spec), c.plant);
      MemoryBinaryCache cache;
      cuda::CudaBackend backend(adapter, options(mode), &cache);
      backend.prepare(w, p, seed);
      const bool device = mode == cuda::TimingOptions::Verify::device;
      INFO(spec.name << " " << w.key() << " " << p.key() << ", " << c.name << ", verification "
                     << backend.verification());
      // A user kernel's verification says what its expected values come from.
      const std::string against = spec.reference_text().empty() ? "" : ", against " + spec.reference_text();
      if (device)
        CHECK(backend.verification() == "device" + against);
      else CHECK(backend.verification().rfind("host", 0) == 0);
      const std::vector<Measurement> m = backend.evaluate({spec.default_config()});
      REQUIRE(m.size() == 1);
      status[k] = m[0].status;
      log[k] = m[0].log;
      ++k;
    }
    INFO(spec.name << " " << w.key() << " " << p.key() << ", " << c.name << "\n  device: " << log[0]
                   << "\n  host:   " << log[1]);
    CHECK(status[0] == status[1]);
    if (c.mismatch_at.empty()) {
      CHECK(status[0] == TrialStatus::ok);
    } else {
      CHECK(status[0] == TrialStatus::wrong_result);
      CHECK(log[0].find(c.mismatch_at) != std::string::npos);
    }
  }
}

/// The correct output, one wrong element at the end of "out" (last_index), and a NaN in its middle (floats).
std::vector<Case> element_cases(std::size_t last_index, std::uint32_t element_bytes, bool floating) {
  const std::string at_end = "out[" + std::to_string(last_index) + "]";
  std::vector<Case> cases = {{"nothing planted", {}, ""},
                             {"one wrong element at the end", overwrite("out", last_index, element_bytes,
                                                                        wrong_bits(element_bytes, floating)),
                              at_end}};
  if (floating) {
    const std::size_t mid = last_index / 2;
    cases.push_back({"NaN", overwrite("out", mid, element_bytes, nan_bits(element_bytes)),
                     "out[" + std::to_string(mid) + "]"});
  }
  return cases;
}

/// element_cases for the output of workload w: elements of its dtype's size, the NaN case for a floating dtype.
std::vector<Case> element_cases(std::size_t last_index, const Workload& w) {
  const bool floating = w.dtype.rfind("float", 0) == 0;
  return element_cases(last_index, w.dtype == "float64" ? 8 : 4, floating);
}

}  // namespace

TEST_CASE("GPU and host verification agree on reductions, correct and planted-wrong", "[gpu][verify]") {
  require_gpu();
  const TuningSpec s = specs::builtin_spec("reduction");
  for (const char* wk : {"float32/sum", "float64/sum", "int32/max", "float32/min"}) {
    const Workload w = Workload::parse(wk);
    check_agreement(s, w, size_n((std::int64_t{1} << 22) + 3), element_cases(0, w));
  }
}

TEST_CASE("GPU and host verification agree on scans, correct and planted-wrong", "[gpu][verify]") {
  require_gpu();
  const TuningSpec s = specs::builtin_spec("scan");
  for (const char* wk : {"float32/inclusive_sum", "float64/exclusive_sum", "int32/inclusive_sum", "float32/inclusive_max"}) {
    const Workload w = Workload::parse(wk);
    // Large enough that the comparison runs on its most blocks, odd so that the last block is partial.
    const std::int64_t n = (std::int64_t{1} << 26) + 7;
    check_agreement(s, w, size_n(n), element_cases(static_cast<std::size_t>(n - 1), w));
  }
}

TEST_CASE("GPU and host verification agree on transposes, correct and planted-wrong", "[gpu][verify]") {
  require_gpu();
  const TuningSpec s = specs::builtin_spec("transpose");
  ProblemKey p;
  p.dims = {{"rows", 4001}, {"cols", 2999}};
  for (const char* wk : {"float32", "float64"}) {
    const Workload w = Workload::parse(wk);
    check_agreement(s, w, p, element_cases(4001 * 2999 - 1, w));
  }
}

TEST_CASE("GPU and host verification agree on compactions, correct, wrong count and wrong element", "[gpu][verify]") {
  require_gpu();
  const TuningSpec s = specs::builtin_spec("compaction");
  ProblemKey p;
  p.dims = {{"n", (std::int64_t{1} << 24) + 5}, {"select_pct", 50}};
  for (const char* wk : {"int32/flagged", "float32/if"}) {
    const Workload w = Workload::parse(wk);
    auto adapter = kernels::make_adapter(s);
    const HostBuffers expected = *adapter->reference(adapter->make_inputs(w, p, 20261125), w, p);
    std::int32_t count = 0;
    std::memcpy(&count, expected.at("count").data(), 4);
    REQUIRE(count > 1);
    std::vector<Case> cases = element_cases(static_cast<std::size_t>(count - 1), w);
    cases.push_back({"a count one too high", overwrite("count", 0, 4, static_cast<std::uint32_t>(count + 1)), "count[0]"});
    cases.push_back({"a count one too low", overwrite("count", 0, 4, static_cast<std::uint32_t>(count - 1)), "count[0]"});
    check_agreement(s, w, p, cases);
  }
}

TEST_CASE("GPU and host verification agree on a user kernel with a reference kernel", "[gpu][verify]") {
  require_gpu();
  const TuningSpec s = specs::load_spec(autotune_test::data_dir() + "/../../examples/saxpy/saxpy.tune.json");
  const std::int64_t n = (std::int64_t{1} << 24) + 1;
  const std::vector<Case> cases = element_cases(static_cast<std::size_t>(n - 1), 4, true);
  check_agreement(s, s.workloads.front(), size_n(n), cases);
}
