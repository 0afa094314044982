// What each sub-command of the autotune CLI takes, and the function that runs it (cmd_<name>.cpp). Nothing here
// knows CLI11: commands.cpp defines the options that fill these structs. Every run_<name> returns the exit code
// and throws the typed errors main() turns into messages; `db_path` is the global --db.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tuner/core/request.hpp"

namespace autotune::cli {

// The problem, workload and narrowing flags (tuner/core/request.hpp) under their flag names.
using ProblemFlags = ProblemRequest;
using SpaceFlags = SpaceNarrowing;

/// devices: the GPUs the NVIDIA driver reports.
int run_devices();

/// list: the built-in kernels and the size of their spaces on this GPU (or an assumed one).
int run_list();

struct SpaceArgs {
  std::string kernel;
  ProblemFlags pf;
  SpaceFlags narrow;
  bool list = false;  // print every valid configuration
};
/// space: a kernel's parameter space and its size; 1 when it is empty.
int run_space(const SpaceArgs& a, const std::string& db_path);

/// strategies: the search strategies with their options.
int run_strategies();

struct TuneArgs {
  std::string kernel;
  ProblemFlags pf;
  std::string strategy;  // "" = the default: broad_then_local under a limit, else brute_force
  std::vector<std::string> strategy_options;
  std::size_t budget = 0;
  double time_limit = 0;
  std::uint64_t seed = 1;
  int samples = 15, warmup = 3, jobs = 0, device = 0, top = 10;
  bool device_given = false;  // --gpu was on the command line (else MPI ranks take their node-local rank)
  double median_ci = 2, max_seconds = 2, timeout = 0;
  double race = 25;  // --race: percent over the best so far past which a configuration stops after 3 samples
  bool no_flush = false, simulate = false, compile_in_process = false;
  double simulate_delay_ms = 0;
  std::string verify = "device";
  std::string inputs_on = "gpu";
  std::string objective = "time";  // what the strategy minimises (time, energy, edp, gbps_per_watt)
  /// The energy window after the samples (NVML's energy counter), ms; < 0 = automatic: 100 for an objective
  /// that needs energy, else 0 (a window costs about that much per configuration; clocks and power are
  /// sampled during the timed samples either way).
  double energy_ms = -1;
  bool no_observe = false;         // no NVML clocks, power, energy
  std::string metrics;             // hardware counters per configuration (cuda::resolve_metrics), "" = none
  std::size_t warm_start = 5;
  double screen = 0, screen_share = 0.3;
  std::size_t smaller_sizes = 4;  // specs with "blocks": sizes 4x, 16x, ... smaller measured after the search
  std::size_t final_k = 5;        // the final pick's most candidates (session::FinalPickOptions); 0 = off
  int final_rounds = 15;          // its interleaved rounds
  std::string from, device_name, stats_json, binary_cache;
  SpaceFlags narrow;
  double rank_timeout = 60;  // MPI: seconds of silence after which a rank is taken out
};
/// tune: a session on the GPU (or a replay with --simulate; under mpirun/srun on every rank); 1 when no
/// configuration verified. EnvironmentError without a GPU.
int run_tune(const TuneArgs& a, const std::string& db_path);

struct RevalidateArgs {
  TuneArgs t;               // the kernel, problem and workload flags, and how to measure (as tune)
  std::size_t top = 10;     // configurations re-measured per cell
  double tolerance = 3;     // percent
};
/// revalidate: re-measures the best configurations of cells recorded with an older kernel source and carries the
/// cells forward where they agree (tuner/session/revalidate.*); 1 when a cell was not carried.
int run_revalidate(const RevalidateArgs& a, const std::string& db_path);

struct IdentityArgs {
  std::vector<std::string> kernels;
  bool json = false;
};
/// identity: the source hash and code identity of kernels (tuner/core/identity.hpp), and which recorded sources
/// --db counts as the same code.
int run_identity(const IdentityArgs& a, const std::string& db_path);

struct SummaryArgs {
  std::string kernel, by, device_name, objective = "time";
  ProblemFlags pf;
};
/// summary: the best recorded trial for each value of a parameter, and the failures by status.
int run_summary(const SummaryArgs& a, const std::string& db_path);

struct BestArgs {
  std::string kernel, device_name, objective = "time";
  int cc = 0;
  ProblemFlags pf;
  bool json = false;
};
/// best: the lookup library's answer for this GPU (or --device/--cc) and size, as text or JSON.
int run_best(const BestArgs& a, const std::string& db_path);

struct CompareStrategiesArgs {
  std::string kernel, from, device_name, budgets = "10,20,50,100", strategies, csv, runs_csv, warm_from;
  std::vector<std::string> strategy_options;
  ProblemFlags pa;
  std::size_t repeats = 50, batch = 1;
  std::uint64_t seed = 1;
  double within_percent = 5;
  bool markdown = false;
  bool warm_as_given = false;  // --warm-as-given: the warm start without source values (measured first, as given)
  // --score time: the methodology score over simulated tuning time (tuner/compare/score.*)
  std::string score, curve_csv, plot;
  std::vector<std::string> from_list;  // every --from (from = the first); several only with --score
  double cutoff_percent = 95;
  std::size_t resolution = 500;
  bool no_strategy_time = false;
  std::string traces;  // --traces: another tuner's runs, scored beside ours (tuner/compare/traces.*)
};
/// compare-strategies: the strategies benchmarked on a fully recorded space (tuner/compare/compare.*).
int run_compare_strategies(const CompareStrategiesArgs& a, const std::string& db_path);
/// compare-strategies --score time: the methodology score over the recorded spaces (tuner/compare/score.*).
int run_compare_score(const CompareStrategiesArgs& a, const std::string& db_path);

struct ImportArgs {
  std::string format, file, kernel, as, device, write_spec;
  std::string spec;  // --spec: a T1 file, native spec or built-in kernel whose constraints are checked
  int cc = 0;
  ProblemFlags pa;
};
/// import: a Kernel Tuner cache or a T4 file as recorded trials; 1 when nothing was read or trials conflict.
int run_import(const ImportArgs& a, const std::string& db_path);

struct ExportArgs {
  std::string format = "t4", device, workload, problem, output = "-";
  std::vector<std::string> kernel;                                // t4: at most one
  std::string name_space = "autotune_tuned", objective = "time";  // header, json
};
/// export: recorded trials as a T4 results file, or the best configurations as a C++ header or JSON tables.
int run_export(const ExportArgs& a, const std::string& db_path);

struct ExploreArgs {
  std::string kernel;
  ProblemFlags pf;
  std::string block_sizes, blocks_per_sm;
  std::vector<std::string> fix;
  std::string plot, power_plot, from, device_name;
  std::string metrics;  // hardware counters per point (cuda::resolve_metrics), "" = none
  bool simulate = false, plan_only = false, no_flush = false;
  double tolerance = 3.0, timeout = 0;
  std::uint64_t seed = 1;
  int samples = 15, warmup = 3, gpu = 0;
};
/// explore: a launch-geometry sweep (tuner/explore/); 1 when no point was measured.
int run_explore(const ExploreArgs& a, const std::string& db_path);

struct ReportArgs {
  std::string target, html, device_name;
  ProblemFlags pf;
  std::size_t top = 10;
};
/// report: a self-contained HTML page of a kernel's (or a session's) recorded trials.
int run_report(const ReportArgs& a, const std::string& db_path);

struct MergeArgs {
  std::string out;
  std::vector<std::string> inputs;
};
/// merge: databases recorded elsewhere combined into a.out.
int run_merge(const MergeArgs& a);

}  // namespace autotune::cli
