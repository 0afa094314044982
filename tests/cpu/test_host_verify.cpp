// A spec verified by the embedding program's callback ("verification": {"callback": true}, tuner/core/host_verify.*):
// the user adapter asks for no comparison kernel, hands the outputs and expected values to the hook, and says so
// where no hook is registered; a callback on one output, or beside a comparison kernel, is a spec error.
#include <catch2/catch.hpp>
#include <string>

#include "tuner/core/error.hpp"
#include "tuner/core/host_verify.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/kernels/registry.hpp"

using namespace autotune;

namespace {

std::string spec_text(const std::string& verification, const std::string& output_extra = "") {
  return R"J({
  "name": "tiny_callback", "family": "user", "source": "tiny.cu", "kernels": ["tiny_kernel"],
  "parameters": [{"name": "BLOCK_SIZE", "values": [32, 64], "default": 64}],
  "launch": [{"kernel": "tiny_kernel", "grid": "ceil_div(n, BLOCK_SIZE)", "block": "BLOCK_SIZE"}],
  "problem": {"dims": ["n"], "sizes": [{"n": 4}]},
  "workloads": ["float32"],
  "verification": )J" +
         verification + R"J(,
  "arguments": [
    {"name": "x", "kind": "buffer", "dtype": "float32", "count": "n"},
    {"name": "y", "kind": "buffer", "dtype": "float32", "count": "n", "role": "output")J" +
         output_extra + R"J(},
    {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}
  ]
})J";
}

TuningSpec parse(const std::string& text) {
  return TuningSpec::from_json_text(text, std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs");
}

}  // namespace

TEST_CASE("a callback spec is verified by the registered hook with every output", "[cpu][host_verify]") {
  const TuningSpec s = parse(spec_text(R"({"callback": true})"));
  CHECK(s.verification.callback);
  const auto adapter = kernels::make_adapter(s);
  const Workload w = s.workloads.front();
  const ProblemKey p = ProblemKey::parse("n=4");
  const HostBuffers out = {{"y", std::vector<unsigned char>(16, 1)}};
  const HostBuffers expected = {{"y", std::vector<unsigned char>(16, 2)}};
  CHECK(adapter->checks(expected, w, p).empty());  // no comparison kernel: the outputs come back to the host

  set_host_verify_hook(nullptr);
  CHECK_THROWS_WITH(adapter->verify(out, expected, w, p),
                    Catch::Contains("tiny_callback is verified by a callback") && Catch::Contains("registered none"));

  std::string seen;
  set_host_verify_hook([&seen](const std::string& kernel, const HostBuffers& o, const HostBuffers& e) {
    seen = kernel + ":" + std::to_string(o.at("y")[0]) + ":" + std::to_string(e.at("y")[0]);
    return o.at("y")[0] == 1 ? std::string() : std::string("y[0] is not 1");
  });
  CHECK(adapter->verify(out, expected, w, p).empty());
  CHECK(seen == "tiny_callback:1:2");
  HostBuffers wrong = out;
  wrong["y"][0] = 5;
  CHECK(adapter->verify(wrong, expected, w, p) == "y[0] is not 1");
  set_host_verify_hook([](const std::string&, const HostBuffers&, const HostBuffers&) -> std::string {
    throw UsageError("shape mismatch");
  });
  CHECK(adapter->verify(out, expected, w, p) == "the verification callback failed: shape mismatch");
  set_host_verify_hook(nullptr);
}

TEST_CASE("a callback is the whole kernel's and decides alone", "[cpu][host_verify]") {
  CHECK_THROWS_WITH(parse(spec_text(R"({"callback": true, "compare": "my_compare"})")),
                    Catch::Contains("/verification/callback") && Catch::Contains("cannot both decide"));
  CHECK_THROWS_WITH(
      parse(spec_text(R"({"relative": 1e-5})", R"(, "verification": {"callback": true})")),
      Catch::Contains("/arguments/1/verification/callback") && Catch::Contains("top-level \"verification\""));
  CHECK_THROWS_WITH(parse(spec_text(R"({"callback": 1})")), Catch::Contains("expected true or false"));
}
