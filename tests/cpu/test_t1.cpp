// Kernel Tuner T1 files as specs (tuner/interop/t1.*): the valid counts Python gives, the launch, arguments,
// reference and tuning defaults each field maps to, the fields refused with their pointers, and the CLI (tune,
// space, best, import --format t1). The fixtures are tests/data/t1/ (kernels of our own; make_files.py writes the
// blur's data); the valid counts were computed with Python 3.11's itertools over the same Values and Conditions.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "search/strategy.hpp"
#include "tests/cli_support.hpp"
#include "tests/cpu/strategy_support.hpp"
#include "tests/test_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/request.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/specs/t1.hpp"

using namespace autotune;
using autotune_test::Run;
using autotune_test::run_cli;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kT1 = autotune_test::data_dir() + "/t1";

json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

std::int64_t eval(const Expr& e, const Config& c, const ProblemKey& p) {
  return eval_expr(e, c, p, sim::SyntheticBackend::fake_device(), Workload{"float32", ""});
}

Config config_of(const TuningSpec& s, const std::map<std::string, std::string>& values) {
  Config c = s.default_config();
  for (const auto& [name, text] : values) {
    const Param* p = s.find_param(name);
    REQUIRE(p);
    bool found = false;
    for (Value v : p->values)
      if (p->label(v) == text) {
        c.set(name, v);
        found = true;
      }
    REQUIRE(found);
  }
  return c;
}

/// The error of converting `doc` (a T1 document next to the fixtures), or "" when it converts.
std::string conversion_error(const json& doc, std::string* pointer = nullptr) {
  try {
    specs::t1_to_spec(doc, kT1 + "/mutated.json");
  } catch (const SpecError& e) {
    if (pointer) *pointer = e.pointer();
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("T1 files give Kernel Tuner's valid counts", "[cpu][t1]") {
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  const TuningSpec add = interop::resolve_kernel(kT1 + "/vector_add.json", {});
  CHECK(add.name == "t1_vector_add");
  CHECK(add.python_expressions);
  const ParameterSpace a = add.space(add.problem_sizes.front(), d, add.workloads.front());
  CHECK(a.cartesian_size() == 240);
  CHECK(a.size() == 131);  // Python: 131 of 240
  const TuningSpec blur = interop::resolve_kernel(kT1 + "/blur.json", {});
  const ParameterSpace b = blur.space(blur.problem_sizes.front(), d, blur.workloads.front());
  CHECK(b.cartesian_size() == 240);
  CHECK(b.size() == 144);  // Python: 144 of 240
}

TEST_CASE("T1 parameters: typed values keep their Python values and macro texts", "[cpu][t1]") {
  const TuningSpec blur = interop::resolve_kernel(kT1 + "/blur.json", {});
  const Param* acc = blur.find_param("accumulate");
  REQUIRE(acc);
  CHECK(acc->kind == Param::Kind::string);
  CHECK(acc->macro(acc->values[1]) == "double_acc");
  const Param* thr = blur.find_param("threshold");
  REQUIRE(thr);
  CHECK(thr->kind == Param::Kind::floating);
  CHECK(thr->label(thr->default_value) == "1.0");
  const Param* tile = blur.find_param("tile_y");
  CHECK(tile->kind == Param::Kind::integer);
  // "accumulate == 'float_acc' or tile_y < 4" reads the string; "threshold * tile_y <= 2" the float.
  const ProblemKey p = blur.problem_sizes.front();
  const Config bad = config_of(blur, {{"accumulate", "double_acc"}, {"tile_y", "4"}, {"threshold", "0.5"}});
  const Config good = config_of(blur, {{"accumulate", "float_acc"}, {"tile_y", "4"}, {"threshold", "0.5"}});
  const Config too_big = config_of(blur, {{"accumulate", "float_acc"}, {"tile_y", "4"}, {"threshold", "1.0"}});
  CHECK(eval(blur.constraints[1], bad, p) == 0);
  CHECK(eval(blur.constraints[1], good, p) == 1);
  CHECK(eval(blur.constraints[2], good, p) == 1);
  CHECK(eval(blur.constraints[2], too_big, p) == 0);
  // A parameter listed twice in Values is taken once, and said so.
  json doc = read_json(kT1 + "/vector_add.json");
  doc["ConfigurationSpace"]["TuningParameters"][1]["Values"] = "[1, 2, 2, 4]";
  const specs::T1Conversion c = specs::t1_to_spec(doc, kT1 + "/vector_add.json");
  CHECK(c.spec["parameters"][1]["values"] == json::array({1, 2, 4}));
  bool noted = false;
  for (const std::string& n : c.notes) noted = noted || n.find("listed twice") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("T1 launch: Kernel Tuner's grid from ProblemSize and GridDiv, else GlobalSize in blocks or threads",
          "[cpu][t1]") {
  const TuningSpec add = interop::resolve_kernel(kT1 + "/vector_add.json", {});
  REQUIRE(add.launches.size() == 1);
  const LaunchSpec& l = add.launches.front();
  const ProblemKey p = add.problem_sizes.front();
  CHECK(p.key().rfind("n=1000003", 0) == 0);
  const Config c = config_of(add, {{"block_size_x", "128"}, {"tile", "4"}});
  CHECK(eval(l.grid_x, c, p) == 1954);  // ceil(1000003 / (128 * 4))
  CHECK(eval(l.block_x, c, p) == 128);
  CHECK(eval(l.grid_y, c, p) == 1);
  const TuningSpec blur = interop::resolve_kernel(kT1 + "/blur.json", {});
  const LaunchSpec& b = blur.launches.front();
  const Config cb = config_of(blur, {{"block_size_x", "32"}, {"block_size_y", "4"}, {"tile_y", "2"}});
  const ProblemKey pb = blur.problem_sizes.front();
  CHECK(eval(b.grid_x, cb, pb) == 8);   // OpenCL: 256 threads / 32
  CHECK(eval(b.grid_y, cb, pb) == 24);  // ceil(ceil(192 / 2) / 4)
  CHECK(eval(b.shared_bytes, cb, pb) == 0);
  CHECK(blur.compile_options == std::vector<std::string>{"-DMAXW=5"});
}

TEST_CASE("T1 arguments: sizes over the parameters' lists, fills, symbols, files, expected values", "[cpu][t1]") {
  const TuningSpec blur = interop::resolve_kernel(kT1 + "/blur.json", {});
  REQUIRE(blur.arguments.size() == 5);
  const ProblemKey p = blur.problem_sizes.front();
  const Config c = blur.default_config();
  const ArgSpec& out = blur.arguments[0];
  CHECK(out.is_output());
  REQUIRE(out.expected);
  CHECK(out.verification.relative == 1e-4);
  const ArgSpec& image = blur.arguments[1];
  CHECK(eval(image.count, c, p) == 260 * 196);  // (nx + max(filter_width) - 1) * (ny + ...)
  CHECK(image.init.kind == DataSource::Kind::file);
  const ArgSpec& filt = blur.arguments[2];
  CHECK(filt.kind == ArgSpec::Kind::constant);
  CHECK(eval(filt.count, c, p) == 25);
  CHECK(blur.arguments[3].kind == ArgSpec::Kind::scalar);
  CHECK(blur.arguments[3].value == "256");
  // The data files are part of the problem.
  CHECK(p.data.empty());
  const ProblemKey asked = ProblemRequest{}.problem_key(blur);
  CHECK(asked.data.size() == 12);
  CHECK(asked.key() == "nx=256,ny=192@" + asked.data);

  auto adapter = kernels::make_adapter(blur);
  const HostBuffers in = adapter->make_inputs(blur.workloads.front(), p, 1);
  REQUIRE(in.count("filt"));
  REQUIRE(in.at("filt").size() == 25 * 4);
  for (int i = 0; i < 25; ++i) {
    float v = 0;
    std::memcpy(&v, in.at("filt").data() + 4 * i, 4);
    CHECK(v == static_cast<float>(((i * 7) % 5 - 2) * 0.125));
  }
  std::ifstream f(kT1 + "/blur_image.bin", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(in.at("image").size() == bytes.size());
  CHECK(std::memcmp(in.at("image").data(), bytes.data(), bytes.size()) == 0);
  const auto expected = adapter->reference(in, blur.workloads.front(), p);
  REQUIRE(expected);
  CHECK(expected->at("out").size() == 256 * 192 * 4);

  const TuningSpec add = interop::resolve_kernel(kT1 + "/vector_add.json", {});
  const HostBuffers ain = kernels::make_adapter(add)->make_inputs(add.workloads.front(), add.problem_sizes.front(), 1);
  for (int i : {0, 5, 16, 17, 999999}) {
    float v = 0;
    std::memcpy(&v, ain.at("b").data() + 4 * i, 4);
    CHECK(v == static_cast<float>((i % 17) * 0.25));
  }
  CHECK_FALSE(add.reference->configuration == std::nullopt);  // no ReferenceArguments: the default configuration
}

TEST_CASE("T1 ReadWrite outputs start from their fill, MemType Constant is an argument and a symbol", "[cpu][t1]") {
  json doc = read_json(kT1 + "/vector_add.json");
  doc["KernelSpecification"]["Arguments"][2]["AccessType"] = "ReadWrite";
  doc["KernelSpecification"]["Arguments"][2]["FillValue"] = 3;
  doc["KernelSpecification"]["Arguments"][1]["MemType"] = "Constant";
  doc["KernelSpecification"]["Arguments"][1]["FillType"] = "Random";
  const specs::T1Conversion c = specs::t1_to_spec(doc, kT1 + "/vector_add.json");
  const json& args = c.spec["arguments"];
  REQUIRE(args.size() == 5);
  CHECK(args[1]["kind"] == "buffer");
  CHECK(args[1]["init"]["random"]["seed"] == 1);
  CHECK(args[2]["kind"] == "constant");
  CHECK(args[2]["symbol"] == "b");
  CHECK(args[2]["init"] == args[1]["init"]);  // the same values in both
  CHECK(args[3]["role"] == "inout");
  CHECK(args[3]["init"]["constant"] == 3);
  const TuningSpec s = specs::load_spec_text(c.spec.dump(), kT1 + "/vector_add.json");
  REQUIRE(s.arguments.size() == 5);
  CHECK(s.arguments[3].is_input());
  CHECK(s.arguments[3].is_output());
  auto adapter = kernels::make_adapter(s);
  const LaunchPlan plan = adapter->plan(s.default_config(), s.workloads.front(), s.problem_sizes.front(),
                                        sim::SyntheticBackend::fake_device());
  const BufferDecl* out = plan.find("c");
  REQUIRE(out);
  CHECK(out->role == BufferRole::output);
  CHECK(out->initial == "c:initial");
  const HostBuffers in = adapter->make_inputs(s.workloads.front(), s.problem_sizes.front(), 1);
  REQUIRE(in.count("c:initial"));
  float v = 0;
  std::memcpy(&v, in.at("c:initial").data(), 4);
  CHECK(v == 3.0f);
  CHECK(in.at("b") == in.at("b_symbol"));
}

TEST_CASE("T1 Budget and Search become the spec's tuning defaults", "[cpu][t1]") {
  const TuningSpec add = interop::resolve_kernel(kT1 + "/vector_add.json", {});
  CHECK(add.tuning.budget == 40u);
  CHECK(add.tuning.strategy == std::string("random_sample"));
  // Kernel Tuner's option names are not this tuner's: the attribute is noted, not passed (tune would refuse it)
  CHECK(add.tuning.strategy_options.empty());
  const specs::T1Conversion conv = specs::t1_to_spec(read_json(kT1 + "/vector_add.json"), kT1 + "/vector_add.json");
  bool noted = false;
  for (const std::string& n : conv.notes) noted = noted || n.find("/Search/Attributes/0") != std::string::npos;
  CHECK(noted);
  // What the fixtures ask for is what `tune` can start: the strategy takes the options given.
  namespace st = autotune_test::strategies;
  const ParameterSpace space = st::make_space({st::make_param("X", st::range(4))}, {});
  CHECK_NOTHROW(search::make_strategy(*add.tuning.strategy, space, 1, add.tuning.strategy_options));
  const TuningSpec blur = interop::resolve_kernel(kT1 + "/blur.json", {});
  CHECK(blur.tuning.time_limit_s == 30.0);
  CHECK_FALSE(blur.tuning.budget);
}

TEST_CASE("T1 fields that cannot be honoured are refused with their pointer", "[cpu][t1]") {
  const json base = read_json(kT1 + "/vector_add.json");
  struct Case {
    std::string pointer;
    std::function<void(json&)> change;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"/KernelSpecification/Language", [](json& d) { d["KernelSpecification"]["Language"] = "OpenCL"; }, "CUDA only"},
      {"/KernelSpecification/Arguments/0/FillType",
       [](json& d) { d["KernelSpecification"]["Arguments"][0]["FillType"] = "Script"; }, "Script"},
      {"/KernelSpecification/Arguments/0/FillType",
       [](json& d) { d["KernelSpecification"]["Arguments"][0]["FillType"] = "BinaryHDF"; }, "HDF5"},
      {"/KernelSpecification/Arguments/0/MemoryType",
       [](json& d) { d["KernelSpecification"]["Arguments"][0]["MemoryType"] = "Local"; }, "no CUDA counterpart"},
      {"/KernelSpecification/Arguments/2/AccessType",
       [](json& d) { d["KernelSpecification"]["Arguments"][2]["AccessType"] = "Both"; },
       "ReadOnly, WriteOnly or ReadWrite"},
      {"/KernelSpecification/Arguments/0/Type",
       [](json& d) { d["KernelSpecification"]["Arguments"][0]["Type"] = "quaternion"; }, "unknown Type"},
      {"/KernelSpecification/Arguments/0/Size",
       [](json& d) { d["KernelSpecification"]["Arguments"][0]["Size"] = "ProblemSize[3]"; }, "ProblemSize[3]"},
      {"/ConfigurationSpace/TuningParameters/0/Values",
       [](json& d) { d["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "5"; }, "non-empty list"},
      {"/ConfigurationSpace/TuningParameters/0/Values",
       [](json& d) { d["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "[1, 2"; }, "cannot parse"},
      {"/ConfigurationSpace/TuningParameters/1/Values",
       [](json& d) { d["ConfigurationSpace"]["TuningParameters"][1]["Values"] = "[1, 2.5]"; }, "not of Type int"},
      {"/ConfigurationSpace/Conditions/0/Expression",
       [](json& d) { d["ConfigurationSpace"]["Conditions"][0]["Expression"] = "tile >"; }, "cannot parse"},
      {"/ConfigurationSpace/Conditions/0/Expression",
       [](json& d) { d["ConfigurationSpace"]["Conditions"][0]["Expression"] = "tiles > 1"; }, "'tiles'"},
      {"/KernelSpecification/KernelFile", [](json& d) { d["KernelSpecification"]["KernelFile"] = "missing.cu"; },
       "not found"},
      {"/Budget/0/Type", [](json& d) { d["Budget"][0]["Type"] = "Forever"; }, "ConfigurationCount"},
      {"/KernelSpecification/Arguments",
       [](json& d) {
         d["KernelSpecification"]["Arguments"][2]["Output"] = 0;
         d["KernelSpecification"]["Arguments"][2]["AccessType"] = "ReadOnly";
       },
       "no argument is an output"},
  };
  for (const Case& c : cases) {
    json doc = base;
    c.change(doc);
    std::string pointer;
    const std::string error = conversion_error(doc, &pointer);
    INFO(c.pointer << ": " << error);
    CHECK(pointer == c.pointer);
    CHECK_THAT(error, Catch::Contains(c.says));
  }
  // Fields that change nothing are said, not dropped in silence.
  json doc = base;
  doc["BenchmarkConfig"] = {{"iterations", 10}};
  doc["KernelSpecification"]["Profiling"] = true;
  doc["ConfigurationSpace"]["TuningParameters"][0]["Default"] = 100;  // Kernel Tuner reads no Default
  const specs::T1Conversion conv = specs::t1_to_spec(doc, kT1 + "/vector_add.json");
  std::string notes;
  for (const std::string& n : conv.notes) notes += n + "\n";
  CHECK_THAT(notes,
             Catch::Contains("/BenchmarkConfig: not a T1 field") && Catch::Contains("/KernelSpecification/Profiling"));
  CHECK_THAT(notes, Catch::Contains("/TuningParameters/0/Default: 100 is not one of the values"));
  CHECK_FALSE(conv.spec["parameters"][0].contains("default"));
  CHECK_FALSE(specs::is_t1(json::object({{"name", "k"}})));
}

TEST_CASE("cli: T1 files are specs for every command, and import --format t1 writes the native spec",
          "[cpu][t1][cli]") {
  Run space = run_cli("space " + kT1 + "/blur.json");
  INFO(space.out);
  CHECK(space.code == 0);
  CHECK_THAT(space.out, Catch::Contains("valid:       144") && Catch::Contains("nx=256,ny=192@"));
  const std::string out_dir = (fs::temp_directory_path() / ("autotune_t1_" + std::to_string(::getpid()))).string();
  fs::create_directories(out_dir);
  Run imp = run_cli("import --format t1 " + kT1 + "/blur.json --write-spec " + out_dir + "/blur.tune.json");
  INFO(imp.out);
  CHECK(imp.code == 0);
  CHECK_THAT(imp.out, Catch::Contains("6 parameters, 3 conditions"));
  Run again = run_cli("space " + out_dir + "/blur.tune.json");
  INFO(again.out);
  CHECK_THAT(again.out, Catch::Contains("valid:       144"));
  Run need = run_cli("import --format t1 " + kT1 + "/blur.json");
  CHECK(need.code == 2);
  CHECK_THAT(need.out, Catch::Contains("--write-spec"));
  // Another data file is another problem.
  Run other = run_cli("space " + kT1 + "/blur.json --input image=" + kT1 + "/blur_expected.bin");
  INFO(other.out);
  CHECK(other.code == 0);
  Run bad = run_cli("space " + kT1 + "/blur.json --input picture=x.bin");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Catch::Contains("has no input 'picture'") && Catch::Contains("image, filt"));
  fs::remove_all(out_dir);
}
