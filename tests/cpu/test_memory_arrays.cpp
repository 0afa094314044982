// In-memory arrays (tuner/core/memory_arrays.*): a spec's {"memory": NAME} read where a file would be, for an
// input, an expected output and a scalar; the data tag follows the bytes; refusals name the array and the reader.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "tuner/core/data_file.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/memory_arrays.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/kernels/registry.hpp"

using namespace autotune;

namespace {

const char* kSpec = R"J({
  "name": "tiny_memory", "family": "user", "source": "tiny.cu", "kernels": ["tiny_kernel"],
  "parameters": [{"name": "BLOCK_SIZE", "values": [32, 64], "default": 64}],
  "launch": [{"kernel": "tiny_kernel", "grid": "ceil_div(n, BLOCK_SIZE)", "block": "BLOCK_SIZE"}],
  "problem": {"dims": ["n"], "sizes": [{"n": 5}]},
  "workloads": ["float32"],
  "arguments": [
    {"name": "x", "kind": "buffer", "dtype": "float32", "count": "n", "init": {"memory": "x_values"}},
    {"name": "y", "kind": "buffer", "dtype": "float32", "count": "n", "role": "output", "expected": {"memory": "y_answer"}},
    {"name": "n", "kind": "scalar", "dtype": "int32", "value": {"memory": "n_value"}}
  ]
})J";

std::vector<MemoryArray> arrays(const std::vector<float>& x, const std::vector<float>& y, const std::int32_t& n) {
  return {{"x_values", "float32", x.data(), x.size() * sizeof(float)},
          {"y_answer", "float32", y.data(), y.size() * sizeof(float)},
          {"n_value", "int32", &n, sizeof n}};
}

std::string usage_error_of(const std::vector<MemoryArray>& a) {
  try {
    set_memory_arrays(a);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("memory arrays: a spec reads its inputs, expected values and scalars from the caller's memory",
          "[cpu][memory_arrays]") {
  const std::vector<float> x = {1.5f, -2.0f, 3.25f, 4.0f, -5.5f};
  std::vector<float> y = {2, 4, 6, 8, 10};
  const std::int32_t n = 5;
  set_memory_arrays(arrays(x, y, n));
  const TuningSpec s = TuningSpec::from_json_text(kSpec, std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs");
  REQUIRE(s.arguments.size() == 3);
  CHECK(s.arguments[0].init.path == "memory:x_values");
  CHECK(s.arguments[2].value == "5");  // read when the spec is loaded, as from a file

  const auto adapter = kernels::make_adapter(s);
  const Workload w = s.workloads.front();
  const ProblemKey p = ProblemKey::parse("n=5");
  const HostBuffers in = adapter->make_inputs(w, p, 1);
  REQUIRE(in.at("x").size() == x.size() * sizeof(float));
  CHECK(std::memcmp(in.at("x").data(), x.data(), in.at("x").size()) == 0);
  const std::optional<HostBuffers> expected = adapter->reference(in, w, p);
  REQUIRE(expected.has_value());
  REQUIRE(expected->at("y").size() == y.size() * sizeof(float));
  CHECK(std::memcmp(expected->at("y").data(), y.data(), y.size() * sizeof(float)) == 0);

  // The data tag is a hash of the bytes as registered: other values registered, another problem.
  const std::string tag = data_tag(s);
  CHECK(tag.size() == 12);
  y[3] = 9;
  set_memory_arrays(arrays(x, y, n));
  CHECK(data_tag(s) != tag);
  y[3] = 8;
  set_memory_arrays(arrays(x, y, n));
  CHECK(data_tag(s) == tag);
  // The digest: the same bytes give the same value however they are split into pieces; one byte changes it.
  std::vector<unsigned char> big((64u << 20) * 2 + 12345, 7);
  const std::uint64_t d = memory_array_digest(big.data(), big.size());
  CHECK(d == memory_array_digest(big.data(), big.size()));
  big[(64u << 20) + 1] = 8;
  CHECK(memory_array_digest(big.data(), big.size()) != d);
  CHECK(memory_array_digest(big.data(), big.size() - 1) != memory_array_digest(big.data(), big.size()));

  // A problem whose count the array does not hold is refused naming both.
  CHECK_THROWS_WITH(adapter->make_inputs(w, ProblemKey::parse("n=6"), 1),
                    Catch::Contains("argument 'x'") && Catch::Contains("in-memory array 'x_values'") &&
                        Catch::Contains("has 5 elements"));
  set_memory_arrays({});
}

TEST_CASE("memory arrays: refusals name the array and the reader", "[cpu][memory_arrays]") {
  const std::vector<double> d = {1, 2};
  const std::vector<float> f = {1, 2};
  CHECK_THAT(usage_error_of({{"", "float32", f.data(), 8}}), Catch::Contains("needs a name"));
  CHECK_THAT(usage_error_of({{"a", "float32", f.data(), 8}, {"a", "float32", f.data(), 8}}),
             Catch::Contains("'a' is given twice"));
  CHECK_THAT(usage_error_of({{"a", "complex64", f.data(), 8}}), Catch::Contains("unknown dtype 'complex64'"));
  CHECK_THAT(usage_error_of({{"a", "float64", d.data(), 12}}), Catch::Contains("not a whole number of float64"));

  set_memory_arrays({{"x_values", "float64", d.data(), 16}});
  ArrayFileRequest r;
  r.path = memory_path("x_values");
  r.dtype = "float32";
  r.what = "argument 'x'";
  std::vector<unsigned char> out;
  CHECK_THROWS_WITH(read_array_file(r, 2, out),
                    Catch::Contains("argument 'x'") && Catch::Contains("holds float64, the reader needs float32"));
  r.path = memory_path("nothing");
  CHECK_THROWS_WITH(probe_array_file(r),
                    Catch::Contains("no in-memory array 'nothing' is registered (registered: x_values)"));
  r.path = memory_path("x_values");
  r.dtype = "float64";
  CHECK(read_array_file(r, 2, out) == ReadMethod::memory);
  CHECK(out.size() == 16);

  // A spec naming an array that is not registered fails when it is loaded, at the field's pointer.
  CHECK_THROWS_WITH(TuningSpec::from_json_text(kSpec, std::string(AUTOTUNE_TEST_DATA_DIR) + "/specs"),
                    Catch::Contains("/arguments/0/init/memory") && Catch::Contains("x_values"));
  set_memory_arrays({});
}
