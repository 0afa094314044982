// The large host copies of the CUDA module (no GPU needed): parallel_copy into fresh pages of the shared region, on
// several threads in pieces, at offsets and lengths that are not multiples of a page, and back out of it; the
// region's pages allocated ahead of those copies (RegionPrefault).
#include <sys/stat.h>

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

namespace {

/// Bytes of memory that the file fd holds (its allocated blocks, whether or not a mapping has touched them).
std::size_t held_bytes(int fd) {
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  return static_cast<std::size_t>(st.st_blocks) * 512;
}

}  // namespace

TEST_CASE("RegionPrefault allocates the region's pages ahead, inputs first, and a copy finds them zeroed",
          "[nvrtc][host_copy]") {
  const std::size_t first = (std::size_t{24} << 20) + 5, total = (std::size_t{40} << 20) + 123;
  SharedRegion region;
  region.create();
  region.reserve(total);
  CHECK(held_bytes(region.fd()) == 0);  // a fresh file: nothing allocated

  RegionPrefault ahead(region.fd(), first, total);
  ahead.wait_first();
  REQUIRE(ahead.allocated(first));
  const std::size_t first_pages = (first + 4095) / 4096, pages = (total + 4095) / 4096;
  CHECK(held_bytes(region.fd()) >= first_pages * 4096);
  ahead.wait_all();
  CHECK(ahead.allocated(total));
  CHECK_FALSE(ahead.allocated(total + 1));
  CHECK(held_bytes(region.fd()) == pages * 4096);  // every page of [0, total), nothing beyond
  struct stat st {};
  REQUIRE(::fstat(region.fd(), &st) == 0);
  CHECK(static_cast<std::size_t>(st.st_size) == total);  // the file's size stays the region's

  unsigned char* base = region.map(region.fd(), total);
  CHECK(std::all_of(base, base + total, [](unsigned char v) { return v == 0; }));
  std::vector<unsigned char> src(total);
  for (std::size_t i = 0; i < total; ++i) src[i] = static_cast<unsigned char>((i * 2654435761u >> 13) | 1);
  parallel_copy(base, src.data(), total);
  CHECK(std::equal(src.begin(), src.end(), base));

  // Nothing to do: no thread, and the waits return at once.
  RegionPrefault none;
  none.wait_first();
  none.wait_all();
  CHECK_FALSE(none.allocated(1));
}
