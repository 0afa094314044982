#include "tuner/mpi/protocol.hpp"

#include <cmath>

namespace autotune::mpi {

nlohmann::json to_json(const Measurement& m) {
  return {{"status", to_string(m.status)}, {"median_ns", m.median_ns}, {"min_ns", m.min_ns},
          {"spread", m.spread},            {"samples", m.samples},     {"compile_ms", m.compile_ms},
          {"verify_ms", m.verify_ms},      {"log", m.log},             {"protocol", m.protocol},
          {"measured_by", m.measured_by}, {"sample_ns", m.sample_ns}, {"observed", to_json(m.observed)}};
}

nlohmann::json to_json(const Observation& o) {
  return {{"sm_clock_mhz", o.sm_clock_mhz},   {"sm_clock_min_mhz", o.sm_clock_min_mhz},
          {"mem_clock_mhz", o.mem_clock_mhz}, {"mem_clock_min_mhz", o.mem_clock_min_mhz},
          {"power_w", o.power_w},             {"energy_j", o.energy_j},
          {"temperature_c", o.temperature_c}, {"power_limit_w", o.power_limit_w},
          {"throttle_reasons", o.throttle_reasons}, {"method", o.method}};
}

Observation observation_from_json(const nlohmann::json& j) {
  Observation o;
  auto num = [&](const char* k) { return j.at(k).is_null() ? std::nan("") : j.at(k).get<double>(); };
  o.sm_clock_mhz = num("sm_clock_mhz");
  o.sm_clock_min_mhz = num("sm_clock_min_mhz");
  o.mem_clock_mhz = num("mem_clock_mhz");
  o.mem_clock_min_mhz = num("mem_clock_min_mhz");
  o.power_w = num("power_w");
  o.energy_j = num("energy_j");
  o.temperature_c = num("temperature_c");
  o.power_limit_w = num("power_limit_w");
  j.at("throttle_reasons").get_to(o.throttle_reasons);
  j.at("method").get_to(o.method);
  return o;
}

Measurement measurement_from_json(const nlohmann::json& j) {
  Measurement m;
  m.status = trial_status_from_string(j.at("status").get<std::string>());
  // NaN travels as null in JSON.
  auto num = [&](const char* k) { return j.at(k).is_null() ? std::nan("") : j.at(k).get<double>(); };
  m.median_ns = num("median_ns");
  m.min_ns = num("min_ns");
  m.spread = num("spread");
  m.samples = j.at("samples").get<int>();
  m.compile_ms = num("compile_ms");
  m.verify_ms = num("verify_ms");
  m.log = j.at("log").get<std::string>();
  m.protocol = j.at("protocol").get<std::string>();
  m.measured_by = j.at("measured_by").get<std::string>();
  j.at("sample_ns").get_to(m.sample_ns);
  m.observed = observation_from_json(j.at("observed"));
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
