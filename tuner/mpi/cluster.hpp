// Rank 0 of an MPI tuning job: knows every rank (its device, where it runs, whether it is alive), groups the
// ranks by device model, and gives each group a Backend whose evaluate() hands configurations out one at a
// time to whichever rank of the group is free (RoundScheduler, dispatch.hpp), so fast and slow GPUs both stay
// busy (a rank with nothing of the round left measures ahead what the last prefetch named to it for the next
// round). A rank that falls silent (no heartbeat for rank_timeout_s: killed, hung, its node gone) or whose backend
// fails is taken out; its unfinished configurations go to the other ranks.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tuner/core/backend.hpp"
#include "tuner/mpi/comm.hpp"
#include "tuner/mpi/rank_server.hpp"

namespace autotune::mpi {

struct ClusterOptions {
  double rank_timeout_s = 60;  // a rank silent this long is taken out
  double heartbeat_s = 0.5;    // rank 0's "still here" to the ranks
  std::size_t depth = 2;       // configurations in flight per rank (one measured, one waiting)
};

struct RankInfo {
  int rank = 0;
  std::string where;   // "host=node1 rank=2 gpu=0"
  std::string note;    // what else the rank said about itself ("compile threads <= 16: its share of 32 cores")
  bool usable = false; // said hello with a working backend
  std::string error;   // why not, or why it was taken out later
  DeviceInfo device;
  std::string kind, compiler;
};

/// What each rank did, for the session's summary.
struct RankTally {
  int rank = 0;
  std::size_t configs = 0;  // configurations it measured
  std::size_t ahead = 0;    // of those, measured ahead of their round (before the session asked for them)
  double eval_s = 0;        // time its backend spent in evaluate()
  double prepare_s = 0;     // from asking it to prepare (inputs, reference, uploads) to its answer, summed
  double binary_wait_s = 0;  // of eval_s: its GPU waiting for a compilation (BackendStats::compile.wait_ms)
  double between_s = 0;      // from the end of one task to the start of the next of the same problem, summed:
                             // the rank without work (rounds' ends, messages in flight)
  bool lost = false;
  std::string lost_why;
};

class Cluster {
 public:
  /// Waits for every rank's hello (at most rank_timeout_s). `local` measures on rank 0 itself (null: rank 0
  /// only coordinates). EnvironmentError when no rank can measure.
  Cluster(Comm& comm, std::unique_ptr<RankServer> local, const ClusterOptions& opt);
  /// Tells every rank to stop and joins the threads.
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  std::vector<RankInfo> ranks() const;
  /// Usable ranks grouped by device model (normalised name + compute capability), the group of the lowest
  /// rank first; ranks within a group ascending.
  std::vector<std::vector<int>> groups() const;
  /// A Backend over one group (results are attributed to the group's lowest rank's device; every
  /// Measurement says in measured_by which rank took it). Valid while the Cluster lives.
  std::unique_ptr<Backend> backend(const std::vector<int>& group);
  std::vector<RankTally> tallies() const;
  /// Whether a rank was taken out after it had said hello (the job must then end without MPI_Finalize: see
  /// Comm::skip_finalize; the stop message tells the other ranks so).
  bool lost_any() const;

  struct State;

 private:
  std::shared_ptr<State> s_;
};

}  // namespace autotune::mpi
