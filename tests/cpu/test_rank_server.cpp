// The order in which a measuring rank handles the requests waiting for it (tuner/mpi/rank_server.hpp): a task
// whose binaries are ready first, never past a request that changes the problem. No MPI calls: RankServer is
// used without a Comm.
#ifdef AUTOTUNE_WITH_MPI
#include <catch2/catch.hpp>

#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tuner/mpi/protocol.hpp"
#include "tuner/mpi/rank_server.hpp"

using namespace autotune;
using autotune::mpi::Message;

namespace {

/// A backend whose compiled configurations are a set the test names.
class ReadyBackend : public Backend {
 public:
  explicit ReadyBackend(std::set<int> ready) : ready_(std::move(ready)) {}
  DeviceInfo device() const override {
    DeviceInfo d;
    d.name = "Test GPU";
    return d;
  }
  std::string kind() const override { return "synthetic"; }
  void prepare(const Workload&, const ProblemKey&, std::uint64_t) override {}
  double copy_bandwidth_gbps() override { return 0; }
  std::vector<Measurement> evaluate(const std::vector<Config>& configs) override {
    return std::vector<Measurement>(configs.size());
  }
  bool ready(const Config& c) override { return ready_.count(static_cast<int>(c.at("X"))) > 0; }

 private:
  std::set<int> ready_;
};

Message task(int x) {
  Config c;
  c.set("X", std::int64_t{x});
  return {0, mpi::kTask, nlohmann::json{{"id", x}, {"configs", mpi::to_json(std::vector<Config>{c})}}.dump()};
}
Message other(int tag) { return {0, tag, "{}"}; }

std::size_t next(std::set<int> ready, const std::deque<Message>& pending) {
  mpi::RankServer server(std::make_unique<ReadyBackend>(std::move(ready)), "test");
  return server.next(pending);
}

}  // namespace

TEST_CASE("a rank handles a task whose binary is ready before one still compiling, never past a new problem",
          "[cpu][mpi]") {
  // None ready: the order they came in.
  CHECK(next({}, {task(1), task(2), task(3)}) == 0);
  // The first ready one.
  CHECK(next({2, 3}, {task(1), task(2), task(3)}) == 1);
  CHECK(next({1, 3}, {task(1), task(2), task(3)}) == 0);
  // A prefetch at once, wherever it is among the tasks.
  CHECK(next({}, {task(1), other(mpi::kPrefetch), task(2)}) == 1);
  // Not past a new problem: the tasks before kPrepare (or kExpect) first, in order when none is ready.
  CHECK(next({3}, {task(1), other(mpi::kPrepare), task(3)}) == 0);
  CHECK(next({3}, {task(1), task(2), other(mpi::kExpect), task(3)}) == 0);
  CHECK(next({2}, {task(1), task(2), other(mpi::kPrepare), task(3)}) == 1);
  // With no task before it, the new problem comes next.
  CHECK(next({3}, {other(mpi::kPrepare), task(3)}) == 0);
  CHECK(next({3}, {other(mpi::kExpect), other(mpi::kPrefetch), task(3)}) == 0);
  // A rank without a backend answers the first task (with its failure).
  mpi::RankServer broken(nullptr, "test", "no GPU");
  CHECK(broken.next({task(1), task(2)}) == 0);
}
#endif
