// Verification policies of user kernels on the GPU, with the comparison kernels (verify device) and on the host
// (verify host): a planted single mismatch passes under a mismatch-fraction limit and fails without it; a planted
// relative error passes under a relative or an absolute tolerance; the log keeps accepted mismatches.
#include <catch2/catch.hpp>

#include <map>
#include <optional>

#include "test_support.hpp"
#include "tuner/core/check.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

struct Case {
  const char* name;
  VerifyPolicy policy;
  TrialStatus plant, nudge, both;  // expected statuses of PLANT=1, NUDGE=1, both (PLANT=0 NUDGE=0 is always ok)
};

}  // namespace

TEST_CASE("verification policies: a planted mismatch, a planted relative error", "[gpu][verify_policy]") {
  const TrialStatus ok = TrialStatus::ok, wrong = TrialStatus::wrong_result;
  const Case cases[] = {
      {"bit-exact (no policy)", {}, wrong, wrong, wrong},
      {"max_mismatch_fraction 1e-4", {std::nullopt, std::nullopt, 1e-4, std::nullopt}, ok, wrong, wrong},
      {"relative 1e-5", {1e-5, std::nullopt, std::nullopt, std::nullopt}, wrong, ok, wrong},
      {"absolute 1e-5", {std::nullopt, 1e-5, std::nullopt, std::nullopt}, wrong, ok, wrong},
      {"relative 1e-5 + max_mismatch_fraction 1e-4", {1e-5, std::nullopt, 1e-4, std::nullopt}, ok, ok, ok},
  };
  for (const auto verify : {cuda::TimingOptions::Verify::device, cuda::TimingOptions::Verify::host}) {
    for (const Case& c : cases) {
      TuningSpec spec = specs::load_spec(autotune_test::data_dir() + "/specs/planted.tune.json");
      spec.verification = c.policy;
      cuda::TimingOptions to;
      to.samples = 7;
      to.verify = verify;
      cuda::CudaBackend backend(kernels::make_adapter(spec), to);
      backend.prepare(spec.workloads.front(), ProblemKey::parse("n=100003"), 7);
      auto cfg = [](Value plant, Value nudge) { return Config({{"PLANT", plant}, {"NUDGE", nudge}}); };
      const std::vector<Measurement> r = backend.evaluate({cfg(0, 0), cfg(1, 0), cfg(0, 1), cfg(1, 1)});
      INFO(c.name << (verify == cuda::TimingOptions::Verify::host ? " (host)" : " (device)") << "\n"
                  << r[1].log << "\n" << r[2].log << "\n" << r[3].log);
      CHECK(r[0].status == ok);
      CHECK(r[1].status == c.plant);
      CHECK(r[2].status == c.nudge);
      CHECK(r[3].status == c.both);
      // The mismatch count and the first mismatch are in the log, accepted or not.
      CHECK_THAT(r[1].log, Catch::Contains("y[12345]") && Catch::Contains("1 of 100003 elements differ"));
      if (c.plant == ok) CHECK_THAT(r[1].log, Catch::StartsWith(kAcceptedPrefix));
    }
  }
}

TEST_CASE("a comparison kernel of the user decides on the GPU", "[gpu][verify_policy]") {
  const TrialStatus ok = TrialStatus::ok, wrong = TrialStatus::wrong_result;
  const Case cases[] = {
      {"compare within_half", {std::nullopt, std::nullopt, std::nullopt, "within_half"}, wrong, ok, wrong},
      {"compare within_half + max_mismatch_fraction 1e-4", {std::nullopt, std::nullopt, 1e-4, "within_half"}, ok, ok,
       ok},
  };
  auto cfg = [](Value plant, Value nudge) { return Config({{"PLANT", plant}, {"NUDGE", nudge}}); };
  for (const Case& c : cases) {
    TuningSpec spec = specs::load_spec(autotune_test::data_dir() + "/specs/planted.tune.json");
    spec.verification = c.policy;
    cuda::TimingOptions to;
    to.samples = 7;
    cuda::CudaBackend backend(kernels::make_adapter(spec), to);
    backend.prepare(spec.workloads.front(), ProblemKey::parse("n=100003"), 7);
    const std::vector<Measurement> r = backend.evaluate({cfg(0, 0), cfg(1, 0), cfg(0, 1), cfg(1, 1)});
    INFO(c.name << "\n" << r[0].log << "\n" << r[1].log << "\n" << r[2].log << "\n" << r[3].log);
    CHECK(r[0].status == ok);
    CHECK(r[1].status == c.plant);
    CHECK(r[2].status == c.nudge);
    CHECK(r[3].status == c.both);
    CHECK_THAT(r[1].log, Catch::Contains("y[12345]") && Catch::Contains("1 of 100003 elements differ") &&
                             Catch::Contains("comparison kernel within_half"));
  }
  // A C++-named comparison kernel that rejects every element: the count and the first index come back.
  TuningSpec spec = specs::load_spec(autotune_test::data_dir() + "/specs/planted.tune.json");
  spec.verification.compare = "every_element_differs";
  cuda::TimingOptions to;
  to.samples = 3;
  {
    cuda::CudaBackend backend(kernels::make_adapter(spec), to);
    backend.prepare(spec.workloads.front(), ProblemKey::parse("n=100003"), 7);
    const std::vector<Measurement> r = backend.evaluate({cfg(0, 0)});
    INFO(r[0].log);
    CHECK(r[0].status == wrong);
    CHECK_THAT(r[0].log, Catch::Contains("y[0]") && Catch::Contains("100003 of 100003 elements differ"));
  }
  // --verify host cannot run it: refused when the problem is prepared, naming the kernel.
  to.verify = cuda::TimingOptions::Verify::host;
  cuda::CudaBackend host(kernels::make_adapter(spec), to);
  CHECK_THROWS_WITH(host.prepare(spec.workloads.front(), ProblemKey::parse("n=100003"), 7),
                    Catch::Contains("every_element_differs") && Catch::Contains("--verify host"));
}
