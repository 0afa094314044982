// `autotune report --html`: one self-contained HTML page about the recorded trials of a kernel (or of one
// session): best configurations, time distribution of the valid trials, effect of each parameter (GB/s by
// value: best and median), failures grouped by status, device and provenance. Inline CSS and SVG only: no
// scripts, no external resources, readable offline. The page is also well-formed XML (polyglot XHTML).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/core/config.hpp"

namespace autotune::report {

/// What to report on: a kernel's trials for one workload/problem/device, or one session's.
struct ReportQuery {
  std::string kernel;                       // with session_id unset
  std::optional<std::int64_t> session_id;   // the session's kernel/workload/problem/device
  std::string workload;                     // Workload::key(), required with kernel
  std::string problem;                      // ProblemKey::key(), required with kernel
  std::vector<std::string> sources;  // only trials of these kernel sources (db::accepted_sources); empty = any
  std::string device_name;                  // exact or normalised; empty = the only device with such trials
};

struct ReportData {
  std::string kernel;
  std::string workload;
  std::string problem;
  std::string scope;                        // "all recorded trials" or "session 3"
  std::vector<Param> params;                // the spec's parameters, for labels and order (may be empty)
  db::DeviceRow device;
  std::vector<db::SessionRow> sessions;     // sessions whose trials are shown, by id
  std::vector<db::TrialRow> trials;         // every trial shown, any status
  std::vector<std::string> notes;
  std::string db_path;
  std::string generated_at;                 // set by the caller (ISO-8601); shown as given
  std::size_t top = 10;                     // rows of the best-configurations table
};

/// Reads the trials, device and sessions. Throws UsageError when the session does not exist, no trial
/// matches, or trials of several devices match and device_name does not choose one (the message lists them).
ReportData load_report_data(const db::Database& db, const ReportQuery& q);

/// The page. Pure; deterministic for the same data.
std::string render_html(const ReportData& d);

/// Best and median GB/s of the ok trials for each value of a parameter (values in spec order when params
/// are known, else ascending). Exposed for tests.
struct ParamEffect {
  Value value = 0;
  std::string label;
  std::size_t ok = 0;        // ok trials with this value
  std::size_t failed = 0;    // other trials with this value
  double best_gbps = 0;
  double median_gbps = 0;
};
std::vector<ParamEffect> parameter_effect(const std::vector<db::TrialRow>& trials, const std::string& param,
                                          const Param* spec_param);

}  // namespace autotune::report
