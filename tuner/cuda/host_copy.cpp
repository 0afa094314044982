#include "tuner/cuda/host_copy.hpp"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace autotune::cuda::detail {

void parallel_copy(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  constexpr std::size_t kPiece = std::size_t{16} << 20;
  const std::size_t pieces = (bytes + kPiece - 1) / kPiece;
  const std::size_t threads =
      std::min<std::size_t>(pieces, std::min(16u, std::max(1u, std::thread::hardware_concurrency())));
  if (threads <= 1) {
    if (bytes != 0) std::memcpy(dst, src, bytes);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t p = next++; p < pieces; p = next++)
      std::memcpy(dst + p * kPiece, src + p * kPiece, std::min(kPiece, bytes - p * kPiece));
  };
  std::vector<std::thread> pool;
  try {
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  } catch (...) {  // fewer threads: the ones started and this one copy everything
  }
  work();
  for (auto& t : pool) t.join();
}

namespace {

/// fallocate() of [from, to) of fd, within its size (which it leaves as it is); true when done or nothing to do.
bool allocate(int fd, std::size_t from, std::size_t to) {
  if (from >= to) return true;
  int rc = 0;
  do {
    rc = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(from), static_cast<off_t>(to - from));
  } while (rc != 0 && errno == EINTR);
  return rc == 0;
}

}  // namespace

RegionPrefault::RegionPrefault(int fd, std::size_t first, std::size_t total) {
  first = std::min(first, total);
  if (total == 0) return;
  auto first_done = std::make_shared<std::promise<bool>>();
  first_ = first_done->get_future().share();
  // One thread for both parts: [first, total) after [0, first), which the inputs need sooner.
  all_ = std::async(std::launch::async, [fd, first_done, first, total] {
           const bool a = allocate(fd, 0, first);
           first_done->set_value(a);
           return allocate(fd, first, total) && a;
         }).share();
  first_bytes_ = first;
  total_ = total;
}

void RegionPrefault::wait_first() {
  if (first_.valid()) first_ok_ = first_.get();
}

void RegionPrefault::wait_all() {
  if (!all_.valid()) return;
  wait_first();
  all_ok_ = all_.get();
  all_ = {};
  first_ = {};
}

}  // namespace autotune::cuda::detail
