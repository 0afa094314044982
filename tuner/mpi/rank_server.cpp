#include "tuner/mpi/rank_server.hpp"

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "tuner/core/error.hpp"
#include "tuner/mpi/protocol.hpp"

namespace autotune::mpi {

RankServer::RankServer(std::unique_ptr<Backend> backend, std::string where, std::string error)
    : backend_(std::move(backend)), where_(std::move(where)), error_(std::move(error)) {
  if (!backend_ && error_.empty()) error_ = "no backend";
}

std::string RankServer::hello() const {
  nlohmann::json j = {{"ok", backend_ != nullptr}, {"where", where_}, {"error", error_}, {"note", note_}};
  if (backend_) {
    j["device"] = to_json(backend_->device());
    j["kind"] = backend_->kind();
    j["compiler"] = backend_->compiler_version();
  }
  return j.dump();
}

std::optional<Message> RankServer::handle(const Message& request) {
  auto reply = [](int tag, const nlohmann::json& j) { return Message{-1, tag, j.dump()}; };
  if (!backend_ || failed_)
    return reply(kFailure, {{"error", error_.empty() ? "backend failed" : error_}, {"usage", false}});
  try {
    const nlohmann::json j = nlohmann::json::parse(request.payload);
    switch (request.tag) {
      case kPrepare: {
        last_task_end_.reset();
        try {
          backend_->prepare(Workload::parse(j.at("workload")), ProblemKey::parse(j.at("problem")),
                            j.at("seed").get<std::uint64_t>());
          return reply(kPrepared, {{"ok", true},
                                   {"copy_gbps", backend_->copy_bandwidth_gbps()},
                                   {"verification", backend_->verification()}});
        } catch (const UsageError& e) {
          return reply(kPrepared, {{"ok", false}, {"usage", true}, {"error", e.what()}});
        }
      }
      case kPrefetch:
        backend_->prefetch(configs_from_json(j.at("configs")));
        return std::nullopt;
      case kExpect:
        backend_->expect(Workload::parse(j.at("workload")), ProblemKey::parse(j.at("problem")),
                         configs_from_json(j.at("configs")));
        return std::nullopt;
      case kTask: {
        using ms_t = std::chrono::duration<double, std::milli>;
        const auto t0 = std::chrono::steady_clock::now();
        const double between_ms = last_task_end_ ? ms_t(t0 - *last_task_end_).count() : 0.0;
        const double waited_before = backend_->stats().compile.wait_ms;
        std::vector<Measurement> ms = backend_->evaluate(configs_from_json(j.at("configs")));
        last_task_end_ = std::chrono::steady_clock::now();
        const double eval_ms = ms_t(*last_task_end_ - t0).count();
        const BackendStats st = backend_->stats();
        nlohmann::json out = nlohmann::json::array();
        for (Measurement& m : ms) {
          if (m.measured_by.empty()) m.measured_by = where_;
          out.push_back(to_json(m));
        }
        return reply(kResult, {{"id", j.at("id")},
                               {"measurements", out},
                               {"eval_ms", eval_ms},
                               {"wait_ms", st.compile.wait_ms - waited_before},
                               {"between_ms", between_ms},
                               {"stats", to_json(st)},
                               {"observer_note", backend_->observer_note()}});
      }
      default:
        return reply(kFailure, {{"error", "unknown request tag " + std::to_string(request.tag)}, {"usage", false}});
    }
  } catch (const UsageError& e) {
    failed_ = true;
    error_ = e.what();
    return reply(kFailure, {{"error", error_}, {"usage", true}});
  } catch (const std::exception& e) {
    failed_ = true;
    error_ = e.what();
    return reply(kFailure, {{"error", error_}, {"usage", false}});
  }
}

std::size_t RankServer::next(const std::deque<Message>& pending) {
  std::optional<std::size_t> first_task;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const Message& m = pending[i];
    if (m.tag == kPrefetch) return i;
    if (m.tag != kTask) break;  // a new problem (or an unknown request): after the tasks before it
    if (!first_task) first_task = i;
    if (!backend_ || failed_) break;
    try {
      bool all = true;
      for (const Config& c : configs_from_json(nlohmann::json::parse(m.payload).at("configs")))
        all = all && backend_->ready(c);
      if (all) return i;
    } catch (const std::exception&) {
      return i;  // handle() answers what is wrong with it
    }
  }
  return first_task.value_or(0);
}

int serve(Comm& comm, const std::function<std::unique_ptr<Backend>()>& make_backend, const std::string& where,
          const ServeOptions& opt) {
  std::unique_ptr<RankServer> server;
  try {
    server = std::make_unique<RankServer>(make_backend(), where);
  } catch (const std::exception& e) {
    server = std::make_unique<RankServer>(nullptr, where, e.what());
  }
  server->set_note(opt.note);
  std::atomic<bool> stop{false};
  std::thread heartbeat([&] {
    while (!stop) {
      comm.send(0, kHeartbeat, "", opt.heartbeat_s);
      for (int i = 0; i < 10 && !stop; ++i)
        std::this_thread::sleep_for(std::chrono::duration<double>(opt.heartbeat_s / 10));
    }
  });
  comm.send(0, kHello, server->hello(), opt.coordinator_timeout_s);
  auto heard = std::chrono::steady_clock::now();
  int code = 0;
  std::deque<Message> pending;  // requests taken off the wire, not handled yet
  for (;;) {
    bool stopped = false;
    while (std::optional<Message> m = comm.poll(0)) {
      heard = std::chrono::steady_clock::now();
      if (m->tag == kStop) {
        // After a lost rank, MPI_Finalize could wait for it forever: rank 0 says so (Comm::skip_finalize).
        try {
          if (!m->payload.empty() && !nlohmann::json::parse(m->payload).value("finalize", true)) comm.skip_finalize();
        } catch (const std::exception&) {
        }
        stopped = true;
        break;
      }
      if (m->tag != kHeartbeat) pending.push_back(std::move(*m));
    }
    if (stopped) break;
    if (pending.empty()) {
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - heard).count() > opt.coordinator_timeout_s) {
        code = 3;  // rank 0 is gone
        comm.skip_finalize();
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    const auto at = pending.begin() + static_cast<std::ptrdiff_t>(server->next(pending));
    const Message request = std::move(*at);
    pending.erase(at);
    if (std::optional<Message> r = server->handle(request)) {
      // A result goes out without waiting for the transfer: the next task is usually here already.
      if (r->tag == kResult)
        comm.post(0, r->tag, r->payload);
      else
        comm.send(0, r->tag, r->payload, opt.coordinator_timeout_s);
      heard = std::chrono::steady_clock::now();
    }
  }
  stop = true;
  heartbeat.join();
  return code;
}

}  // namespace autotune::mpi
