// Helper processes and what they share with this one: frames over a socket, spawning and stopping
// /proc/self/exe as a helper, and the shared memory region (see worker_process.hpp).
#include "tuner/cuda/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tuner/core/error.hpp"

extern char** environ;

namespace autotune::cuda::detail {

namespace {
constexpr int kWorkerFd = 200;  // the socket's number in the helper
}  // namespace

// ---- shared region --------------------------------------------------------------------------

SharedRegion::~SharedRegion() {
  if (base_ != nullptr) ::munmap(base_, mapped_bytes_);
  if (owned_ && fd_ >= 0) ::close(fd_);
}

void SharedRegion::create() {
  if (fd_ >= 0) return;
  fd_ = ::memfd_create("autotune-outputs", MFD_CLOEXEC);
  if (fd_ < 0)
    throw EnvironmentError(std::string("memfd_create for the output region failed: ") + std::strerror(errno));
  owned_ = true;
}

void SharedRegion::reserve(std::size_t bytes) {
  if (!owned_) throw EnvironmentError("SharedRegion::reserve on a region this process does not own");
  if (bytes <= file_bytes_) return;
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
    throw EnvironmentError("cannot grow the output region to " + std::to_string(bytes) +
                           " bytes: " + std::strerror(errno));
  }
  file_bytes_ = bytes;
}

unsigned char* SharedRegion::map(int fd, std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  if (base_ != nullptr && fd == mapped_fd_ && bytes <= mapped_bytes_) return static_cast<unsigned char*>(base_);
  if (base_ != nullptr) ::munmap(base_, mapped_bytes_);
  base_ = nullptr;
  mapped_bytes_ = 0;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw EnvironmentError(std::string("cannot map the output region: ") + std::strerror(errno));
  base_ = p;
  mapped_bytes_ = bytes;
  mapped_fd_ = fd;
  return static_cast<unsigned char*>(base_);
}

// ---- frames and helper processes --------------------------------------------------------------------

bool send_frame(int fd, const std::string& payload) {
  std::string frame(sizeof(std::uint64_t), '\0');
  const std::uint64_t n = payload.size();
  std::memcpy(frame.data(), &n, sizeof n);
  auto send_all = [fd](const char* p, std::size_t len) {
    while (len > 0) {
      ssize_t k = ::send(fd, p, len, MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return false;
      p += k;
      len -= static_cast<std::size_t>(k);
    }
    return true;
  };
  return send_all(frame.data(), frame.size()) && send_all(payload.data(), payload.size());
}

RecvResult recv_frame(int fd, std::string& payload, double timeout_s, bool (*stop)()) {
  using clock = std::chrono::steady_clock;
  constexpr long long kStopSliceMs = 50;  // how often a wait looks at the stop predicate
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                           std::chrono::duration<double>(timeout_s > 0 ? timeout_s : 0));
  auto recv_all = [&](char* p, std::size_t len) -> RecvResult {
    while (len > 0) {
      if (timeout_s > 0 || stop != nullptr) {
        if (stop != nullptr && stop()) return RecvResult::stopped;
        long long wait_ms = -1;  // poll's "no limit"
        if (timeout_s > 0) {
          wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
          if (wait_ms <= 0) return RecvResult::timeout;
          wait_ms = std::min<long long>(wait_ms, 1 << 30);
        }
        if (stop != nullptr) wait_ms = wait_ms < 0 ? kStopSliceMs : std::min(wait_ms, kStopSliceMs);
        pollfd pfd{fd, POLLIN, 0};
        const int pr = ::poll(&pfd, 1, static_cast<int>(wait_ms));
        if (pr == 0 || (pr < 0 && errno == EINTR)) continue;  // the deadline and the predicate are looked at again
        if (pr < 0) return RecvResult::closed;
      }
      ssize_t k = ::recv(fd, p, len, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return RecvResult::closed;
      p += k;
      len -= static_cast<std::size_t>(k);
    }
    return RecvResult::ok;
  };
  std::uint64_t n = 0;
  RecvResult res = recv_all(reinterpret_cast<char*>(&n), sizeof n);
  if (res != RecvResult::ok) return res;
  payload.assign(n, '\0');
  return n == 0 ? RecvResult::ok : recv_all(payload.data(), n);
}

std::string glibc_tunables_with(const char* current, const std::string& setting) {
  std::string now = current == nullptr ? std::string() : std::string(current);
  if (now.empty()) return setting;
  const std::string name = setting.substr(0, setting.find('=') + 1);  // "glibc.malloc.hugetlb="
  std::size_t begin = 0;
  while (begin <= now.size()) {
    const std::size_t end = std::min(now.find(':', begin), now.size());
    if (now.compare(begin, name.size(), name) == 0 && end - begin >= name.size()) return now;
    begin = end + 1;
  }
  return now + ":" + setting;
}

WorkerProcess spawn_helper(const char* env_var, const char* what, const std::string& hint, int region_fd,
                           const char* glibc_tunable) {
  const std::string name(what);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    throw EnvironmentError("cannot start " + name + ": socketpair failed: " + std::strerror(errno));
  }
  // Move the helper's end above kWorkerFd so that dup2 onto kWorkerFd cannot clobber it.
  int child_end = ::fcntl(sv[1], F_DUPFD_CLOEXEC, kWorkerFd + 1);
  ::close(sv[1]);
  if (child_end < 0) {
    ::close(sv[0]);
    throw EnvironmentError("cannot start " + name + ": fcntl failed: " + std::strerror(errno));
  }
  // Likewise the region's copy lies above both targets (kWorkerRegionFd < kWorkerFd < child_end).
  int region_copy = -1;
  if (region_fd >= 0) {
    region_copy = ::fcntl(region_fd, F_DUPFD_CLOEXEC, kWorkerFd + 1);
    if (region_copy < 0) {
      ::close(sv[0]);
      ::close(child_end);
      throw EnvironmentError("cannot start " + name + ": fcntl failed: " + std::strerror(errno));
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_end, kWorkerFd);  // dup2 clears FD_CLOEXEC
  if (region_copy >= 0) posix_spawn_file_actions_adddup2(&actions, region_copy, kWorkerRegionFd);

  const std::string prefix = std::string(env_var) + "=";
  constexpr const char* kTunables = "GLIBC_TUNABLES=";
  const std::size_t tunables_len = std::strlen(kTunables);
  std::vector<std::string> env_store;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) == 0) continue;
    if (glibc_tunable != nullptr && std::strncmp(*e, kTunables, tunables_len) == 0) continue;  // replaced below
    env_store.emplace_back(*e);
  }
  env_store.push_back(prefix + std::to_string(kWorkerFd));
  if (glibc_tunable != nullptr)
    env_store.push_back(kTunables + glibc_tunables_with(std::getenv("GLIBC_TUNABLES"), glibc_tunable));
  std::vector<char*> envp;
  envp.reserve(env_store.size() + 1);
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  char arg0[] = "autotune-cuda-worker";
  char* argv[] = {arg0, nullptr};

  // The helper is this executable, unless the process is not one of ours (a Python interpreter that loaded the
  // C interface, tuner/capi/): then AUTOTUNE_HELPER_EXE names an executable that links tuner/cuda (`autotune`).
  const char* helper_env = std::getenv("AUTOTUNE_HELPER_EXE");
  const std::string helper = helper_env != nullptr && *helper_env != '\0' ? helper_env : "/proc/self/exe";
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, helper.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(child_end);
  if (region_copy >= 0) ::close(region_copy);
  if (rc != 0) {
    ::close(sv[0]);
    throw EnvironmentError("cannot start " + name + " (" + helper + "): " + std::strerror(rc) + hint);
  }
  return WorkerProcess{pid, sv[0]};
}

namespace {
std::string wait_status_text(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}
}  // namespace

std::string stop_helper(WorkerProcess& p, bool kill_now) {
  if (p.pid <= 0) return "not running";
  if (kill_now) ::kill(p.pid, SIGKILL);
  ::close(p.fd);  // the helper sees EOF and exits
  int status = 0;
  std::string how = "unknown";
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const pid_t r = ::waitpid(p.pid, &status, WNOHANG);
    if (r == p.pid) {
      how = wait_status_text(status);
      break;
    }
    if (r < 0) break;  // e.g. SIGCHLD ignored by the host program: nothing to reap
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5)) {
      ::kill(p.pid, SIGKILL);
      if (::waitpid(p.pid, &status, 0) == p.pid) how = wait_status_text(status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  p = {};
  return how;
}

void serve_as_helper(const char* env_var, int (*serve)(int fd)) {
  const char* env = std::getenv(env_var);
  if (env == nullptr) return;
  const int fd = std::atoi(env);
  ::unsetenv(env_var);
  // No PR_SET_PDEATHSIG: it fires when the spawning *thread* ends. The helper ends on EOF instead.
  const int code = serve(fd);
  std::fflush(stderr);
  std::_Exit(code);
}

}  // namespace autotune::cuda::detail
