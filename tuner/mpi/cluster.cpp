#include "tuner/mpi/cluster.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "tuner/core/error.hpp"
#include "tuner/mpi/dispatch.hpp"
#include "tuner/mpi/protocol.hpp"

namespace autotune::mpi {

using Clock = std::chrono::steady_clock;

struct Cluster::State {
  Comm& comm;
  ClusterOptions opt;
  std::unique_ptr<RankServer> local;

  mutable std::mutex mu;
  std::condition_variable cv;        // a reply arrived or a rank was taken out
  std::vector<RankInfo> info;
  std::vector<bool> said_hello;
  std::vector<bool> alive;
  std::vector<Clock::time_point> last_heard;
  std::vector<std::deque<Message>> inbox;  // replies per rank, not yet taken
  std::vector<RankTally> tally;

  std::deque<Message> local_requests;  // rank 0's own server
  std::condition_variable local_cv;
  std::atomic<bool> stopping{false};
  std::thread pump, local_thread;

  State(Comm& c, std::unique_ptr<RankServer> l, const ClusterOptions& o) : comm(c), opt(o), local(std::move(l)) {}

  /// Sends a request to a rank (rank 0: its own server's queue); false when the rank cannot be reached. Posted
  /// (tasks): not waiting for the transfer to complete (Comm::post); a rank that is gone falls silent.
  bool send(int rank, int tag, const std::string& payload, bool posted = false) {
    if (rank == 0) {
      std::lock_guard<std::mutex> lock(mu);
      local_requests.push_back({0, tag, payload});
      local_cv.notify_one();
      return true;
    }
    return posted ? comm.post(rank, tag, payload) : comm.send(rank, tag, payload, opt.rank_timeout_s);
  }

  bool lost_any() const {
    std::lock_guard<std::mutex> lock(mu);
    for (const RankTally& t : tally)
      if (t.lost) return true;
    return false;
  }

  /// Takes rank r out (caller holds mu). Its replies still in flight are ignored from now on.
  void take_out(int r, const std::string& why) {
    if (!alive[static_cast<std::size_t>(r)]) return;
    alive[static_cast<std::size_t>(r)] = false;
    info[static_cast<std::size_t>(r)].error = why;
    tally[static_cast<std::size_t>(r)].lost = true;
    tally[static_cast<std::size_t>(r)].lost_why = why;
    std::cerr << "\nmpi: rank " << r << " (" << info[static_cast<std::size_t>(r)].where << ") taken out: " << why
              << "\n";
    cv.notify_all();
  }

  /// Ranks silent for longer than the timeout are taken out (caller holds mu). Rank 0's own server is never
  /// silent: it runs in this process.
  void check_silence() {
    const auto now = Clock::now();
    for (std::size_t r = 1; r < alive.size(); ++r)
      if (alive[r] && std::chrono::duration<double>(now - last_heard[r]).count() > opt.rank_timeout_s)
        take_out(static_cast<int>(r), "no message for " + std::to_string(static_cast<int>(opt.rank_timeout_s)) +
                                          " s (killed, hung or unreachable)");
  }

  /// Tells every other rank to stop, then ends the pump and the local server. Idempotent.
  void shutdown() {
    if (stopping.exchange(true)) return;
    const std::string stop = nlohmann::json{{"finalize", !lost_any()}}.dump();
    if (lost_any()) comm.skip_finalize();
    for (std::size_t r = 1; r < info.size(); ++r) {
      bool reachable;
      {
        std::lock_guard<std::mutex> lock(mu);
        reachable = alive[r] || !said_hello[r] || info[r].usable == false;
        if (tally[r].lost) reachable = false;  // a lost rank may never take the message
      }
      if (reachable) comm.send(static_cast<int>(r), kStop, stop, 1.0);
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      local_cv.notify_all();
    }
    if (pump.joinable()) pump.join();
    if (local_thread.joinable()) local_thread.join();
  }

  /// Fills rank r's RankInfo from its hello (caller holds mu, or no other thread runs yet).
  void record_hello(std::size_t r, const std::string& payload) {
    const auto j = nlohmann::json::parse(payload);
    RankInfo& ri = info[r];
    ri.where = j.value("where", "");
    ri.note = j.value("note", "");
    ri.usable = j.value("ok", false);
    ri.error = j.value("error", "");
    if (ri.usable) {
      ri.device = device_from_json(j.at("device"));
      ri.kind = j.value("kind", "");
      ri.compiler = j.value("compiler", "");
    }
    said_hello[r] = true;
    alive[r] = ri.usable;
  }

  void run_pump() {
    auto beat = Clock::now();
    while (!stopping) {
      std::optional<Message> m = comm.poll();
      const auto now = Clock::now();
      if (m && m->source > 0 && static_cast<std::size_t>(m->source) < info.size()) {
        std::lock_guard<std::mutex> lock(mu);
        const auto r = static_cast<std::size_t>(m->source);
        last_heard[r] = now;
        if (m->tag == kHello) {
          record_hello(r, m->payload);
        } else if (m->tag != kHeartbeat) {
          inbox[r].push_back(std::move(*m));
        }
        cv.notify_all();
        continue;
      }
      if (std::chrono::duration<double>(now - beat).count() >= opt.heartbeat_s) {
        beat = now;
        std::vector<int> to;
        {
          std::lock_guard<std::mutex> lock(mu);
          for (std::size_t r = 1; r < alive.size(); ++r)
            if (alive[r] || !said_hello[r]) to.push_back(static_cast<int>(r));
        }
        for (int r : to) comm.send(r, kHeartbeat, "", opt.heartbeat_s);
      }
      if (!m) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  void run_local() {
    for (;;) {
      Message req;
      {
        std::unique_lock<std::mutex> lock(mu);
        local_cv.wait(lock, [&] { return stopping || !local_requests.empty(); });
        if (stopping) return;
        const auto at = local_requests.begin() + static_cast<std::ptrdiff_t>(local->next(local_requests));
        req = std::move(*at);
        local_requests.erase(at);
      }
      std::optional<Message> reply = local->handle(req);
      if (!reply) continue;
      std::lock_guard<std::mutex> lock(mu);
      last_heard[0] = Clock::now();
      inbox[0].push_back(std::move(*reply));
      cv.notify_all();
    }
  }
};

namespace {

std::string model_key(const DeviceInfo& d) { return d.normalised_name() + "/" + std::to_string(d.cc); }

void add(BackendStats& a, const BackendStats& b) {
  a.compile.compiled += b.compile.compiled;
  a.compile.taken += b.compile.taken;
  a.compile.cache_hits += b.compile.cache_hits;
  a.compile.failed += b.compile.failed;
  a.compile.unused += b.compile.unused;
  a.compile.cancelled += b.compile.cancelled;
  a.compile.thread_ms += b.compile.thread_ms;
  a.compile.wait_ms += b.compile.wait_ms;
  a.compile.cache_ms += b.compile.cache_ms;
  a.compile.compiler_ms += b.compile.compiler_ms;
  a.compile.cpu_ms += b.compile.cpu_ms;
  a.compile.voluntary_switches += b.compile.voluntary_switches;
  a.compile.involuntary_switches += b.compile.involuntary_switches;
  a.compile.minor_faults += b.compile.minor_faults;
  a.compile.active_threads += b.compile.active_threads;  // threads at work over all ranks, like compile_jobs
  a.compile.shrinks += b.compile.shrinks;
  a.compile_jobs += b.compile_jobs;
  a.verify_ms += b.verify_ms;
  a.benchmark_ms += b.benchmark_ms;
  a.verified += b.verified;
  a.timed += b.timed;
  if (a.setup_ms.empty()) a.setup_ms = b.setup_ms;
}

/// The ranks of a Cluster as a RankLink for one round. Holds the cluster's lock from construction to destruction
/// (the round's bookkeeping is guarded by it, like the inboxes it reads), released while a message is sent (rank 0's
/// own queue takes the lock) and while waiting for a reply.
class ClusterLink : public RankLink {
 public:
  explicit ClusterLink(Cluster::State& s) : s_(s), lock_(s.mu) {}

  bool alive(int rank) const override { return s_.alive[at(rank)]; }
  bool send(int rank, int tag, const std::string& payload, bool posted) override {
    lock_.unlock();
    const bool sent = s_.send(rank, tag, payload, posted);
    lock_.lock();
    return sent;
  }
  std::optional<Message> take(int rank) override {
    auto& in = s_.inbox[at(rank)];
    if (in.empty()) return std::nullopt;
    Message m = std::move(in.front());
    in.pop_front();
    return m;
  }
  void wait(const std::vector<int>& ranks, std::chrono::milliseconds max) override {
    if (max.count() > 0)
      s_.cv.wait_for(lock_, max, [&] {
        return std::any_of(ranks.begin(), ranks.end(), [&](int r) { return !s_.inbox[at(r)].empty(); });
      });
    s_.check_silence();
  }
  void take_out(int rank, const std::string& why) override { s_.take_out(rank, why); }
  void count(int rank, const TaskCount& c) override {
    RankTally& t = s_.tally[at(rank)];
    ++t.configs;
    if (c.ahead) ++t.ahead;
    t.eval_s += c.eval_s;
    t.binary_wait_s += c.binary_wait_s;
    t.between_s += c.between_s;
  }

 private:
  static std::size_t at(int rank) { return static_cast<std::size_t>(rank); }
  Cluster::State& s_;
  std::unique_lock<std::mutex> lock_;
};

/// The Backend of one group of ranks with the same device model.
class GroupBackend : public Backend {
 public:
  GroupBackend(std::shared_ptr<Cluster::State> s, std::vector<int> group) : s_(std::move(s)), group_(std::move(group)) {
    std::lock_guard<std::mutex> lock(s_->mu);
    const RankInfo& first = s_->info[static_cast<std::size_t>(group_.front())];
    device_ = first.device;
    kind_ = first.kind + "+mpi";
    compiler_ = first.compiler;
  }

  DeviceInfo device() const override { return device_; }
  std::string kind() const override { return kind_; }
  std::string compiler_version() const override { return compiler_; }
  double copy_bandwidth_gbps() override { return copy_gbps_; }
  std::string verification() const override { return verification_; }
  /// The ranks' notes, each once ("rank 1: ..." where ranks differ); "" when every rank observed.
  std::string observer_note() const override {
    std::set<std::string> distinct;
    for (const auto& [r, note] : memory_.observer_notes) distinct.insert(note);
    if (distinct.size() <= 1) return distinct.empty() ? "" : *distinct.begin();
    std::string out;
    for (const auto& [r, note] : memory_.observer_notes)
      out += (out.empty() ? "" : "; ") + ("rank " + std::to_string(r) + ": " + note);
    return out;
  }

  /// Each rank compiles its share of the first configurations while it prepares (the owners stay for prefetch).
  void expect(const Workload& w, const ProblemKey& p, const std::vector<Config>& configs) override {
    forget_ahead();
    const std::vector<int> ranks = live();
    memory_.owner.clear();
    expected_for_ = case_key(w, p);
    if (ranks.empty()) return;
    std::map<int, std::vector<Config>> share = memory_.share_out(configs, ranks);
    memory_.named.clear();
    for (int r : ranks) {
      s_->send(r, kExpect,
               nlohmann::json{{"workload", w.key()}, {"problem", p.key()}, {"configs", to_json(share[r])}}.dump());
      memory_.named[r] = std::move(share[r]);
    }
  }

  void prepare(const Workload& w, const ProblemKey& p, std::uint64_t seed) override {
    forget_ahead();
    const std::string payload = nlohmann::json{{"workload", w.key()}, {"problem", p.key()}, {"seed", seed}}.dump();
    std::vector<int> asked;
    const Clock::time_point t0 = Clock::now();
    for (int r : live()) {
      if (s_->send(r, kPrepare, payload)) asked.push_back(r);
      else {
        std::lock_guard<std::mutex> lock(s_->mu);
        s_->take_out(r, "cannot be reached");
      }
    }
    std::map<int, nlohmann::json> answers;
    std::unique_lock<std::mutex> lock(s_->mu);
    for (;;) {
      for (int r : asked) {
        auto& in = s_->inbox[static_cast<std::size_t>(r)];
        while (!in.empty()) {
          Message m = std::move(in.front());
          in.pop_front();
          if (m.tag != kPrepared && m.tag != kFailure) continue;
          answers[r] = nlohmann::json::parse(m.payload);
          s_->tally[static_cast<std::size_t>(r)].prepare_s += std::chrono::duration<double>(Clock::now() - t0).count();
        }
      }
      bool waiting = false;
      for (int r : asked) waiting = waiting || (!answers.count(r) && s_->alive[static_cast<std::size_t>(r)]);
      if (!waiting) break;
      s_->cv.wait_for(lock, std::chrono::milliseconds(100));
      s_->check_silence();
    }
    std::string usage_error, env_error;
    bool have = false;
    for (int r : asked) {
      auto it = answers.find(r);
      if (it == answers.end()) continue;  // taken out meanwhile
      const nlohmann::json& a = it->second;
      if (a.value("ok", false)) {
        if (!have) {
          copy_gbps_ = a.value("copy_gbps", 0.0);
          verification_ = a.value("verification", "");
          have = true;
        }
        continue;
      }
      const std::string why = a.value("error", std::string("prepare failed"));
      (a.value("usage", false) ? usage_error : env_error) = why;
      s_->take_out(r, "prepare failed: " + why);
    }
    if (!have) {
      if (!usage_error.empty()) throw UsageError(usage_error);
      throw EnvironmentError("no rank measuring " + device_.name + " could prepare " + p.key() +
                             (env_error.empty() ? "" : ": " + env_error));
    }
    if (expected_for_ != case_key(w, p)) memory_.owner.clear();  // else: what expect() handed out
    expected_for_.clear();
  }

  /// Forgets what was measured ahead for the problem before (its late results are ignored: their ids are gone).
  void forget_ahead() {
    std::lock_guard<std::mutex> lock(s_->mu);
    memory_.forget_ahead();
  }

  void prefetch(const std::vector<Config>& configs) override {
    const std::vector<int> ranks = live();
    if (ranks.empty()) return;
    memory_.named.clear();
    for (auto& [r, list] : memory_.share_out(configs, ranks)) {
      s_->send(r, kPrefetch, nlohmann::json{{"configs", to_json(list)}}.dump());
      memory_.named[r] = std::move(list);
    }
  }

  std::vector<Measurement> evaluate(const std::vector<Config>& configs) override {
    ClusterLink link(*s_);
    RoundScheduler round(link, group_, memory_, configs, {s_->opt.depth, device_.name});
    return round.run();
  }

  std::size_t parallel_devices() const override { return std::max<std::size_t>(1, live().size()); }

  BackendStats stats() const override {
    std::lock_guard<std::mutex> lock(s_->mu);
    BackendStats sum;
    for (const auto& [r, st] : memory_.stats) add(sum, st);
    return sum;
  }

 private:
  std::vector<int> live() const {
    std::lock_guard<std::mutex> lock(s_->mu);
    std::vector<int> out;
    for (int r : group_)
      if (s_->alive[static_cast<std::size_t>(r)]) out.push_back(r);
    return out;
  }

  std::shared_ptr<Cluster::State> s_;
  std::vector<int> group_;
  DeviceInfo device_;
  std::string kind_, compiler_, verification_;
  double copy_gbps_ = 0;
  std::string expected_for_;  // case_key() of the last expect() not yet prepared
  DispatchMemory memory_;     // owners, what was named to each rank, tasks in flight, measured ahead, stats
};

}  // namespace

Cluster::Cluster(Comm& comm, std::unique_ptr<RankServer> local, const ClusterOptions& opt)
    : s_(std::make_shared<State>(comm, std::move(local), opt)) {
  const auto n = static_cast<std::size_t>(comm.size());
  State& s = *s_;
  s.info.resize(n);
  s.said_hello.assign(n, false);
  s.alive.assign(n, false);
  s.last_heard.assign(n, Clock::now());
  s.inbox.resize(n);
  s.tally.resize(n);
  for (std::size_t r = 0; r < n; ++r) s.info[r].rank = s.tally[r].rank = static_cast<int>(r);
  if (s.local) {
    s.record_hello(0, s.local->hello());
    s.local_thread = std::thread([this] { s_->run_local(); });
  } else {
    s.said_hello[0] = true;
    s.info[0].error = "coordinates only";
  }
  s.pump = std::thread([this] { s_->run_pump(); });

  std::unique_lock<std::mutex> lock(s.mu);
  const auto deadline = Clock::now() + std::chrono::duration<double>(opt.rank_timeout_s);
  s.cv.wait_until(lock, deadline, [&] {
    return std::all_of(s.said_hello.begin(), s.said_hello.end(), [](bool b) { return b; });
  });
  for (std::size_t r = 0; r < n; ++r)
    if (!s.said_hello[r]) s.info[r].error = "did not say hello within the rank timeout";
  const bool any = std::any_of(s.alive.begin(), s.alive.end(), [](bool b) { return b; });
  if (!any) {
    std::string why;
    for (const RankInfo& ri : s.info) why += "\n  rank " + std::to_string(ri.rank) + ": " + ri.error;
    lock.unlock();
    s.shutdown();
    throw EnvironmentError("no rank of the MPI job can measure:" + why);
  }
}

Cluster::~Cluster() { s_->shutdown(); }

std::vector<RankInfo> Cluster::ranks() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->info;
}

std::vector<std::vector<int>> Cluster::groups() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  std::vector<std::vector<int>> out;
  std::vector<std::string> keys;
  for (std::size_t r = 0; r < s_->info.size(); ++r) {
    if (!s_->alive[r]) continue;
    const std::string k = model_key(s_->info[r].device);
    auto it = std::find(keys.begin(), keys.end(), k);
    if (it == keys.end()) {
      keys.push_back(k);
      out.push_back({static_cast<int>(r)});
    } else {
      out[static_cast<std::size_t>(it - keys.begin())].push_back(static_cast<int>(r));
    }
  }
  return out;
}

std::unique_ptr<Backend> Cluster::backend(const std::vector<int>& group) {
  if (group.empty()) throw UsageError("Cluster::backend: empty group");
  return std::make_unique<GroupBackend>(s_, group);
}

bool Cluster::lost_any() const { return s_->lost_any(); }

std::vector<RankTally> Cluster::tallies() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->tally;
}

}  // namespace autotune::mpi
