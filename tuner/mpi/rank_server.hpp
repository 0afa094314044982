// One measuring rank: answers rank 0's requests (prepare, prefetch, task) with a local Backend (the CUDA
// backend on this rank's GPU, or a replay). Used by every rank >= 1 through serve(), and by rank 0 for its own
// GPU on a thread of the Cluster.
#pragma once
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tuner/core/backend.hpp"
#include "tuner/mpi/comm.hpp"

namespace autotune::mpi {

class RankServer {
 public:
  /// `backend` may be null when it could not be made: `error` then says why, and the hello says so.
  RankServer(std::unique_ptr<Backend> backend, std::string where, std::string error = {});
  /// A line the hello carries for rank 0's listing of the ranks (RankInfo::note).
  void set_note(std::string note) { note_ = std::move(note); }
  /// The hello message of this rank (JSON).
  std::string hello() const;
  /// Answers one request; nothing for requests without a reply (prefetch). Never throws: a failure of the
  /// backend becomes a kPrepared {ok: false} or a kFailure reply, after which failed() is true.
  std::optional<Message> handle(const Message& request);
  bool failed() const { return failed_; }
  /// Which of the requests waiting (in the order they came) to handle next: prefetches at once; then a task whose
  /// configurations the backend has compiled already (Backend::ready), else the first task, as a backend measures
  /// whichever binary of a batch is ready first; no request is taken past one that changes the problem (kPrepare,
  /// kExpect), which waits for the tasks before it. pending must not be empty.
  std::size_t next(const std::deque<Message>& pending);
  const std::string& where() const { return where_; }

 private:
  std::unique_ptr<Backend> backend_;
  std::string where_, error_, note_;
  bool failed_ = false;
  // End of the last task of the prepared problem (none: no task since the last prepare): the result of the next
  // task says how long the rank was without work in between.
  std::optional<std::chrono::steady_clock::time_point> last_task_end_;
};

struct ServeOptions {
  double heartbeat_s = 0.5;        // "still here" to rank 0 while measuring
  double coordinator_timeout_s = 600;  // rank 0 silent this long: give up (it sends heartbeats too)
  std::string note;                    // RankServer::set_note
};

/// Ranks >= 1: says hello, then serves rank 0 until it says stop, falls silent, or the backend fails.
/// make_backend runs once (its exception becomes the hello's error). Returns the process exit code.
int serve(Comm& comm, const std::function<std::unique_ptr<Backend>()>& make_backend, const std::string& where,
          const ServeOptions& opt = {});

}  // namespace autotune::mpi
