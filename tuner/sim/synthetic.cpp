#include "tuner/sim/synthetic.hpp"

#include <cmath>

#include "tuner/core/error.hpp"

namespace autotune::sim {

SyntheticBackend::SyntheticBackend(DeviceInfo device, std::function<double(const Config&)> time_ns)
    : device_(std::move(device)), time_ns_(std::move(time_ns)) {
  if (!time_ns_)
    time_ns_ = [](const Config& c) {
      double t = 1000;
      for (const auto& [k, v] : c.values()) {
        double x = std::log2(static_cast<double>(std::llabs(v)) + 1.0) - 3.0;
        t += 100 * x * x;
      }
      return t;
    };
}

DeviceInfo SyntheticBackend::fake_device() {
  DeviceInfo d;
  d.name = "Synthetic GPU";
  d.cc = 90;
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.max_shared_memory_per_block = 49152;
  d.max_shared_memory_per_block_optin = 232448;
  d.warp_size = 32;
  d.l2_bytes = 50 * 1024 * 1024;
  d.total_memory = 80ull << 30;
  d.driver_version = 13000;
  d.uuid = "synthetic-0";
  return d;
}

void SyntheticBackend::inject_failure(const Config& c, TrialStatus status, std::string log) {
  failures_[c.hash()] = {status, std::move(log)};
}

void SyntheticBackend::inject_failure_when(const std::string& name, Value value, TrialStatus status) {
  failures_when_[{name, value}] = status;
}

void SyntheticBackend::prepare(const Workload&, const ProblemKey&, std::uint64_t) { prepared_ = true; }

std::vector<Measurement> SyntheticBackend::evaluate(const std::vector<Config>& configs) {
  if (!prepared_) throw Error("SyntheticBackend::evaluate called before prepare");
  std::vector<Measurement> out;
  for (const Config& c : configs) {
    if (evaluations_ >= env_fail_after_) throw EnvironmentError("synthetic environment failure");
    ++evaluations_;
    Measurement m;
    m.protocol = "synthetic";
    if (auto it = failures_.find(c.hash()); it != failures_.end()) {
      m.status = it->second.first;
      m.log = it->second.second;
      out.push_back(m);
      continue;
    }
    bool failed = false;
    for (const auto& [key, st] : failures_when_)
      if (c.get(key.first) == key.second) {
        m.status = st;
        m.log = "injected failure for " + key.first + "=" + std::to_string(key.second);
        failed = true;
        break;
      }
    if (!failed) {
      m.median_ns = time_ns_(c);
      m.min_ns = m.median_ns * 0.98;
      m.spread = 0.02;
      m.samples = 7;
      m.compile_ms = 1;
    }
    out.push_back(m);
  }
  return out;
}

}  // namespace autotune::sim
