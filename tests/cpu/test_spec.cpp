#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <tuple>

#include "tuner/core/error.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;

namespace {

const char* kGood = R"J({
  "name": "vec",
  "family": "user",
  "source": "k.cu",
  "kernels": ["k", "k_ref"],
  "parameters": [
    {"name": "BLOCK_SIZE", "values": [64, 128, 256, 2048], "default": 128},
    {"name": "VARIANT", "range": [0, 2], "labels": {"0": "plain", "2": "fancy"}}
  ],
  "constraints": ["BLOCK_SIZE <= max_threads_per_block", "VARIANT != 1 || BLOCK_SIZE >= 128"],
  "launch": [{"kernel": "k", "grid": "ceil_div(n, BLOCK_SIZE)", "block": ["BLOCK_SIZE", 1, 1], "shared_mem": "BLOCK_SIZE * sizeof_t"}],
  "problem": {"dims": ["n"], "sizes": [{"n": 1000}]},
  "workloads": ["float32"],
  "tolerance": 1e-6,
  "bytes_moved": "2 * n * sizeof_t",
  "arguments": [
    {"name": "x", "kind": "buffer", "dtype": "float32", "count": "n"},
    {"name": "y", "kind": "buffer", "dtype": "float32", "count": "n", "role": "output"},
    {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}
  ],
  "reference": {"kernel": "k_ref", "grid": "ceil_div(n, 256)", "block": 256}
})J";

TuningSpec parse(const std::string& text) { return TuningSpec::from_json_text(text, ".", false); }

/// kGood with one replacement applied.
std::string with(const std::string& from, const std::string& to) {
  std::string s = kGood;
  auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

/// `spec` without its "reference" member, the last one of the text.
std::string without_reference(const std::string& spec) {
  const auto pos = spec.find(",\n  \"reference\"");
  REQUIRE(pos != std::string::npos);
  return spec.substr(0, pos) + "\n}";
}

}  // namespace

TEST_CASE("a good spec parses completely", "[cpu][spec]") {
  TuningSpec s = parse(kGood);
  CHECK(s.name == "vec");
  CHECK(s.params.size() == 2);
  CHECK(s.params[1].values == std::vector<Value>{0, 1, 2});
  CHECK(s.params[1].label(2) == "fancy");
  CHECK(s.default_config().at("BLOCK_SIZE") == 128);
  CHECK(s.launches.size() == 1);
  CHECK(s.problem_sizes.front().at("n") == 1000);
  CHECK(s.workloads.front().dtype == "float32");
  CHECK(s.reference.has_value());
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  ParameterSpace sp = s.space(s.problem_sizes.front(), d, s.workloads.front());
  CHECK(sp.size() == 8);  // 3 block sizes x 3 variants, minus VARIANT=1 with 64
  Config c = s.default_config();
  CHECK(eval_expr(s.launches[0].shared_bytes, c, s.problem_sizes.front(), d, s.workloads.front()) == 512);
  CHECK(s.spec_hash() == parse(kGood).spec_hash());
}

TEST_CASE("spec errors name the JSON pointer of the bad field", "[cpu][spec]") {
  CHECK_THAT(error_of("{\"name\": "), Catch::Contains("malformed JSON"));
  CHECK_THAT(error_of("[]"), Catch::Contains("JSON object"));
  CHECK_THAT(error_of(with("\"tolerance\"", "\"tolerence\"")), Catch::Contains("/tolerence") && Catch::Contains("unknown key"));
  CHECK_THAT(error_of(with("\"default\": 128", "\"default\": 100")), Catch::Contains("/parameters/0/default"));
  CHECK_THAT(error_of(with("[64, 128, 256, 2048]", "[64, \"128\"]")), Catch::Contains("/parameters/0/values/1") && Catch::Contains("integer"));
  CHECK_THAT(error_of(with("[64, 128, 256, 2048]", "[64, 64]")), Catch::Contains("duplicate value"));
  CHECK_THAT(error_of(with("[64, 128, 256, 2048]", "[]")), Catch::Contains("/parameters/0/values"));
  CHECK_THAT(error_of(with("\"BLOCK_SIZE <= max_threads_per_block\"", "\"BLOCK_SIZE <= \"")), Catch::Contains("/constraints/0"));
  CHECK_THAT(error_of(with("\"BLOCK_SIZE <= max_threads_per_block\"", "42")), Catch::Contains("/constraints/0"));
  CHECK_THAT(error_of(with("\"name\": \"vec\",", "")), Catch::Contains("/name") && Catch::Contains("missing"));
  CHECK_THAT(error_of(with("{\"kernel\": \"k\", \"grid\"", "{\"kernel\": \"nope\", \"grid\"")), Catch::Contains("/launch/0/kernel"));
  CHECK_THAT(error_of(with("{\"n\": 1000}", "{\"n\": 0}")), Catch::Contains("/problem/sizes/0/n"));
  CHECK_THAT(error_of(with("{\"n\": 1000}", "{\"m\": 10}")), Catch::Contains("/problem/sizes/0"));
  CHECK_THAT(error_of(with("\"float32\"]", "\"\"]")), Catch::Contains("/workloads/0"));
  CHECK_THAT(error_of(with("\"dtype\": \"float32\", \"count\": \"n\"}", "\"dtype\": \"complex\", \"count\": \"n\"}")), Catch::Contains("/arguments/0/dtype"));
  CHECK_THAT(error_of(with("\"name\": \"BLOCK_SIZE\"", "\"name\": \"BLOCK SIZE\"")), Catch::Contains("macro name"));
  CHECK_THAT(error_of(with("\"range\": [0, 2]", "\"range\": [2, 0]")), Catch::Contains("/parameters/1/range"));
  CHECK_THAT(error_of(with("\"reference\"", "\"referenc\"")), Catch::Contains("unknown key"));
}

TEST_CASE("unknown names in constraints are reported when the space is built", "[cpu][spec]") {
  TuningSpec s = parse(with("VARIANT != 1", "VARIANTS != 1"));
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  CHECK_THROWS_WITH(s.space(s.problem_sizes.front(), d, s.workloads.front()), Catch::Contains("VARIANTS"));
}

TEST_CASE("a constraint can leave the space empty", "[cpu][spec]") {
  TuningSpec s = parse(with("\"BLOCK_SIZE <= max_threads_per_block\"", "\"BLOCK_SIZE > 4096\""));
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  CHECK(s.space(s.problem_sizes.front(), d, s.workloads.front()).empty());
}

TEST_CASE("problem and workload checks name what is wrong", "[cpu][spec]") {
  TuningSpec s = parse(kGood);
  CHECK_THROWS_WITH(s.check_problem(ProblemKey::parse("rows=3")), Catch::Contains("'n'"));
  CHECK_THROWS_WITH(s.check_workload(Workload::parse("int32/sum")), Catch::Contains("float32"));
}

TEST_CASE("spec files load their source relative to the spec", "[cpu][spec]") {
  std::string dir = std::string(AUTOTUNE_TEST_DATA_DIR);
  TuningSpec s = TuningSpec::from_file(dir + "/specs/tiny.tune.json");
  CHECK(s.source_text.find("tiny_kernel") != std::string::npos);
  CHECK_THROWS_WITH(TuningSpec::from_file(dir + "/specs/missing_source.tune.json"), Catch::Contains("/source"));
  CHECK_THROWS_WITH(TuningSpec::from_file(dir + "/specs/does_not_exist.json"), Catch::Contains("cannot read"));
}

TEST_CASE("inputs found by fuzz_spec: huge numbers, ranges at the int64 limits, deep nesting", "[cpu][spec][fuzz]") {
  // A number too large for any C++ type is malformed JSON (a SpecError), not an escaping json exception.
  CHECK_THAT(error_of(with("\"tolerance\": 1e-6", "\"tolerance\": 1e999")), Catch::Contains("malformed JSON"));
  // Unsigned integers above INT64_MAX do not wrap to negative values.
  CHECK_THAT(error_of(with("[64, 128, 256, 2048]", "[64, 18446744073709551615]")),
             Catch::Contains("/parameters/0/values/1") && Catch::Contains("out of range"));
  // Ranges whose last value is INT64_MAX, or whose span exceeds INT64_MAX, enumerate without overflow.
  auto ranged = [](const std::string& range) {
    return with("\"range\": [0, 2], \"labels\": {\"0\": \"plain\", \"2\": \"fancy\"}", "\"range\": " + range);
  };
  TuningSpec top = parse(ranged("[9223372036854775806, 9223372036854775807]"));
  CHECK(top.params[1].values == std::vector<Value>{INT64_MAX - 1, INT64_MAX});
  TuningSpec wide = parse(ranged("[-9223372036854775808, 9223372036854775807, 4611686018427387904]"));
  CHECK(wide.params[1].values == std::vector<Value>{INT64_MIN, -4611686018427387904, 0, 4611686018427387904});
  CHECK_THAT(error_of(ranged("[-9223372036854775808, 9223372036854775807]")), Catch::Contains("too many values"));
  // Nesting is bounded (serialising spec_text recurses).
  CHECK_THAT(error_of(with("\"tolerance\"", "\"$comment\": " + std::string(100000, '[') + std::string(100000, ']') +
                                                ", \"tolerance\"")),
             Catch::Contains("nested deeper"));
}

TEST_CASE("a run can narrow the space: values, extra constraints, dropped constraints", "[cpu][spec]") {
  TuningSpec s = parse(kGood);
  const DeviceInfo dev = sim::SyntheticBackend::fake_device();
  const ProblemKey p = ProblemKey::parse("n=1000");
  const Workload w = Workload::parse("float32");
  const std::size_t full = s.space(p, dev, w).size();

  s.restrict_values("VARIANT", {"fancy", "0"});  // a label and a number, kept in the spec's order
  CHECK(s.find_param("VARIANT")->values == std::vector<Value>{0, 2});
  s.restrict_values("BLOCK_SIZE", {"256", "64"});
  CHECK(s.find_param("BLOCK_SIZE")->values == std::vector<Value>{64, 256});
  CHECK(s.find_param("BLOCK_SIZE")->default_value == 64);  // 128 is gone: the first kept value
  CHECK(s.space(p, dev, w).size() == 4);

  s.add_constraint("BLOCK_SIZE * (VARIANT + 1) >= 192");
  CHECK(s.space(p, dev, w).size() == 3);
  s.drop_constraint("BLOCK_SIZE*(VARIANT+1)   >= 192");  // white space does not matter
  CHECK(s.space(p, dev, w).size() == 4);

  TuningSpec t = parse(kGood);
  t.drop_constraint("BLOCK_SIZE <= max_threads_per_block");
  CHECK(t.space(p, dev, w).size() > full);  // 2048 is back
  CHECK(t.spec_hash() == parse(kGood).spec_hash());

  CHECK_THROWS_WITH(s.restrict_values("NOPE", {"1"}), Catch::Contains("no parameter 'NOPE'"));
  CHECK_THROWS_WITH(s.restrict_values("VARIANT", {"1"}), Catch::Contains("not a value of VARIANT"));
  CHECK_THROWS_WITH(s.restrict_values("VARIANT", {"x1"}), Catch::Contains("values: plain, fancy"));
  CHECK_THROWS_AS(s.restrict_values("VARIANT", {}), UsageError);
  CHECK_THROWS_AS(s.add_constraint("BLOCK_SIZE <"), UsageError);
  CHECK_THROWS_WITH(s.drop_constraint("VARIANT == 7"), Catch::Contains("VARIANT != 1 || BLOCK_SIZE >= 128"));
}

// ---- inputs from files, fills, expected values and the reference from a configuration (docs/spec-format.md
// "Inputs from files") --------------------------------------------------------------------------------------

namespace {

/// kGood with argument x's "count": "n"} replaced by `x_fields` (what follows the dtype of x).
std::string with_x(const std::string& x_fields) {
  return with("\"dtype\": \"float32\", \"count\": \"n\"}", "\"dtype\": \"float32\", " + x_fields + "}");
}

std::string files_dir() { return std::string(AUTOTUNE_TEST_DATA_DIR) + "/files"; }

std::string slurp_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// tests/data/files/filed.tune.json with one replacement, parsed with its files (SpecError message or "ok").
std::string filed_error(const std::string& from, const std::string& to) {
  std::string text = slurp_file(files_dir() + "/filed.tune.json");
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  text.replace(pos, from.size(), to);
  try {
    TuningSpec::from_json_text(text, files_dir(), true);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "ok";
}

}  // namespace

TEST_CASE("init takes files, constants and uniform ranges, and its errors name their pointer", "[cpu][spec][data_file]") {
  // The strings of earlier versions keep their meaning.
  for (const auto& [text, kind] :
       std::vector<std::pair<std::string, DataSource::Kind>>{{"\"random\"", DataSource::Kind::random},
                                                             {"\"zero\"", DataSource::Kind::zero},
                                                             {"\"ones\"", DataSource::Kind::ones},
                                                             {"\"iota\"", DataSource::Kind::iota}}) {
    const DataSource d = parse(with_x("\"count\": \"n\", \"init\": " + text)).arguments[0].init;
    CHECK(d.kind == kind);
    CHECK_FALSE(d.seed.has_value());
    CHECK_FALSE(d.min.has_value());
  }
  CHECK(parse(kGood).arguments[0].init.kind == DataSource::Kind::random);

  const DataSource file = parse(with_x("\"count\": \"n\", \"init\": {\"file\": \"data/x.npy\"}")).arguments[0].init;
  CHECK(file.kind == DataSource::Kind::file);
  CHECK(file.format == DataFormat::npy);
  CHECK(file.file == "data/x.npy");
  CHECK(file.path == "./data/x.npy");  // relative to the spec's folder
  CHECK(file.pointer == "/arguments/0/init/file");
  const DataSource raw =
      parse(with_x("\"count\": \"n\", \"init\": {\"file\": \"x.dat\", \"format\": \"raw\"}")).arguments[0].init;
  CHECK(raw.format == DataFormat::raw);
  CHECK(parse(with_x("\"count\": \"n\", \"init\": {\"file\": \"x.bin\"}")).arguments[0].init.format == DataFormat::raw);

  const DataSource c = parse(with_x("\"count\": \"n\", \"init\": {\"constant\": 3.5}")).arguments[0].init;
  CHECK(c.kind == DataSource::Kind::constant);
  CHECK(c.constant.f == 3.5);
  const DataSource r =
      parse(with_x("\"count\": \"n\", \"init\": {\"random\": {\"seed\": 7, \"min\": -1.0, \"max\": 1.0}}"))
          .arguments[0]
          .init;
  CHECK(r.kind == DataSource::Kind::random);
  CHECK(r.seed == std::uint64_t{7});
  REQUIRE(r.min);
  CHECK(r.min->f == -1.0);
  CHECK(r.max->f == 1.0);
  CHECK_FALSE(parse(with_x("\"count\": \"n\", \"init\": {\"random\": {}}")).arguments[0].init.seed.has_value());

  // Errors, each at its pointer, with what the message says besides ("": nothing more).
  auto x_error = [](const std::string& init) { return error_of(with_x("\"count\": \"n\", \"init\": " + init)); };
  const std::tuple<const char*, const char*, const char*> x_errors[] = {
      {"\"gauss\"", "/arguments/0/init", "{\"constant\": 3.5}"},
      {"{}", "/arguments/0/init:", ""},
      {"{\"file\": \"x.dat\"}", "/arguments/0/init/file", "cannot tell the format of 'x.dat'"},
      {"{\"file\": \"x.npy\", \"format\": \"hdf5\"}", "/arguments/0/init/format", "npy or raw"},
      {"{\"file\": \"\"}", "/arguments/0/init/file", ""},
      {"{\"file\": \"x.npy\", \"constant\": 1}", "/arguments/0/init/constant", ""},
      {"{\"constant\": 1, \"random\": {}}", "one of", ""},
      {"{\"constant\": 1, \"format\": \"raw\"}", "/arguments/0/init", ""},
      {"{\"constant\": \"one\"}", "/arguments/0/init/constant", "number"},
      {"{\"constant\": 1e39}", "/arguments/0/init/constant", "float32"},
      {"{\"random\": 3}", "/arguments/0/init/random", ""},
      {"{\"random\": {\"min\": 0}}", "/arguments/0/init/random/max", "both"},
      {"{\"random\": {\"min\": 1, \"max\": 1}}", "/arguments/0/init/random/max", "[min, max)"},
      {"{\"random\": {\"seed\": -1}}", "/arguments/0/init/random/seed", ""},
      {"{\"random\": {\"sigma\": 1}}", "/arguments/0/init/random/sigma", ""},
      {"{\"unknown\": 1}", "/arguments/0/init/unknown", ""},
  };
  for (const auto& [init, at, says] : x_errors) {
    INFO(init);
    const std::string e = x_error(init);
    CHECK_THAT(e, Catch::Contains(at));
    if (*says != '\0') CHECK_THAT(e, Catch::Contains(says));
  }

  // Integer arguments: exact integers within the type.
  auto n_spec = [](const std::string& dtype, const std::string& init) {
    return with("{\"name\": \"n\", \"kind\": \"scalar\", \"dtype\": \"int32\", \"value\": \"n\"}",
                "{\"name\": \"n\", \"kind\": \"scalar\", \"dtype\": \"int32\", \"value\": \"n\"}, "
                "{\"name\": \"k\", \"kind\": \"buffer\", \"dtype\": \"" +
                    dtype + "\", \"count\": 8, \"init\": " + init + "}");
  };
  const DataSource ic = parse(n_spec("int64", "{\"constant\": -9007199254740993}")).arguments[3].init;
  CHECK(ic.constant.i == -9007199254740993);  // not rounded through a double
  const DataSource ir = parse(n_spec("uint8", "{\"random\": {\"min\": 0, \"max\": 255}}")).arguments[3].init;
  CHECK(ir.min->i == 0);
  CHECK(ir.max->i == 255);
  CHECK(parse(n_spec("int32", "{\"random\": {\"min\": 5, \"max\": 5}}")).arguments[3].init.max->i == 5);
  CHECK_THAT(error_of(n_spec("uint8", "{\"constant\": 256}")),
             Catch::Contains("/arguments/3/init/constant") && Catch::Contains("0 to 255"));
  CHECK_THAT(error_of(n_spec("int32", "{\"constant\": 1.5}")),
             Catch::Contains("/arguments/3/init/constant") && Catch::Contains("integer"));
  CHECK_THAT(error_of(n_spec("int16", "{\"random\": {\"min\": 3, \"max\": 2}}")), Catch::Contains("at least min"));
  CHECK_THAT(error_of(n_spec("int64", "{\"random\": {\"min\": -9223372036854775807, \"max\": 9223372036854775807}}")),
             Catch::Contains("wider"));
  // float16 inputs: only from a file or zero; an output cannot be initialised from a file.
  CHECK_THAT(error_of(n_spec("float16", "\"random\"")),
             Catch::Contains("/arguments/3/init") && Catch::Contains("float16"));
  CHECK_NOTHROW(parse(n_spec("float16", "{\"file\": \"h.npy\"}")));
  CHECK_THAT(error_of(with("\"count\": \"n\", \"role\": \"output\"}",
                           "\"count\": \"n\", \"role\": \"output\", "
                           "\"init\": {\"file\": \"y.npy\"}}")),
             Catch::Contains("/arguments/1/init") && Catch::Contains("\"expected\""));
}

TEST_CASE("scalars and expected outputs from files, and their errors name their pointer", "[cpu][spec][data_file]") {
  // Parsed without loading files: the scalar's value is read when the spec is loaded with its files.
  const TuningSpec s = parse(with("\"value\": \"n\"", "\"value\": {\"file\": \"n.npy\"}"));
  REQUIRE(s.arguments[2].value_file);
  CHECK(s.arguments[2].value_file->pointer == "/arguments/2/value/file");
  CHECK(s.arguments[2].value.empty());
  CHECK_THAT(error_of(with("\"value\": \"n\"", "\"value\": {\"files\": \"n.npy\"}")),
             Catch::Contains("/arguments/2/value"));
  CHECK_THAT(error_of(with("\"value\": \"n\"", "\"value\": {\"file\": \"n.npy\", \"x\": 1}")),
             Catch::Contains("/arguments/2/value/x"));
  CHECK_THAT(error_of(with("\"value\": \"n\"", "\"value\": [1]")), Catch::Contains("/arguments/2/value"));

  const std::string expected =
      with("\"role\": \"output\"}", "\"role\": \"output\", \"expected\": {\"file\": \"y.npy\"}}");
  // Every output has expected values: no reference is needed, and one given would never run.
  CHECK_THAT(error_of(expected), Catch::Contains("/reference") && Catch::Contains("never run"));
  const TuningSpec e = parse(without_reference(expected));
  CHECK_FALSE(e.reference.has_value());
  REQUIRE(e.arguments[1].expected);
  CHECK(e.arguments[1].expected->pointer == "/arguments/1/expected/file");
  CHECK(e.reference_text() == "expected values of y from y.npy");
  CHECK_THAT(error_of(with("\"count\": \"n\"}", "\"count\": \"n\", \"expected\": {\"file\": \"x.npy\"}}")),
             Catch::Contains("/arguments/0/expected") && Catch::Contains("only an output buffer"));
  CHECK_THAT(error_of(with("\"value\": \"n\"}", "\"value\": \"n\", \"expected\": {\"file\": \"x.npy\"}}")),
             Catch::Contains("/arguments/2/expected"));
  CHECK_THAT(error_of(with("\"role\": \"output\"}", "\"role\": \"output\", \"expected\": \"y.npy\"}")),
             Catch::Contains("/arguments/1/expected") && Catch::Contains("{\"file\""));
}

TEST_CASE("the reference can be a configuration of the kernel, the default one when none is given",
          "[cpu][spec][data_file]") {
  const std::string ref = "{\"kernel\": \"k_ref\", \"grid\": \"ceil_div(n, 256)\", \"block\": 256}";
  auto with_ref = [&](const std::string& r) { return with(ref, r); };
  const TuningSpec d = parse(with_ref("{\"configuration\": \"default\"}"));
  REQUIRE(d.reference);
  REQUIRE(d.reference->configuration);
  CHECK(*d.reference->configuration == d.default_config());
  CHECK(d.reference_config() == d.default_config());
  CHECK(d.reference_text() == "the default configuration (BLOCK_SIZE=128 VARIANT=plain)");

  const TuningSpec n = parse(with_ref("{\"configuration\": {\"BLOCK_SIZE\": 64, \"VARIANT\": \"fancy\"}}"));
  CHECK(n.reference_config() == Config({{"BLOCK_SIZE", 64}, {"VARIANT", 2}}));
  CHECK(n.reference_text() == "the configuration BLOCK_SIZE=64 VARIANT=fancy");
  const TuningSpec partial = parse(with_ref("{\"configuration\": {\"VARIANT\": 1}}"));
  CHECK(partial.reference_config() == Config({{"BLOCK_SIZE", 128}, {"VARIANT", 1}}));  // the rest at its default

  // A kernel of its own keeps compiling at the default configuration.
  const TuningSpec k = parse(kGood);
  CHECK_FALSE(k.reference->configuration.has_value());
  CHECK(k.reference_config() == k.default_config());
  CHECK(k.reference_text() == "the reference kernel k_ref");

  // No reference at all: the default configuration (many user kernels come without one).
  const TuningSpec dflt = parse(without_reference(kGood));
  REQUIRE(dflt.reference);
  CHECK(dflt.reference_config() == dflt.default_config());
  CHECK(dflt.reference->configuration.has_value());

  CHECK_THAT(error_of(with_ref("{\"configuration\": {\"BLOCK\": 64}}")),
             Catch::Contains("/reference/configuration/BLOCK") && Catch::Contains("unknown parameter") &&
                 Catch::Contains("BLOCK_SIZE, VARIANT"));
  CHECK_THAT(error_of(with_ref("{\"configuration\": {\"BLOCK_SIZE\": 96}}")),
             Catch::Contains("/reference/configuration/BLOCK_SIZE") && Catch::Contains("96 is not a value") &&
                 Catch::Contains("64, 128, 256, 2048"));
  CHECK_THAT(error_of(with_ref("{\"configuration\": {\"VARIANT\": \"fast\"}}")),
             Catch::Contains("/reference/configuration/VARIANT") && Catch::Contains("\"fast\" is not a label") &&
                 Catch::Contains("plain, 1, fancy"));
  CHECK_THAT(error_of(with_ref("{\"configuration\": {\"VARIANT\": 1.5}}")),
             Catch::Contains("/reference/configuration/VARIANT"));
  CHECK_THAT(error_of(with_ref("{\"configuration\": \"fastest\"}")),
             Catch::Contains("/reference/configuration") && Catch::Contains("\"default\""));
  CHECK_THAT(error_of(with_ref("{\"configuration\": \"default\", \"kernel\": \"k_ref\"}")),
             Catch::Contains("/reference") && Catch::Contains("not both"));
}

TEST_CASE("files are checked when a spec is loaded: missing, dtype, constant count", "[cpu][spec][data_file]") {
  const TuningSpec s = TuningSpec::from_file(files_dir() + "/filed.tune.json");
  CHECK(s.arguments[0].init.path == files_dir() + "/x.npy");
  REQUIRE(s.arguments[3].value_file);
  CHECK(s.arguments[3].value == "1.25");  // read from scale.npy
  CHECK(s.reference->configuration.has_value());
  CHECK(s.reference_text() == "the default configuration (BLOCK_SIZE=128 VARIANT=right)");

  CHECK_THAT(filed_error("\"x.npy\"", "\"x_missing.npy\""),
             Catch::Contains("/arguments/0/init/file") && Catch::Contains("argument 'x'") &&
                 Catch::Contains("x_missing.npy") && Catch::Contains("No such file"));
  CHECK_THAT(filed_error("\"dtype\": \"float32\", \"count\": \"n\", \"init\"",
                         "\"dtype\": \"float64\", \"count\": \"n\", \"init\""),
             Catch::Contains("/arguments/0/init/file") && Catch::Contains("argument 'x' is float64") &&
                 Catch::Contains("<f4 (float32)"));
  // bias has a constant count: its size is checked now.
  CHECK_THAT(filed_error("\"count\": 16", "\"count\": 17"),
             Catch::Contains("/arguments/1/init/file") &&
                 Catch::Contains("argument 'bias' needs 17 elements of int32") && Catch::Contains("bias.bin") &&
                 Catch::Contains("has 64 bytes"));
  // A scalar's file holds one element of its dtype.
  CHECK_THAT(filed_error("\"scale.npy\"", "\"x.npy\""), Catch::Contains("/arguments/3/value/file") &&
                                                            Catch::Contains("argument 'scale' needs 1 element") &&
                                                            Catch::Contains("(4099,)"));
  CHECK_THAT(filed_error("\"dtype\": \"float32\", \"value\"", "\"dtype\": \"float64\", \"value\""),
             Catch::Contains("/arguments/3/value/file") && Catch::Contains("float64"));
  CHECK_THAT(filed_error("\"role\": \"output\"}", "\"role\": \"output\", \"expected\": {\"file\": \"f64_be.npy\"}}"),
             Catch::Contains("/arguments/2/expected/file") && Catch::Contains("output 'y' (expected values)"));
}
