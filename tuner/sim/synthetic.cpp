#include "tuner/sim/synthetic.hpp"

#include <chrono>
#include <cmath>
#include <thread>

#include "tuner/core/error.hpp"
#include "tuner/core/timer.hpp"

namespace autotune::sim {

namespace {

void sleep_ms(double ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

}  // namespace

SyntheticBackend::SyntheticBackend(DeviceInfo device, std::function<double(const Config&)> time_ns)
    : device_(std::move(device)), time_ns_(std::move(time_ns)) {
  if (!time_ns_) time_ns_ = default_time_ns;
}

double SyntheticBackend::default_time_ns(const Config& c) {
  double t = 1000;
  for (const auto& [k, v] : c.values()) {
    double x = std::log2(static_cast<double>(std::llabs(v)) + 1.0) - 3.0;
    t += 100 * x * x;
  }
  return t;
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

void SyntheticBackend::enable_compile_stage(const CompileStage& stage) {
  pipeline_.reset();
  stage_ = stage;
  pipeline_ = std::make_unique<CompilePipeline>(stage.jobs, stage.cache);
}

std::string SyntheticBackend::binary_key(const Config& c) { return "synthetic:" + c.hash(); }

void SyntheticBackend::prepare(const Workload&, const ProblemKey&, std::uint64_t) {
  if (pipeline_) pipeline_->cancel();
  prepared_ = true;
}

const std::string* SyntheticBackend::injected(const Config& c, TrialStatus status, std::string& storage) const {
  if (auto it = failures_.find(c.hash()); it != failures_.end()) {
    return it->second.first == status ? &it->second.second : nullptr;
  }
  for (const auto& [key, st] : failures_when_) {
    if (c.get(key.first) != key.second) continue;
    if (st != status) return nullptr;  // the first matching rule decides, as in measure()
    storage = "injected failure for " + key.first + "=" + std::to_string(key.second);
    return &storage;
  }
  return nullptr;
}

CompilePipeline::Item SyntheticBackend::compile_item(const Config& c) {
  std::string storage;
  const std::string* fail = injected(c, TrialStatus::compile_error, storage);
  CompileResult r;
  r.ok = fail == nullptr;
  r.log = fail ? *fail : std::string();
  if (r.ok) {
    const std::string image = c.to_json();
    r.cubin.assign(image.begin(), image.end());
  }
  r.ms = stage_.compile_ms;
  return {binary_key(c), [r = std::move(r), count = &compilations_] {
            sleep_ms(r.ms);
            ++*count;
            return r;
          }};
}

void SyntheticBackend::prefetch(const std::vector<Config>& configs) {
  if (!pipeline_ || !prepared_) return;
  std::vector<CompilePipeline::Item> items;
  items.reserve(configs.size());
  for (const Config& c : configs) items.push_back(compile_item(c));
  pipeline_->prefetch(std::move(items));
}

bool SyntheticBackend::ready(const Config& c) { return !pipeline_ || pipeline_->ready(binary_key(c)); }

bool SyntheticBackend::wait_ready(const std::vector<Config>& configs, double seconds) {
  if (!pipeline_) return true;
  std::vector<std::string> keys;
  keys.reserve(configs.size());
  for (const Config& c : configs) keys.push_back(binary_key(c));
  return pipeline_->wait_any_for(keys, seconds);
}

BackendStats SyntheticBackend::stats() const {
  BackendStats st = counters_;
  if (pipeline_) {
    st.compile = pipeline_->stats();
    st.compile_jobs = pipeline_->jobs();
  }
  return st;
}

Measurement SyntheticBackend::measure(const Config& c, const CompileResult* binary) {
  if (evaluations_ >= env_fail_after_) throw EnvironmentError("synthetic environment failure");
  ++evaluations_;
  Measurement m;
  m.protocol = "synthetic";
  if (binary != nullptr) {
    m.compile_ms = binary->cached ? 0.0 : stage_.compile_ms;
    if (!binary->ok) {
      m.status = TrialStatus::compile_error;
      m.log = binary->log;
      return m;
    }
    const std::string image = c.to_json();
    if (binary->cubin != std::vector<unsigned char>(image.begin(), image.end()))
      throw Error("synthetic backend: the binary handed out for " + c.to_json() + " belongs to another configuration");
  }
  if (auto it = failures_.find(c.hash()); it != failures_.end()) {
    m.status = it->second.first;
    m.log = it->second.second;
    return m;
  }
  for (const auto& [key, st] : failures_when_)
    if (c.get(key.first) == key.second) {
      m.status = st;
      m.log = "injected failure for " + key.first + "=" + std::to_string(key.second);
      return m;
    }
  ++counters_.verified;
  ++counters_.timed;
  {
    ScopedTimer timer(counters_.benchmark_ms);
    sleep_ms(stage_.run_ms);
  }
  m.median_ns = time_ns_(c);
  if (noise_sigma_ > 0) m.median_ns *= 1 + noise_sigma_ * std::normal_distribution<double>()(rng_);
  m.min_ns = m.median_ns * 0.98;
  m.spread = 0.02;
  m.samples = 7;
  if (binary == nullptr) m.compile_ms = 1;
  if (power_w_) {
    Observation& o = m.observed;
    o.power_w = power_w_(c);
    o.energy_j = o.power_w * m.median_ns * 1e-9;
    o.sm_clock_mhz = o.sm_clock_min_mhz = 1980;
    o.mem_clock_mhz = o.mem_clock_min_mhz = 2619;
    o.temperature_c = 50;
    o.power_limit_w = 700;
    o.throttle_reasons = throttled_ && throttled_(c) ? kThrottleSwPowerCap : 0;
    o.method = "synthetic";
  }
  if (metrics_) {
    m.observed.metrics = metrics_(c);
    m.observed.method += (m.observed.method.empty() ? "" : " + ") + std::string("synthetic-counters");
  }
  return m;
}

std::vector<Measurement> SyntheticBackend::evaluate(const std::vector<Config>& configs) {
  if (!prepared_) throw Error("SyntheticBackend::evaluate called before prepare");
  std::vector<Measurement> out;
  if (!pipeline_) {
    for (const Config& c : configs) out.push_back(measure(c, nullptr));
    return out;
  }
  std::vector<CompilePipeline::Item> items;
  items.reserve(configs.size());
  for (const Config& c : configs) items.push_back(compile_item(c));
  pipeline_->consume_in_order(std::move(items), [&](std::size_t i, const CompileResult& binary) {
    out.push_back(measure(configs[i], &binary));
  });
  return out;
}

std::optional<std::vector<std::vector<double>>> SyntheticBackend::time_interleaved(const std::vector<Config>& configs,
                                                                                   int rounds, double max_seconds) {
  (void)max_seconds;
  if (!prepared_) throw Error("SyntheticBackend::time_interleaved called before prepare");
  std::vector<std::vector<double>> out(configs.size());
  std::normal_distribution<double> normal;
  for (int r = 0; r < rounds; ++r) {
    const double round_factor = 1 + noise_drift_ * normal(rng_);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      bool failed = failures_.count(configs[i].hash()) != 0;
      for (const auto& [key, st] : failures_when_) failed = failed || configs[i].get(key.first) == key.second;
      if (failed) continue;
      out[i].push_back(time_ns_(configs[i]) * round_factor * (1 + noise_sigma_ * normal(rng_)));
    }
    ++interleaved_rounds_;
  }
  return out;
}

}  // namespace autotune::sim
