// Starting, killing and collecting helper processes for the reliability tests (POSIX fork/exec).
// Not thread-safe: call from the test thread only.
#pragma once
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace autotune_test {

struct Child {
  pid_t pid = -1;
  int out_fd = -1;  // read end of the child's stdout
  int err_fd = -1;  // read end of the child's stderr
};

struct Finished {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that ended it, 0 when it exited
  std::string out, err;
};

struct SpawnOptions {
  int run_as_uid = -1;              // >= 0: drop the child's group and user ids to it before exec (needs root)
  long long max_file_bytes = -1;    // >= 0: RLIMIT_FSIZE of the child, with SIGXFSZ ignored, so that a write
                                    // past it fails with EFBIG as on a full disk
};

/// Starts argv[0] with arguments argv[1..]; stdout and stderr go to pipes. Throws std::runtime_error when
/// fork fails; a child that cannot drop privileges exits 126, one that cannot exec exits 127.
inline Child spawn(const std::vector<std::string>& argv, const SpawnOptions& opt = {}) {
  int out[2], err[2];
  if (::pipe(out) != 0 || ::pipe(err) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close(out[0]);
    ::close(out[1]);
    ::close(err[0]);
    ::close(err[1]);
    if (opt.max_file_bytes >= 0) {
      ::signal(SIGXFSZ, SIG_IGN);  // stays ignored across exec
      rlimit lim{};
      lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(opt.max_file_bytes);
      if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(126);
    }
    if (opt.run_as_uid >= 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(static_cast<gid_t>(opt.run_as_uid)) != 0 ||
          ::setuid(static_cast<uid_t>(opt.run_as_uid)) != 0)
        ::_exit(126);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  return Child{pid, out[0], err[0]};
}

/// Reads the child's output until both pipes close, then reaps it.
inline Finished finish(Child& c) {
  Finished f;
  pollfd fds[2] = {{c.out_fd, POLLIN, 0}, {c.err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&f.out, &f.err};
  int open = 2;
  char buf[4096];
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  int st = 0;
  while (::waitpid(c.pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st)) f.exit_code = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) f.signal = WTERMSIG(st);
  c = Child{};
  return f;
}

/// Runs to completion and returns the result.
inline Finished run_child(const std::vector<std::string>& argv, const SpawnOptions& opt = {}) {
  Child c = spawn(argv, opt);
  return finish(c);
}

/// Values of "key=value" words on the last line of `out` that starts with `prefix`; empty when none.
inline std::map<std::string, long long> last_line_fields(const std::string& out, const std::string& prefix) {
  std::map<std::string, long long> fields;
  std::istringstream lines(out);
  std::string line, last;
  while (std::getline(lines, line))
    if (line.rfind(prefix + " ", 0) == 0) last = line;
  std::istringstream words(last);
  std::string w;
  while (words >> w) {
    const auto eq = w.find('=');
    if (eq != std::string::npos) fields[w.substr(0, eq)] = std::atoll(w.c_str() + eq + 1);
  }
  return fields;
}

}  // namespace autotune_test
