// Internal to tuner/cuda: the CUDA backend's timing requests made from its TimingOptions, and the GPU executor's
// replies translated into a trial's Measurement (status, log, samples and protocol).
#pragma once
#include <cstddef>
#include <string>

#include "tuner/core/sampling.hpp"
#include "tuner/core/trial.hpp"
#include "tuner/cuda/executor_client.hpp"
#include "tuner/cuda/messages.hpp"
#include "tuner/cuda/runtime.hpp"

namespace autotune::cuda::detail {

/// Characters of a compile or verification log kept in a Measurement.
constexpr std::size_t kLogExcerpt = 2000;

/// text, cut after max_chars with a note of how much was left out.
std::string excerpt(const std::string& text, std::size_t max_chars);

/// Fills status and log of m from a failed request (samples cleared); false if it succeeded.
bool failed(const CallStatus& r, Measurement& m);

/// The SamplingRule of the options (no racing).
SamplingRule sampling_rule(const TimingOptions& opt);

/// The protocol string of a measurement: "events;warmup=N;<rule>;l2=flush-read|warm" (flushed: the L2 is flushed
/// before each sample).
std::string timing_protocol(const TimingOptions& opt, bool flushed);

/// The timing request of the options; racing against race_best_ms (0: no racing) and its spread when
/// opt.race_margin > 0.
TimeRequest time_request(const TimingOptions& opt, double race_best_ms, double race_best_spread);

/// The most seconds a timing request may take: the verification timeout, the GPU-time budget, the energy window
/// and the warm-up and first samples at twice the verification run's run_seconds.
double time_limit(const TimingOptions& opt, double best_run_seconds, const TimeRequest& q, double run_seconds);

/// Puts the samples of a successful timing reply into m (status ok, median, min, spread, count, observation; the
/// reply's samples are sorted) and marks a raced configuration in m.protocol; returns whether it raced. Throws
/// EnvironmentError for a reply without samples.
bool record_samples(TimeRequest::Reply& reply, const SamplingRule& rule, Measurement& m);

}  // namespace autotune::cuda::detail
