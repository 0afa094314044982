#include <catch2/catch.hpp>
#include <fstream>

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
