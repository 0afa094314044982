#include "tuner/cuda/executor_client.hpp"

#include <cmath>

#include "tuner/cuda/gpu_worker.hpp"

namespace autotune::cuda::detail {

namespace {
constexpr double kInitTimeoutS = 300;  // driver initialisation of a fresh worker
}  // namespace

ExecutorClient::ExecutorClient(bool isolate, int ordinal, SharedRegion& region)
    : isolate_(isolate), ordinal_(ordinal), region_(region) {
  if (!isolate_) {
    local_ = std::make_unique<Executor>();
    info_ = init_executor();
    return;
  }
  try {
    start_worker(false);
  } catch (...) {
    stop_worker(false);
    throw;
  }
}

ExecutorClient::~ExecutorClient() {
  if (worker_.pid <= 0) return;
  send_frame(worker_.fd, encode(QuitRequest{}));
  stop_worker(false);
}

int ExecutorClient::region_fd() const { return isolate_ ? kWorkerRegionFd : region_.fd(); }

DeviceInfo ExecutorClient::init_executor() {
  InitRequest q;
  q.ordinal = ordinal_;
  std::string payload;
  const CallStatus st = raw_exchange(encode(q), kInitTimeoutS, payload);
  if (!st.ok())
    throw EnvironmentError("the GPU worker could not initialise device " + std::to_string(ordinal_) + ": " +
                           st.message);
  Reader r(payload, 1);
  InitRequest::Reply reply;
  get(r, reply);
  return reply.device;
}

void ExecutorClient::start_worker(bool restart) {
  worker_ = spawn_worker(region_.fd());
  info_ = init_executor();
  if (restart && on_restart_) on_restart_();
}

std::string ExecutorClient::stop_worker(bool kill_now) { return stop_helper(worker_, kill_now); }

CallStatus ExecutorClient::exchange(const std::string& request, double timeout_s, std::string& payload) {
  if (isolate_ && worker_.pid <= 0) start_worker(true);
  return raw_exchange(request, timeout_s, payload);
}

CallStatus ExecutorClient::raw_exchange(const std::string& request, double timeout_s, std::string& payload) {
  CallStatus st;
  if (local_) {
    payload = local_->handle(request);
  } else {
    if (!send_frame(worker_.fd, request)) {
      st.kind = CallStatus::Kind::died;
      st.message = "the GPU worker process ended unexpectedly (" + stop_worker(false) + ")";
      return st;
    }
    switch (recv_frame(worker_.fd, payload, timeout_s)) {
      case RecvResult::ok: break;
      case RecvResult::timeout:
        st.kind = CallStatus::Kind::timeout;
        stop_worker(true);
        st.message = "no answer from the GPU within " + std::to_string(static_cast<int>(std::ceil(timeout_s))) +
                     " s; the worker process was killed";
        return st;
      case RecvResult::closed:
      case RecvResult::stopped:  // not asked for: no stop predicate
        st.kind = CallStatus::Kind::died;
        st.message = "the GPU worker process ended unexpectedly (" + stop_worker(false) + ")";
        return st;
    }
  }
  Reader r(payload);
  const auto status = static_cast<ReplyStatus>(r.u8());
  if (status == ReplyStatus::ok) return st;
  ErrorReply e;
  get(r, e);
  switch (status) {
    case ReplyStatus::cuda_error:
      st.kind = CallStatus::Kind::cuda_error;
      st.code = e.code;
      st.sticky = e.sticky;
      st.message = e.message;
      if (st.sticky && !local_) stop_worker(false);  // it exits after a fault
      return st;
    case ReplyStatus::usage_error: throw UsageError(e.message);
    case ReplyStatus::environment_error: throw EnvironmentError(e.message);
    default: throw EnvironmentError("malformed reply from the GPU executor");
  }
}

}  // namespace autotune::cuda::detail
