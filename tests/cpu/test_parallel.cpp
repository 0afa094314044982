#include "tuner/core/parallel.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using autotune::parallel_for;

TEST_CASE("parallel_for: every index runs exactly once", "[parallel]") {
  for (std::size_t count : {0u, 1u, 7u, 1000u}) {
    std::vector<std::atomic<int>> hits(count);
    for (auto& h : hits) h = 0;
    parallel_for(count, [&](std::size_t i) { ++hits.at(i); });
    for (std::size_t i = 0; i < count; ++i) CHECK(hits[i] == 1);
  }
}

TEST_CASE("parallel_for: one thread allowed runs inline on the calling thread, in order", "[parallel]") {
  std::vector<std::size_t> order;
  std::set<std::thread::id> ids;
  parallel_for(
      50,
      [&](std::size_t i) {
        order.push_back(i);
        ids.insert(std::this_thread::get_id());
      },
      1);
  REQUIRE(order.size() == 50);
  for (std::size_t i = 0; i < order.size(); ++i) CHECK(order[i] == i);
  CHECK(ids == std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST_CASE("parallel_for: never more threads than allowed", "[parallel]") {
  std::mutex mu;
  std::set<std::thread::id> ids;
  parallel_for(
      400,
      [&](std::size_t) {
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
      },
      2);
  CHECK(ids.size() <= 2);
  CHECK(ids.count(std::this_thread::get_id()) == 1);  // the caller works too
}

TEST_CASE("parallel_for: the first exception comes back and no new index starts after it", "[parallel]") {
  std::atomic<int> started{0};
  CHECK_THROWS_WITH(parallel_for(100000,
                                 [&](std::size_t i) {
                                   ++started;
                                   if (i == 3) throw std::runtime_error("index 3 failed");
                                 }),
                    "index 3 failed");
  CHECK(started < 100000);  // the indices after the failure were not handed out
}
