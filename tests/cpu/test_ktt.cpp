// KTT's flavour of T1 files (tuner/specs/t1.*, docs/spec-format.md "KTT's flavour"), on KTT's public CUDA tuning
// scripts as KTT ships them (tests/data/ktt/): its searchers (known ones mapped, others a note and the default
// strategy), its General and KernelSpecification keys (each used or noted), Generator and Constant reference
// arguments as expected values, outputs that start from their fill, a valid default and reference configuration,
// and the OpenCL script refused.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/ktt_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/specs/t1.hpp"

using namespace autotune;
using json = nlohmann::json;

namespace {

const std::string kCoulomb = autotune_test::ktt_dir() + "/Examples/CoulombSum3d/CoulombSum3dCudaScript.json";
const std::string kCoulombFull =
    autotune_test::ktt_dir() + "/Examples/CoulombSum3d/CoulombSum3dCudaScript-full-search.json";
const std::string kNbody = autotune_test::ktt_dir() + "/Examples/Nbody/NbodyScript.json";

json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

/// The conversion's notes, one a line.
std::string notes_of(const json& doc, const std::string& path) {
  std::string notes;
  for (const std::string& n : specs::t1_to_spec(doc, path).notes) notes += n + "\n";
  return notes;
}

float float_at(const std::vector<unsigned char>& bytes, std::size_t i) {
  float v = 0;
  std::memcpy(&v, bytes.data() + 4 * i, 4);
  return v;
}

}  // namespace

TEST_CASE("KTT scripts: an unknown Search is a note and the default strategy runs - KTT's searchers map",
          "[cpu][t1][ktt]") {
  const specs::T1Conversion profile = specs::t1_to_spec(read_json(kCoulomb), kCoulomb);
  CHECK_FALSE(profile.spec.contains("tuning"));  // no strategy: tune's default
  std::string notes;
  for (const std::string& n : profile.notes) notes += n + "\n";
  CHECK_THAT(notes, Catch::Contains("/Search/Name: the search 'ProfileBased' is not one this tuner has") &&
                        Catch::Contains("the default strategy runs"));
  CHECK_THAT(notes, Catch::Contains("/Search/Attributes/0: the search option modelPath=") &&
                        Catch::Contains("/Search/Attributes/1: the search option batchSize=10"));
  const TuningSpec full = interop::resolve_kernel(kCoulombFull, {});
  CHECK(full.tuning.strategy == std::string("brute_force"));  // KTT's Deterministic: every configuration in order
  json doc = read_json(kCoulombFull);
  for (const char* name : {"MCMC", "oracle"}) {
    doc["Search"]["Name"] = name;
    const specs::T1Conversion c = specs::t1_to_spec(doc, kCoulombFull);
    CHECK_FALSE(c.spec.contains("tuning"));
    CHECK_THAT(notes_of(doc, kCoulombFull), Catch::Contains(std::string("the search '") + name + "'"));
  }
  doc["Search"]["Name"] = "Random";
  CHECK(specs::t1_to_spec(doc, kCoulombFull).spec["tuning"]["strategy"] == "random_sample");
}

TEST_CASE("KTT scripts: General and KernelSpecification keys are used or noted, each saying why", "[cpu][t1][ktt]") {
  const std::string notes = notes_of(read_json(kCoulomb), kCoulomb);
  INFO(notes);
  CHECK_THAT(notes, Catch::Contains("/General/LoggingLevel: KTT's level of log messages; not used"));
  CHECK_THAT(notes, Catch::Contains("/General/TimeUnit: KTT's unit") && Catch::Contains("milliseconds"));
  CHECK_THAT(notes, Catch::Contains("/General/OutputFile: KTT's results file; not written") &&
                        Catch::Contains("/General/OutputFormat:"));
  CHECK_THAT(notes, Catch::Contains("/KernelSpecification/SimulationInput: KTT's recorded results") &&
                        Catch::Contains("tune --simulate"));
  CHECK_THAT(notes_of(read_json(kCoulombFull), kCoulombFull),
             Catch::Contains("/KernelSpecification/Profiling: KTT's profiling counters; not collected"));
  CHECK_THAT(notes, !Catch::Contains("not a T1 field"));
  // GlobalSizeType and TypeSize are used: the n-body script gives its grid in threads (OpenCL), the Coulomb sum's
  // output the bytes of its float; a TypeSize that is not the Type's is said, and the Type decides.
  const TuningSpec nbody = interop::resolve_kernel(kNbody, {});
  const Config c = nbody.default_config();  // WORK_GROUP_SIZE_X=64, OUTER_UNROLL_FACTOR=1
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const ProblemKey& p = nbody.problem_sizes.front();
  CHECK(eval_expr(nbody.launches.front().grid_x, c, p, d, nbody.workloads.front()) == 128 * 1024 / 64);
  CHECK(eval_expr(nbody.launches.front().block_x, c, p, d, nbody.workloads.front()) == 64);
  CHECK_THAT(notes, !Catch::Contains("TypeSize"));
  json doc = read_json(kCoulomb);
  doc["KernelSpecification"]["Arguments"][8]["TypeSize"] = 8;
  CHECK_THAT(notes_of(doc, kCoulomb),
             Catch::Contains("/KernelSpecification/Arguments/8/TypeSize: 8 is not the size of Type float (4 bytes)"));
}

TEST_CASE("KTT scripts: a default configuration that violates the conditions gives way to the first valid one",
          "[cpu][t1][ktt]") {
  const specs::T1Conversion conv = specs::t1_to_spec(read_json(kCoulomb), kCoulomb);
  std::string notes;
  for (const std::string& n : conv.notes) notes += n + "\n";
  CHECK_THAT(notes, Catch::Contains("violates \"WORK_GROUP_SIZE_X * WORK_GROUP_SIZE_Y >= 64\"") &&
                        Catch::Contains("is the default instead (and so the reference, where one runs)"));
  const TuningSpec s = interop::resolve_kernel(kCoulomb, {});
  const Config d = s.default_config();
  // The first valid configuration in the order of `autotune space`: X over [16, 32], then Y over [1, 2, 4, 8], ...
  CHECK(d.at("WORK_GROUP_SIZE_X") == 16);
  CHECK(d.at("WORK_GROUP_SIZE_Y") == 4);
  CHECK(d.at("Z_ITERATIONS") == 1);
  CHECK(d.at("INNER_UNROLL_FACTOR") == 0);
  CHECK(d.at("USE_SOA") == 0);
  const ParameterSpace space =
      s.space(s.problem_sizes.front(), sim::SyntheticBackend::fake_device(), s.workloads.front());
  CHECK(space.default_index() == 0);
  REQUIRE(s.reference);
  REQUIRE(s.reference->configuration);
  CHECK(*s.reference->configuration == d);
  // A Default that satisfies the conditions stays.
  json doc = read_json(kCoulomb);
  doc["ConfigurationSpace"]["TuningParameters"][0]["Default"] = 32;
  doc["ConfigurationSpace"]["TuningParameters"][1]["Default"] = 2;
  doc["ConfigurationSpace"]["TuningParameters"][3]["Default"] = 8;
  const specs::T1Conversion kept = specs::t1_to_spec(doc, kCoulomb);
  CHECK(kept.spec["parameters"][0]["default"] == 32);
  CHECK(kept.spec["parameters"][1]["default"] == 2);
  CHECK(kept.spec["parameters"][3]["default"] == 8);
  CHECK_FALSE(kept.spec["parameters"][4].contains("default"));  // INNER_UNROLL_FACTOR's first value, 0 < 8
  for (const std::string& n : kept.notes) CHECK_THAT(n, !Catch::Contains("violates"));
}

TEST_CASE("KTT scripts: Generator reference arguments are the expected values, as KTT evaluates them",
          "[cpu][t1][ktt]") {
  const std::string script = autotune_test::ktt_tutorial();
  const TuningSpec s = interop::resolve_kernel(script, {});
  CHECK(s.tuning.strategy == std::string("random_sample"));
  CHECK_FALSE(s.reference);  // every output has expected values: no reference runs
  const ArgSpec& result = s.arguments[2];
  REQUIRE(result.expected);
  CHECK(result.expected->kind == DataSource::Kind::generator);
  CHECK(result.expected->generator == "2 * i + 3");
  CHECK(result.verification.absolute == 0.1);  // SideBySideComparison at ValidationThreshold 0.1
  CHECK(s.reference_text() == "expected values of result from \"2 * i + 3\"");
  auto adapter = kernels::make_adapter(s);
  const Workload& w = s.workloads.front();
  const ProblemKey& p = s.problem_sizes.front();
  const HostBuffers in = adapter->make_inputs(w, p, 1);
  const auto expected = adapter->reference(in, w, p);
  REQUIRE(expected);
  REQUIRE(expected->at("result").size() == 1048576 * 4);
  for (std::size_t i : {0, 1, 2, 1000, 1048575}) {
    CHECK(float_at(in.at("a"), i) == static_cast<float>(i));  // Generator "i"
    CHECK(float_at(in.at("b"), i) == static_cast<float>(i));  // ArgumentData.bin
    CHECK(float_at(expected->at("result"), i) == static_cast<float>(2 * i + 3));
  }
  // The output starts from its fill (KTT uploads it), and the expected values make the verification.
  CHECK(result.role == ArgSpec::Role::inout);
  HostBuffers got;
  got["result"] = expected->at("result");
  CHECK(adapter->verify(got, *expected, w, p).empty());
  float off = 7;
  std::memcpy(got["result"].data() + 4 * 5, &off, 4);
  CHECK_THAT(adapter->verify(got, *expected, w, p), Catch::Contains("result[5] = 7 but expected 13"));
  autotune_test::remove_ktt_tutorial(script);
}

TEST_CASE("KTT scripts: a Generator reads only i - Constant references - other fills are refused", "[cpu][t1][ktt]") {
  const std::string script = autotune_test::ktt_tutorial();
  const json base = read_json(script);
  auto error_of = [&](const json& doc, std::string* pointer) {
    try {
      specs::t1_to_spec(doc, script);
    } catch (const SpecError& e) {
      *pointer = e.pointer();
      return std::string(e.what());
    }
    return std::string();
  };
  std::string pointer;
  json doc = base;
  doc["KernelSpecification"]["ReferenceArguments"][0]["DataSource"] = "2 * j";
  CHECK_THAT(error_of(doc, &pointer), Catch::Contains("the Generator \"2 * j\" reads 'j'"));
  CHECK(pointer == "/KernelSpecification/ReferenceArguments/0/DataSource");
  doc["KernelSpecification"]["ReferenceArguments"][0]["DataSource"] = "2 * i +";
  CHECK_THAT(error_of(doc, &pointer), Catch::Contains("the Generator \"2 * i +\""));
  doc = base;
  doc["KernelSpecification"]["Arguments"][0]["DataSource"] = "i * n";
  CHECK_THAT(error_of(doc, &pointer), Catch::Contains("reads 'n'"));
  CHECK(pointer == "/KernelSpecification/Arguments/0/DataSource");
  doc = base;
  doc["KernelSpecification"]["ReferenceArguments"][0]["FillType"] = "Random";
  CHECK_THAT(error_of(doc, &pointer), Catch::Contains("not from Random"));
  CHECK(pointer == "/KernelSpecification/ReferenceArguments/0/FillType");
  // Constant (KTT's default FillType): one value for every element.
  doc = base;
  doc["KernelSpecification"]["ReferenceArguments"][0].erase("FillType");
  doc["KernelSpecification"]["ReferenceArguments"][0]["FillValue"] = 4.5;
  const specs::T1Conversion c = specs::t1_to_spec(doc, script);
  CHECK(c.spec["arguments"][2]["expected"] == json({{"generator", "4.5"}}));
  // A generator whose value is not a number says so, naming the output.
  doc["KernelSpecification"]["ReferenceArguments"][0]["FillType"] = "Generator";
  doc["KernelSpecification"]["ReferenceArguments"][0]["DataSource"] = "'x' * i";
  const TuningSpec s = specs::load_spec_text(specs::t1_to_spec(doc, script).spec.dump(), script);
  auto adapter = kernels::make_adapter(s);
  const HostBuffers in;
  try {
    adapter->reference(in, s.workloads.front(), s.problem_sizes.front());
    FAIL("a string generator made expected values");
  } catch (const SpecError& e) {
    CHECK_THAT(e.what(), Catch::Contains("output 'result' (expected values)") && Catch::Contains("not a number"));
    CHECK(e.pointer() == "/arguments/2/expected/generator");
  }
  autotune_test::remove_ktt_tutorial(script);
}

TEST_CASE("KTT scripts: outputs given a fill start from it - OpenCL scripts are refused", "[cpu][t1][ktt]") {
  const TuningSpec coulomb = interop::resolve_kernel(kCoulomb, {});
  const ArgSpec& grid = coulomb.arguments.back();
  CHECK(grid.name == "grid");
  CHECK(grid.role == ArgSpec::Role::inout);  // the kernel adds to it: energyGrid[...] += energyValue[i]
  CHECK(grid.init.kind == DataSource::Kind::constant);
  CHECK(grid.init.constant.f == 0.0);
  // Without a fill an output starts from the poison, as before.
  json doc = read_json(kCoulomb);
  doc["KernelSpecification"]["Arguments"][8].erase("FillType");
  doc["KernelSpecification"]["Arguments"][8].erase("FillValue");
  CHECK(specs::t1_to_spec(doc, kCoulomb).spec["arguments"][8]["role"] == "output");
  try {
    specs::t1_to_spec(read_json(autotune_test::ktt_dir() + "/Examples/CoulombSum2d/CoulombSum2dScript.json"),
                      autotune_test::ktt_dir() + "/Examples/CoulombSum2d/CoulombSum2dScript.json");
    FAIL("an OpenCL script converted");
  } catch (const SpecError& e) {
    CHECK(e.pointer() == "/KernelSpecification/Language");
    CHECK_THAT(e.what(), Catch::Contains("OpenCL kernels are not tuned here (CUDA only)"));
  }
}
