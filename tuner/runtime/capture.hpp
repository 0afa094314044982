// Capture of real launches (docs/lookup.md "Capture"): with AUTOTUNE_CAPTURE set, autotune::Kernel writes, for the
// first launch of each matching (kernel, problem), a spec that reproduces the launch with the application's data:
// the spec of the kernel with every input, constant and scalar taken from the launch, the outputs after it as the
// expected values, and the problem and configuration of the launch. `autotune tune CAPTURE` tunes it.
//
// Layout of the capture directory (AUTOTUNE_CAPTURE_DIR, default ./autotune-captures):
//   <kernel>_<problem>.tune.json      one per (kernel, problem), e.g. saxpy_n=1048576.tune.json
//   data/<dtype>-<elements>-<hash>.npy  argument data, named by content: identical data is stored once
//                                      (raw .bin for dtypes .npy cannot hold: float2, float3, float4)
//   sources/<hash>/<file name>         the kernel's source text (and the reference's, where it has its own)
// Files are written under temporary names and renamed into place, so a reader never sees half a file.
//
// Internal to tuner/runtime (not installed); writing needs no GPU, so the cpu tier tests it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::runtime_detail {

/// What to capture and where, from the environment.
struct CaptureSettings {
  std::vector<std::string> patterns;      // kernel names or shell globs (fnmatch), from AUTOTUNE_CAPTURE
  std::string dir = "autotune-captures";  // AUTOTUNE_CAPTURE_DIR
  std::uint64_t max_bytes = 1ull << 30;   // AUTOTUNE_CAPTURE_MAX_BYTES: data of one capture (inputs + outputs)

  /// nullopt when AUTOTUNE_CAPTURE is unset or empty. UsageError naming the variable for a malformed
  /// AUTOTUNE_CAPTURE_MAX_BYTES (a positive integer, optionally with a K, M or G suffix: powers of 1024).
  static std::optional<CaptureSettings> from_env();
  /// Parses the variables' values (from_env without the environment): patterns "a,b*", max_bytes "" = default.
  static CaptureSettings parse(const std::string& patterns, const std::string& dir, const std::string& max_bytes);
  /// True if `kernel` matches one of the patterns.
  bool matches(const std::string& kernel) const;
};

/// One argument of the captured launch, in spec order.
struct CapturedArgument {
  std::vector<unsigned char> before;  // input buffers, in-out buffers and constants: the data before the launch
  std::vector<unsigned char> after;   // output and in-out buffers: the data after the launch
  std::uint64_t scalar_bits = 0;      // scalars: the value as packed for the launch (KernelArguments::pack)
};

/// One launch to write.
struct CaptureRecord {
  std::string from;  // the spec's file as the application named it ("" for a spec made in code)
  Workload workload;
  ProblemKey problem;                  // dims and the data tag the application asked with
  Config config;                       // the configuration the launch ran
  std::string match;                   // its lookup level (lookup::to_string)
  std::string device;                  // GPU name
  std::vector<CapturedArgument> args;  // one per spec argument
};

/// The capture's spec file name in the capture directory: "<kernel>_<dims>.tune.json" (dims as in
/// ProblemKey::key(), without the data tag; characters other than [A-Za-z0-9_.=-] become '_').
std::string capture_file_name(const std::string& kernel, const ProblemKey& problem);

/// The path of the capture of (kernel, problem) in s.dir: s.dir + "/" + capture_file_name(kernel, problem).
std::string capture_path(const CaptureSettings& s, const std::string& kernel, const ProblemKey& problem);

/// Bytes of data a capture of this launch writes (before + after of every argument).
std::uint64_t capture_bytes(const CaptureRecord& r);

/// Writes the capture of r for `spec` (a user spec with its spec_text) into s.dir, creating it. Returns the path
/// of the capture's spec. The data files named by content that exist already are not written again. Throws
/// UsageError for a spec without JSON text or argument data of the wrong size, EnvironmentError when a file
/// cannot be written.
std::string write_capture(const CaptureSettings& s, const TuningSpec& spec, const CaptureRecord& r);

/// The value of a scalar of dtype `dtype` packed as bits, as the spec's "value" text: an integer, or a floating
/// literal that reads back to the same float32/float64.
std::string scalar_text(const std::string& dtype, std::uint64_t bits);

}  // namespace autotune::runtime_detail
