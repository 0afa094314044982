#include <catch2/catch.hpp>

#include "tuner/core/config.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/trial.hpp"

using namespace autotune;

TEST_CASE("config JSON is canonical and round trips", "[cpu][config]") {
  Config a({{"B", 2}, {"A", -1}});
  CHECK(a.to_json() == R"({"A":-1,"B":2})");
  CHECK(Config::from_json(R"({ "B": 2, "A": -1 })") == a);
  CHECK(Config::from_json(a.to_json()).hash() == a.hash());
  CHECK(a.hash().size() == 16);
  CHECK(Config({{"A", 1}}).hash() != Config({{"A", 2}}).hash());
  CHECK_THROWS_AS(Config::from_json("{\"A\": 1.5}"), SpecError);
  CHECK_THROWS_AS(Config::from_json("[1]"), SpecError);
  CHECK_THROWS_AS(Config::from_json("{"), SpecError);
}

TEST_CASE("config prints with labels", "[cpu][config]") {
  Param p;
  p.name = "VARIANT";
  p.values = {0, 1};
  p.labels = {{1, "warp_shuffle"}};
  std::vector<Param> ps{p};
  CHECK(Config({{"VARIANT", 1}, {"X", 3}}).str(&ps) == "VARIANT=warp_shuffle X=3");
  CHECK_THROWS_WITH(Config().at("NOPE"), Catch::Contains("NOPE"));
}

TEST_CASE("keys print and parse", "[cpu][config]") {
  ProblemKey p = ProblemKey::parse("rows=4000,cols=4097");
  CHECK(p.key() == "cols=4097,rows=4000");
  CHECK(p.elements() == 4000.0 * 4097.0);
  CHECK_THROWS_AS(ProblemKey::parse("n=abc"), UsageError);
  CHECK_THROWS_AS(ProblemKey::parse("n"), UsageError);
  CHECK(Workload::parse("float32/sum").key() == "float32/sum");
  CHECK(Workload::parse("float32").op.empty());
  CHECK(dtype_size("float64") == 8);
  CHECK_THROWS_AS(dtype_size("complex"), UsageError);
  DeviceInfo d;
  d.name = "NVIDIA H200 NVL";
  CHECK(d.normalised_name() == "nvidia_h200_nvl");
  for (auto s : {TrialStatus::ok, TrialStatus::compile_error, TrialStatus::launch_error, TrialStatus::wrong_result,
                 TrialStatus::runtime_fault, TrialStatus::timeout, TrialStatus::invalid})
    CHECK(trial_status_from_string(to_string(s)) == s);
  CHECK_THROWS(trial_status_from_string("great"));
}
