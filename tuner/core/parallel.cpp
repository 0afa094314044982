#include "tuner/core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace autotune {

void parallel_for(std::size_t count, const std::function<void(std::size_t)>& fn, std::size_t max_threads) {
  const std::size_t cores = std::max(1u, std::min(64u, std::thread::hardware_concurrency()));
  const std::size_t threads = std::min({count, cores, max_threads == 0 ? cores : max_threads});
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex mu;
  auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        next = count;  // stop handing out indices
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  try {
    for (std::size_t t = 0; t + 1 < threads; ++t) pool.emplace_back(work);
  } catch (...) {  // no more threads: the ones started and this one finish the work
  }
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace autotune
