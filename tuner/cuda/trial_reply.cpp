#include "tuner/cuda/trial_reply.hpp"

#include <algorithm>

#include "tuner/core/stats.hpp"
#include "tuner/core/text.hpp"
#include "tuner/cuda/plan_binding.hpp"

namespace autotune::cuda::detail {
namespace {

/// Seconds a counter replay may take beyond its passes: loading CUPTI and making the config image on the first one.
constexpr double kCounterReplayAllowanceS = 10.0;

}  // namespace

std::string excerpt(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return text.substr(0, max_chars) + "\n... (" + std::to_string(text.size() - max_chars) + " more characters)";
}

bool failed(const CallStatus& r, Measurement& m) {
  switch (r.kind) {
    case CallStatus::Kind::ok:
      return false;
    case CallStatus::Kind::cuda_error:
      m.status = !r.sticky && r.message.rfind(kInvalidResourcesPrefix, 0) == 0 ? TrialStatus::invalid_resources
                 : !r.sticky                                                   ? TrialStatus::launch_error
                 : r.code == CUDA_ERROR_LAUNCH_TIMEOUT                         ? TrialStatus::timeout
                                                                               : TrialStatus::runtime_fault;
      break;
    case CallStatus::Kind::timeout:
      m.status = TrialStatus::timeout;
      break;
    case CallStatus::Kind::died:
      m.status = TrialStatus::runtime_fault;
      break;
  }
  m.log = r.message;
  m.median_ns = m.min_ns = m.spread = 0;
  m.samples = 0;
  return true;
}

SamplingRule sampling_rule(const TimingOptions& opt) {
  SamplingRule rule;
  rule.min_samples = opt.min_samples;
  rule.max_samples = opt.samples;
  rule.stable_ci = opt.stable_ci;
  rule.max_seconds = opt.max_seconds_per_config;
  return rule;
}

std::string timing_protocol(const TimingOptions& opt, bool flushed) {
  return "events;warmup=" + std::to_string(opt.warmup) + ";" + sampling_rule(opt).describe() +
         ";l2=" + (flushed ? "flush-read" : "warm");
}

TimeRequest time_request(const TimingOptions& opt, double race_best_ms, double race_best_spread) {
  TimeRequest q;
  q.warmup = opt.warmup;
  q.flush_l2 = opt.flush_l2;
  q.rule = sampling_rule(opt);
  if (opt.race_margin > 0 && race_best_ms > 0) {
    q.rule.race_above_ms = race_best_ms * (1 + std::max(opt.race_margin, 2 * race_best_spread));
    q.rule.race_probe_factor = kRaceProbeFactor;
  }
  q.observe = opt.observe;
  q.energy_ms = opt.observe ? opt.energy_ms : 0.0;
  q.metrics = opt.metrics;
  return q;
}

double time_limit(const TimingOptions& opt, double best_run_seconds, const TimeRequest& q, double run_seconds) {
  // A counter replay: opening CUPTI on the first one, then a few passes of the plan (kCounterReplayAllowanceS, at most
  // 64 passes).
  const double counters_s = q.metrics.empty() ? 0.0 : kCounterReplayAllowanceS + 64.0 * run_seconds;
  return effective_timeout(opt, best_run_seconds) + opt.max_seconds_per_config + 2.0 * q.energy_ms / 1e3 +
         2.0 * (opt.warmup + std::min(opt.samples, std::max(opt.min_samples, 1))) * run_seconds + counters_s;
}

bool record_samples(TimeRequest::Reply& reply, const SamplingRule& rule, Measurement& m) {
  std::vector<double>& ms = reply.samples_ms;
  if (ms.empty()) throw EnvironmentError("the GPU executor returned no samples");
  const bool probed_out = reply.lost_probe;
  const bool raced = probed_out || rule.lost_race(ms);
  std::sort(ms.begin(), ms.end());
  m.status = TrialStatus::ok;
  m.median_ns = stats::median_sorted(ms) * 1e6;
  m.min_ns = ms.front() * 1e6;
  m.spread = stats::relative_spread_sorted(ms);
  m.samples = static_cast<int>(ms.size());
  m.observed = reply.observed;
  if (raced) {
    m.protocol += probed_out ? ";raced>" + fmt("%.4g", kRaceProbeFactor * rule.race_above_ms) + "ms@probe"
                             : ";raced>" + fmt("%.4g", rule.race_above_ms) + "ms";
  }
  return raced;
}

}  // namespace autotune::cuda::detail
