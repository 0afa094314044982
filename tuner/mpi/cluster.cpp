#include "tuner/mpi/cluster.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <map>
#include <set>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <unordered_map>

#include "tuner/core/error.hpp"
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

/// A rank's own queue below this many configurations takes work from the longest other queue ahead of time
/// (GroupBackend::evaluate): at 5-6 ms per configuration that is about 40 ms, two compilations' time.
constexpr std::size_t kRebalanceBelow = 8;

/// A rank measuring ahead of the round keeps this many more configurations in flight than ClusterOptions::depth,
/// so that it still has work queued while the session records the round and proposes the next (tens of ms).
constexpr std::size_t kAheadDeeper = 2;

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
    for (const auto& [r, note] : observer_notes_) distinct.insert(note);
    if (distinct.size() <= 1) return distinct.empty() ? "" : *distinct.begin();
    std::string out;
    for (const auto& [r, note] : observer_notes_)
      out += (out.empty() ? "" : "; ") + ("rank " + std::to_string(r) + ": " + note);
    return out;
  }

  /// Each rank compiles its share of the first configurations while it prepares (the owners stay for prefetch).
  void expect(const Workload& w, const ProblemKey& p, const std::vector<Config>& configs) override {
    forget_ahead();
    const std::vector<int> ranks = live();
    owner_.clear();
    expected_for_ = case_key(w, p);
    if (ranks.empty()) return;
    std::map<int, std::vector<Config>> share = share_out(configs, ranks);
    named_.clear();
    for (int r : ranks) {
      s_->send(r, kExpect,
               nlohmann::json{{"workload", w.key()}, {"problem", p.key()}, {"configs", to_json(share[r])}}.dump());
      named_[r] = std::move(share[r]);
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
    if (expected_for_ != case_key(w, p)) owner_.clear();  // else: what expect() handed out
    expected_for_.clear();
  }

  /// Forgets what was measured ahead for the problem before (its late results are ignored: their ids are gone).
  void forget_ahead() {
    std::lock_guard<std::mutex> lock(s_->mu);
    flying_.clear();
    early_.clear();
    ahead_done_.clear();
  }

  void prefetch(const std::vector<Config>& configs) override {
    const std::vector<int> ranks = live();
    if (ranks.empty()) return;
    named_.clear();
    for (auto& [r, list] : share_out(configs, ranks)) {
      s_->send(r, kPrefetch, nlohmann::json{{"configs", to_json(list)}}.dump());
      named_[r] = std::move(list);
    }
  }

  std::vector<Measurement> evaluate(const std::vector<Config>& configs) override {
    const std::size_t n = configs.size();
    std::vector<Measurement> out(n);
    std::vector<bool> done(n, false);
    std::vector<int> attempts(n, 0);
    std::size_t remaining = n;
    std::unordered_map<std::string, std::size_t> index_of;  // config hash -> index in configs
    for (std::size_t i = 0; i < n; ++i) index_of.emplace(configs[i].hash(), i);
    std::map<int, std::deque<std::size_t>> queue;  // likely owner -> indices still to send
    {
      const std::vector<int> ranks = live();
      if (ranks.empty()) throw lost_everything();
      // Measured ahead of this round (or on its way): not sent again.
      std::set<std::string> flying;
      for (const auto& [id, f] : flying_) flying.insert(f.hash);
      for (std::size_t i = 0; i < n; ++i) {
        const std::string h = configs[i].hash();
        if (auto e = early_.find(h); e != early_.end()) {
          out[i] = std::move(e->second);
          early_.erase(e);
          done[i] = true;
          --remaining;
          continue;
        }
        if (flying.count(h)) continue;
        auto it = owner_.find(h);
        const bool owned = it != owner_.end() && std::find(ranks.begin(), ranks.end(), it->second) != ranks.end();
        queue[owned ? it->second : ranks[(next_owner_++) % ranks.size()]].push_back(i);
      }
    }

    // A rank whose own queue runs low takes the back half of what the longest other queue holds beyond its own,
    // while there is time to compile it there first (kPrefetch): a configuration taken only once the rank's queue
    // is empty was compiled there from scratch while its GPU waited (2 x H200, reduction at 2^28: 22 such
    // compilations, 0.61 s of idle GPU over both ranks). Called with the lock held; sends with it released.
    auto rebalance = [&](int r, std::unique_lock<std::mutex>& held) {
      auto& own = queue[r];
      if (own.size() >= kRebalanceBelow) return;
      std::deque<std::size_t>* longest = nullptr;
      for (auto& [other, q] : queue)
        if (other != r && other >= 0 && s_->alive[static_cast<std::size_t>(other)] &&
            (!longest || q.size() > longest->size()))
          longest = &q;
      if (!longest || longest->size() < kRebalanceBelow + own.size()) return;
      const std::size_t move = (longest->size() - own.size()) / 2;
      std::vector<std::size_t> taken(longest->end() - static_cast<std::ptrdiff_t>(move), longest->end());
      longest->erase(longest->end() - static_cast<std::ptrdiff_t>(move), longest->end());
      // A rank's compile pipeline drops what the last two prefetches did not name: this one names again what the
      // session's prefetch gave the rank, then the configurations taken over.
      std::vector<Config>& ahead = named_[r];
      for (std::size_t i : taken) {
        own.push_back(i);
        owner_[configs[i].hash()] = r;
        ahead.push_back(configs[i]);
      }
      const std::string payload = nlohmann::json{{"configs", to_json(ahead)}}.dump();
      held.unlock();
      const bool sent = s_->send(r, kPrefetch, payload);
      held.lock();
      if (!sent) s_->take_out(r, "cannot be reached");
    };
    auto pick_own = [&](int r) -> std::optional<std::size_t> {
      auto& own = queue[r];
      if (own.empty()) return std::nullopt;
      const std::size_t i = own.front();
      own.pop_front();
      return i;
    };
    // Steal from the back of the longest queue: its owner reaches those last.
    auto steal = [&]() -> std::optional<std::size_t> {
      std::deque<std::size_t>* longest = nullptr;
      for (auto& [other, q] : queue)
        if (!q.empty() && (!longest || q.size() > longest->size())) longest = &q;
      if (!longest) return std::nullopt;
      const std::size_t i = longest->back();
      longest->pop_back();
      return i;
    };
    // A rank with nothing of this round left to take measures ahead: the next configuration that the session's
    // last prefetch named to it beyond this round (a fixed order names its next round exactly), so that its GPU
    // does not wait for the other ranks' last configurations and for the session's step between the rounds. It
    // compiled those first, which taking another rank's configuration would not have. Held until asked for.
    std::map<int, std::deque<std::pair<std::string, Config>>> beyond;  // per rank: named, not of this round
    for (const auto& [r, list] : named_)
      for (const Config& c : list)
        if (std::string h = c.hash(); !index_of.count(h)) beyond[r].emplace_back(std::move(h), c);
    auto pick_ahead = [&](int r) -> std::optional<Config> {
      auto& mine = beyond[r];
      std::set<std::string> flying;
      for (const auto& [id, f] : flying_) flying.insert(f.hash);
      while (!mine.empty()) {
        auto [h, c] = std::move(mine.front());
        mine.pop_front();
        if (!early_.count(h) && !flying.count(h) && !ahead_done_.count(h)) return c;
      }
      return std::nullopt;
    };
    auto requeue_tasks_of = [&](int r) {
      for (auto it = flying_.begin(); it != flying_.end();) {
        if (it->second.rank != r) {
          ++it;
          continue;
        }
        auto want = index_of.find(it->second.hash);
        it = flying_.erase(it);
        if (want == index_of.end() || done[want->second]) continue;  // measured ahead: dropped with the rank
        const std::size_t i = want->second;
        if (++attempts[i] >= 2) {
          out[i].status = TrialStatus::runtime_fault;
          out[i].log = "two ranks were lost while measuring this configuration; not tried again";
          done[i] = true;
          --remaining;
        } else {
          queue[-1].push_front(i);  // no owner: any rank takes it first
        }
      }
    };
    auto send_task = [&](int r, const Config& c, std::unique_lock<std::mutex>& held) {
      const std::uint64_t id = ++task_id_;
      flying_[id] = {r, c.hash()};
      const std::string payload = nlohmann::json{{"id", id}, {"configs", to_json({c})}}.dump();
      held.unlock();
      const bool sent = s_->send(r, kTask, payload, true);
      held.lock();
      if (!sent) s_->take_out(r, "cannot be reached");
    };

    std::unique_lock<std::mutex> lock(s_->mu);
    while (remaining > 0) {
      bool progressed = false;  // a reply was taken this round: hand out more before waiting
      // Hand out work: each live rank keeps `depth` configurations in flight.
      for (int r : group_) {
        if (!s_->alive[static_cast<std::size_t>(r)]) continue;
        rebalance(r, lock);
        if (!s_->alive[static_cast<std::size_t>(r)]) continue;
        std::size_t busy = 0;
        for (const auto& [id, f] : flying_) busy += f.rank == r ? 1 : 0;
        const std::size_t depth = s_->opt.depth;
        while (s_->alive[static_cast<std::size_t>(r)]) {
          std::optional<std::size_t> i;
          if (busy < depth) i = pick_own(r);
          if (!i && busy < depth && queue.count(-1)) i = steal();  // what a lost rank left: before measuring ahead
          std::optional<Config> ahead;
          if (!i && queue[r].empty() && busy < depth + kAheadDeeper) ahead = pick_ahead(r);
          if (!i && !ahead && busy < depth) i = steal();
          if (!i && !ahead) break;
          send_task(r, i ? configs[*i] : *ahead, lock);
          ++busy;
        }
      }
      // Collect replies.
      for (int r : group_) {
        auto& in = s_->inbox[static_cast<std::size_t>(r)];
        while (!in.empty()) {
          Message m = std::move(in.front());
          in.pop_front();
          progressed = true;
          const nlohmann::json j = nlohmann::json::parse(m.payload);
          if (m.tag == kFailure) {
            if (j.value("usage", false)) throw UsageError(j.value("error", std::string("rank failed")));
            s_->take_out(r, "its backend failed: " + j.value("error", std::string("?")));
            continue;
          }
          if (m.tag != kResult) continue;
          auto it = flying_.find(j.at("id").get<std::uint64_t>());
          if (it == flying_.end() || it->second.rank != r) continue;  // reassigned meanwhile
          const std::string h = it->second.hash;
          flying_.erase(it);
          Measurement got = measurement_from_json(j.at("measurements").at(0));
          RankTally& t = s_->tally[static_cast<std::size_t>(r)];
          ++t.configs;
          t.eval_s += j.value("eval_ms", 0.0) / 1e3;
          t.binary_wait_s += j.value("wait_ms", 0.0) / 1e3;
          t.between_s += j.value("between_ms", 0.0) / 1e3;
          stats_[r] = stats_from_json(j.at("stats"));
          if (const std::string note = j.value("observer_note", ""); !note.empty()) observer_notes_[r] = note;
          auto want = index_of.find(h);
          if (want == index_of.end()) {
            ++t.ahead;
            ahead_done_.insert(h);
            early_[h] = std::move(got);
            continue;
          }
          if (done[want->second]) continue;
          out[want->second] = std::move(got);
          done[want->second] = true;
          --remaining;
        }
      }
      for (int r : group_)
        if (!s_->alive[static_cast<std::size_t>(r)]) requeue_tasks_of(r);
      if (remaining == 0) break;
      if (live_locked().empty()) throw lost_everything();
      // Rank 0's own server answers in this process, often before this thread waits (its notification then finds
      // no waiter): wait only when no reply was taken this round, and not while one is in an inbox already.
      // Without both, a rank whose replies all came in while work was handed out stood idle for the whole timeout
      // (mpirun -np 1: 12.5 ms per configuration of a replay, 0.1 ms with the fix).
      if (!progressed) {
        s_->cv.wait_for(lock, std::chrono::milliseconds(50), [&] {
          for (int r : group_)
            if (!s_->inbox[static_cast<std::size_t>(r)].empty()) return true;
          return false;
        });
      }
      s_->check_silence();
    }
    return out;
  }

  std::size_t parallel_devices() const override { return std::max<std::size_t>(1, live().size()); }

  BackendStats stats() const override {
    std::lock_guard<std::mutex> lock(s_->mu);
    BackendStats sum;
    for (const auto& [r, st] : stats_) add(sum, st);
    return sum;
  }

 private:
  std::vector<int> live_locked() const {
    std::vector<int> out;
    for (int r : group_)
      if (s_->alive[static_cast<std::size_t>(r)]) out.push_back(r);
    return out;
  }
  std::vector<int> live() const {
    std::lock_guard<std::mutex> lock(s_->mu);
    return live_locked();
  }
  /// Each configuration to one of the live ranks, to compile ahead: the rank it went to before while that rank
  /// lives (a configuration named again, e.g. the next batch named first as upcoming and then as the batch, or
  /// first by expect(), is not compiled on two ranks), else the next rank in turn.
  std::map<int, std::vector<Config>> share_out(const std::vector<Config>& configs, const std::vector<int>& ranks) {
    std::map<int, std::vector<Config>> share;
    for (const Config& c : configs) {
      auto it = owner_.find(c.hash());
      if (it == owner_.end() || std::find(ranks.begin(), ranks.end(), it->second) == ranks.end())
        it = owner_.insert_or_assign(c.hash(), ranks[(next_owner_++) % ranks.size()]).first;
      share[it->second].push_back(c);
    }
    return share;
  }
  EnvironmentError lost_everything() const {
    return EnvironmentError("every rank measuring " + device_.name +
                            " was lost; the trials measured so far are recorded: rerun the same command to resume");
  }

  std::shared_ptr<Cluster::State> s_;
  std::vector<int> group_;
  DeviceInfo device_;
  std::string kind_, compiler_, verification_;
  double copy_gbps_ = 0;
  std::string expected_for_;                    // case_key() of the last expect() not yet prepared
  std::unordered_map<std::string, int> owner_;  // config hash -> rank it was prefetched on
  std::map<int, std::vector<Config>> named_;    // per rank, what the last expect() or prefetch() named to it
  std::size_t next_owner_ = 0;
  std::uint64_t task_id_ = 0;
  struct Flight {
    int rank;
    std::string hash;  // of the configuration
  };
  std::map<std::uint64_t, Flight> flying_;  // tasks sent and not answered yet, this round's or measured ahead
  std::unordered_map<std::string, Measurement> early_;  // measured ahead of their round, not asked for yet
  std::set<std::string> ahead_done_;   // measured ahead for the prepared problem: never measured ahead again
  std::map<int, BackendStats> stats_;  // latest cumulative counters per rank
  std::map<int, std::string> observer_notes_;  // per rank, once it said why it records no clocks or power
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
