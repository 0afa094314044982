// What rank 0 and the measuring ranks say to each other. Payloads are JSON (small: a few configurations or
// measurements per message); the tag says what a message is.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tuner/core/backend.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/trial.hpp"

namespace autotune::mpi {

enum Tag : int {
  kHello = 1,      // rank -> 0: {ok, where, device, kind, compiler, error}
  kPrepare = 2,    // 0 -> rank: {workload, problem, seed}
  kPrepared = 3,   // rank -> 0: {ok, copy_gbps, verification, error, usage}
  kPrefetch = 4,   // 0 -> rank: {configs}: compile these ahead, they will probably be this rank's
  kTask = 5,       // 0 -> rank: {id, configs}
  kResult = 6,     // rank -> 0: {id, measurements, eval_ms, wait_ms, between_ms, stats, observer_note}
  kHeartbeat = 7,  // both ways, every heartbeat interval: "still here"
  kStop = 8,       // 0 -> rank: serve no more
  kFailure = 9,    // rank -> 0: {error}: this rank's backend cannot go on (it stops serving)
  kExpect = 10,    // 0 -> rank: {workload, problem, configs}: before kPrepare, compile these while preparing
};

/// A measurement and an observation as JSON objects keyed by their field names (Measurement::for_each_field,
/// Observation::for_each_field; the observation nested under "observed"), NaN as null. The readers throw
/// nlohmann::json's exceptions for a missing key or a value of another type, std::invalid_argument for an unknown
/// status.
nlohmann::json to_json(const Measurement& m);
Measurement measurement_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Observation& o);
Observation observation_from_json(const nlohmann::json& j);
nlohmann::json to_json(const DeviceInfo& d);
DeviceInfo device_from_json(const nlohmann::json& j);
nlohmann::json to_json(const BackendStats& s);
BackendStats stats_from_json(const nlohmann::json& j);
/// Configurations as their canonical JSON texts.
nlohmann::json to_json(const std::vector<Config>& configs);
std::vector<Config> configs_from_json(const nlohmann::json& j);

}  // namespace autotune::mpi
