// NVRTC compilations in compile worker processes (compile_in_worker): this test binary serves as its own
// worker, and the results are the same, byte for byte, as compiling in-process.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tuner/core/compile.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/cuda/worker_process.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

struct Job {
  std::vector<std::string> options;
  std::string arch;
};

/// A few reduction configurations (default, smallest and largest block, another variant) for two architectures.
std::vector<Job> reduction_jobs(const TuningSpec& s) {
  auto a = kernels::make_adapter(s);
  const Workload w = s.workloads.front();
  std::vector<Config> configs{s.default_config()};
  for (const int block : {64, 1024}) {
    Config c = s.default_config();
    c.set("BLOCK_SIZE", block);
    configs.push_back(c);
  }
  Config other = s.default_config();
  other.set("VARIANT", 6);
  configs.push_back(other);
  std::vector<Job> jobs;
  for (const auto& c : configs) {
    std::vector<std::string> options = cuda::config_defines(c);
    for (const auto& o : a->compile_options(w)) options.push_back(o);
    for (const char* arch : {"sm_80", "sm_90"}) jobs.push_back({options, arch});
  }
  return jobs;
}

/// Child processes of this process that run this executable as a compile or GPU worker.
std::vector<pid_t> worker_children() {
  std::vector<pid_t> out;
  const std::string self = std::to_string(::getpid());
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* e = ::readdir(dir)) {
    const std::string pid = e->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state, ppid;
    rest >> state >> ppid;
    if (ppid != self) continue;
    std::ifstream cmd("/proc/" + pid + "/cmdline");
    std::string argv0;
    std::getline(cmd, argv0, '\0');
    if (argv0 == "autotune-cuda-worker") out.push_back(static_cast<pid_t>(std::stol(pid)));
  }
  ::closedir(dir);
  return out;
}

}  // namespace

TEST_CASE("compile workers give the same CUBIN bytes as in-process compilation", "[nvrtc][compile-worker]") {
  const TuningSpec s = specs::builtin_spec("reduction");
  const std::vector<Job> jobs = reduction_jobs(s);
  std::vector<cuda::CompileResult> local;
  local.reserve(jobs.size());
  for (const auto& j : jobs) local.push_back(cuda::compile(s.source_text, s.headers, "reduction.cu", j.options, j.arch));

  SECTION("on this thread") {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const cuda::CompileResult r = cuda::compile_in_worker(s.source_text, s.headers, "reduction.cu", jobs[i].options, jobs[i].arch);
      INFO(i << ": " << r.log);
      REQUIRE(local[i].ok);
      CHECK(r.ok);
      CHECK(r.cubin == local[i].cubin);
      CHECK(r.log == local[i].log);
      CHECK(r.ms > 0);
      // What the compiling thread spent comes back from the worker: CPU time within the compiler's wall time
      // (getrusage counts in ticks of a few ms, so a short compilation may read 0), no negative counts.
      CHECK(r.cpu_ms >= 0);
      CHECK(r.cpu_ms <= r.ms + 10);
      CHECK(r.voluntary_switches >= 0);
      CHECK(r.involuntary_switches >= 0);
      CHECK(r.minor_faults >= 0);
    }
    {
      double cpu = 0, wall = 0;
      for (const auto& l : local) {
        cpu += l.cpu_ms;
        wall += l.ms;
      }
      INFO("in process: CPU " << cpu << " ms of " << wall << " ms");
      CHECK(cpu > 0);  // NVRTC computes: over all the compilations above, the thread's CPU time shows
      CHECK(cpu <= wall + 10.0 * static_cast<double>(local.size()));
    }
    // The compilations above ran in a worker process of this thread, which is still there for the next one.
    const std::vector<pid_t> workers = worker_children();
    REQUIRE(!workers.empty());
    // Its heap is in transparent huge pages (GLIBC_TUNABLES as it started), unless this process chose otherwise.
    const std::string want =
        "GLIBC_TUNABLES=" + cuda::detail::glibc_tunables_with(std::getenv("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=1");
    bool tuned = false;
    for (pid_t pid : workers) {
      std::ifstream env("/proc/" + std::to_string(pid) + "/environ");
      for (std::string var; std::getline(env, var, '\0');) tuned = tuned || var == want;
    }
    CHECK(tuned);

    // A worker that died is replaced: the next compilation still succeeds, with the same bytes.
    for (pid_t pid : workers) ::kill(pid, SIGKILL);
    const cuda::CompileResult again =
        cuda::compile_in_worker(s.source_text, s.headers, "reduction.cu", jobs[0].options, jobs[0].arch);
    INFO(again.log);
    CHECK(again.ok);
    CHECK(again.cubin == local[0].cubin);
  }

  SECTION("on several threads, each with its own worker") {
    std::vector<cuda::CompileResult> remote(jobs.size());
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < 3; ++t) {
      pool.emplace_back([&, t] {
        for (std::size_t i = t; i < jobs.size(); i += 3)
          remote[i] = cuda::compile_in_worker(s.source_text, s.headers, "reduction.cu", jobs[i].options, jobs[i].arch);
      });
    }
    for (auto& th : pool) th.join();
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      INFO(i << ": " << remote[i].log);
      CHECK(remote[i].ok == local[i].ok);
      CHECK(remote[i].cubin == local[i].cubin);
    }
  }
}

TEST_CASE("compile workers report a failing source with the in-process log", "[nvrtc][compile-worker]") {
  const std::string bad = "extern \"C\" __global__ void broken(float* p) { p[0] = undeclared_name; }\n";
  const cuda::CompileResult local = cuda::compile(bad, {}, "broken.cu", {"-DX=1"}, "sm_90");
  const cuda::CompileResult remote = cuda::compile_in_worker(bad, {}, "broken.cu", {"-DX=1"}, "sm_90");
  INFO(remote.log);
  CHECK_FALSE(local.ok);
  CHECK_FALSE(remote.ok);
  CHECK(remote.cubin.empty());
  CHECK(remote.log.find("undeclared_name") != std::string::npos);
  CHECK(remote.log == local.log);

  // A rejected architecture is a failed result in both paths as well.
  const cuda::CompileResult arch_local = cuda::compile(bad, {}, "broken.cu", {}, "compute_90");
  const cuda::CompileResult arch_remote = cuda::compile_in_worker(bad, {}, "broken.cu", {}, "compute_90");
  CHECK_FALSE(arch_remote.ok);
  CHECK(arch_remote.log == arch_local.log);
}

TEST_CASE("a cancelled pipeline stops its compile workers instead of waiting for them", "[nvrtc][compile-worker]") {
  // A kernel that takes NVRTC and ptxas a while: a long chain of dependent math, written out.
  std::string slow = "extern \"C\" __global__ void slow(float* p) {\n  float a = p[threadIdx.x];\n";
  for (int i = 0; i < 150; ++i)
    slow += "  a = sinf(a * 1.0001f + " + std::to_string(i) + ".5f) + p[(threadIdx.x + " + std::to_string(i) +
            ") & 255];\n";
  slow += "  p[threadIdx.x] = a;\n}\n";
  const std::vector<std::string> options;
  auto t0 = std::chrono::steady_clock::now();
  const cuda::CompileResult whole = cuda::compile_in_worker(slow, {}, "slow.cu", options, "sm_90");
  const double whole_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(whole.log);
  REQUIRE(whole.ok);
  REQUIRE(whole_s > 1.0);  // long enough that a cancel midway is told apart from the wait for its end

  std::atomic<bool> started{false};
  std::atomic<bool> ok{true};
  std::string log;
  t0 = std::chrono::steady_clock::now();
  {
    CompilePipeline pipe(1, nullptr);
    pipe.prefetch({{"slow", [&] {
                      started = true;
                      cuda::CompileResult r = cuda::compile_in_worker(slow, {}, "slow.cu", options, "sm_90");
                      ok = r.ok;
                      log = r.log;
                      return r;
                    }}});
    while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the worker is compiling now
  }
  const double cancelled_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO("whole compilation " << whole_s << " s, cancelled after 0.2 s: " << cancelled_s << " s; " << log);
  CHECK(cancelled_s < 0.2 + whole_s / 2);
  CHECK_FALSE(ok);
  CHECK(log.find("abandoned") != std::string::npos);
}

TEST_CASE("a helper's GLIBC_TUNABLES gains a setting unless the environment already chose it",
          "[nvrtc][compile-worker]") {
  using cuda::detail::glibc_tunables_with;
  CHECK(glibc_tunables_with(nullptr, "glibc.malloc.hugetlb=1") == "glibc.malloc.hugetlb=1");
  CHECK(glibc_tunables_with("", "glibc.malloc.hugetlb=1") == "glibc.malloc.hugetlb=1");
  CHECK(glibc_tunables_with("glibc.malloc.arena_max=2", "glibc.malloc.hugetlb=1") ==
        "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  // The user's own value of the same tunable stays, wherever it stands.
  CHECK(glibc_tunables_with("glibc.malloc.hugetlb=0", "glibc.malloc.hugetlb=1") == "glibc.malloc.hugetlb=0");
  CHECK(glibc_tunables_with("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2", "glibc.malloc.hugetlb=1") ==
        "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2");
  // A longer name that starts like it is another tunable.
  CHECK(glibc_tunables_with("glibc.malloc.hugetlbx=0", "glibc.malloc.hugetlb=1") ==
        "glibc.malloc.hugetlbx=0:glibc.malloc.hugetlb=1");
}

namespace {
std::atomic<int> g_stop_asked{0};
int g_stop_after = 0;  // the predicate says stop from its g_stop_after-th call on
bool stop_after_some_calls() { return ++g_stop_asked >= g_stop_after; }
}  // namespace

TEST_CASE("recv_frame: a stop predicate ends the wait between slices, a frame that is there is read",
          "[nvrtc][compile-worker]") {
  using cuda::detail::RecvResult;
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  std::string payload;
  // Nothing arrives: the predicate is asked before the first wait and after each slice of at most 50 ms.
  g_stop_asked = 0;
  g_stop_after = 4;
  auto t0 = std::chrono::steady_clock::now();
  CHECK(cuda::detail::recv_frame(fds[0], payload, 0, &stop_after_some_calls) == RecvResult::stopped);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(g_stop_asked == 4);
  CHECK(waited >= 0.1);  // three slices
  CHECK(waited < 1.0);
  // The same with a deadline: the predicate wins before it.
  g_stop_asked = 0;
  CHECK(cuda::detail::recv_frame(fds[0], payload, 30, &stop_after_some_calls) == RecvResult::stopped);
  // A deadline before the predicate says stop: timeout, as without one.
  g_stop_asked = 0;
  g_stop_after = 1000;
  t0 = std::chrono::steady_clock::now();
  CHECK(cuda::detail::recv_frame(fds[0], payload, 0.12, &stop_after_some_calls) == RecvResult::timeout);
  waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(waited >= 0.11);
  CHECK(g_stop_asked >= 3);
  // A frame that is there is read whole while the predicate says go on.
  REQUIRE(cuda::detail::send_frame(fds[1], "hello"));
  CHECK(cuda::detail::recv_frame(fds[0], payload, 0, &stop_after_some_calls) == RecvResult::ok);
  CHECK(payload == "hello");
  // The peer gone: closed.
  ::close(fds[1]);
  CHECK(cuda::detail::recv_frame(fds[0], payload, 0, &stop_after_some_calls) == RecvResult::closed);
  ::close(fds[0]);
}
