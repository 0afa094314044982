// Application lookup: the best recorded configuration for a kernel, workload, device and problem size,
// with how well the answer matches the question. A miss never throws: it degrades to the spec default.
#pragma once
#include <string>

#include "db/database.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::lookup {

enum class Match {
  exact,          // same device, same problem size
  nearest_size,   // same device, nearest problem size in log2 distance
  spec_default,   // nothing usable recorded: the spec's default configuration
};
const char* to_string(Match m);

struct Answer {
  Config config;
  Match match = Match::spec_default;
  std::string device;        // device the configuration was measured on ("" for spec_default)
  std::string problem;       // problem it was measured at
  std::int64_t session_id = 0;
  double median_ns = 0;
  double gbps = 0;
  std::string note;          // why a level was skipped (e.g. stale rows rejected)
};

/// Looks up the best configuration. Rows recorded for another source hash, or whose configuration is no
/// longer valid in the spec's space, are never served. Thread-compatible (one Database per thread).
Answer best(const db::Database& db, const TuningSpec& spec, const Workload& w, const DeviceInfo& device,
            const ProblemKey& problem);

}  // namespace autotune::lookup
