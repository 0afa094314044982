// How many compilations run at once: the rule a CompilePipeline follows, kept apart from its threads so that the
// cpu tests can drive it with synthetic compile times, and the default cap of a process (its share of the node's
// cores when several ranks of an MPI job run on one node).
#pragma once
#include <cstddef>

namespace autotune {

/// The adaptive rule (docs/performance.md "Compile scaling"). It starts with `initial` threads at work and:
/// - grows by one when the consumer is about to wait for a result while tasks are queued, once the thread added
///   last has finished its first task (or as many tasks as there are threads at work have finished since it was
///   added: it may never get one while the others keep up) and the current level has its verdict (below), never
///   past the cap or a learned ceiling;
/// - shrinks by one when a growth did not pay: after at least max(kSettle, active) steady compilations at the new
///   level (a thread's first compilation is not steady: it may start a worker process), the compile work done
///   at once, active x (CPU time / wall time) summed over the level's compilations, must exceed the level
///   below's by kMinGain cores. If not (the threads wait for cores or for each other), one thread stops taking
///   tasks and the level below becomes the ceiling. The ratio, not the compile time itself, is compared: the
///   compile time of a configuration varies far more with the configuration than with the load (a GEMM tile of
///   256 compiles several times longer than one of 16), and both times grow alike with it. One more verdict catches
///   a slowdown that costs CPU time rather than waits (measured with a single process running 25-29 compile
///   workers: about 10x the CPU time per compilation of 5 workers, with thousands of page faults each): the level's
///   mean CPU time per compilation above kMaxCpuGrowth x the lowest mean of the levels below also shrinks it (a
///   margin wide enough for the configurations' own spread, averaged over a level).
/// Not thread-safe: the pipeline calls it under its lock.
class ConcurrencyRule {
 public:
  static constexpr std::size_t kSettle = 4;
  static constexpr double kMinGain = 0.5;
  static constexpr double kMaxCpuGrowth = 3.0;

  /// cap >= 1 (0 is taken as 1); initial is clamped to [1, cap].
  ConcurrencyRule(std::size_t cap, std::size_t initial);

  std::size_t active() const { return active_; }
  std::size_t cap() const { return cap_; }
  /// The most threads the rule will put to work from now on (cap until a growth did not pay).
  std::size_t ceiling() const { return ceiling_; }
  std::size_t shrinks() const { return shrinks_; }

  /// The consumer is about to wait; tasks_queued says whether tasks are waiting for a thread. True if a thread
  /// was added (active() grew by one).
  bool on_wait(bool tasks_queued);
  /// A task finished on thread `index` (0-based) after wall_ms, of which the compiler spent cpu_ms on a CPU (0:
  /// not measured; such tasks are never a reason to shrink); first: the thread's first task. True if the rule
  /// shrank (active() fell by one: threads with index >= active() take no new task).
  bool on_finished(std::size_t index, double wall_ms, double cpu_ms, bool first);

 private:
  void reset_level();
  /// Compile work at once at the current level: active x CPU / wall over its steady compilations (0: none).
  double level_cores() const;

  std::size_t cap_, active_, ceiling_;
  bool growing_ = false;  // the thread added last has not finished a task yet
  std::size_t finished_since_growth_ = 0;
  std::size_t shrinks_ = 0;
  // Steady compilations at the current level (wall and CPU time summed), and the compile work at once of the level
  // below it (threads x CPU / wall; 0: not known).
  double level_wall_ms_ = 0, level_cpu_ms_ = 0;
  std::size_t level_count_ = 0;
  double below_cores_ = 0;
  double lowest_cpu_ms_ = 0;  // the lowest mean CPU time per steady compilation of a level so far (0: none)
  bool judged_ = false;       // the current level was judged already (kept or shrunk)
};

/// Compile threads for one process by default: the cores it may run on (its CPU affinity set, else every
/// online core), divided among the ranks of an MPI job that share the node when the process is not bound to a
/// subset of the cores already (a bound rank's affinity set is its share). At least 1.
/// - affinity_cores: cores in the process's affinity set (0: unknown); online_cores: cores online (0: unknown);
///   local_ranks: processes of the job on this node (0 or 1: alone).
std::size_t compile_jobs_share(std::size_t affinity_cores, std::size_t online_cores, std::size_t local_ranks);

/// compile_jobs_share for this process: sched_getaffinity, std::thread::hardware_concurrency, and local_ranks, or
/// when that is 0 the node-local rank count an MPI launcher exports (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS,
/// SLURM_NTASKS_PER_NODE; 1 without one).
std::size_t default_compile_jobs(std::size_t local_ranks = 0);

}  // namespace autotune
