// Content hashes (tuner/core/hash.hpp): bulk_hash64 names captured data by content, so equal bytes must give equal
// values and any change (one bit anywhere, the length) another.
#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "tuner/core/hash.hpp"

using namespace autotune;

TEST_CASE("hash: bulk_hash64 tells apart every one-bit change and every length", "[cpu][hash]") {
  std::vector<unsigned char> data(131);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 37 + 11);
  std::set<std::uint64_t> seen;
  std::size_t values = 0;
  for (std::size_t len = 0; len <= data.size(); ++len) {  // every tail length of the lanes and words
    const std::uint64_t h = bulk_hash64(data.data(), len);
    CHECK(h ==
          bulk_hash64(std::vector<unsigned char>(data.begin(), data.begin() + static_cast<long>(len)).data(), len));
    seen.insert(h);
    ++values;
  }
  for (std::size_t byte = 0; byte < data.size(); ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<unsigned char> flipped = data;
      flipped[byte] ^= static_cast<unsigned char>(1u << bit);
      seen.insert(bulk_hash64(flipped.data(), flipped.size()));
      ++values;
    }
  CHECK(seen.size() == values);
  // Zero bytes of different lengths differ, as do words that only trade places.
  const std::vector<unsigned char> zeros(64, 0);
  CHECK(bulk_hash64(zeros.data(), 32) != bulk_hash64(zeros.data(), 40));
  std::vector<unsigned char> swapped = data;
  for (int k = 0; k < 8; ++k) std::swap(swapped[static_cast<std::size_t>(k)], swapped[static_cast<std::size_t>(8 + k)]);
  CHECK(bulk_hash64(swapped.data(), 32) != bulk_hash64(data.data(), 32));
}
