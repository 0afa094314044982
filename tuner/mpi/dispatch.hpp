// Rank 0 handing one round of configurations to the ranks of a group (GroupBackend::evaluate, cluster.cpp). Each
// live rank keeps ClusterOptions::depth configurations in flight: from its own queue first (what the last prefetch
// named to it); a rank whose queue runs low takes over the back half of the longest queue while there is time to
// compile it there; a free rank steals from the back of the longest queue; a rank with nothing of the round left
// measures ahead what the last prefetch named to it for the next round; the configurations of a rank taken out go
// to the others (a configuration lost with two ranks is not tried a third time). The ranks are reached through a
// RankLink, so that a test drives the rules without MPI.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tuner/core/backend.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/trial.hpp"
#include "tuner/mpi/comm.hpp"

namespace autotune::mpi {

/// What one result adds to the tally of the rank that measured it (RankTally: one configuration more).
struct TaskCount {
  bool ahead = false;        // measured ahead of its round
  double eval_s = 0;         // the rank's backend in evaluate()
  double binary_wait_s = 0;  // of eval_s: its GPU waiting for a compilation
  double between_s = 0;      // the rank without work since its task before
};

/// How a RoundScheduler reaches the ranks of its group: the cluster's messages (cluster.cpp), or a test's fake.
/// Used by one round at a time, from the thread that runs it.
class RankLink {
 public:
  virtual ~RankLink() = default;
  /// Whether the rank measures: it said hello with a working backend and was not taken out.
  virtual bool alive(int rank) const = 0;
  /// Sends a request (kTask, kPrefetch); posted: returns once the transfer started (Comm::post), else once it
  /// completed. false when the rank cannot be reached (the caller takes it out).
  virtual bool send(int rank, int tag, const std::string& payload, bool posted) = 0;
  /// The oldest reply of the rank not taken yet, without waiting; nothing when none is waiting.
  virtual std::optional<Message> take(int rank) = 0;
  /// Waits at most `max` for a reply of one of `ranks` (not at all when zero), then takes out every rank silent
  /// for longer than the rank timeout.
  virtual void wait(const std::vector<int>& ranks, std::chrono::milliseconds max) = 0;
  /// Takes the rank out: alive() is false from now on and it is reported with `why`. Idempotent.
  virtual void take_out(int rank, const std::string& why) = 0;
  /// Adds one measured configuration to the rank's tally.
  virtual void count(int rank, const TaskCount& c) = 0;
};

/// A task sent to a rank and not answered yet.
struct Flight {
  int rank = 0;
  std::string hash;  // of the configuration
};

/// What the dispatch of one group keeps between rounds. The GroupBackend fills `owner` and `named` when it names
/// configurations to ranks (expect, prefetch) and forgets what was measured ahead when it prepares another problem.
/// Not thread-safe: used from the thread that calls the GroupBackend (a round runs with the cluster's lock held).
struct DispatchMemory {
  std::unordered_map<std::string, int> owner;  // config hash -> rank it was prefetched on
  std::map<int, std::vector<Config>> named;    // per rank, what the last expect() or prefetch() named to it
  std::size_t next_owner = 0;                  // turn of the next configuration without a live owner
  std::uint64_t task_id = 0;                   // id of the last task sent
  std::map<std::uint64_t, Flight> flying;      // tasks sent and not answered yet, this round's or measured ahead
  std::unordered_map<std::string, Measurement> early;  // measured ahead of their round, not asked for yet
  std::set<std::string> ahead_done;           // measured ahead for the prepared problem: never measured ahead again
  std::map<int, BackendStats> stats;          // latest cumulative counters per rank
  std::map<int, std::string> observer_notes;  // per rank, once it said why it records no clocks or power

  /// Each configuration to one of `ranks` (not empty), to compile ahead: the rank it went to before while that rank
  /// is among them (a configuration named again, e.g. the next batch named first as upcoming and then as the batch,
  /// or first by expect(), is not compiled on two ranks), else the next rank in turn. Updates `owner`.
  std::map<int, std::vector<Config>> share_out(const std::vector<Config>& configs, const std::vector<int>& ranks);
  /// Forgets what was measured ahead (late results of those tasks are ignored: their ids are gone).
  void forget_ahead();
};

/// One round: measures `configs` on the live ranks of a group. Not thread-safe; lives for one evaluate().
class RoundScheduler {
 public:
  struct Options {
    std::size_t depth = 2;    // configurations in flight per rank (ClusterOptions::depth)
    std::string device_name;  // of the group, for the error when every rank is lost
  };
  /// Takes the round's configurations measured ahead from `memory`; queues the others that are not on their way
  /// already, each to its owner while that rank lives, else to the next live rank in turn. `configs` and `memory`
  /// must outlive the scheduler. EnvironmentError when no rank of `group` is alive.
  RoundScheduler(RankLink& link, std::vector<int> group, DispatchMemory& memory, const std::vector<Config>& configs,
                 Options opt);
  /// Hands out, collects and waits until every configuration has a result; the results in the order of
  /// `configs`. EnvironmentError when every rank of the group was lost (the results so far are in no trial: the
  /// session resumes them); UsageError when a rank's backend refused the work as a usage error.
  std::vector<Measurement> run();

 private:
  void queue_round();
  void name_beyond();
  void hand_out();
  void fill(int r);
  void rebalance(int r);
  std::optional<std::size_t> pick_own(int r);
  std::optional<std::size_t> steal();
  std::optional<Config> pick_ahead(int r);
  void send_task(int r, const Config& c);
  bool collect();
  void on_failure(int r, const nlohmann::json& j);
  void on_result(int r, const nlohmann::json& j);
  void on_lost(int r);
  void finish(std::size_t i, Measurement m);
  std::size_t in_flight(int r) const;
  std::set<std::string> flying_hashes() const;
  std::vector<int> live() const;
  EnvironmentError lost_everything() const;

  RankLink& link_;
  std::vector<int> group_;
  DispatchMemory& memory_;
  const std::vector<Config>& configs_;
  Options opt_;
  std::vector<Measurement> out_;
  std::vector<bool> done_;
  std::vector<int> attempts_;                              // per configuration: ranks lost while measuring it
  std::size_t remaining_ = 0;                              // configurations without a result yet
  std::unordered_map<std::string, std::size_t> index_of_;  // config hash -> index in configs
  std::map<int, std::deque<std::size_t>> queue_;  // likely owner (-1: none, left by a lost rank) -> indices to send
  std::map<int, std::deque<std::pair<std::string, Config>>> beyond_;  // per rank: named to it, not of this round
};

}  // namespace autotune::mpi
