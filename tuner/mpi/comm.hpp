// The only door to MPI: start-up, identity of this rank, and point-to-point messages of bytes. Everything
// else in tuner/mpi/ is plain C++ over this class.
#pragma once
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace autotune::mpi {

/// True when an MPI launcher started this process (Open MPI's mpirun/mpiexec, MPICH/Hydra, Slurm's srun with
/// PMI or PMIx): it sets the variables checked here. A plain start never initialises MPI.
bool launched_by_mpi();

struct Message {
  int source = -1;
  int tag = 0;
  std::string payload;
};

/// MPI_COMM_WORLD with errors returned instead of aborting (a lost peer must not end the job). Thread-safe:
/// MPI is initialised with MPI_THREAD_MULTIPLE. One per process.
class Comm {
 public:
  /// MPI_Init_thread; EnvironmentError when MPI cannot start or lacks thread support.
  Comm(int* argc, char*** argv);
  /// MPI_Finalize, unless skip_finalize() was called.
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Rank among the ranks of this node (MPI_COMM_TYPE_SHARED): the default GPU ordinal.
  int local_rank() const { return local_rank_; }
  /// Ranks of the job on this rank's node (shared-memory domain); 1 when MPI cannot tell.
  int local_size() const { return local_size_; }
  const std::string& host() const { return host_; }

  /// Sends payload; waits at most timeout_s for the transfer to complete. false when it failed or did not
  /// complete in time (the peer is gone or stuck); the buffer is then kept until MPI lets go of it.
  bool send(int dest, int tag, const std::string& payload, double timeout_s = 10);
  /// Starts sending payload and returns at once: the transfer completes in the background (poll() and post()
  /// test the sends in flight and let go of finished ones). false when MPI refused the send. For the messages of
  /// the measuring loop (tasks, results): waiting for each to complete cost 0.25-0.35 ms per message. A peer that
  /// is gone is noticed by its silence (heartbeats), not here.
  bool post(int dest, int tag, const std::string& payload);
  /// The next waiting message (from `source`, or anyone when -1) without blocking.
  std::optional<Message> poll(int source = -1);
  /// After a peer was lost, MPI_Finalize may wait for it forever (its fence includes every process): the
  /// process then ends without it, which a launcher told to tolerate lost ranks (mpirun --enable-recovery)
  /// accepts.
  void skip_finalize() { finalize_ = false; }
  /// Ends every rank of the job (MPI_Abort).
  [[noreturn]] void abort(int code);

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool finalize_ = true;
  std::string host_;
  std::mutex mu_;
  struct Pending;
  std::deque<std::unique_ptr<Pending>> stuck_;   // sends that did not complete in time
  std::deque<std::unique_ptr<Pending>> posted_;  // post()ed sends not yet seen complete
  void reap_posted();                            // tests posted_, drops the complete ones
  /// A copy of payload with its MPI_Isend started; nullptr when MPI refused the send.
  std::unique_ptr<Pending> start_send(int dest, int tag, const std::string& payload);
};

}  // namespace autotune::mpi
