// Internal to tuner/cuda: helper processes of this executable and what they share with it: the GPU worker
// (gpu_worker.cpp) and the NVRTC compile workers (compile_worker.cpp) are /proc/self/exe started again with an
// environment variable naming their end of a socket; a static initializer serves requests on it before main()
// runs. Messages travel as frames (u64 length + payload); bulk data through a SharedRegion (a memfd).
// (fork() without exec is no option: a child forked after NVRTC was used hung in cuInit, checked on an H200.)
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <string>

namespace autotune::cuda::detail {

/// A helper process connected by a socket.
struct WorkerProcess {
  pid_t pid = -1;
  int fd = -1;
};

/// The number under which a helper sees the shared region passed to spawn_helper.
constexpr int kWorkerRegionFd = 199;

/// Starts /proc/self/exe (or the executable $AUTOTUNE_HELPER_EXE names, for a process that is not one of the
/// project's executables) with env_var set to the number of its end of a socket (the parent keeps the other
/// end), for a static initializer that serves requests before main(). what names the helper in errors ("the
/// GPU worker"), hint is appended when the spawn itself fails. region_fd >= 0 becomes kWorkerRegionFd there.
/// glibc_tunable ("name=value", or nullptr) is added to the helper's GLIBC_TUNABLES (glibc_tunables_with()).
/// Throws EnvironmentError.
WorkerProcess spawn_helper(const char* env_var, const char* what, const std::string& hint, int region_fd,
                           const char* glibc_tunable = nullptr);

/// GLIBC_TUNABLES for a helper: current (this process's value, nullptr if unset) with setting ("name=value")
/// appended after a ':', unless current already sets that name (a choice made by the user stands).
std::string glibc_tunables_with(const char* current, const std::string& setting);

/// For the static initializer of a helper: if env_var is set (by spawn_helper), serves the socket it names
/// with serve(fd) and ends the process with serve's return value, before main() runs; otherwise returns.
void serve_as_helper(const char* env_var, int (*serve)(int fd));

/// Ends a helper process (kill_now: SIGKILL first, for a hung one; otherwise closing the socket ends it, and
/// SIGKILL follows after 5 s), reaps it, resets p and says how it ended ("exit code 0", "killed by signal 9").
std::string stop_helper(WorkerProcess& p, bool kill_now);

/// Sends one framed message (u64 length + payload). False if the peer is gone. Never raises SIGPIPE.
bool send_frame(int fd, const std::string& payload);

enum class RecvResult { ok, closed, timeout, stopped };
/// Receives one framed message. timeout_s <= 0 waits forever. With a stop predicate, the wait looks at it before
/// reading and then at least every 50 ms, and answers `stopped` once it says so (the frame is then left unread).
RecvResult recv_frame(int fd, std::string& payload, double timeout_s, bool (*stop)() = nullptr);

/// Host memory shared between the backend and its executor (a memfd): inputs, expected values and
/// verification outputs travel through it instead of the socket, so a 256 MB output costs one device-to-host
/// copy and no allocation per trial, and a 256 MB input one copy into the region.
/// The backend owns the file (create(), grows it with reserve()); both sides map it with map().
class SharedRegion {
 public:
  SharedRegion() = default;
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;
  /// A new anonymous file owned by this object. Throws EnvironmentError.
  void create();
  /// Owner: grows the file to at least bytes. Throws EnvironmentError.
  void reserve(std::size_t bytes);
  /// Maps fd (not owned unless created here) with at least bytes; remaps when larger. Throws EnvironmentError.
  unsigned char* map(int fd, std::size_t bytes);
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  bool owned_ = false;
  std::size_t file_bytes_ = 0;
  int mapped_fd_ = -1;
  void* base_ = nullptr;
  std::size_t mapped_bytes_ = 0;
};

}  // namespace autotune::cuda::detail
