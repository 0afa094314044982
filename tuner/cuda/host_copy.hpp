// Internal to tuner/cuda: large host-to-host copies on several threads (the problem's inputs into the shared region,
// the executor's staging of uploads), and the shared region's pages allocated ahead of those copies.
#pragma once
#include <cstddef>
#include <future>

namespace autotune::cuda::detail {

/// memcpy on up to 16 threads, in pieces of 16 MB (the first touch of fresh shared pages dominates a large copy).
void parallel_copy(unsigned char* dst, const unsigned char* src, std::size_t bytes);

/// Allocates the pages of a shared region (a memfd, at least `total` bytes long) ahead of their first use, on one
/// thread of its own, first [0, first) (where a problem's inputs go), then [first, total) (its expected values or
/// outputs), by fallocate() of the file: a fresh page of shared memory costs its allocation wherever it is first
/// touched, and the threads of a copy that touch one file's new pages at once contend for it. On an H200 host one
/// thread allocated 1 GiB so in 0.18-0.21 s (docs/performance.md "The region's pages ahead"); done while the
/// inputs are drawn, the copies into the region then only clear and map pages that exist. Only a head start:
/// where the file system refuses, the copies allocate the pages as before.
class RegionPrefault {
 public:
  RegionPrefault() = default;
  RegionPrefault(int fd, std::size_t first, std::size_t total);
  RegionPrefault(RegionPrefault&&) = default;
  RegionPrefault& operator=(RegionPrefault&&) = default;
  ~RegionPrefault() { wait_all(); }

  /// Returns once [0, first) is allocated (at once when nothing was started).
  void wait_first();
  /// Returns once the whole range is allocated.
  void wait_all();
  /// After the wait for them: whether the pages of [0, bytes) were all allocated (false when nothing was started,
  /// bytes lies beyond total, or the file system refused).
  bool allocated(std::size_t bytes) const { return bytes <= first_bytes_ ? first_ok_ : bytes <= total_ && all_ok_; }

 private:
  std::shared_future<bool> first_, all_;
  std::size_t first_bytes_ = 0, total_ = 0;
  bool first_ok_ = false, all_ok_ = false;
};

}  // namespace autotune::cuda::detail
