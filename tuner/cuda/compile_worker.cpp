// NVRTC compilations in helper processes, one per calling thread.
//
// NVRTC does not scale across the threads of one process: on the 16-core H200 machine, 64 compilations of
// kernels_src/reduction/reduction.cu took 1.556 s on 1 thread, 1.303 s on 8 and 1.336 s on 16 threads of one
// process, but 0.635 s in 16 separate processes. compile_in_worker() therefore sends each compilation to a
// compile worker owned by the calling thread: this very executable started again from /proc/self/exe with
// AUTOTUNE_NVRTC_WORKER_FD set (spawn_helper in worker_process.cpp), which the static initializer at the end of this
// file serves before main() runs. The initializer lives in the same translation unit as compile_in_worker(),
// so every executable that can start a compile worker also links the code that serves it.
#include <malloc.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "tuner/core/compile.hpp"
#include "tuner/core/error.hpp"
#include "tuner/cuda/messages.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/cuda/worker_process.hpp"

namespace autotune::cuda {
namespace {

constexpr const char* kCompileWorkerEnv = "AUTOTUNE_NVRTC_WORKER_FD";

// A compile worker's heap in transparent huge pages: glibc advises MADV_HUGEPAGE on what malloc takes from the
// kernel (glibc 2.35 and later; older ones ignore the tunable, and so does a kernel whose THP setting is "never").
// On a freshly started GPU machine (virtual, THP in "madvise" mode) short sessions of the same compilations,
// alternating, took 290-410 ms of CPU time per compilation in 4 KB pages and 53-60 ms in huge pages; a long first
// session there stays slow for its first minute either way (docs/performance.md "The first minutes of a fresh
// machine").
// GLIBC_TUNABLES=glibc.malloc.hugetlb=0 in the environment keeps 4 KB pages.
constexpr const char* kHugePageHeap = "glibc.malloc.hugetlb=1";
// Longest wait for one compilation in a worker; past it the worker is killed (and the request retried once).
constexpr double kCompileTimeoutS = 120;

// Reply status bytes.
// kReplyResult: u8 ok, str log, bytes cubin, f64 ms, f64 cpu_ms, u64 voluntary and involuntary switches, u64 faults
constexpr std::uint8_t kReplyResult = 0;
constexpr std::uint8_t kReplyEnvironment = 1;  // str message: NVRTC itself is unusable (EnvironmentError)

std::string encode_request(const std::string& source, const std::string& program_name,
                           const std::vector<std::string>& options, const std::string& arch, const Headers& headers) {
  detail::Writer w;
  w.str(source);
  w.u64(headers.size());
  for (const auto& [name, text] : headers) {
    w.str(name);
    w.str(text);
  }
  w.str(program_name);
  w.u64(options.size());
  for (const auto& o : options) w.str(o);
  w.str(arch);
  return std::move(w.buffer());
}

// Serves one request; never throws.
std::string serve(const std::string& request) {
  detail::Writer w;
  try {
    detail::Reader r(request);
    const std::string source = r.str();
    Headers headers;
    for (std::uint64_t n = r.u64(); n > 0; --n) {
      std::string header_name = r.str();
      headers[header_name] = r.str();
    }
    const std::string name = r.str();
    std::vector<std::string> options(r.u64());
    for (auto& o : options) o = r.str();
    const std::string arch = r.str();
    const CompileResult res = compile(source, headers, name, options, arch);
    w.u8(kReplyResult);
    w.u8(res.ok ? 1 : 0);
    w.str(res.log);
    w.bytes(res.cubin.data(), res.cubin.size());
    w.f64(res.ms);
    w.f64(res.cpu_ms);
    w.u64(static_cast<std::uint64_t>(res.voluntary_switches));
    w.u64(static_cast<std::uint64_t>(res.involuntary_switches));
    w.u64(static_cast<std::uint64_t>(res.minor_faults));
  } catch (const std::exception& e) {
    w.buffer().clear();
    w.u8(kReplyEnvironment);
    w.str(e.what());
  }
  return std::move(w.buffer());
}

CompileResult decode_reply(const std::string& reply) {
  detail::Reader r(reply);
  if (r.u8() != kReplyResult) throw EnvironmentError(r.str());
  CompileResult res;
  res.ok = r.u8() != 0;
  res.log = r.str();
  r.bytes_into(res.cubin);
  res.ms = r.f64();
  res.cpu_ms = r.f64();
  res.voluntary_switches = static_cast<long long>(r.u64());
  res.involuntary_switches = static_cast<long long>(r.u64());
  res.minor_faults = static_cast<long long>(r.u64());
  return res;
}

// How many compile workers may run their first compilation at once. A worker's first compilation loads NVRTC and
// its built-in headers into the new process: measured on a 32-core host (bench/compile_scaling.sh,
// docs/performance.md "Compile scaling"), the first compilation of each of 32 workers started together took 1.2 s
// (the later ones 28 ms), of 8 together about 0.1 s: the start-ups wait for each other, not for the CPU. Letting
// a few start at a time gets every worker going sooner. AUTOTUNE_COMPILE_STARTS=N sets another limit (0: none), for
// measuring it.
constexpr int kConcurrentStarts = 8;

int concurrent_starts() {
  static const int n = [] {
    const char* v = std::getenv("AUTOTUNE_COMPILE_STARTS");
    if (v == nullptr || *v == '\0') return kConcurrentStarts;
    const int parsed = std::atoi(v);
    return parsed <= 0 ? 1 << 30 : parsed;
  }();
  return n;
}

// A process-wide count of first compilations in flight (a counting semaphore; C++17 has none).
class StartGate {
 public:
  void enter() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return in_flight_ < concurrent_starts(); });
    ++in_flight_;
  }
  void leave() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --in_flight_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ = 0;
};

StartGate& start_gate() {
  static StartGate gate;
  return gate;
}

// The compile worker of one thread: started on first use, replaced when it died.
class CompileWorker {
 public:
  CompileWorker() = default;
  ~CompileWorker() { detail::stop_helper(proc_, false); }
  CompileWorker(const CompileWorker&) = delete;
  CompileWorker& operator=(const CompileWorker&) = delete;

  CompileResult compile_one(const std::string& source, const Headers& headers, const std::string& program_name,
                            const std::vector<std::string>& options, const std::string& arch) {
    const std::string request = encode_request(source, program_name, options, arch, headers);
    std::string failure;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (proc_.pid <= 0) {
        if (spawn_failed_) return compile(source, headers, program_name, options, arch);
        try {
          proc_ = detail::spawn_helper(kCompileWorkerEnv, "the NVRTC compile worker", "", -1, kHugePageHeap);
        } catch (const EnvironmentError&) {
          spawn_failed_ = true;  // this thread compiles in-process from now on
          return compile(source, headers, program_name, options, arch);
        }
      }
      std::string reply;
      detail::RecvResult got = detail::RecvResult::closed;
      const bool first = !started_;  // a new worker's first compilation goes through the start gate
      if (first) start_gate().enter();
      // The wait looks every 50 ms whether the pipeline abandoned the task (compile_abandoned()): a cancelled
      // session then does not wait for a compilation nobody will use.
      if (detail::send_frame(proc_.fd, request))
        got = detail::recv_frame(proc_.fd, reply, kCompileTimeoutS, &compile_abandoned);
      if (first) start_gate().leave();
      if (got == detail::RecvResult::stopped) {
        // The result would be discarded: the worker is stopped mid-compilation (the next task starts a new one).
        detail::stop_helper(proc_, true);
        started_ = false;
        CompileResult res;
        res.log = "compile: abandoned (the compile pipeline was cancelled); its worker process was stopped";
        return res;
      }
      started_ = got == detail::RecvResult::ok;
      if (got == detail::RecvResult::ok) return decode_reply(reply);
      const bool timed_out = got == detail::RecvResult::timeout;
      const std::string how = detail::stop_helper(proc_, timed_out);
      failure = timed_out ? "did not answer within " + std::to_string(static_cast<int>(kCompileTimeoutS)) +
                                " s and was killed"
                          : "ended unexpectedly (" + how + ")";
    }
    // Twice in a row: a property of this source and these options (NVRTC crashes or hangs on it).
    CompileResult res;
    res.log = "compile: the NVRTC compile worker process " + failure + ", also on the retry in a new worker";
    return res;
  }

 private:
  detail::WorkerProcess proc_;
  bool spawn_failed_ = false;
  bool started_ = false;  // proc_ has answered a compilation
};

}  // namespace

CompileResult compile_in_worker(const std::string& source, const Headers& headers, const std::string& program_name,
                                const std::vector<std::string>& options, const std::string& arch) {
  thread_local CompileWorker worker;
  return worker.compile_one(source, headers, program_name, options, arch);
}

namespace {

// A compilation's memory stays with the worker for the next one. By default glibc returns large blocks (over 128 KB,
// from mmap) and the top of the heap to the kernel when NVRTC frees them, and the next compilation touches fresh
// pages again: 1,000-1,500 minor page faults per compilation of kernels_src/reduction on the development machine
// (0-362 with the memory kept, under 70 from the third compilation on; bench/compile_scaling.sh reports them as
// "faults"), and on a freshly started virtual
// machine each first touch of a page costs far more (docs/performance.md "Compile scaling"). The worker's peak
// (about what one compilation needs) stays resident until the worker ends.
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // blocks up to 32 MB come from the heap (the largest this setting allows)
  mallopt(M_TRIM_THRESHOLD, 1 << 30);   // the heap is not trimmed below 1 GB of free top
  mallopt(M_TOP_PAD, 16 << 20);         // and grows in steps of 16 MB
}

// Runs before main() in a process started as a compile worker: serve until EOF, then exit without running
// the host program. Only compile() (whose state is function-local statics), the framing and the C/C++
// runtime are used, so static initialisation order of other translation units does not matter.
int serve_compilations(int fd) {
  keep_freed_memory();
  std::string request;
  while (detail::recv_frame(fd, request, 0) == detail::RecvResult::ok) {
    if (!detail::send_frame(fd, serve(request))) break;
  }
  return 0;
}

struct CompileWorkerHook {
  CompileWorkerHook() { detail::serve_as_helper(kCompileWorkerEnv, serve_compilations); }
};
CompileWorkerHook compile_worker_hook;

}  // namespace
}  // namespace autotune::cuda
