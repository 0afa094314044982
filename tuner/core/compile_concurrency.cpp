#include "tuner/core/compile_concurrency.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace autotune {

ConcurrencyRule::ConcurrencyRule(std::size_t cap, std::size_t initial)
    : cap_(std::max<std::size_t>(cap, 1)), active_(std::clamp<std::size_t>(initial, 1, cap_)), ceiling_(cap_) {}

void ConcurrencyRule::reset_level() {
  level_wall_ms_ = 0;
  level_cpu_ms_ = 0;
  level_count_ = 0;
  judged_ = false;
}

double ConcurrencyRule::level_cores() const {
  return level_wall_ms_ > 0 ? static_cast<double>(active_) * level_cpu_ms_ / level_wall_ms_ : 0.0;
}

bool ConcurrencyRule::on_wait(bool tasks_queued) {
  // One level at a time: no growth until the thread added last has started, nor while the current level waits for
  // its verdict.
  const bool awaiting_verdict = below_cores_ > 0 && !judged_;
  if (growing_ || awaiting_verdict || !tasks_queued || active_ >= ceiling_) return false;
  // What the current level achieved is the yardstick of the next one (none when this level has no measured
  // steady compilation: the next level is then not judged).
  below_cores_ = level_cores();
  if (level_count_ > 0) {
    const double cpu = level_cpu_ms_ / static_cast<double>(level_count_);
    if (lowest_cpu_ms_ <= 0 || cpu < lowest_cpu_ms_) lowest_cpu_ms_ = cpu;
  }
  ++active_;
  growing_ = true;
  finished_since_growth_ = 0;
  reset_level();
  return true;
}

bool ConcurrencyRule::on_finished(std::size_t index, double wall_ms, double cpu_ms, bool first) {
  if (index + 1 == active_ || ++finished_since_growth_ >= active_) growing_ = false;
  // Start-up, a thread that no longer takes tasks, or a compilation whose CPU time nobody measured.
  if (first || index >= active_ || cpu_ms <= 0 || wall_ms <= 0) return false;
  level_wall_ms_ += wall_ms;
  level_cpu_ms_ += cpu_ms;
  ++level_count_;
  if (judged_ || below_cores_ <= 0 || active_ < 2 || level_count_ < std::max(kSettle, active_)) return false;
  judged_ = true;
  const double cpu = level_cpu_ms_ / static_cast<double>(level_count_);
  const bool cpu_held = lowest_cpu_ms_ <= 0 || cpu <= kMaxCpuGrowth * lowest_cpu_ms_;
  if (level_cores() > below_cores_ + kMinGain && cpu_held) return false;
  --active_;
  ceiling_ = active_;
  ++shrinks_;
  growing_ = false;
  reset_level();
  judged_ = true;  // the level below was measured already
  return true;
}

std::size_t compile_jobs_share(std::size_t affinity_cores, std::size_t online_cores, std::size_t local_ranks) {
  const std::size_t cores = affinity_cores > 0 ? affinity_cores : online_cores;
  if (cores == 0) return 1;
  // A process bound to fewer cores than the node has was given its share by the launcher already.
  const bool bound = affinity_cores > 0 && online_cores > 0 && affinity_cores < online_cores;
  if (bound || local_ranks <= 1) return cores;
  return std::max<std::size_t>(cores / local_ranks, 1);
}

namespace {

std::size_t affinity_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  const int n = CPU_COUNT(&set);
  return n > 0 ? static_cast<std::size_t>(n) : 0;
}

std::size_t env_local_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const unsigned long n = std::strtoul(v, &end, 10);
    if (end != v && *end == '\0' && n > 0) return static_cast<std::size_t>(n);
  }
  return 1;
}

}  // namespace

std::size_t default_compile_jobs(std::size_t local_ranks) {
  return compile_jobs_share(affinity_cores(), std::thread::hardware_concurrency(),
                            local_ranks > 0 ? local_ranks : env_local_ranks());
}

}  // namespace autotune
