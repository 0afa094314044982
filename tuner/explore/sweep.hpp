// Sweep planner of `autotune explore`: the configurations of a block size x grid size sweep with every
// other parameter fixed, each checked against the spec (points a constraint excludes are reported, never
// silently dropped), and the launch geometry of each point. Pure: no CUDA, no database, no clocks.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/plan.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::explore {

/// The swept parameters: threads per block, and the grid in multiples of the SM count.
inline constexpr const char* kBlockParam = "BLOCK_SIZE";
inline constexpr const char* kGridParam = "BLOCKS_PER_SM";

/// What the user asked for (flags of `autotune explore`).
struct SweepRequest {
  std::vector<Value> block_sizes;      // empty = every value of BLOCK_SIZE in the spec
  std::vector<Value> blocks_per_sm;    // empty = every value of BLOCKS_PER_SM in the spec (if it has one)
  std::map<std::string, Value> fixed;  // --fix PARAM=VALUE: overrides the best known / default value
};

/// One point of the sweep.
struct SweepPoint {
  Value block_size = 0;
  Value blocks_per_sm = 0;   // 0 when the kernel has no BLOCKS_PER_SM parameter (grid set by the problem)
  Config config;             // the full configuration
  bool valid = false;        // every value is one of the spec's and every constraint holds
  std::string excluded_by;   // why not valid, e.g. "constraint `BLOCKS_PER_SM * BLOCK_SIZE <= 2048`"
  // Geometry of the main kernel launch (the kernel step with the most threads), valid points only.
  std::string kernel;                // entry point, e.g. "reduce_pass"
  std::int64_t grid_blocks = 0;      // blocks of the launch (x * y * z)
  std::int64_t block_threads = 0;    // threads per block (x * y * z)
  std::uint32_t shared_bytes = 0;    // dynamic shared memory per block
  std::string plan_error;            // the adapter could not plan this point (then geometry is 0)
};

struct SweepPlan {
  std::string kernel;                         // spec name
  Config base;                                // values of the parameters that are not swept
  std::map<std::string, std::string> origin;  // parameter -> "--fix", "best known" or "spec default"
  std::vector<Value> block_sizes;             // in sweep order
  std::vector<Value> blocks_per_sm;           // in sweep order; empty when the kernel has no grid parameter
  bool has_grid_param = false;
  std::vector<SweepPoint> points;             // block-size-major order
  std::vector<std::string> notes;             // e.g. "the grid of scan is fixed by the problem size"

  /// Configurations of the valid points, in sweep order (what the session evaluates).
  std::vector<Config> valid_configs() const;
  std::size_t valid_count() const;
};

/// Launch plan of one configuration (normally KernelAdapter::plan for the problem and device).
using PlanFn = std::function<LaunchPlan(const Config&)>;

/// Parses "64,128,256" (spaces allowed). Throws UsageError naming `flag` on an empty list, a non-integer,
/// a value below 1 or a duplicate.
std::vector<Value> parse_value_list(const std::string& text, const std::string& flag);

/// Parses "PARAM=VALUE" where VALUE is an integer or one of the parameter's labels (e.g. VARIANT=warp_shuffle).
/// Throws UsageError for a malformed item, an unknown parameter, a swept parameter (use --block-sizes /
/// --blocks-per-sm instead) or an unknown label.
std::pair<std::string, Value> parse_fix(const std::string& text, const TuningSpec& spec);

/// Builds the sweep. The values of the other parameters come from, in increasing priority: the spec
/// default, `best_known` (the fastest recorded configuration, if any), request.fixed. Every point is checked
/// against the spec's values and constraints (with the problem, device and workload bound); points that
/// fail are kept with `excluded_by` naming every failing constraint. `plan_fn` (may be empty) gives the
/// launch geometry of valid points; its exceptions become `plan_error`.
/// Throws UsageError when the spec has no BLOCK_SIZE parameter, when a requested block size or grid
/// multiple is given for a kernel without that parameter, or when a --fix names an unknown parameter.
SweepPlan plan_sweep(const TuningSpec& spec, const ProblemKey& p, const DeviceInfo& d, const Workload& w,
                     const SweepRequest& request, const std::optional<Config>& best_known, const PlanFn& plan_fn);

/// The kernel step of a plan with the most threads (grid x block), or nullptr when it has no kernel step.
const LaunchStep* main_kernel_step(const LaunchPlan& plan);

/// Static per-SM limits of a compute capability (CUDA C++ Programming Guide, "Technical Specifications per
/// Compute Capability"): resident threads, resident blocks, shared memory per SM and the shared memory the
/// system reserves per block. nullopt for a compute capability the table does not know.
struct SmLimits {
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int shared_bytes_per_sm = 0;
  int reserved_shared_per_block = 0;
};
std::optional<SmLimits> sm_limits(int cc);

/// Occupancy of one launch: blocks of this kernel that fit on one SM at once.
struct Occupancy {
  enum class Source { driver, theoretical, unknown };
  int blocks_per_sm = 0;  // 0 with Source::unknown (or a block that cannot run)
  Source source = Source::unknown;
  std::string note;       // why unknown, or what the theoretical figure ignores
};
const char* to_string(Occupancy::Source s);

/// Occupancy from the static limits only (threads, blocks and shared memory per SM; registers are not
/// known without compiling and asking the driver), labelled Source::theoretical; Source::unknown when the
/// compute capability is not in the table.
Occupancy theoretical_occupancy(const DeviceInfo& d, std::int64_t block_threads, std::uint32_t shared_bytes);

/// Derived launch figures of one point.
struct Geometry {
  double grid_in_sms = 0;             // grid blocks / SM count
  double waves = 0;                   // grid / (occupancy x SMs); 0 when occupancy is unknown or 0
  bool whole_waves = false;           // grid is a whole number of full waves
  double resident_threads_per_sm = 0; // min(grid, occupancy x SMs) / SMs x block threads (first wave);
                                      // without occupancy: grid / SMs x block threads
};
Geometry geometry(const SweepPoint& pt, const Occupancy& occ, int sm_count);

}  // namespace autotune::explore
