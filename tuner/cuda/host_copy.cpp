#include "tuner/cuda/host_copy.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
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

}  // namespace autotune::cuda::detail
