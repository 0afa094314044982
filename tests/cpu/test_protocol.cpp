// The MPI messages' JSON of a measurement and an observation (tuner/mpi/protocol.hpp): keyed by the field
// visitors' names, every field carried, NaN as null. No MPI calls.
#ifdef AUTOTUNE_WITH_MPI
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "measurement_support.hpp"
#include "tuner/mpi/protocol.hpp"

using namespace autotune;

TEST_CASE("mpi protocol: a measurement with every field set round-trips through its JSON text",
          "[cpu][mpi][protocol]") {
  const Measurement m = autotune_test::distinct_measurement(3);
  const nlohmann::json sent = mpi::to_json(m);
  const Measurement got = mpi::measurement_from_json(nlohmann::json::parse(sent.dump()));
  CHECK(autotune_test::differing_fields(got, m) == std::vector<std::string>{});

  // The keys are the visitors' names: the measurement's, with the observation's nested under "observed".
  std::set<std::string> keys, observed_keys, names, observed_names;
  for (const auto& [key, value] : sent.items()) keys.insert(key);
  for (const auto& [key, value] : sent.at("observed").items()) observed_keys.insert(key);
  Measurement::for_each_field(m, [&](const char* name, const auto&) { names.insert(name); });
  Observation::for_each_field(m.observed, [&](const char* name, const auto&) { observed_names.insert(name); });
  CHECK(keys == names);
  CHECK(observed_keys == observed_names);
  CHECK(sent.at("status") == "wrong_result");
}

TEST_CASE("mpi protocol: NaN travels as null, an unobserved trial as an empty method", "[cpu][mpi][protocol]") {
  Measurement m;
  m.status = TrialStatus::compile_error;
  m.median_ns = std::nan("");
  m.log = "error: expected ';'";
  const std::string text = mpi::to_json(m).dump();
  CHECK(text.find("\"median_ns\":null") != std::string::npos);
  CHECK(text.find("\"power_w\":null") != std::string::npos);
  const Measurement got = mpi::measurement_from_json(nlohmann::json::parse(text));
  CHECK(got.status == TrialStatus::compile_error);
  CHECK(std::isnan(got.median_ns));
  CHECK(std::isnan(got.observed.energy_j));
  CHECK_FALSE(got.observed.observed());
  CHECK(autotune_test::differing_fields(got, m) == std::vector<std::string>{});

  // A message without one of the fields is refused, as a status that is not one.
  nlohmann::json partial = nlohmann::json::parse(text);
  partial.erase("spread");
  CHECK_THROWS(mpi::measurement_from_json(partial));
  nlohmann::json unknown = nlohmann::json::parse(text);
  unknown["status"] = "melted";
  CHECK_THROWS(mpi::measurement_from_json(unknown));
}
#endif
