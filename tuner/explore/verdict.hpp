// The plain-language verdict of `autotune explore`: where a grid of 2 x SMs stands relative to the best
// grid for each block size, and the simplest threshold rule that fits the measured points (derived from
// the data, or "no simple rule fits"). Pure functions over measured numbers; no I/O.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/config.hpp"

namespace autotune::explore {

/// One sweep point as the verdict sees it.
struct VerdictPoint {
  Value block_size = 0;
  Value blocks_per_sm = 0;     // grid in multiples of the SM count (0 = the kernel has no grid parameter)
  double threads_per_sm = 0;   // resident threads per SM (blocks per SM x block size, capped by occupancy)
  bool ok = false;             // verified and timed
  double gbps = 0;             // when ok
  std::string state;           // when not ok: "excluded by constraint `...`", "wrong_result", "not recorded", ...
};

/// Where 2 x SMs stands for one block size.
struct BlockVerdict {
  Value block_size = 0;
  std::size_t measured = 0;        // ok points of this block size
  Value best_blocks_per_sm = 0;    // best grid of this block size (0 if none measured)
  double best_gbps = 0;
  bool two_x_measured = false;
  double two_x_gbps = 0;
  double two_x_ratio = 0;          // two_x_gbps / best_gbps of this block size
  std::string two_x_state;         // "measured", or why not (excluded, failed, not in the sweep)
  std::string text;                // "at 256 threads: 2 x SMs reaches 96.8% of the best grid (8 x SMs, 3669.6 GB/s)"
};

/// A rule "peak (within tolerance) iff X >= threshold".
struct Rule {
  enum class Kind { none, all_at_peak, threads_per_sm, blocks_per_sm, block_size };
  Kind kind = Kind::none;
  double threshold = 0;
  double below = 0;               // largest X under the threshold among points off the peak (0 = none)
  std::size_t agree = 0;          // points the rule classifies correctly
  std::size_t total = 0;          // ok points judged
  std::size_t above = 0;          // points with X >= threshold
  std::vector<std::string> exceptions;  // points the rule gets wrong, "64 x 32: 97.0%"
  bool fits = false;              // no exception, or few (at most max(1, 10%) of the points)
  std::string text;               // plain language
};
const char* to_string(Rule::Kind k);

struct Verdict {
  double tolerance = 0.03;        // fraction
  std::size_t measured = 0;       // ok points
  double best_gbps = 0;
  Value best_block_size = 0;
  Value best_blocks_per_sm = 0;
  std::vector<BlockVerdict> blocks;  // in the order the block sizes first appear
  std::string two_x_summary;
  Rule rule;
  std::vector<std::string> lines;    // the verdict as printed: best, one line per block size, summary, rule
};

/// Computes the verdict. tolerance is a fraction (0.03 = within 3% of the best counts as "peak");
/// max_threads_per_sm (0 = unknown) only adds the SM's capacity to the rule's wording.
/// Throws std::invalid_argument when tolerance is outside [0, 1).
Verdict make_verdict(const std::vector<VerdictPoint>& points, double tolerance, int max_threads_per_sm = 0);

/// "3693.8" style formatting helpers shared with the tables.
std::string format_fixed(double v, int decimals);

}  // namespace autotune::explore
