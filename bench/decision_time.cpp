// decision_time: the CPU time of every strategy decision (propose + observe) over simulated runs on a recorded
// space, measured with the thread's CPU clock, so that time the thread spends waiting for a core on a shared
// machine does not count (compare-strategies' decision table uses the wall clock). Figures quoted in
// docs/strategies.md (issue 18: no decision slower than 5 ms at 2,000 evaluations).
//
//   build/bench/decision_time DB KERNEL WORKLOAD PROBLEM EVALUATIONS SEEDS BATCH STRATEGY[,STRATEGY...]
//   build/bench/decision_time tests/data/recorded_h100.db reduction float32/sum n=268435456 2000 5 1
//       bayesian_optimization,genetic_algorithm   (one command line)
//
// Prints per strategy: decisions, mean, 99th percentile, max (CPU time), and the evaluation count at which the
// slowest decision came.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "search/strategy.hpp"
#include "db/database.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/compare/compare.hpp"

namespace {

using namespace autotune;

double thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

/// Wraps a strategy; a decision is one propose() and the observe() that follows it.
class Timed final : public search::Strategy {
 public:
  explicit Timed(std::unique_ptr<search::Strategy> s) : s_(std::move(s)) {}
  std::string name() const override { return s_->name(); }
  std::vector<std::size_t> propose(std::size_t n) override {
    const double t0 = thread_cpu_ns();
    std::vector<std::size_t> out = s_->propose(n);
    pending_ = thread_cpu_ns() - t0;
    return out;
  }
  void observe(const std::vector<search::Observation>& results) override {
    const double t0 = thread_cpu_ns();
    s_->observe(results);
    ns.push_back(pending_ + thread_cpu_ns() - t0);
    evaluated += results.size();
    at.push_back(evaluated);
  }
  std::vector<double> ns;
  std::vector<std::size_t> at;  // observations so far after each decision
  std::size_t evaluated = 0;

 private:
  std::unique_ptr<search::Strategy> s_;
  double pending_ = 0;
};

std::string micros(double ns) {
  std::ostringstream s;
  s.precision(3);
  if (ns >= 1e6) s << ns / 1e6 << " ms";
  else s << ns / 1e3 << " us";
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr, "usage: %s DB KERNEL WORKLOAD PROBLEM EVALUATIONS SEEDS BATCH STRATEGY[,STRATEGY...]\n",
                 argv[0]);
    return 2;
  }
  auto db = db::Database::open(argv[1], db::Database::Mode::read_only);
  const TuningSpec spec = specs::builtin_spec(argv[2]);
  const compare::Recording rec =
      compare::load_recording(*db, spec, Workload::parse(argv[3]), ProblemKey::parse(argv[4]));
  const std::size_t evaluations = std::strtoull(argv[5], nullptr, 10);
  const std::size_t seeds = std::strtoull(argv[6], nullptr, 10);
  const std::size_t batch = std::strtoull(argv[7], nullptr, 10);
  std::vector<std::string> names;
  std::stringstream list(argv[8]);
  for (std::string n; std::getline(list, n, ',');) names.push_back(n);
  std::printf("%zu configurations, %zu evaluations, %zu seeds, batch %zu; CPU time per decision\n", rec.space->size(),
              evaluations, seeds, batch);
  std::printf("%-24s %9s %10s %10s %10s %8s\n", "strategy", "decisions", "mean", "p99", "max", "max at");
  for (const std::string& name : names) {
    std::vector<double> all;
    double worst = 0;
    std::size_t worst_at = 0;
    for (std::size_t seed = 1; seed <= seeds; ++seed) {
      Timed t(search::make_strategy(name, *rec.space, seed, search::limited_options(name, {})));
      compare::simulate_run(*rec.space, rec.recorded, t, evaluations, batch);
      for (std::size_t k = 0; k < t.ns.size(); ++k) {
        all.push_back(t.ns[k]);
        if (t.ns[k] > worst) {
          worst = t.ns[k];
          worst_at = t.at[k];
        }
      }
    }
    double sum = 0;
    for (double v : all) sum += v;
    std::sort(all.begin(), all.end());
    const double p99 = all.empty() ? 0 : all[std::min(all.size() - 1, all.size() * 99 / 100)];
    std::printf("%-24s %9zu %10s %10s %10s %8zu\n", name.c_str(), all.size(),
                micros(all.empty() ? 0 : sum / static_cast<double>(all.size())).c_str(), micros(p99).c_str(),
                micros(worst).c_str(), worst_at);
  }
  return 0;
}
