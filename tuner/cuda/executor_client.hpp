// Internal to tuner/cuda: the CUDA backend's end of the conversation with its GPU executor, which runs in a
// GPU worker process (restarted after a sticky fault, a hang or a crash) or in-process. Typed requests in,
// typed replies or a failure out.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "tuner/core/keys.hpp"
#include "tuner/cuda/executor.hpp"
#include "tuner/cuda/messages.hpp"
#include "tuner/cuda/worker_process.hpp"

namespace autotune::cuda::detail {

/// How a request ended.
struct CallStatus {
  enum class Kind { ok, cuda_error, timeout, died };
  Kind kind = Kind::ok;
  int code = 0;         // CUresult of a cuda_error
  bool sticky = false;  // cuda_error: the context was lost (the worker exits)
  std::string message;
  bool ok() const { return kind == Kind::ok; }
};

/// A request's outcome: its status and, when ok, the decoded reply.
template <typename Body>
struct Outcome : CallStatus {
  Body body;
};

/// Not thread-safe.
class ExecutorClient {
 public:
  /// Starts the executor (a worker process when isolate) and initialises GPU `ordinal` there. region is the
  /// backend's shared region, passed to every worker. Throws EnvironmentError.
  ExecutorClient(bool isolate, int ordinal, SharedRegion& region);
  /// Asks a worker to quit and reaps it.
  ~ExecutorClient();
  ExecutorClient(const ExecutorClient&) = delete;
  ExecutorClient& operator=(const ExecutorClient&) = delete;

  const DeviceInfo& device() const { return info_; }
  /// The number under which the executor sees the shared region (for UploadRequest / LoadRunRequest::fd).
  int region_fd() const;
  /// Called after a replacement worker has been initialised, to restore what the previous one held (tool
  /// kernels, inputs, expected values). May call call() itself.
  void on_restart(std::function<void()> f) { on_restart_ = std::move(f); }

  /// Sends q (starting a new worker first if the previous one ended) and waits at most timeout_s (worker
  /// only; <= 0: no limit). A usage_error or environment_error reply is thrown as UsageError/EnvironmentError.
  template <typename Request>
  Outcome<typename Request::Reply> call(const Request& q, double timeout_s = 0) {
    Outcome<typename Request::Reply> out;
    std::string payload;
    static_cast<CallStatus&>(out) = exchange(encode(q), timeout_s, payload);
    if (out.ok()) {
      Reader r(payload, 1);
      get(r, out.body);
    }
    return out;
  }

  /// call() that must succeed: a failure becomes EnvironmentError "<what>: <message>".
  template <typename Request>
  typename Request::Reply call_ok(const Request& q, const char* what, double timeout_s = 0) {
    auto out = call(q, timeout_s);
    if (!out.ok()) throw EnvironmentError(std::string(what) + ": " + out.message);
    return std::move(out.body);
  }

 private:
  CallStatus exchange(const std::string& request, double timeout_s, std::string& payload);
  CallStatus raw_exchange(const std::string& request, double timeout_s, std::string& payload);
  void start_worker(bool restart);
  std::string stop_worker(bool kill_now);
  DeviceInfo init_executor();

  bool isolate_;
  int ordinal_;
  SharedRegion& region_;
  std::unique_ptr<Executor> local_;  // !isolate_
  WorkerProcess worker_;             // isolate_; pid < 0 when none runs
  DeviceInfo info_;
  std::function<void()> on_restart_;
};

}  // namespace autotune::cuda::detail
