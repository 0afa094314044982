#include "tuner/mpi/dispatch.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tuner/mpi/protocol.hpp"

namespace autotune::mpi {

namespace {

/// A rank's own queue below this many configurations takes work from the longest other queue ahead of time
/// (RoundScheduler::rebalance): at 5-6 ms per configuration that is about 40 ms, two compilations' time.
constexpr std::size_t kRebalanceBelow = 8;

/// A rank measuring ahead of the round keeps this many more configurations in flight than ClusterOptions::depth,
/// so that it still has work queued while the session records the round and proposes the next (tens of ms).
constexpr std::size_t kAheadDeeper = 2;

/// The wait for a reply when a pass over the ranks took none.
constexpr std::chrono::milliseconds kWaitForReply{50};

}  // namespace

std::map<int, std::vector<Config>> DispatchMemory::share_out(const std::vector<Config>& configs,
                                                             const std::vector<int>& ranks) {
  std::map<int, std::vector<Config>> share;
  for (const Config& c : configs) {
    auto it = owner.find(c.hash());
    if (it == owner.end() || std::find(ranks.begin(), ranks.end(), it->second) == ranks.end())
      it = owner.insert_or_assign(c.hash(), ranks[(next_owner++) % ranks.size()]).first;
    share[it->second].push_back(c);
  }
  return share;
}

void DispatchMemory::forget_ahead() {
  flying.clear();
  early.clear();
  ahead_done.clear();
}

RoundScheduler::RoundScheduler(RankLink& link, std::vector<int> group, DispatchMemory& memory,
                               const std::vector<Config>& configs, Options opt)
    : link_(link),
      group_(std::move(group)),
      memory_(memory),
      configs_(configs),
      opt_(std::move(opt)),
      out_(configs.size()),
      done_(configs.size(), false),
      attempts_(configs.size(), 0),
      remaining_(configs.size()) {
  for (std::size_t i = 0; i < configs_.size(); ++i) index_of_.emplace(configs_[i].hash(), i);
  queue_round();
  name_beyond();
}

/// Measured ahead of this round: its result at once; on its way: awaited, not sent again; the rest queued.
void RoundScheduler::queue_round() {
  const std::vector<int> ranks = live();
  if (ranks.empty()) throw lost_everything();
  const std::set<std::string> flying = flying_hashes();
  for (std::size_t i = 0; i < configs_.size(); ++i) {
    const std::string h = configs_[i].hash();
    if (auto e = memory_.early.find(h); e != memory_.early.end()) {
      Measurement m = std::move(e->second);
      memory_.early.erase(e);
      finish(i, std::move(m));
      continue;
    }
    if (flying.count(h)) continue;
    auto it = memory_.owner.find(h);
    const bool owned = it != memory_.owner.end() && std::find(ranks.begin(), ranks.end(), it->second) != ranks.end();
    queue_[owned ? it->second : ranks[(memory_.next_owner++) % ranks.size()]].push_back(i);
  }
}

/// A rank with nothing of this round left to take measures ahead: the next configuration that the session's last
/// prefetch named to it beyond this round (a fixed order names its next round exactly), so that its GPU does not
/// wait for the other ranks' last configurations and for the session's step between the rounds. It compiled those
/// first, which taking another rank's configuration would not have. Held until asked for (DispatchMemory::early).
void RoundScheduler::name_beyond() {
  for (const auto& [r, list] : memory_.named)
    for (const Config& c : list)
      if (std::string h = c.hash(); !index_of_.count(h)) beyond_[r].emplace_back(std::move(h), c);
}

std::vector<Measurement> RoundScheduler::run() {
  while (remaining_ > 0) {
    hand_out();
    const bool progressed = collect();  // a reply was taken: hand out more before waiting
    for (int r : group_)
      if (!link_.alive(r)) on_lost(r);
    if (remaining_ == 0) break;
    if (live().empty()) throw lost_everything();
    // Rank 0's own server answers in this process, often before this thread waits (its notification then finds no
    // waiter): wait only when no reply was taken this pass, and not while one is in an inbox already. Without both,
    // a rank whose replies all came in while work was handed out stood idle for the whole timeout (mpirun -np 1:
    // 12.5 ms per configuration of a replay, 0.1 ms with the fix).
    link_.wait(group_, progressed ? std::chrono::milliseconds(0) : kWaitForReply);
  }
  return std::move(out_);
}

/// Each live rank keeps `depth` configurations in flight.
void RoundScheduler::hand_out() {
  for (int r : group_) {
    if (!link_.alive(r)) continue;
    rebalance(r);
    if (link_.alive(r)) fill(r);
  }
}

/// Rank r's tasks up to `depth` in flight: its own queue, then what a lost rank left, then ahead of the round (up
/// to kAheadDeeper more in flight), then stolen from the longest queue.
void RoundScheduler::fill(int r) {
  std::size_t busy = in_flight(r);
  const std::size_t depth = opt_.depth;
  while (link_.alive(r)) {
    std::optional<std::size_t> i;
    if (busy < depth) i = pick_own(r);
    if (!i && busy < depth && queue_.count(-1)) i = steal();  // what a lost rank left: before measuring ahead
    std::optional<Config> ahead;
    if (!i && queue_[r].empty() && busy < depth + kAheadDeeper) ahead = pick_ahead(r);
    if (!i && !ahead && busy < depth) i = steal();
    if (!i && !ahead) break;
    send_task(r, i ? configs_[*i] : *ahead);
    ++busy;
  }
}

/// A rank whose own queue runs low takes the back half of what the longest other queue holds beyond its own, while
/// there is time to compile it there first (kPrefetch): a configuration taken only once the rank's queue is empty
/// was compiled there from scratch while its GPU waited (2 x H200, reduction at 2^28: 22 such compilations, 0.61 s
/// of idle GPU over both ranks).
void RoundScheduler::rebalance(int r) {
  auto& own = queue_[r];
  if (own.size() >= kRebalanceBelow) return;
  std::deque<std::size_t>* longest = nullptr;
  for (auto& [other, q] : queue_)
    if (other != r && other >= 0 && link_.alive(other) && (!longest || q.size() > longest->size())) longest = &q;
  if (!longest || longest->size() < kRebalanceBelow + own.size()) return;
  const std::size_t move = (longest->size() - own.size()) / 2;
  std::vector<std::size_t> taken(longest->end() - static_cast<std::ptrdiff_t>(move), longest->end());
  longest->erase(longest->end() - static_cast<std::ptrdiff_t>(move), longest->end());
  // A rank's compile pipeline drops what the last two prefetches did not name: this one names again what the
  // session's prefetch gave the rank, then the configurations taken over.
  std::vector<Config>& ahead = memory_.named[r];
  for (std::size_t i : taken) {
    own.push_back(i);
    memory_.owner[configs_[i].hash()] = r;
    ahead.push_back(configs_[i]);
  }
  if (!link_.send(r, kPrefetch, nlohmann::json{{"configs", to_json(ahead)}}.dump(), false))
    link_.take_out(r, "cannot be reached");
}

std::optional<std::size_t> RoundScheduler::pick_own(int r) {
  auto& own = queue_[r];
  if (own.empty()) return std::nullopt;
  const std::size_t i = own.front();
  own.pop_front();
  return i;
}

/// From the back of the longest queue: its owner reaches those last.
std::optional<std::size_t> RoundScheduler::steal() {
  std::deque<std::size_t>* longest = nullptr;
  for (auto& [other, q] : queue_)
    if (!q.empty() && (!longest || q.size() > longest->size())) longest = &q;
  if (!longest) return std::nullopt;
  const std::size_t i = longest->back();
  longest->pop_back();
  return i;
}

/// The next configuration named to rank r beyond this round that is neither measured ahead nor on its way.
std::optional<Config> RoundScheduler::pick_ahead(int r) {
  auto& mine = beyond_[r];
  const std::set<std::string> flying = flying_hashes();
  while (!mine.empty()) {
    auto [h, c] = std::move(mine.front());
    mine.pop_front();
    if (!memory_.early.count(h) && !flying.count(h) && !memory_.ahead_done.count(h)) return c;
  }
  return std::nullopt;
}

void RoundScheduler::send_task(int r, const Config& c) {
  const std::uint64_t id = ++memory_.task_id;
  memory_.flying[id] = {r, c.hash()};
  if (!link_.send(r, kTask, nlohmann::json{{"id", id}, {"configs", to_json({c})}}.dump(), true))
    link_.take_out(r, "cannot be reached");
}

/// Takes every reply waiting, rank by rank; true when there was one.
bool RoundScheduler::collect() {
  bool progressed = false;
  for (int r : group_) {
    while (std::optional<Message> m = link_.take(r)) {
      progressed = true;
      const nlohmann::json j = nlohmann::json::parse(m->payload);
      if (m->tag == kFailure)
        on_failure(r, j);
      else if (m->tag == kResult)
        on_result(r, j);
    }
  }
  return progressed;
}

void RoundScheduler::on_failure(int r, const nlohmann::json& j) {
  if (j.value("usage", false)) throw UsageError(j.value("error", std::string("rank failed")));
  link_.take_out(r, "its backend failed: " + j.value("error", std::string("?")));
}

/// A result of this round, or one measured ahead (kept until its round asks for it); one of a task reassigned
/// meanwhile is ignored.
void RoundScheduler::on_result(int r, const nlohmann::json& j) {
  auto it = memory_.flying.find(j.at("id").get<std::uint64_t>());
  if (it == memory_.flying.end() || it->second.rank != r) return;  // reassigned meanwhile
  const std::string h = it->second.hash;
  memory_.flying.erase(it);
  Measurement got = measurement_from_json(j.at("measurements").at(0));
  auto want = index_of_.find(h);
  link_.count(r, {want == index_of_.end(), j.value("eval_ms", 0.0) / 1e3, j.value("wait_ms", 0.0) / 1e3,
                  j.value("between_ms", 0.0) / 1e3});
  memory_.stats[r] = stats_from_json(j.at("stats"));
  if (const std::string note = j.value("observer_note", ""); !note.empty()) memory_.observer_notes[r] = note;
  if (want == index_of_.end()) {
    memory_.ahead_done.insert(h);
    memory_.early[h] = std::move(got);
    return;
  }
  if (!done_[want->second]) finish(want->second, std::move(got));
}

/// The tasks of a rank taken out go back to the queue of no owner, which any rank takes first; a configuration
/// lost with a second rank is recorded as a runtime fault. What it measured ahead is dropped with it.
void RoundScheduler::on_lost(int r) {
  for (auto it = memory_.flying.begin(); it != memory_.flying.end();) {
    if (it->second.rank != r) {
      ++it;
      continue;
    }
    auto want = index_of_.find(it->second.hash);
    it = memory_.flying.erase(it);
    if (want == index_of_.end() || done_[want->second]) continue;
    const std::size_t i = want->second;
    if (++attempts_[i] >= 2) {
      Measurement m;
      m.status = TrialStatus::runtime_fault;
      m.log = "two ranks were lost while measuring this configuration; not tried again";
      finish(i, std::move(m));
    } else {
      queue_[-1].push_front(i);
    }
  }
}

void RoundScheduler::finish(std::size_t i, Measurement m) {
  out_[i] = std::move(m);
  done_[i] = true;
  --remaining_;
}

std::size_t RoundScheduler::in_flight(int r) const {
  std::size_t busy = 0;
  for (const auto& [id, f] : memory_.flying) busy += f.rank == r ? 1 : 0;
  return busy;
}

std::set<std::string> RoundScheduler::flying_hashes() const {
  std::set<std::string> out;
  for (const auto& [id, f] : memory_.flying) out.insert(f.hash);
  return out;
}

std::vector<int> RoundScheduler::live() const {
  std::vector<int> out;
  for (int r : group_)
    if (link_.alive(r)) out.push_back(r);
  return out;
}

EnvironmentError RoundScheduler::lost_everything() const {
  return EnvironmentError("every rank measuring " + opt_.device_name +
                          " was lost; the trials measured so far are recorded: rerun the same command to resume");
}

}  // namespace autotune::mpi
