#include "tuner/mpi/protocol.hpp"

#include <cmath>
#include <string>
#include <type_traits>

namespace autotune::mpi {

// A measurement's and an observation's keys are their field names (Measurement::for_each_field,
// Observation::for_each_field); NaN travels as null in JSON.
namespace {

template <typename T>
void put_field(nlohmann::json& j, const char* key, const T& v) {
  if constexpr (std::is_same_v<T, TrialStatus>)
    j[key] = to_string(v);
  else if constexpr (std::is_same_v<T, Observation>)
    j[key] = to_json(v);
  else
    j[key] = v;
}

template <typename T>
void get_field(const nlohmann::json& j, const char* key, T& v) {
  const nlohmann::json& x = j.at(key);
  if constexpr (std::is_same_v<T, TrialStatus>)
    v = trial_status_from_string(x.get<std::string>());
  else if constexpr (std::is_same_v<T, Observation>)
    v = observation_from_json(x);
  else if constexpr (std::is_same_v<T, double>)
    v = x.is_null() ? std::nan("") : x.get<double>();
  else
    x.get_to(v);
}

}  // namespace

nlohmann::json to_json(const Measurement& m) {
  nlohmann::json j = nlohmann::json::object();
  Measurement::for_each_field(m, [&](const char* key, const auto& v) { put_field(j, key, v); });
  return j;
}

nlohmann::json to_json(const Observation& o) {
  nlohmann::json j = nlohmann::json::object();
  Observation::for_each_field(o, [&](const char* key, const auto& v) { put_field(j, key, v); });
  return j;
}

Observation observation_from_json(const nlohmann::json& j) {
  Observation o;
  Observation::for_each_field(o, [&](const char* key, auto& v) { get_field(j, key, v); });
  return o;
}

Measurement measurement_from_json(const nlohmann::json& j) {
  Measurement m;
  Measurement::for_each_field(m, [&](const char* key, auto& v) { get_field(j, key, v); });
  return m;
}

nlohmann::json to_json(const DeviceInfo& d) {
  nlohmann::json j = nlohmann::json::object();
  DeviceInfo::for_each_field(d, [&](const char* name, const auto& v) { j[name] = v; });
  return j;
}

DeviceInfo device_from_json(const nlohmann::json& j) {
  DeviceInfo d;
  DeviceInfo::for_each_field(d, [&](const char* name, auto& v) { j.at(name).get_to(v); });
  return d;
}

nlohmann::json to_json(const BackendStats& s) {
  const CompileStats& c = s.compile;
  return {{"compiled", c.compiled},
          {"taken", c.taken},
          {"cache_hits", c.cache_hits},
          {"failed", c.failed},
          {"unused", c.unused},
          {"cancelled", c.cancelled},
          {"thread_ms", c.thread_ms},
          {"wait_ms", c.wait_ms},
          {"cache_ms", c.cache_ms},
          {"jobs", s.compile_jobs},
          {"verify_ms", s.verify_ms},
          {"benchmark_ms", s.benchmark_ms},
          {"verified", s.verified},
          {"timed", s.timed},
          {"setup_ms", s.setup_ms},
          {"compiler_ms", c.compiler_ms},
          {"cpu_ms", c.cpu_ms},
          {"voluntary_switches", c.voluntary_switches},
          {"involuntary_switches", c.involuntary_switches},
          {"minor_faults", c.minor_faults},
          {"active_threads", c.active_threads},
          {"shrinks", c.shrinks}};
}

BackendStats stats_from_json(const nlohmann::json& j) {
  BackendStats s;
  CompileStats& c = s.compile;
  j.at("compiled").get_to(c.compiled);
  j.at("taken").get_to(c.taken);
  j.at("cache_hits").get_to(c.cache_hits);
  j.at("failed").get_to(c.failed);
  j.at("unused").get_to(c.unused);
  j.at("cancelled").get_to(c.cancelled);
  j.at("thread_ms").get_to(c.thread_ms);
  j.at("wait_ms").get_to(c.wait_ms);
  j.at("cache_ms").get_to(c.cache_ms);
  j.at("jobs").get_to(s.compile_jobs);
  j.at("verify_ms").get_to(s.verify_ms);
  j.at("benchmark_ms").get_to(s.benchmark_ms);
  j.at("verified").get_to(s.verified);
  j.at("timed").get_to(s.timed);
  j.at("setup_ms").get_to(s.setup_ms);
  // Added later: a rank of an older build does not send them.
  c.compiler_ms = j.value("compiler_ms", 0.0);
  c.cpu_ms = j.value("cpu_ms", 0.0);
  c.voluntary_switches = j.value("voluntary_switches", 0LL);
  c.involuntary_switches = j.value("involuntary_switches", 0LL);
  c.minor_faults = j.value("minor_faults", 0LL);
  c.active_threads = j.value("active_threads", std::size_t{0});
  c.shrinks = j.value("shrinks", std::size_t{0});
  return s;
}

nlohmann::json to_json(const std::vector<Config>& configs) {
  nlohmann::json a = nlohmann::json::array();
  for (const Config& c : configs) a.push_back(c.to_json());
  return a;
}

std::vector<Config> configs_from_json(const nlohmann::json& j) {
  std::vector<Config> out;
  for (const auto& t : j) out.push_back(Config::from_json(t.get<std::string>()));
  return out;
}

}  // namespace autotune::mpi
