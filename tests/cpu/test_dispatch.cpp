// The rules by which rank 0 hands a round of configurations to the ranks of a group (tuner/mpi/dispatch.hpp),
// driven by fake ranks with no MPI: each measures the tasks sent to it in order, one every `cost` ticks of a
// clock that advances each time the scheduler waits; a rank can fail or fall silent after some results.
#ifdef AUTOTUNE_WITH_MPI
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "tuner/mpi/dispatch.hpp"
#include "tuner/mpi/protocol.hpp"

using namespace autotune;
using namespace autotune::mpi;

namespace {

Config cfg(int x) { return Config({{"X", Value(x)}}); }

std::vector<Config> cfgs(int from, int to) {
  std::vector<Config> out;
  for (int x = from; x < to; ++x) out.push_back(cfg(x));
  return out;
}

int x_of(const Config& c) { return static_cast<int>(c.at("X")); }

/// What a fake rank measures for X: a time that names the configuration.
double time_of(int x) { return 1000.0 + x; }

struct FakeRank {
  int cost = 1;           // ticks per configuration
  int fail_after = -1;    // results before it reports its backend failed (-1: never)
  int silent_after = -1;  // results before it falls silent (-1: never)
  bool usage = false;     // its failure is a usage error
  // State.
  bool alive = true, silent = false, failed = false;
  int answered = 0, progress = 0;
  long last_heard = 0;
  std::deque<std::pair<std::uint64_t, Config>> tasks;  // received, not answered
  std::vector<int> received;                           // X of every task, in the order sent
  std::vector<int> measured;                           // X of every result it sent
  std::vector<std::vector<int>> prefetches;            // X of each prefetch's configurations
  int counted = 0, ahead = 0;                          // what the scheduler added to its tally
};

class FakeLink : public RankLink {
 public:
  std::map<int, FakeRank> ranks;
  long now = 0;
  long timeout = 5;  // ticks without a message before a silent rank is taken out
  std::vector<std::string> taken_out;

  bool alive(int rank) const override { return ranks.at(rank).alive; }
  bool send(int rank, int tag, const std::string& payload, bool) override {
    FakeRank& f = ranks.at(rank);
    if (!f.alive) return false;
    const auto j = nlohmann::json::parse(payload);
    std::vector<int> xs;
    for (const Config& c : configs_from_json(j.at("configs"))) xs.push_back(x_of(c));
    if (tag == kPrefetch) f.prefetches.push_back(xs);
    if (tag == kTask) {
      REQUIRE(xs.size() == 1);
      f.tasks.emplace_back(j.at("id").get<std::uint64_t>(), cfg(xs[0]));
      f.received.push_back(xs[0]);
    }
    return true;
  }
  std::optional<Message> take(int rank) override {
    auto& in = inbox_[rank];
    if (in.empty()) return std::nullopt;
    Message m = in.front();
    in.pop_front();
    return m;
  }
  void wait(const std::vector<int>&, std::chrono::milliseconds) override {
    if (++now > 100000) throw std::runtime_error("the round does not end");
    for (auto& [r, f] : ranks) {
      if (!f.alive) continue;
      if (!f.silent && !f.failed) {
        f.last_heard = now;  // a heartbeat at least
        answer(r, f);
      }
      if (now - f.last_heard > timeout) take_out(r, "no message");
    }
  }
  void take_out(int rank, const std::string& why) override {
    FakeRank& f = ranks.at(rank);
    if (!f.alive) return;
    f.alive = false;
    taken_out.push_back("rank " + std::to_string(rank) + ": " + why);
  }
  void count(int rank, const TaskCount& c) override {
    FakeRank& f = ranks.at(rank);
    ++f.counted;
    f.ahead += c.ahead ? 1 : 0;
  }
  int total_ahead() const {
    int n = 0;
    for (const auto& [r, f] : ranks) n += f.ahead;
    return n;
  }
  /// How many tasks for X were sent, over every rank.
  long tasks_of(int x) const {
    long n = 0;
    for (const auto& [r, f] : ranks) n += std::count(f.received.begin(), f.received.end(), x);
    return n;
  }
  /// X -> how many results were sent for it, over every rank.
  std::map<int, int> results() const {
    std::map<int, int> out;
    for (const auto& [r, f] : ranks)
      for (int x : f.measured) ++out[x];
    return out;
  }

 private:
  std::map<int, std::deque<Message>> inbox_;

  void answer(int r, FakeRank& f) {
    if (f.tasks.empty() || ++f.progress < f.cost) return;
    f.progress = 0;
    if (f.answered == f.fail_after) {
      f.failed = true;
      inbox_[r].push_back({r, kFailure, nlohmann::json{{"error", "device lost"}, {"usage", f.usage}}.dump()});
      return;
    }
    if (f.answered == f.silent_after) {
      f.silent = true;
      return;
    }
    const auto [id, c] = f.tasks.front();
    f.tasks.pop_front();
    Measurement m;
    m.median_ns = time_of(x_of(c));
    m.measured_by = "rank=" + std::to_string(r);
    const nlohmann::json result = {
        {"id", id},        {"measurements", {to_json(m)}},     {"eval_ms", f.cost},  {"wait_ms", 0},
        {"between_ms", 0}, {"stats", to_json(BackendStats{})}, {"observer_note", ""}};
    inbox_[r].push_back({r, kResult, result.dump()});
    f.measured.push_back(x_of(c));
    ++f.answered;
  }
};

FakeLink fake(const std::map<int, int>& cost) {
  FakeLink link;
  for (const auto& [r, c] : cost) link.ranks[r].cost = c;
  return link;
}

std::vector<int> group_of(const FakeLink& link) {
  std::vector<int> g;
  for (const auto& [r, f] : link.ranks) g.push_back(r);
  return g;
}

std::vector<Measurement> run_round(FakeLink& link, DispatchMemory& memory, const std::vector<Config>& configs) {
  RoundScheduler round(link, group_of(link), memory, configs, {2, "Test GPU"});
  return round.run();
}

/// Names every configuration to one rank, as a prefetch that gave them all to it would.
void name_all_to(DispatchMemory& memory, int rank, const std::vector<Config>& configs) {
  for (const Config& c : configs) memory.owner[c.hash()] = rank;
  memory.named[rank] = configs;
}

void check_in_order(const std::vector<Measurement>& out, const std::vector<Config>& configs) {
  REQUIRE(out.size() == configs.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    INFO("configuration " << i);
    CHECK(out[i].ok());
    CHECK(out[i].median_ns == time_of(x_of(configs[i])));
  }
}

/// Every configuration X in [0, n) got exactly one result, over every rank.
void check_measured_once(const FakeLink& link, int n) {
  const auto results = link.results();
  CHECK(results.size() == static_cast<std::size_t>(n));
  for (const auto& [x, count] : results) {
    INFO("X=" << x);
    CHECK(count == 1);
  }
}

/// A round of n configurations shared out over the ranks, of which one is taken out with `why`: the results still
/// come back in order, each configuration measured once.
void check_round_with_a_loss(FakeLink& link, int n, const std::string& why) {
  DispatchMemory memory;
  const std::vector<Config> configs = cfgs(0, n);
  memory.named = memory.share_out(configs, group_of(link));
  check_in_order(run_round(link, memory, configs), configs);
  CHECK(link.taken_out == std::vector<std::string>{why});
  check_measured_once(link, n);
}

std::vector<int> first(const std::vector<int>& v, std::size_t n) {
  return std::vector<int>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size())));
}

}  // namespace

TEST_CASE("dispatch: every configuration is measured once and the results come back in the input order",
          "[cpu][mpi][dispatch]") {
  FakeLink link = fake({{0, 1}, {1, 2}, {2, 3}});
  DispatchMemory memory;
  const std::vector<Config> configs = cfgs(0, 30);
  memory.named = memory.share_out(configs, {0, 1, 2});
  const auto out = run_round(link, memory, configs);
  check_in_order(out, configs);
  check_measured_once(link, 30);
  // The fastest rank measured most, the slowest least; every rank measured some.
  CHECK(link.ranks[0].measured.size() > link.ranks[1].measured.size());
  CHECK(link.ranks[1].measured.size() > link.ranks[2].measured.size());
  CHECK_FALSE(link.ranks[2].measured.empty());
  CHECK(link.taken_out.empty());
  CHECK(memory.flying.empty());
}

TEST_CASE("dispatch: a free rank takes its own configurations first, then steals from the back of the longest queue",
          "[cpu][mpi][dispatch]") {
  FakeLink link = fake({{1, 1}, {2, 1}});
  DispatchMemory memory;
  const std::vector<Config> configs = cfgs(0, 6);  // fewer than a rebalance moves
  name_all_to(memory, 1, configs);
  const auto out = run_round(link, memory, configs);
  check_in_order(out, configs);
  CHECK(first(link.ranks[1].received, 2) == std::vector<int>{0, 1});  // depth 2: its own queue's front
  CHECK(first(link.ranks[2].received, 2) == std::vector<int>{5, 4});  // nothing of its own: the back of rank 1's
  CHECK(link.ranks[2].prefetches.empty());
  check_measured_once(link, 6);
}

TEST_CASE(
    "dispatch: a rank whose queue runs low takes over the back half of the longest queue and names it in a "
    "prefetch",
    "[cpu][mpi][dispatch]") {
  FakeLink link = fake({{1, 1}, {2, 1}});
  DispatchMemory memory;
  const std::vector<Config> configs = cfgs(0, 20);
  name_all_to(memory, 1, configs);
  const auto out = run_round(link, memory, configs);
  check_in_order(out, configs);
  // Rank 1 keeps 18 after its first two tasks; rank 2 (none of its own) takes the back 9, named ahead of its tasks.
  REQUIRE_FALSE(link.ranks[2].prefetches.empty());
  CHECK(link.ranks[2].prefetches.front() == std::vector<int>{11, 12, 13, 14, 15, 16, 17, 18, 19});
  CHECK(first(link.ranks[2].received, 2) == std::vector<int>{11, 12});
  CHECK(memory.owner.at(cfg(19).hash()) == 2);
  CHECK(memory.owner.at(cfg(10).hash()) == 1);
  check_measured_once(link, 20);
}

TEST_CASE(
    "dispatch: a rank with nothing of the round left measures the next round's configurations named to it, "
    "and the next round takes them without measuring again",
    "[cpu][mpi][dispatch]") {
  FakeLink link = fake({{1, 1}, {2, 1}});
  DispatchMemory memory;
  const std::vector<Config> round1 = cfgs(0, 4), round2 = cfgs(100, 104);
  name_all_to(memory, 1, round1);
  name_all_to(memory, 2, round2);
  check_in_order(run_round(link, memory, round1), round1);
  // Rank 2 had none of round 1: it measured ahead (up to depth + 2 in flight) what was named to it.
  CHECK(first(link.ranks[2].received, 4) == std::vector<int>{100, 101, 102, 103});
  CHECK(link.total_ahead() > 0);
  CHECK(memory.early.size() + memory.flying.size() == 4);  // each measured ahead or on its way

  const std::size_t sent = link.ranks[1].received.size() + link.ranks[2].received.size();
  check_in_order(run_round(link, memory, round2), round2);
  CHECK(link.ranks[1].received.size() + link.ranks[2].received.size() == sent);  // no task sent again
  CHECK(memory.early.empty());
  CHECK(memory.flying.empty());
  const auto results = link.results();
  CHECK(results.size() == 8);
  for (const auto& [x, n] : results) CHECK(n == 1);

  // A later round while the last prefetch still names them: what was measured ahead is not measured ahead again.
  REQUIRE_FALSE(memory.ahead_done.empty());
  check_in_order(run_round(link, memory, cfgs(6, 8)), cfgs(6, 8));
  for (int x = 100; x < 104; ++x)
    if (memory.ahead_done.count(cfg(x).hash())) {
      INFO("X=" << x);
      CHECK(link.tasks_of(x) == 1);
    }
}

TEST_CASE("dispatch: a rank whose backend fails is taken out and its configurations go to the others",
          "[cpu][mpi][dispatch]") {
  FakeLink link = fake({{0, 1}, {1, 1}, {2, 1}});
  link.ranks[1].fail_after = 2;
  check_round_with_a_loss(link, 30, "rank 1: its backend failed: device lost");
  CHECK(link.ranks[1].measured.size() == 2);
}

TEST_CASE("dispatch: a rank that falls silent is taken out and its configurations go to the others",
          "[cpu][mpi][dispatch]") {
  FakeLink link = fake({{1, 1}, {2, 2}, {3, 1}});
  link.ranks[2].silent_after = 3;
  check_round_with_a_loss(link, 40, "rank 2: no message");
  CHECK(link.ranks[2].measured.size() == 3);
  // The tasks rank 2 held when it fell silent were sent again, to the others.
  for (const auto& [id, task] : link.ranks[2].tasks) {
    const int x = x_of(task);
    const auto& a = link.ranks[1].measured;
    const auto& b = link.ranks[3].measured;
    CHECK((std::count(a.begin(), a.end(), x) + std::count(b.begin(), b.end(), x)) == 1);
  }
}

TEST_CASE("dispatch: a configuration lost with two ranks is a runtime fault, not tried a third time",
          "[cpu][mpi][dispatch]") {
  FakeLink link = fake({{1, 1}, {2, 1}, {3, 1}});
  link.ranks[1].silent_after = 0;
  link.ranks[2].silent_after = 0;
  DispatchMemory memory;
  const std::vector<Config> configs = {cfg(7)};
  name_all_to(memory, 1, configs);
  const auto out = run_round(link, memory, configs);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == TrialStatus::runtime_fault);
  CHECK_THAT(out[0].log, Catch::Contains("two ranks were lost"));
  CHECK(link.ranks[1].received == std::vector<int>{7});
  CHECK(link.ranks[2].received == std::vector<int>{7});  // first in turn to take what rank 1 left
  CHECK(link.ranks[3].received.empty());
}

TEST_CASE("dispatch: every rank lost ends the round with an environment error, a usage failure with a usage error",
          "[cpu][mpi][dispatch]") {
  const std::vector<Config> configs = cfgs(0, 4);
  {
    FakeLink link = fake({{1, 1}, {2, 1}});
    link.ranks[1].silent_after = 1;
    link.ranks[2].fail_after = 0;
    DispatchMemory memory;
    CHECK_THROWS_AS(run_round(link, memory, configs), EnvironmentError);
  }
  {
    FakeLink link = fake({{1, 1}});
    link.ranks[1].fail_after = 1;
    link.ranks[1].usage = true;
    DispatchMemory memory;
    CHECK_THROWS_AS(run_round(link, memory, configs), UsageError);
  }
  {
    FakeLink link = fake({{1, 1}});
    link.ranks[1].alive = false;
    DispatchMemory memory;
    CHECK_THROWS_WITH(run_round(link, memory, configs), Catch::Contains("every rank measuring Test GPU was lost"));
  }
}
#endif  // AUTOTUNE_WITH_MPI
