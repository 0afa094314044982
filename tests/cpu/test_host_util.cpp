// The parallel chunk helpers that make the inputs and references of the kernel families on all cores.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "tuner/kernels/host_util.hpp"

using namespace autotune::kernels;

TEST_CASE("parallel_chunks visits every chunk once with the documented bounds", "[cpu][host_util]") {
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, kChunkElements - 1, kChunkElements, kChunkElements + 1,
                            7 * kChunkElements + 123}) {
    INFO("count " << count);
    const std::size_t chunks = (count + kChunkElements - 1) / kChunkElements;
    std::vector<std::atomic<int>> seen(chunks);
    std::vector<std::atomic<int>> element(count);
    parallel_chunks(count, [&](std::size_t c, std::size_t begin, std::size_t end) {
      REQUIRE(c < chunks);
      CHECK(begin == c * kChunkElements);
      CHECK(end == std::min(count, (c + 1) * kChunkElements));
      ++seen[c];
      for (std::size_t i = begin; i < end; ++i) ++element[i];
    });
    for (std::size_t c = 0; c < chunks; ++c) CHECK(seen[c] == 1);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) wrong += element[i] == 1 ? 0 : 1;
    CHECK(wrong == 0);
  }
}

TEST_CASE("parallel_chunks rethrows the exception of a chunk after all threads stopped", "[cpu][host_util]") {
  std::atomic<int> running{0};
  CHECK_THROWS_WITH(parallel_chunks(16 * kChunkElements,
                                    [&](std::size_t c, std::size_t, std::size_t) {
                                      ++running;
                                      if (c == 5) {
                                        --running;
                                        throw std::runtime_error("chunk 5 failed");
                                      }
                                      --running;
                                    }),
                    "chunk 5 failed");
  CHECK(running == 0);
}

TEST_CASE("for_each_chunk draws the same values for a seed on every call and others for another seed",
          "[cpu][host_util]") {
  const std::size_t count = 5 * kChunkElements + 17;
  auto draw = [&](std::uint64_t seed) {
    std::vector<std::uint64_t> v(count);
    for_each_chunk(count, seed, [&](autotune::Random& rng, std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) v[i] = rng.bits();
    });
    return v;
  };
  const std::vector<std::uint64_t> a = draw(1), b = draw(1), c = draw(2);
  CHECK(a == b);
  CHECK(a != c);
  // Every chunk has a generator of its own: no two chunks start with the same value.
  for (std::size_t x = 0; x < 6; ++x)
    for (std::size_t y = x + 1; y < 6; ++y) CHECK(a[x * kChunkElements] != a[y * kChunkElements]);
}

TEST_CASE("host_bytes gives exactly the bytes asked for, zero-filled and writable, below and above the huge-page size",
          "[cpu][host_util]") {
  const std::size_t huge_from = kHugePagesFrom;
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4097}, huge_from - 1, huge_from, huge_from + 4097,
                        3 * huge_from + 5}) {
    INFO("bytes " << n);
    std::vector<unsigned char> v = host_bytes(n);
    REQUIRE(v.size() == n);
    std::size_t nonzero = 0;
    for (unsigned char b : v) nonzero += b != 0 ? 1 : 0;
    CHECK(nonzero == 0);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 7 + 1);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += v[i] != static_cast<unsigned char>(i * 7 + 1) ? 1 : 0;
    CHECK(wrong == 0);
  }
}
