// The outcome of evaluating one configuration.
#pragma once
#include <string>
#include <vector>

namespace autotune {

/// Configuration failures are data: each has a status and the session goes on.
enum class TrialStatus {
  ok,             // verified and timed
  compile_error,  // NVRTC rejected the source with these defines
  launch_error,   // too many resources, invalid launch configuration
  wrong_result,   // output differs from the reference (never eligible for best)
  runtime_fault,  // sticky error (illegal address ...): context was recreated
  timeout,        // did not finish in time
  invalid,        // violates a constraint of the current spec (never run)
  invalid_resources,  // the compiled binary's registers or shared memory rule the launch out (never launched)
};

const char* to_string(TrialStatus s);
/// Throws std::invalid_argument for an unknown name.
TrialStatus trial_status_from_string(const std::string& s);

/// Timing of one configuration. Times in nanoseconds of one full launch plan.
struct Measurement {
  TrialStatus status = TrialStatus::ok;
  double median_ns = 0;
  double min_ns = 0;
  double spread = 0;      // (p90 - p10) / median over the samples
  int samples = 0;
  double compile_ms = 0;  // 0 when the binary came from the cache
  double verify_ms = 0;
  std::string log;        // compile log excerpt or error text for failures
  std::string protocol;   // how the numbers were taken, e.g. "events;warmup=3;samples=7..15;stop=ci95<=2%|2s;l2=flush-read"
  /// Where it was measured when that is not the recording process's own GPU, e.g. an MPI rank
  /// "host=node3 rank=2 gpu=1 uuid=GPU-..."; "" otherwise. Stored with the trial as provenance.
  std::string measured_by;
  /// The individual timings (ns) where they are kept: imports of files that carry them (Kernel Tuner's
  /// "times"); empty for trials measured here (median, min, spread and samples summarise them).
  std::vector<double> sample_ns;
  bool ok() const { return status == TrialStatus::ok; }
};

/// A time in nanoseconds as people read it: "72.67 us" below a millisecond, else "1.234 ms".
std::string format_time_ns(double ns);

}  // namespace autotune
