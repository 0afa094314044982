// The online search of one (kernel, workload, problem) inside an application (docs/lookup.md "Online tuning"):
// which configuration each of the application's launches runs, which configurations to prepare ahead, when the
// search ends and what it settled on. No CUDA, no clock, no database: the launch API (tuner/runtime/online.*) tells
// it what the GPU's work came to and the time, and records what it settled on (tuner/online/record.*).
//
// The application's outputs always come from a verified configuration: the reference (the configuration the
// launch API would use without online tuning), or a candidate whose outputs, computed once on a shadow copy of the
// outputs in the same launch as the reference's, agreed with the reference's under the spec's verification rule.
// A candidate is timed only as the application's own launch (the same place in its stream as every other timed
// launch), `Budget::samples` times, and judged by its median.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "search/strategy.hpp"
#include "tuner/core/space.hpp"
#include "tuner/core/trial.hpp"

namespace autotune::online {

struct Budget {
  /// Launches that run a candidate (its verification on the shadow, its timed samples); 0 = no search at all.
  std::size_t launches = 200;
  /// Seconds from the first launch of the problem after which the search settles; 0 = no time limit.
  double seconds = 60;
  /// Timed launches of a candidate before it is judged (the median of them).
  std::size_t samples = 3;
  /// Configurations the strategy proposes at once (its batch), prepared (compiled, loaded) ahead of the launches.
  std::size_t ahead = 4;
  /// Verifications in flight at once, at most.
  std::size_t verifying = 2;
};

/// Where a configuration of the search is.
enum class Stage {
  preparing,  // proposed; being compiled and loaded off the launch path
  ready,      // prepared; waits for a launch to verify it
  verifying,  // run on the shadow outputs; the verdict is on its way
  sampling,   // verified; runs as the application's launch until it has its samples
  done,       // verified and timed: judged by its median
  failed,     // compile, plan, launch or verification failed: never run again
};
const char* to_string(Stage s);

struct Entry {
  std::size_t index = 0;  // in the space
  Stage stage = Stage::preparing;
  std::vector<double> samples_ms;        // timed launches, in the order they ended
  std::size_t issued = 0;                // timed launches asked for (their samples may not have come back yet)
  TrialStatus status = TrialStatus::ok;  // failed: why (compile_error, launch_error, wrong_result, ...)
  std::string message;                   // failed: the error or the verification's message
  bool reference = false;                // the configuration the search started from
  double median_ms() const;              // of samples_ms; +infinity without samples
  /// Whether it is judged by its samples: a candidate that has all of them (done), the reference with any.
  bool timed() const { return reference ? !samples_ms.empty() : stage == Stage::done; }
};

/// What one launch of the application runs.
struct Step {
  std::size_t run = 0;                // configuration whose outputs the application gets
  bool sample = false;                // time `run` in this launch (sampled() gets the time)
  std::optional<std::size_t> verify;  // also run this one on the shadow outputs and compare them with `run`'s
  bool searching = false;             // the launch is one of the search's (it counts against Budget::launches)
};

class Search {
 public:
  /// reference: space index of the configuration the application uses without online tuning (verified by
  /// definition). strategy: proposes the candidates (warm-started by the caller); the space must outlive it.
  Search(const ParameterSpace& space, std::size_t reference, std::unique_ptr<search::Strategy> strategy, Budget b);

  /// New configurations to prepare now: the strategy's next batch (at most Budget::ahead) once every earlier
  /// proposal has its result; each must be answered by prepared() or failed(). Empty while results are awaited,
  /// when the strategy has nothing more, or once the search settled.
  std::vector<std::size_t> to_prepare();
  void prepared(std::size_t index);
  /// Any stage: the configuration failed (status: why, message: the error). It is never run again. The
  /// reference cannot fail here (its failure is the application's error).
  void failed(std::size_t index, TrialStatus status, const std::string& message);

  /// The step of the application's next launch; now_s: seconds on a steady clock (the first call starts the
  /// time budget); can_verify: whether a verification can run in this launch (else prepared candidates wait).
  /// Settles the search when the budget is spent or nothing is left to try.
  Step next(double now_s, bool can_verify = true);
  /// The verdict of a verification asked for by next(): ok, or the verification's message (wrong_result).
  void verified(std::size_t index, bool ok, const std::string& message);
  /// The time of a timed launch asked for by next().
  void sampled(std::size_t index, double ms);

  bool settled() const { return settled_; }
  /// Why it settled: "budget of N launches spent", "time budget of S s spent", "the strategy has nothing more to
  /// propose"; "" while searching.
  const std::string& settle_reason() const { return reason_; }
  /// The best judged configuration (the reference until a candidate beats it).
  std::size_t best() const;
  std::size_t reference() const { return reference_; }
  /// Every configuration of the search, the reference first, then in the order they were proposed.
  const std::vector<Entry>& entries() const { return entries_; }
  const Entry* entry(std::size_t index) const;
  std::size_t launches_used() const { return used_; }

 private:
  Entry* find(std::size_t index);
  /// Whether e has its result: done, failed, or the reference with its samples.
  bool judged(const Entry& e) const;
  Entry& at(std::size_t index);
  /// The strategy gets the result of every proposal of index that it still waits for.
  void tell(std::size_t index);
  void settle(std::string reason);
  bool work_left() const;

  const ParameterSpace& space_;
  std::size_t reference_;
  std::unique_ptr<search::Strategy> strategy_;
  Budget budget_;
  std::vector<Entry> entries_;
  std::vector<std::size_t> owed_;  // proposals of entries_[i] the strategy waits for (parallel to entries_)
  bool exhausted_ = false;
  bool settled_ = false;
  std::string reason_;
  std::optional<double> start_s_;
  std::size_t used_ = 0;
};

}  // namespace autotune::online
