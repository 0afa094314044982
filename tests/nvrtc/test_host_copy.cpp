// The large host copies of the CUDA module (no GPU needed): parallel_copy into fresh pages of the shared region, on
// several threads in pieces, at offsets and lengths that are not multiples of a page, and back out of it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "tuner/cuda/host_copy.hpp"
#include "tuner/cuda/worker_process.hpp"

using namespace autotune::cuda::detail;

TEST_CASE("parallel_copy fills fresh shared pages exactly, at any offset and length", "[nvrtc][host_copy]") {
  // 40 MB and a few bytes: three pieces of 16 MB on several threads, the last one short.
  const std::size_t bytes = (std::size_t{40} << 20) + 7, offset = 4093, end = offset + bytes + 4096;
  std::vector<unsigned char> src(bytes);
  std::uint32_t x = 12345;
  for (auto& b : src) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<unsigned char>((x >> 24) | 1);  // non-zero: a page left unwritten would show
  }
  SharedRegion region;
  region.create();
  region.reserve(end);
  unsigned char* base = region.map(region.fd(), end);
  parallel_copy(base + offset, src.data(), bytes);
  std::size_t wrong = 0, outside = 0;
  for (std::size_t i = 0; i < bytes; ++i) wrong += base[offset + i] != src[i] ? 1 : 0;
  for (std::size_t i = 0; i < offset; ++i) outside += base[i] != 0 ? 1 : 0;
  for (std::size_t i = offset + bytes; i < end; ++i) outside += base[i] != 0 ? 1 : 0;
  CHECK(wrong == 0);
  CHECK(outside == 0);

  // Back out of the region (pages that are already there) into an ordinary buffer, unaligned again.
  std::vector<unsigned char> back(bytes + 1, 0);
  parallel_copy(back.data() + 1, base + offset, bytes);
  CHECK(back[0] == 0);
  CHECK(std::equal(src.begin(), src.end(), back.begin() + 1));

  // Small copies (one piece) and nothing at all.
  parallel_copy(back.data(), src.data() + 3, 100);
  CHECK(std::equal(src.begin() + 3, src.begin() + 103, back.begin()));
  parallel_copy(back.data(), src.data(), 0);
  CHECK(back[0] == src[3]);
}
