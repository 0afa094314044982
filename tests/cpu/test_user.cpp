#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tuner/core/check.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;

namespace {

std::string slurp_spec(const std::string& name) {
  std::ifstream in(std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("user adapter: plan, inputs and verification follow the spec", "[cpu][user]") {
  TuningSpec s = specs::load_spec(std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs/tiny.tune.json");
  auto a = kernels::make_adapter(s);
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  Workload w = s.workloads.front();
  ProblemKey p = ProblemKey::parse("n=1001");
  Config c({{"BLOCK_SIZE", 64}});
  LaunchPlan plan = a->plan(c, w, p, d);
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].kernel == "tiny_kernel");
  CHECK(plan.steps[0].grid[0] == 16);  // ceil(1001 / 64)
  CHECK(plan.steps[0].block[0] == 64);
  REQUIRE(plan.steps[0].args.size() == 3);
  CHECK(plan.steps[0].args[2].i == 1001);
  REQUIRE(plan.find("y"));
  CHECK(plan.find("y")->role == BufferRole::output);
  CHECK(plan.find("x")->bytes == 1001 * 4);

  auto ref = a->reference_plan(w, p, d);
  REQUIRE(ref);
  CHECK(ref->steps[0].kernel == "tiny_reference");
  CHECK(ref->steps[0].grid[0] == 16);  // ceil(1001 / 64)
  CHECK_FALSE(a->reference(HostBuffers{}, w, p).has_value());

  HostBuffers in1 = a->make_inputs(w, p, 5), in2 = a->make_inputs(w, p, 5), in3 = a->make_inputs(w, p, 6);
  CHECK(in1.at("x") == in2.at("x"));
  CHECK(in1.at("x") != in3.at("x"));
  for (std::size_t i = 0; i < 1001; ++i) {
    float v;
    std::memcpy(&v, in1.at("x").data() + 4 * i, 4);
    CHECK(v != 0.0f);
  }

  HostBuffers expected{{"y", in1.at("x")}};
  CHECK(a->verify(expected, expected, w, p).empty());
  HostBuffers wrong = expected;
  wrong["y"][4 * 700] ^= 1;
  CHECK_THAT(a->verify(wrong, expected, w, p), Catch::Contains("[700]"));
  CHECK(a->bytes_moved(w, p) == 2.0 * 1001 * 4);
}

TEST_CASE("the shipped example spec loads", "[cpu][user]") {
  TuningSpec s = specs::load_spec(std::string(AUTOTUNE_TEST_DATA_DIR) + "/../../examples/saxpy/saxpy.tune.json");
  auto a = kernels::make_adapter(s);
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  CHECK(s.space(s.problem_sizes.front(), d, s.workloads.front()).size() == 20);
  CHECK(a->bytes_moved(s.workloads.front(), ProblemKey::parse("n=10")) == 120);
}

TEST_CASE("unknown kernels and families are named", "[cpu][user]") {
  CHECK_THROWS_WITH(specs::builtin_spec("nope"), Catch::Contains("unknown kernel 'nope'") && Catch::Contains("reduction"));
  TuningSpec s = specs::load_spec(std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs/tiny.tune.json");
  s.family = "fft";
  CHECK_THROWS_WITH(kernels::make_adapter(s), Catch::Contains("unknown family 'fft'"));
}

TEST_CASE("user adapter: constant arguments and templated entry points", "[cpu][user]") {
  TuningSpec s = specs::load_spec(std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs/pnpoly_cmem.tune.json");
  const ArgSpec& v = s.arguments.back();
  CHECK(v.kind == ArgSpec::Kind::constant);
  CHECK(v.symbol == "d_vertices");
  CHECK(v.is_input());
  auto a = kernels::make_adapter(s);
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  Workload w = s.workloads.front();
  ProblemKey p = ProblemKey::parse("n=1000");
  LaunchPlan plan = a->plan(Config({{"BLOCK_SIZE", 64}, {"USE_CMEM", 1}}), w, p, d);
  REQUIRE(plan.steps.size() == 1);
  CHECK(plan.steps[0].kernel == "pnpoly<64>");  // the parameter's value in the C++ entry point
  CHECK(plan.steps[0].args.size() == 3);        // bitmap, points, n: the constant is no kernel parameter
  REQUIRE(plan.constants.size() == 1);
  CHECK(plan.constants[0].symbol == "d_vertices");
  CHECK(plan.constants[0].buffer == "vertices");
  REQUIRE(plan.find("vertices"));
  CHECK(plan.find("vertices")->role == BufferRole::input);
  CHECK(plan.find("vertices")->bytes == 32 * 4);
  auto ref = a->reference_plan(w, p, d);
  REQUIRE(ref);
  CHECK(ref->steps[0].kernel == "pnpoly_reference");
  CHECK(ref->constants.size() == 1);  // the reference's source declares the symbol too
  HostBuffers in = a->make_inputs(w, p, 3);
  REQUIRE(in.count("vertices"));
  CHECK(in.at("vertices").size() == 32 * 4);

  // Spec errors name the field.
  std::string text = R"({"name": "k", "family": "user", "source": "k.cu", "kernels": ["k"],
    "parameters": [{"name": "B", "values": [1]}], "problem": {"dims": ["n"]}, "workloads": ["float32"],
    "launch": [{"kernel": "k", "grid": 1, "block": 1}], "reference": {"kernel": "k", "grid": 1, "block": 1},
    "arguments": [{"name": "c", "kind": "constant", "dtype": "float32", "count": 4, "role": "output"}]})";
  CHECK_THROWS_WITH(TuningSpec::from_json_text(text, "", false),
                    Catch::Contains("/arguments/0/role") && Catch::Contains("constant"));
  text.replace(text.find("\"role\": \"output\""), 16, "\"symbol\": \"c_sym\"");
  CHECK(TuningSpec::from_json_text(text, "", false).arguments[0].symbol == "c_sym");
}

TEST_CASE("user adapter: verification policies on the host", "[cpu][user][verify_policy]") {
  TuningSpec s = specs::load_spec(std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs/planted.tune.json");
  Workload w = s.workloads.front();
  ProblemKey p = ProblemKey::parse("n=100003");
  HostBuffers expected{{"y", std::vector<unsigned char>(100003 * 4)}};
  for (std::size_t i = 0; i < 100003; ++i) {
    const float v = 0.5f + static_cast<float>(i % 1000) / 1000.0f;
    std::memcpy(expected["y"].data() + 4 * i, &v, 4);
  }
  HostBuffers planted = expected;  // one element off by 1
  float v;
  std::memcpy(&v, planted["y"].data() + 4 * 12345, 4);
  v += 1.0f;
  std::memcpy(planted["y"].data() + 4 * 12345, &v, 4);
  HostBuffers nudged = expected;  // every element off by a relative 1e-6
  for (std::size_t i = 0; i < 100003; ++i) {
    std::memcpy(&v, nudged["y"].data() + 4 * i, 4);
    v *= 1.000001f;
    std::memcpy(nudged["y"].data() + 4 * i, &v, 4);
  }
  auto verify = [&](const VerifyPolicy& policy, const HostBuffers& got) {
    TuningSpec t = s;
    t.verification = policy;
    return kernels::make_adapter(t)->verify(got, expected, w, p);
  };
  // Without a policy: bit-exact; the single mismatch fails, with its index and the count.
  const std::string strict = verify({}, planted);
  CHECK(is_verification_failure(strict));
  CHECK_THAT(strict, Catch::Contains("y[12345]") && Catch::Contains("1 of 100003 elements differ"));
  // Under a fraction limit it passes, and the message keeps it.
  const std::string allowed = verify({std::nullopt, std::nullopt, 1e-4, std::nullopt}, planted);
  CHECK_FALSE(is_verification_failure(allowed));
  CHECK_THAT(allowed, Catch::StartsWith(kAcceptedPrefix) && Catch::Contains("y[12345]") &&
                          Catch::Contains("at most 10 may"));
  CHECK(verify({std::nullopt, std::nullopt, 1e-4, std::nullopt}, expected).empty());
  // Tolerances: relative, absolute, or neither.
  CHECK(is_verification_failure(verify({}, nudged)));
  CHECK(verify({1e-5, std::nullopt, std::nullopt, std::nullopt}, nudged).empty());
  CHECK(verify({std::nullopt, 1e-5, std::nullopt, std::nullopt}, nudged).empty());
  CHECK(is_verification_failure(verify({1e-5, std::nullopt, std::nullopt, std::nullopt}, planted)));
  // Per output, over the spec-wide policy; parsed with the JSON pointer of a bad field.
  TuningSpec per = s;
  per.arguments[1].verification.max_mismatch_fraction = 1e-4;
  CHECK_FALSE(is_verification_failure(kernels::make_adapter(per)->verify(planted, expected, w, p)));
  std::string text = slurp_spec("planted.tune.json");
  text.replace(text.find("\"role\": \"output\""), 16,
               "\"role\": \"output\", \"verification\": {\"max_mismatch_fraction\": 2}");
  CHECK_THROWS_WITH(TuningSpec::from_json_text(text, "", false),
                    Catch::Contains("/arguments/1/verification/max_mismatch_fraction"));
}

TEST_CASE("a comparison kernel of the user: parsed, turned into GPU checks, refused on the host", "[cpu][user][verify_policy]") {
  const std::string text = slurp_spec("planted.tune.json");
  auto with_policy = [&](const std::string& policy) {
    std::string t = text;
    t.insert(t.rfind('}'), ", \"verification\": " + policy);
    return TuningSpec::from_json_text(t, "", false);
  };
  const TuningSpec s = with_policy(R"({"compare": "within_half", "max_mismatch_fraction": 1e-4})");
  REQUIRE(s.verification.compare == std::string("within_half"));
  CHECK(s.compare_kernels() == std::vector<std::string>{"within_half"});
  // Bad policies name the field.
  CHECK_THROWS_WITH(with_policy(R"({"compare": ""})"), Catch::Contains("/verification/compare") &&
                                                          Catch::Contains("name of a comparison kernel"));
  CHECK_THROWS_WITH(with_policy(R"({"compare": 3})"), Catch::Contains("/verification/compare"));
  CHECK_THROWS_WITH(with_policy(R"({"compare": "k", "relative": 1e-5})"),
                    Catch::Contains("/verification/compare") && Catch::Contains("decides alone"));
  // The adapter's check of the output is the user's kernel, with the policy's mismatch allowance.
  const Workload w = s.workloads.front();
  const ProblemKey p = ProblemKey::parse("n=100003");
  HostBuffers expected{{"y", std::vector<unsigned char>(100003 * 4, 0)}};
  const std::vector<OutputCheck> checks = kernels::make_adapter(s)->checks(expected, w, p);
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].kind == OutputCheck::Kind::user_kernel);
  CHECK(checks[0].kernel == "within_half");
  CHECK(checks[0].max_mismatches == 10);
  // A per-output compare overrides the top-level tolerance.
  TuningSpec per = with_policy(R"({"relative": 1e-5})");
  per.arguments[1].verification.compare = "exact_bits";
  const std::vector<OutputCheck> per_checks = kernels::make_adapter(per)->checks(expected, w, p);
  REQUIRE(per_checks.size() == 1);
  CHECK(per_checks[0].kernel == "exact_bits");
  CHECK(per.compare_kernels() == std::vector<std::string>{"exact_bits"});
  // Its predicate exists only on the GPU: the host comparison refuses it by name.
  CHECK_THROWS_WITH(compare_on_host(checks[0], expected.at("y"), expected.at("y"), {}),
                    Catch::Contains("comparison kernel 'within_half'") && Catch::Contains("GPU only"));
  // A verdict of the GPU prints the mismatch with the kernel's name.
  CheckVerdict v;
  v.mismatches = 1;
  Mismatch m;
  m.index = 12345;
  m.got = {0, 0, 0x80, 0x3f};       // 1.0f
  m.expected = {0, 0, 0, 0};        // 0.0f
  v.examples.push_back(m);
  OutputCheck floating = checks[0];
  floating.floating = true;
  CHECK_THAT(describe(floating, v, ""), Catch::Contains("y[12345] = 1 but expected 0") &&
                                            Catch::Contains("(comparison kernel within_half)") &&
                                            Catch::Contains("1 of 100003 elements differ"));
}
