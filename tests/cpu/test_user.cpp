#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "tuner/core/check.hpp"
#include "tuner/core/data_file.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;
using autotune::kernels::load_element;

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

// ---- inputs from files, fills, and the reference from a configuration -----------------------------------

namespace {

std::string files_dir() { return std::string(AUTOTUNE_TEST_DATA_DIR) + "/files"; }

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("user adapter: inputs from files are the files' bytes, checked for the problem", "[cpu][user][data_file]") {
  const TuningSpec s = specs::load_spec(files_dir() + "/filed.tune.json");
  auto a = kernels::make_adapter(s);
  const Workload w = s.workloads.front();
  const ProblemKey p = ProblemKey::parse("n=4099");
  const HostBuffers in = a->make_inputs(w, p, 1);
  REQUIRE(in.count("x"));
  CHECK(in.at("x") == read_npy(files_dir() + "/x.npy").bytes);
  const std::string bias = file_bytes(files_dir() + "/bias.bin");
  CHECK(std::string(in.at("bias").begin(), in.at("bias").end()) == bias);
  CHECK(load_element<float>(in.at("x"), 1) == 37.0f / 64.0f - 7.5f);  // what make_files.py wrote
  CHECK(a->make_inputs(w, p, 2) == in);                               // the session's seed plays no part
  CHECK_NOTHROW(a->validate_inputs(w, p));

  // Another problem size than the file's: a spec error naming the field, the argument and the file.
  const ProblemKey other = ProblemKey::parse("n=4000");
  for (int i = 0; i < 2; ++i) {
    try {
      if (i == 0)
        a->validate_inputs(w, other);
      else
        a->make_inputs(w, other, 1);
      FAIL("no error for n=4000");
    } catch (const SpecError& e) {
      CHECK(e.pointer() == "/arguments/0/init/file");
      CHECK_THAT(e.what(), Catch::Contains("argument 'x' needs 4000 elements of float32 (16000 bytes)") &&
                               Catch::Contains(files_dir() + "/x.npy") && Catch::Contains("(4099,) = 4099 elements"));
    }
  }

  // The scalar read from scale.npy is passed by value; no reference given: the default configuration's plan.
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const LaunchPlan plan = a->plan(Config({{"BLOCK_SIZE", 64}, {"VARIANT", 1}}), w, p, d);
  REQUIRE(plan.steps.size() == 1);
  REQUIRE(plan.steps[0].args.size() == 5);
  CHECK(plan.steps[0].args[3].kind == KernelArg::Kind::f32);
  CHECK(plan.steps[0].args[3].f == 1.25);
  CHECK_FALSE(a->reference(in, w, p).has_value());
  const std::optional<LaunchPlan> ref = a->reference_plan(w, p, d);
  REQUIRE(ref);
  CHECK(ref->steps[0].kernel == "filed");
  CHECK(ref->steps[0].block[0] == 128);  // BLOCK_SIZE's default
  CHECK(ref->steps[0].grid[0] == 33);    // ceil(4099 / 128)
  CHECK(a->reference_source() == s.source_text);

  // Expected values from a file: reference() gives them, and there is no reference kernel.
  const TuningSpec e = specs::load_spec(files_dir() + "/filed_expected.tune.json");
  auto ae = kernels::make_adapter(e);
  const std::optional<HostBuffers> expected = ae->reference(ae->make_inputs(w, p, 1), w, p);
  REQUIRE(expected);
  CHECK(expected->size() == 1);
  CHECK(expected->at("y") == read_npy(files_dir() + "/y_expected.npy").bytes);
  CHECK_FALSE(ae->reference_plan(w, p, d).has_value());
  CHECK(ae->reference_source() == e.source_text);  // where comparison kernels would come from
  CHECK(ae->checks(*expected, w, p).size() == 1);
  // The expected values follow the computation the kernel's default configuration makes.
  const HostBuffers& xs = ae->make_inputs(w, p, 1);
  for (std::size_t i : {std::size_t{0}, std::size_t{5}, std::size_t{4098}}) {
    const float want = load_element<float>(xs.at("x"), i) * 1.25f +
                       static_cast<float>(load_element<std::int32_t>(xs.at("bias"), i % 16));
    CHECK(load_element<float>(expected->at("y"), i) == want);
  }
}

TEST_CASE("user adapter: a __constant__ symbol's values from a file", "[cpu][user][data_file]") {
  TuningSpec s = specs::load_spec(std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs/pnpoly_cmem.tune.json");
  std::vector<unsigned char> polygon(32 * 4);
  for (std::size_t i = 0; i < polygon.size(); ++i) polygon[i] = static_cast<unsigned char>(i * 5 + 1);
  const std::string path = "/tmp/autotune_user_polygon_" + std::to_string(::getpid()) + ".npy";
  write_npy(path, "float32", {16, 2}, polygon);
  ArgSpec& vertices = s.arguments.back();
  REQUIRE(vertices.kind == ArgSpec::Kind::constant);
  vertices.init = DataSource{};
  vertices.init.kind = DataSource::Kind::file;
  vertices.init.file = vertices.init.path = path;
  vertices.init.pointer = "/arguments/3/init/file";
  auto a = kernels::make_adapter(s);
  const HostBuffers in = a->make_inputs(s.workloads.front(), ProblemKey::parse("n=1000"), 3);
  CHECK(in.at("vertices") == polygon);
  CHECK_NOTHROW(a->validate_inputs(s.workloads.front(), ProblemKey::parse("n=1000")));
  vertices.count = Expr::parse("64");
  CHECK_THROWS_WITH(kernels::make_adapter(s)->validate_inputs(s.workloads.front(), ProblemKey::parse("n=1000")),
                    Catch::Contains("/arguments/3/init/file") && Catch::Contains("argument 'vertices' needs 64") &&
                        Catch::Contains("(16, 2) = 32 elements"));
  std::remove(path.c_str());
}

TEST_CASE("user adapter: constant and uniform fills, and the default random fill unchanged", "[cpu][user][data_file]") {
  const std::string text = R"({"name": "fills", "family": "user", "source": "k.cu", "kernels": ["k"],
    "parameters": [{"name": "B", "values": [1]}], "problem": {"dims": ["n"]}, "workloads": ["float32"],
    "launch": [{"kernel": "k", "grid": 1, "block": 1}],
    "arguments": [
      {"name": "c32", "kind": "buffer", "dtype": "float32", "count": "n", "init": {"constant": 3.5}},
      {"name": "ci", "kind": "buffer", "dtype": "int64", "count": 10, "init": {"constant": -9007199254740993}},
      {"name": "u", "kind": "buffer", "dtype": "float32", "count": "n", "init": {"random": {"min": -1, "max": 1}}},
      {"name": "us", "kind": "buffer", "dtype": "float64", "count": "n", "init": {"random": {"seed": 7, "min": 2, "max": 3}}},
      {"name": "ui", "kind": "buffer", "dtype": "int16", "count": "n", "init": {"random": {"min": -3, "max": 3}}},
      {"name": "u8", "kind": "buffer", "dtype": "uint8", "count": "n"},
      {"name": "i8", "kind": "buffer", "dtype": "int8", "count": "n", "init": "iota"},
      {"name": "y", "kind": "buffer", "dtype": "float32", "count": "n", "role": "output"}]})";
  const TuningSpec s = TuningSpec::from_json_text(text, "", false);
  auto a = kernels::make_adapter(s);
  const Workload w = s.workloads.front();
  const ProblemKey p = ProblemKey::parse("n=20000");
  const HostBuffers in = a->make_inputs(w, p, 11), again = a->make_inputs(w, p, 11), other = a->make_inputs(w, p, 12);
  CHECK(in == again);
  CHECK(in.count("y") == 0);
  for (std::size_t i = 0; i < 20000; ++i) REQUIRE(load_element<float>(in.at("c32"), i) == 3.5f);
  for (std::size_t i = 0; i < 10; ++i) REQUIRE(load_element<std::int64_t>(in.at("ci"), i) == -9007199254740993);
  // Uniform floats in [min, max): spread over the range, never max.
  float lo = 1, hi = -1;
  double sum = 0;
  for (std::size_t i = 0; i < 20000; ++i) {
    const float v = load_element<float>(in.at("u"), i);
    REQUIRE(v >= -1.0f);
    REQUIRE(v < 1.0f);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  CHECK(lo < -0.99f);
  CHECK(hi > 0.99f);
  CHECK(std::fabs(sum / 20000) < 0.03);  // the mean of 20000 draws: within 5 standard errors of 0
  // A seed of its own: the same values whatever the session's seed; without one they follow it.
  CHECK(in.at("us") == other.at("us"));
  CHECK(in.at("u") != other.at("u"));
  for (std::size_t i = 0; i < 20000; ++i) {
    const double v = load_element<double>(in.at("us"), i);
    REQUIRE(v >= 2.0);
    REQUIRE(v < 3.0);
  }
  // Integers in [min, max], both ends drawn.
  int counts[7] = {};
  for (std::size_t i = 0; i < 20000; ++i) {
    const std::int16_t v = load_element<std::int16_t>(in.at("ui"), i);
    REQUIRE(v >= -3);
    REQUIRE(v <= 3);
    ++counts[v + 3];
  }
  for (int c : counts) CHECK(c > 2000);  // 20000 / 7 = 2857 expected each
  // The default random fill of a 1-byte type stays within it and non-zero; iota wraps around like a C cast.
  std::uint8_t u8_max = 0;
  for (std::size_t i = 0; i < 20000; ++i) {
    const auto v = load_element<std::uint8_t>(in.at("u8"), i);
    REQUIRE(v >= 1);
    u8_max = std::max(u8_max, v);
  }
  CHECK(u8_max == 255);
  CHECK(load_element<std::int8_t>(in.at("i8"), 127) == 127);
  CHECK(load_element<std::int8_t>(in.at("i8"), 128) == -128);

  // "random" without options draws what it always did (recorded databases depend on the inputs): one
  // std::mt19937_64 of the session's seed, in argument order, floats +-[0.5, 1.5), integers in [1, 1000].
  const std::string old_text = R"({"name": "old", "family": "user", "source": "k.cu", "kernels": ["k"],
    "parameters": [{"name": "B", "values": [1]}], "problem": {"dims": ["n"]}, "workloads": ["float32"],
    "launch": [{"kernel": "k", "grid": 1, "block": 1}],
    "arguments": [
      {"name": "f", "kind": "buffer", "dtype": "float32", "count": "n"},
      {"name": "y", "kind": "buffer", "dtype": "float32", "count": "n", "role": "output"},
      {"name": "i", "kind": "buffer", "dtype": "int32", "count": "n", "init": "random"},
      {"name": "d", "kind": "constant", "dtype": "float64", "count": 7},
      {"name": "u", "kind": "buffer", "dtype": "uint64", "count": "n"}]})";
  const TuningSpec old = TuningSpec::from_json_text(old_text, "", false);
  const HostBuffers t = kernels::make_adapter(old)->make_inputs(w, ProblemKey::parse("n=500"), 5);
  std::mt19937_64 rng(5);
  auto next_float = [&rng] {
    const std::uint64_t r = rng();
    return (0.5 + static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0)) * ((r & 1) ? -1 : 1);
  };
  for (std::size_t i = 0; i < 500; ++i) REQUIRE(load_element<float>(t.at("f"), i) == static_cast<float>(next_float()));
  for (std::size_t i = 0; i < 500; ++i)
    REQUIRE(load_element<std::int32_t>(t.at("i"), i) == static_cast<std::int32_t>(1 + rng() % 1000));
  for (std::size_t i = 0; i < 7; ++i) REQUIRE(load_element<double>(t.at("d"), i) == next_float());
  for (std::size_t i = 0; i < 500; ++i) REQUIRE(load_element<std::uint64_t>(t.at("u"), i) == 1 + rng() % 1000);
}

TEST_CASE("user adapter: a reference configuration plans the kernel itself at that configuration",
          "[cpu][user][data_file]") {
  TuningSpec s = specs::load_spec(std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs/pnpoly_cmem.tune.json");
  const Workload w = s.workloads.front();
  const ProblemKey p = ProblemKey::parse("n=1000");
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  auto same_steps = [](const LaunchPlan& x, const LaunchPlan& y) {
    if (x.steps.size() != y.steps.size() || x.constants.size() != y.constants.size()) return false;
    for (std::size_t i = 0; i < x.steps.size(); ++i)
      if (x.steps[i].kernel != y.steps[i].kernel || x.steps[i].grid != y.steps[i].grid ||
          x.steps[i].block != y.steps[i].block || x.steps[i].args.size() != y.steps[i].args.size())
        return false;
    return true;
  };
  ReferenceSpec by_default;
  by_default.configuration = s.default_config();
  s.reference = by_default;
  auto a = kernels::make_adapter(s);
  const std::optional<LaunchPlan> ref = a->reference_plan(w, p, d);
  REQUIRE(ref);
  CHECK(same_steps(*ref, a->plan(s.default_config(), w, p, d)));
  CHECK(ref->steps[0].kernel == "pnpoly<256>");  // the default's entry point, not the reference kernel's
  CHECK(ref->constants.size() == 1);             // the constants go with the kernel
  CHECK_FALSE(same_steps(*ref, a->plan(Config({{"BLOCK_SIZE", 64}, {"USE_CMEM", 1}}), w, p, d)));
  CHECK(a->reference_source() == s.source_text);
  CHECK(s.reference_config() == s.default_config());

  ReferenceSpec named;
  named.configuration = Config({{"BLOCK_SIZE", 64}, {"USE_CMEM", 0}});
  s.reference = named;
  const std::optional<LaunchPlan> nref = kernels::make_adapter(s)->reference_plan(w, p, d);
  REQUIRE(nref);
  CHECK(nref->steps[0].kernel == "pnpoly<64>");
  CHECK(nref->steps[0].grid[0] == 16);  // ceil(1000 / 64)
  CHECK(s.reference_config() == *named.configuration);
}
