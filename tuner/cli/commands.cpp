// The command line of every sub-command: its CLI11 options and help texts, filling the argument struct that
// its run_<name> (cmd_<name>.cpp) takes. Nothing here decides anything.
#include "tuner/cli/commands.hpp"

#include <memory>
#include <string>

#include "tuner/cli/args.hpp"
#include "tuner/cli/flag_checks.hpp"
#include "tuner/core/objective.hpp"

namespace autotune::cli {

namespace {

/// --jobs of tune and of the commands that compile.
constexpr const char* kJobsHelp =
    "most compile threads at once (default: the cores of this process, shared among the MPI ranks on its node; "
    "fewer run while more would not help)";

/// Help of --timeout (tune, explore).
constexpr const char* kTimeoutHelp =
    "seconds one verification run may take before the configuration is recorded as a timeout and the GPU worker "
    "restarted; 0 = automatic: 60 until a configuration verified, then 50 x the fastest verification run, "
    "between 10 and 60";

constexpr const char* kKernelHelp = "built-in kernel name or path to a .json spec";

/// The sub-command runs `run` once the whole command line is parsed: a global option given after it (--db)
/// has been read by then.
void run_when_chosen(CLI::App* c, Globals& g, const std::function<int()>& run) {
  c->callback([&g, run] { g.run = run; });
}

/// --n, --rows, --cols, --problem, --dtype, --op, and with_workload --workload.
void add_problem_flags(CLI::App* c, ProblemFlags& f, bool with_workload = false) {
  c->add_option("--n", f.n, "problem size (elements)")->transform(positive_integer<std::int64_t>());
  c->add_option("--rows", f.rows, "rows (matrix kernels)")->transform(positive_integer<std::int64_t>());
  c->add_option("--cols", f.cols, "columns (matrix kernels)")->transform(positive_integer<std::int64_t>());
  c->add_option("--problem", f.problem, "problem as name=value[,name=value] (alternative to --n/--rows/--cols)");
  c->add_option("--dtype", f.dtype, "element type: int32, float32, float64, ... (default: the spec's first)");
  c->add_option("--op", f.op, "operator, e.g. sum, min, max (default: the spec's first for this dtype)");
  if (with_workload)
    c->add_option("--workload", f.workload_key, "workload as dtype/op, e.g. float32/sum (alternative to --dtype/--op)");
  c->add_option(
      "--input", f.inputs,
      "NAME=FILE: the input NAME of a user kernel read from FILE (.npy, else raw binary); the data is part of "
      "the problem (repeatable)");
}

/// --seed (tune, compare-strategies, explore).
void add_seed_option(CLI::App* c, std::uint64_t& seed, const std::string& what) {
  c->add_option("--seed", seed, what)->capture_default_str()->transform(non_negative_integer<std::uint64_t>());
}

/// The measurement flags that tune and explore share: --samples (at least 7 timed runs), --warmup, --timeout.
void add_samples_option(CLI::App* c, int& samples, const std::string& what) {
  c->add_option("--samples", samples, what)->capture_default_str()->transform(integer_in(7, 100000));
}
void add_warmup_option(CLI::App* c, int& warmup) {
  c->add_option("--warmup", warmup, "untimed runs before sampling")
      ->capture_default_str()
      ->transform(integer_in(0, 1000));
}
void add_timeout_option(CLI::App* c, double& timeout) {
  c->add_option("--timeout", timeout, kTimeoutHelp)->capture_default_str()->check(number_in(0, 86400));
}

/// --values, --restrict, --drop-constraint, --deterministic.
void add_space_flags(CLI::App* c, SpaceFlags& f) {
  c->add_option("--values", f.values,
                "keep only these values of a parameter: NAME=v1,v2,... (numbers or labels; repeatable)");
  c->add_option("--restrict", f.restrict, "an extra constraint, e.g. 'BLOCK_SIZE >= 128' (repeatable)");
  c->add_option("--drop-constraint", f.drop, "leave out the spec's constraint with this text (repeatable)");
  c->add_flag("--deterministic", f.deterministic,
              "only configurations whose results are the same bits run to run: leave out those the spec marks "
              "\"nondeterministic\" (the reduction's atomic final step for float sums)");
}

/// --objective (time, energy, edp, gbps_per_watt).
CLI::Option* add_objective_option(CLI::App* app, std::string& objective, const std::string& what) {
  std::string choices;
  for (const auto& n : objective_names()) choices += (choices.empty() ? "" : ", ") + n;
  return app->add_option("--objective", objective, what + " (" + choices + "; docs/observers.md)")
      ->capture_default_str()
      ->check(one_of(objective_names()));
}

void add_devices(CLI::App& app, Globals& g) {
  run_when_chosen(app.add_subcommand("devices", "list the GPUs the NVIDIA driver reports"), g, run_devices);
}

void add_list(CLI::App& app, Globals& g) {
  run_when_chosen(app.add_subcommand("list", "list the built-in kernels and the size of their spaces"), g, run_list);
}

void add_space(CLI::App& app, Globals& g) {
  auto a = std::make_shared<SpaceArgs>();
  auto* c = app.add_subcommand("space", "build a kernel's parameter space and report its size");
  c->add_option("kernel", a->kernel, kKernelHelp)->required();
  add_problem_flags(c, a->pf);
  add_space_flags(c, a->narrow);
  c->add_flag("--list", a->list, "print every valid configuration");
  run_when_chosen(c, g, [&g, a] { return run_space(*a, g.db_path); });
}

void add_strategies(CLI::App& app, Globals& g) {
  run_when_chosen(app.add_subcommand("strategies", "list the search strategies with their options"), g,
                  run_strategies);
}

/// tune's options up to the narrowing flags: the search, its limits, warm start and screening.
void add_tune_search_options(CLI::App* c, TuneArgs& a) {
  c->add_option("kernel", a.kernel,
                std::string(kKernelHelp) +
                    " (a T1 file, a capture), or a directory of captures (each tuned in a "
                    "session of its own)")
      ->required();
  add_problem_flags(c, a.pf);
  c->add_option("--strategy", a.strategy,
                "search strategy (see `autotune strategies`); default: broad_then_local when --budget or "
                "--time-limit is given, else brute_force");
  c->add_option("--strategy-option", a.strategy_options, "strategy option key=value (repeatable)");
  c->add_option("--budget", a.budget, "maximum new evaluations (default: no limit)")
      ->transform(positive_integer<std::size_t>());
  c->add_option("--time-limit", a.time_limit, "stop after this many seconds")->check(positive_number());
  add_seed_option(c, a.seed, "seed for inputs and the strategy");
  c->add_option("--warm-start", a.warm_start,
                "measure first up to this many configurations that the database's trials at other sizes (or on "
                "devices of the same architecture) suggest; 0 = off")
      ->capture_default_str()
      ->transform(non_negative_integer<std::size_t>());
  c->add_option("--screen", a.screen,
                "multi-fidelity: first tune a problem this many times smaller for a share of --time-limit, then "
                "start at the target size from its best configurations (0 = off)")
      ->check(zero_or_number_above(1, 1e9));
  c->add_option("--screen-share", a.screen_share, "share of --time-limit spent screening")
      ->capture_default_str()
      ->check(number_in(0.05, 0.95));
  c->add_option("--smaller-sizes", a.smaller_sizes,
                "kernels whose spec declares \"blocks\" (scan, compaction): after the search, measure up to 12 of "
                "its configurations at this many sizes 4x, 16x, ... smaller, so that the lookup serves those sizes "
                "from measurements (within --time-limit; not with --simulate); 0 = off")
      ->capture_default_str()
      ->transform(non_negative_integer<std::size_t>());
  c->add_option("--final-k", a.final_k,
                "final pick: re-time up to this many leaders within the measured noise of the best interleaved "
                "(A B C A B C ...) and choose the winner on those paired samples; its tie set is stored for the "
                "lookup (0 = off; time objective only)")
      ->capture_default_str()
      ->transform(non_negative_integer<std::size_t>());
  c->add_option("--final-rounds", a.final_rounds, "final pick: interleaved rounds (one sample of each candidate each)")
      ->capture_default_str()
      ->transform(integer_in(3, 1000));
}

/// tune's measurement options: samples, timeouts, L2 flush, objective, energy window, verification.
void add_tune_measure_options(CLI::App* c, TuneArgs& a) {
  add_samples_option(c, a.samples, "most timed runs per configuration (>= 7)");
  c->add_option("--median-ci", a.median_ci,
                "after 7 samples, stop once the 95% confidence interval of the median is within this many percent "
                "of it (0: always take --samples)")
      ->capture_default_str()
      ->check(number_in(0, 100));
  add_timeout_option(c, a.timeout);
  c->add_option("--max-seconds-per-config", a.max_seconds,
                "after 7 samples, stop once the samples add up to this much GPU time")
      ->capture_default_str()
      ->check(positive_number());
  add_warmup_option(c, a.warmup);
  c->add_option("--race", a.race,
                "early rejection: a configuration whose first 3 samples are all more than this many percent (or twice "
                "the best's spread) slower than the best so far stops there, recorded with ';raced' in its protocol; "
                "the best gets every sample (0: no racing; --objective time only)")
      ->capture_default_str()
      ->check(number_in(0, 10000));
  c->add_flag("--no-flush-l2", a.no_flush, "do not flush the L2 cache before each sample");
  add_objective_option(c, a.objective, "what the strategy minimises and the table ranks by");
  c->add_option("--energy-ms", a.energy_ms,
                "after the samples, run each configuration back to back for about this long between two readings "
                "of NVML's energy counter, for its energy per run (0 = no energy window; default: 100 for an "
                "--objective that needs energy, else 0, since the window costs about that much per configuration)")
      ->check(number_in(0, 60000));
  c->add_flag("--no-observe", a.no_observe,
              "record time only: no NVML clocks, power, energy or throttle reasons (also AUTOTUNE_NVML=off)");
  c->add_option("--metrics", a.metrics,
                "hardware counters per configuration, taken in a replay after its timing (CUPTI; docs/observers.md): "
                "'counters' (DRAM bytes read and written, DRAM throughput, achieved occupancy, GPU time: one replay "
                "pass) or a comma-separated list of names (dram_bytes, l2_hit_rate, sm_throughput, "
                "shared_bank_conflicts, shared_wavefronts, barrier_stall, ... or CUPTI metric names); off by "
                "default");
  c->add_option("--verify", a.verify,
                "where outputs are compared with the expected values: device (comparison kernels on the GPU, only "
                "a verdict comes back) or host (outputs copied back and compared on the CPU)")
      ->capture_default_str()
      ->check(one_of({"device", "host"}));
  c->add_option("--inputs-on", a.inputs_on,
                "where the inputs are made: gpu (drawn on the GPU where the kernel family can, the reduction's "
                "built-in operators and the scan from 64 MiB of inputs on: the same values, never in host memory; "
                "a scan's expected values are then made on the GPU too) or host")
      ->capture_default_str()
      ->check(one_of({"gpu", "host"}));
}

/// tune's remaining options: compilation, outputs, the GPU, replay and MPI.
void add_tune_run_options(CLI::App* c, TuneArgs& a) {
  c->add_option("--jobs", a.jobs, kJobsHelp)->transform(positive_integer<int>());
  c->add_flag("--compile-in-process", a.compile_in_process,
              "run NVRTC on the compile threads instead of one compile worker process per thread");
  c->add_option("--binary-cache", a.binary_cache,
                "database whose binaries table caches the compiled kernels (default: --db itself)");
  c->add_option("--stats-json", a.stats_json,
                "write the time split, counts and best configurations of the session to this JSON file");
  c->add_option("--gpu", a.device,
                "GPU ordinal (under mpirun/srun: default the rank's node-local rank modulo the GPUs of its node)")
      ->capture_default_str()
      ->transform(non_negative_integer<int>());
  c->add_option("--top", a.top, "rows in the final table")->capture_default_str()->transform(positive_integer<int>());
  c->add_flag("--simulate", a.simulate, "answer every evaluation from recorded trials instead of the GPU");
  c->add_option("--from", a.from, "database to replay with --simulate (default: --db)");
  c->add_option("--simulate-delay-ms", a.simulate_delay_ms,
                "with --simulate: wall time each replayed configuration takes (to watch progress, or to exercise "
                "an MPI job's fault handling)")
      ->check(number_in(0, 60000));
  c->add_option("--rank-timeout", a.rank_timeout,
                "under mpirun/srun: seconds without a message after which a rank is taken out and its "
                "configurations go to the other ranks")
      ->capture_default_str()
      ->check(number_in(1, 86400));
  c->add_option("--device", a.device_name, "device to replay with --simulate (when several are recorded)");
}

void add_tune(CLI::App& app, Globals& g) {
  auto a = std::make_shared<TuneArgs>();
  auto* c = app.add_subcommand("tune", "tune a kernel on the GPU (or replay recorded trials with --simulate)");
  add_tune_search_options(c, *a);
  add_space_flags(c, a->narrow);
  add_tune_measure_options(c, *a);
  add_tune_run_options(c, *a);
  c->callback([&g, a, c] {
    a->device_given = c->count("--gpu") > 0;
    g.run = [&g, a] { return run_tune(*a, g.db_path); };
  });
}

void add_revalidate(CLI::App& app, Globals& g) {
  auto a = std::make_shared<RevalidateArgs>();
  auto* c = app.add_subcommand("revalidate",
                               "re-measure the best configurations of trials recorded with an older kernel source and "
                               "carry them forward where they still hold");
  c->add_option("kernel", a->t.kernel, kKernelHelp)->required();
  add_problem_flags(c, a->t.pf);
  c->add_option("--top", a->top, "configurations re-measured per recorded cell (device model, workload, problem)")
      ->capture_default_str()
      ->transform(integer_in(1, 100000));
  c->add_option("--tolerance", a->tolerance,
                "percent within which a re-measured median agrees with the record (or the two spreads, if larger)")
      ->capture_default_str()
      ->transform(number_in(0.0, 100.0));
  add_tune_measure_options(c, a->t);
  c->add_option("--jobs", a->t.jobs, kJobsHelp)->transform(positive_integer<int>());
  c->add_option("--binary-cache", a->t.binary_cache,
                "database whose binaries table caches the compiled kernels (default: --db itself)");
  c->add_option("--gpu", a->t.device, "GPU ordinal")->capture_default_str()->transform(non_negative_integer<int>());
  c->footer("Cells whose trials the current kernel source already serves are left alone. A carried row keeps its "
            "measurement and says where it came from (best: \"carried forward: revalidated from source ...\"); a cell "
            "that does not agree is reported for re-tuning. Nothing recorded is changed or removed.");
  run_when_chosen(c, g, [&g, a] { return run_revalidate(*a, g.db_path); });
}

void add_identity(CLI::App& app, Globals& g) {
  auto a = std::make_shared<IdentityArgs>();
  auto* c = app.add_subcommand("identity", "print the source hash and code identity of kernels, and the recorded "
                                           "sources --db counts as the same code");
  c->add_option("kernels", a->kernels, "built-in kernel names or paths to .json specs")->required();
  c->add_flag("--json", a->json, "print JSON (one object per kernel)");
  run_when_chosen(c, g, [&g, a] { return run_identity(*a, g.db_path); });
}

void add_summary(CLI::App& app, Globals& g) {
  auto a = std::make_shared<SummaryArgs>();
  auto* c = app.add_subcommand("summary", "best recorded trial for each value of a parameter, and failures by status");
  c->add_option("kernel", a->kernel, kKernelHelp)->required();
  add_problem_flags(c, a->pf);
  c->add_option("--by", a->by, "parameter to group by (default: the first parameter)");
  c->add_option("--device", a->device_name, "device name (default: the only recorded one)");
  add_objective_option(c, a->objective, "rank by this objective");
  run_when_chosen(c, g, [&g, a] { return run_summary(*a, g.db_path); });
}

void add_best(CLI::App& app, Globals& g) {
  auto a = std::make_shared<BestArgs>();
  auto* c = app.add_subcommand("best", "print the best recorded configuration for this GPU and size");
  c->add_option("kernel", a->kernel, kKernelHelp)->required();
  add_problem_flags(c, a->pf);
  c->add_option("--device", a->device_name,
                "device to look up: a recorded name, or any board name together with --cc (default: this "
                "machine's GPU, or the only recorded one)");
  c->add_option("--cc", a->cc,
                "compute capability of --device as major*10+minor (e.g. 90), for a board that "
                "is not recorded: the answer then falls back to other boards")
      ->transform(positive_integer<int>());
  c->add_flag("--json", a->json, "print the answer as JSON");
  add_objective_option(c, a->objective, "what best means");
  run_when_chosen(c, g, [&g, a] { return run_best(*a, g.db_path); });
}

void add_compare_strategies(CLI::App& app, Globals& g) {
  auto a = std::make_shared<CompareStrategiesArgs>();
  auto* c = app.add_subcommand("compare-strategies",
                               "benchmark the search strategies on a fully recorded space (simulation, no GPU)");
  c->add_option("kernel", a->kernel, kKernelHelp)->required();
  add_problem_flags(c, a->pa, false);
  c->add_option("--from", a->from_list,
                "database with the recorded (brute-forced) space (default: --db); with --score, repeat it to score "
                "the spaces of several databases together");
  c->add_option("--device", a->device_name, "recorded device (when several are recorded)");
  c->add_option("--budgets", a->budgets, "evaluation budgets: counts and/or percentages of the space, e.g. 10,20,5%")
      ->capture_default_str();
  c->add_option("--repeats", a->repeats, "runs (seeds) per strategy and budget")
      ->capture_default_str()
      ->transform(integer_in(1, 100000));
  c->add_option("--strategies", a->strategies,
                "comma-separated strategies (default: all; random_sample is always included)");
  c->add_option("--strategy-option", a->strategy_options, "option of one strategy as name.key=value (repeatable)");
  add_seed_option(c, a->seed, "first seed (run r uses seed + r)");
  c->add_option("--batch", a->batch, "configurations asked from a strategy per step (tune uses 32)")
      ->capture_default_str()
      ->transform(integer_in(1, 100000));
  c->add_option("--warm-from-problem", a->warm_from,
                "warm-start every run as a session would from this other problem, e.g. n=16777216 (same --from "
                "database, kernel, workload and device): its 5 fastest configurations, the times of every "
                "configuration recorded for it and its distance (|log2 size ratio|)");
  c->add_flag("--warm-as-given", a->warm_as_given,
              "with --warm-from-problem: the 5 fastest configurations only, without the other times (every strategy "
              "measures them first, as given: the warm start before it was tested)");
  c->add_option("--within", a->within_percent,
                "headline threshold in percent: a run counts when its best is within this much of the optimum "
                "(the shares within 1, 2 and 5% are always reported)")
      ->capture_default_str()
      ->check(number_in(0, 1000));
  c->add_option("--csv", a->csv, "also write the results as CSV to this file (with standard errors)");
  c->add_option("--runs-csv", a->runs_csv, "also write one CSV row per run (strategy, budget, seed) to this file");
  c->add_flag("--markdown", a->markdown, "print the table as Markdown");
  c->add_option("--score", a->score,
                "'time': the methodology score instead (best-so-far over simulated tuning time, each configuration "
                "costing its recorded compile, verification and benchmark time; 0 = random search, 1 = the optimum); "
                "KERNEL may be a comma-separated list, and without a problem flag every recorded problem is a space")
      ->check(one_of({"time"}));
  c->add_option("--cutoff", a->cutoff_percent,
                "with --score: the time range ends where random search expects to get this far (percent) from the "
                "median to the optimum")
      ->capture_default_str()
      ->check(number_in(2, 99.9));
  c->add_option("--resolution", a->resolution, "with --score: time points of each curve")
      ->capture_default_str()
      ->transform(integer_in(2, 100000));
  c->add_flag("--no-strategy-time", a->no_strategy_time,
              "with --score: leave the strategies' own measured decision time out of the tuning time (reproducible)");
  c->add_option("--curve-csv", a->curve_csv, "with --score: also write the curves as CSV to this file");
  c->add_option("--plot", a->plot, "with --score: also write the aggregate curves as an SVG chart to this file");
  c->add_option("--traces", a->traces,
                "with --score and --no-strategy-time: also score the runs of this JSON Lines file (another tuner's "
                "evaluation orders, e.g. bench/kt_strategy_scores.py) on the spaces they name, beside our strategies");
  run_when_chosen(c, g, [&g, a] {
    if (!a->from_list.empty()) a->from = a->from_list.front();
    return a->score.empty() ? run_compare_strategies(*a, g.db_path) : run_compare_score(*a, g.db_path);
  });
}

void add_import(CLI::App& app, Globals& g) {
  auto a = std::make_shared<ImportArgs>();
  auto* c =
      app.add_subcommand("import", "import Kernel Tuner cache files or T4 result files as recorded trials (--db)");
  c->add_option("--format", a->format,
                "kt-cache (Kernel Tuner cache JSON), t4 (T4 results JSON), or t1 (a Kernel Tuner T1 input file: "
                "writes the equivalent native spec with --write-spec, stores nothing)")
      ->required()
      ->check(one_of({"kt-cache", "t4", "t1"}));
  c->add_option("file", a->file, "file to import")->required();
  auto* kernel = c->add_option("--kernel", a->kernel,
                               "built-in kernel, path to a .json spec, or kernel imported before, that the trials "
                               "belong to; default: a kernel of its own (a spec stub) named by the file (a Kernel "
                               "Tuner cache's kernel_name, a T4 file exported by autotune) or by --as");
  c->add_option("--spec", a->spec,
                "T1 file, native spec or built-in kernel that gives the parameters and constraints: recorded "
                "configurations that violate the constraints are reported and not imported")
      ->excludes(kernel);
  c->add_option("--as", a->as, "name of the imported kernel (spec stub) instead of the file's kernel name");
  c->add_option("--write-spec", a->write_spec, "also write the spec stub of the imported kernel to this file");
  c->add_option("--device", a->device, "device name (default: the file's; required for T4 files from other tools)");
  c->add_option("--cc", a->cc,
                "compute capability as major*10+minor (e.g. 90); needed for a device that is not yet in the "
                "database when its name does not tell it")
      ->transform(positive_integer<int>());
  add_problem_flags(c, a->pa, true);
  run_when_chosen(c, g, [&g, a] { return run_import(*a, g.db_path); });
}

void add_export(CLI::App& app, Globals& g) {
  auto a = std::make_shared<ExportArgs>();
  auto* c = app.add_subcommand("export",
                               "export recorded trials (--db) as a T4 results file, or the best configurations with "
                               "a selector as a self-contained C++ header or JSON tables (docs/lookup.md)");
  c->add_option("--format", a->format,
                "output format: t4 (recorded trials), header (C++17 tables and select()), json (the same tables)")
      ->capture_default_str()
      ->check(one_of({"t4", "header", "json"}));
  c->add_option("--kernel", a->kernel,
                "only this kernel (default: all recorded); header and json: repeatable, a built-in name or spec");
  c->add_option("--device", a->device, "t4: only this device (name or normalised name)");
  c->add_option("--workload", a->workload, "only this workload, e.g. float32/sum");
  c->add_option("--problem", a->problem, "t4: only this problem, e.g. n=67108864");
  c->add_option("--namespace", a->name_space, "header: the C++ namespace of the tables and select()")
      ->capture_default_str();
  add_objective_option(c, a->objective, "header and json: what the best configuration is best at");
  c->add_option("-o,--output", a->output, "output file ('-' = standard output)")->capture_default_str();
  run_when_chosen(c, g, [&g, a] { return run_export(*a, g.db_path); });
}

void add_explore(CLI::App& app, Globals& g) {
  auto a = std::make_shared<ExploreArgs>();
  auto* c = app.add_subcommand("explore",
                               "sweep block size x grid size (in multiples of the SM count) with the other parameters "
                               "fixed; report GB/s, % of copy, occupancy, waves, threads per SM and a verdict");
  c->add_option("kernel", a->kernel, kKernelHelp)->required();
  add_problem_flags(c, a->pf);
  c->add_option("--block-sizes", a->block_sizes,
                "threads per block to sweep, e.g. 64,128,256,512,1024 (default: the spec's)");
  c->add_option("--blocks-per-sm", a->blocks_per_sm,
                "grid sizes in multiples of the SM count, e.g. 1,2,3,4,6,8,16,32 (default: the spec's)");
  c->add_option("--fix", a->fix,
                "PARAM=VALUE for a parameter that is not swept (repeatable; default: the best known configuration, "
                "else the spec default)");
  c->add_option("--tolerance", a->tolerance, "percent of the best within which a point counts as peak")
      ->capture_default_str()
      ->check(number_in(0, 50));
  c->add_option("--plot", a->plot,
                "write the chart (GB/s against blocks per SM, one line per block size) to this SVG file");
  c->add_option("--power-plot", a->power_plot,
                "write GB/s against board power (one line per block size; needs NVML) to this SVG file");
  c->add_flag("--plan-only", a->plan_only,
              "print the planned points (validity, geometry, theoretical occupancy) without running them");
  c->add_flag("--simulate", a->simulate, "answer every point from recorded trials instead of the GPU");
  c->add_option("--from", a->from, "database to replay with --simulate (default: --db)");
  c->add_option("--device", a->device_name, "device to replay with --simulate (when several are recorded)");
  add_seed_option(c, a->seed, "seed for the inputs");
  add_samples_option(c, a->samples, "timed runs per point (>= 7)");
  add_warmup_option(c, a->warmup);
  c->add_flag("--no-flush-l2", a->no_flush, "do not flush the L2 cache before each sample");
  c->add_option("--metrics", a->metrics,
                "hardware counters per point, as tune --metrics (e.g. achieved_occupancy: the table then shows the "
                "achieved occupancy beside the threads per SM the launch allows; docs/observers.md)");
  add_timeout_option(c, a->timeout);
  c->add_option("--gpu", a->gpu, "GPU ordinal")->capture_default_str()->transform(non_negative_integer<int>());
  run_when_chosen(c, g, [&g, a] { return run_explore(*a, g.db_path); });
}

void add_report(CLI::App& app, Globals& g) {
  auto a = std::make_shared<ReportArgs>();
  auto* c =
      app.add_subcommand("report", "write a self-contained HTML report of a kernel's (or a session's) recorded trials");
  c->add_option("target", a->target, "built-in kernel name, path to a .json spec, or a session id")->required();
  add_problem_flags(c, a->pf);
  c->add_option("--html", a->html, "output file (.html)")->required();
  c->add_option("--device", a->device_name, "device name (default: the only recorded one)");
  c->add_option("--top", a->top, "rows in the best-configurations table")
      ->capture_default_str()
      ->transform(positive_integer<std::size_t>());
  run_when_chosen(c, g, [&g, a] { return run_report(*a, g.db_path); });
}

void add_merge(CLI::App& app, Globals& g) {
  auto a = std::make_shared<MergeArgs>();
  auto* c = app.add_subcommand(
      "merge", "merge databases recorded elsewhere (devices, sessions, trials, cached binaries) into OUT");
  c->add_option("out", a->out, "database to merge into (created if missing)")->required();
  c->add_option("inputs", a->inputs, "databases to merge from (never written)")->required();
  c->footer(
      "Trials already in OUT (same kernel source, device, workload, problem and configuration) are kept; merging the "
      "same database twice adds nothing. An input that is not an autotune database, is corrupt or has a newer schema "
      "is refused before any file is touched.");
  run_when_chosen(c, g, [a] { return run_merge(*a); });
}

}  // namespace

void register_commands(CLI::App& app, Globals& g) {
  add_devices(app, g);
  add_list(app, g);
  add_space(app, g);
  add_strategies(app, g);
  add_tune(app, g);
  add_revalidate(app, g);
  add_summary(app, g);
  add_best(app, g);
  add_compare_strategies(app, g);
  add_import(app, g);
  add_export(app, g);
  add_explore(app, g);
  add_report(app, g);
  add_merge(app, g);
  add_identity(app, g);
}

}  // namespace autotune::cli
