// What filling the shared region costs (docs/performance.md "The set-up's memory"): a problem's inputs are copied
// from the adapter's buffer into fresh pages of a memfd on all cores, which the GPU executor then reads from a
// mapping of its own. This measures both sides for one GiB, with the destination's pages faulted in by the copy
// ("none"), mapped in first by MADV_POPULATE_WRITE on every thread ("populate") or on one ("populate1"), or
// allocated first by one fallocate() of the file ("fallocate", as the CUDA backend does on a thread of its own while
// the inputs are drawn), and the reader with and without MADV_POPULATE_READ. CPU only.
//
// Usage: region_fill none|populate|populate1|fallocate [MiB, default 1024]
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// fn(begin, end) on every core over page-aligned slices of [0, bytes).
template <typename Fn>
void on_all_cores(std::size_t bytes, Fn fn) {
  const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t slice = (bytes / threads + 4095) / 4096 * 4096;
  std::vector<std::thread> pool;
  for (std::size_t b = 0; b < bytes; b += slice) pool.emplace_back([=] { fn(b, std::min(bytes, b + slice)); });
  for (auto& t : pool) t.join();
}

void* map_or_die(std::size_t bytes, int prot, int flags, int fd) {
  void* p = ::mmap(nullptr, bytes, prot, flags, fd, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "none" && mode != "populate" && mode != "populate1" && mode != "fallocate") {
    std::fprintf(stderr, "usage: region_fill none|populate|populate1|fallocate [MiB]\n");
    return 2;
  }
  const std::size_t bytes = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1024) << 20;
  // The source: an input buffer in transparent huge pages, already touched (as host_bytes() makes it).
  auto* src = static_cast<unsigned char*>(map_or_die(bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1));
  (void)::madvise(src, bytes, MADV_HUGEPAGE);
  std::memset(src, 1, bytes);

  const int fd = ::memfd_create("region_fill", MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    std::perror("memfd");
    return 1;
  }
  auto* region = static_cast<unsigned char*>(map_or_die(bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd));
  int populate_error = 0;
  Clock::time_point t = Clock::now();
  if (mode == "populate")
    on_all_cores(bytes, [&](std::size_t b, std::size_t e) {
      if (::madvise(region + b, e - b, MADV_POPULATE_WRITE) != 0) populate_error = errno;
    });
  if (mode == "populate1" && ::madvise(region, bytes, MADV_POPULATE_WRITE) != 0) populate_error = errno;
  if (mode == "fallocate" && ::fallocate(fd, 0, 0, static_cast<off_t>(bytes)) != 0) populate_error = errno;
  const double prepare_s = seconds_since(t);
  t = Clock::now();
  on_all_cores(bytes, [&](std::size_t b, std::size_t e) { std::memcpy(region + b, src + b, e - b); });
  const double fill_s = seconds_since(t);
  const std::string failed =
      populate_error != 0 ? " (populate failed: " + std::string(std::strerror(populate_error)) + ")" : "";
  std::printf("%u threads, %zu MiB, writer %-9s: populate %.3f s, copy %.3f s, together %.3f s%s\n",
              std::max(1u, std::thread::hardware_concurrency()), bytes >> 20, mode.c_str(), prepare_s, fill_s,
              prepare_s + fill_s, failed.c_str());

  // The reader: a second mapping, copied out 64 MiB at a time into a warm buffer (as the executor stages uploads).
  const std::size_t piece = std::min<std::size_t>(bytes, std::size_t{64} << 20);
  std::vector<unsigned char> stage(piece, 0);
  for (const bool populate : {false, true}) {
    auto* view = static_cast<unsigned char*>(map_or_die(bytes, PROT_READ, MAP_SHARED, fd));
    t = Clock::now();
    if (populate)
      on_all_cores(bytes, [&](std::size_t b, std::size_t e) { (void)::madvise(view + b, e - b, MADV_POPULATE_READ); });
    for (std::size_t at = 0; at < bytes; at += piece) {
      const std::size_t n = std::min(piece, bytes - at);
      on_all_cores(n, [&](std::size_t b, std::size_t e) { std::memcpy(stage.data() + b, view + at + b, e - b); });
    }
    std::printf("  reader%s: %.3f s\n", populate ? " with MADV_POPULATE_READ" : "", seconds_since(t));
    ::munmap(view, bytes);
  }
  return 0;
}
