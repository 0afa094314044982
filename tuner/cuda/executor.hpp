// Internal to tuner/cuda: the GPU side of the CUDA backend.
//
// An Executor owns one device's primary context, the problem's device buffers and the module of the
// configuration being measured. It is driven by binary request messages and answers with reply messages,
// so that the same code runs either in-process or in a worker process:
//
// A sticky fault (illegal address, misaligned address, trap ...) cannot be recovered inside a process on
// current drivers: checked on an H200 with driver 580 (2026): after CUDA_ERROR_ILLEGAL_ADDRESS,
// cuDevicePrimaryCtxReset succeeds but cuDevicePrimaryCtxRetain keeps returning CUDA_ERROR_ILLEGAL_ADDRESS,
// and the runtime's cudaDeviceReset() leaves cudaMalloc failing with cudaErrorDevicesUnavailable. The
// backend therefore runs the Executor in a worker process by default and starts a new one after a fault.
// The worker is this very executable (/proc/self/exe) started with AUTOTUNE_CUDA_WORKER_FD set: a static
// initializer in executor.cpp serves requests on that socket and exits before main() runs. (fork() without
// exec is no option: a child forked after NVRTC was used hung in cuInit, checked on the same machine.)
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tuner/core/error.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/plan.hpp"

namespace autotune::cuda::detail {

/// Request opcodes (first byte of a request).
enum class Op : std::uint8_t {
  init = 1,        // i32 ordinal -> DeviceInfo
  mem_info,        // -> u64 free, u64 total
  release,         // frees inputs, outputs, scratch and the loaded module
  upload,          // str name, i32 fd, u64 region bytes, u64 offset, u64 bytes: an input buffer from the shared
                   // region fd, where it stays until release (restore_inputs copies it from there again)
  restore_inputs,  // uploads every input again from the shared region
  load_run,        // plan, bytes cubin, i32 fd, u64 capacity, u64 outputs_at: load, poison outputs/scratch, run
                   // once, sync, copy the outputs into the shared region fd from offset outputs_at on (after the
                   // inputs) -> u64 n, n x (str name, u64 offset, u64 bytes)
  time,            // i32 warmup, i32 max samples, u8 flush_l2, f64 max_seconds, i32 min samples, f64 stable_ci
                   // (SamplingRule) -> u64 n, n x f64 ms; unloads
  unload,          // unloads the module of load_run
  copy_bandwidth,  // -> f64 GB/s (bytes read + written)
  quit,            // worker exits after replying
  flush_kernel,    // bytes cubin with kL2FlushKernel: time flushes L2 by reading (not writing) a 2x L2 buffer
};

/// Entry point of the L2 flush kernel (source: l2_flush_source()).
constexpr const char* kL2FlushKernel = "autotune_l2_flush";
/// CUDA source of a kernel that reads words [0, n) of a buffer (16-byte loads that are cached in L2 only)
/// and never writes in practice: it evicts whatever the L2 held, dirty lines included (their write-back
/// happens during the flush, not in the next timed run), and leaves no dirty line of its own, unlike a
/// memset. Arguments: const uint4* buffer, unsigned long long n (uint4 count), unsigned* sink.
const char* l2_flush_source();

/// First byte of a reply.
enum class ReplyStatus : std::uint8_t {
  ok = 0,
  cuda_error = 1,         // i32 CUresult, u8 sticky, str message
  usage_error = 2,        // str message (a malformed plan, a problem that does not fit)
  environment_error = 3,  // str message (no driver, context lost)
};

/// Appends plain values to a message (native byte order: both ends are the same executable).
class Writer {
 public:
  template <typename T>
  void pod(const T& v) {
    const auto* p = reinterpret_cast<const char*>(&v);
    buf_.append(p, sizeof v);
  }
  void u8(std::uint8_t v) { pod(v); }
  void i32(std::int32_t v) { pod(v); }
  void u32(std::uint32_t v) { pod(v); }
  void i64(std::int64_t v) { pod(v); }
  void u64(std::uint64_t v) { pod(v); }
  void f64(double v) { pod(v); }
  void str(const std::string& s) { bytes(s.data(), s.size()); }
  void bytes(const void* data, std::size_t n) {
    u64(n);
    buf_.append(static_cast<const char*>(data), n);
  }
  std::string& buffer() { return buf_; }

 private:
  std::string buf_;
};

/// Reads what a Writer wrote; throws EnvironmentError on a truncated message.
class Reader {
 public:
  explicit Reader(const std::string& buf, std::size_t pos = 0) : buf_(buf), pos_(pos) {}
  template <typename T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, buf_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::uint8_t u8() { return pod<std::uint8_t>(); }
  std::int32_t i32() { return pod<std::int32_t>(); }
  std::uint32_t u32() { return pod<std::uint32_t>(); }
  std::int64_t i64() { return pod<std::int64_t>(); }
  std::uint64_t u64() { return pod<std::uint64_t>(); }
  double f64() { return pod<double>(); }
  std::string str() {
    const std::uint64_t n = u64();
    need(n);
    std::string s = buf_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::vector<unsigned char> bytes() {
    std::vector<unsigned char> v;
    bytes_into(v);
    return v;
  }
  /// Like bytes(), into an existing vector (its capacity is reused).
  void bytes_into(std::vector<unsigned char>& v) {
    const std::uint64_t n = u64();
    need(n);
    v.assign(buf_.begin() + static_cast<std::ptrdiff_t>(pos_), buf_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
  }

 private:
  void need(std::uint64_t n) const {
    if (n > buf_.size() - pos_) throw EnvironmentError("truncated message between the CUDA backend and its GPU worker");
  }
  const std::string& buf_;
  std::size_t pos_;
};

void write_plan(Writer& w, const LaunchPlan& plan);
LaunchPlan read_plan(Reader& r);
void write_device(Writer& w, const DeviceInfo& d);
DeviceInfo read_device(Reader& r);

/// Serves requests for one GPU. handle() never throws: errors become replies. After a sticky fault every
/// further request is answered with environment_error (the process cannot use the GPU any more).
/// Not thread-safe.
class Executor {
 public:
  Executor();
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  std::string handle(const std::string& request);
  /// True once a sticky fault happened.
  bool lost() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Serves requests on a connected socket until EOF or Op::quit. Returns the process exit code.
int worker_main(int fd);

/// A worker process connected by a socket.
struct WorkerProcess {
  pid_t pid = -1;
  int fd = -1;
};

/// The number under which a worker sees the backend's shared output region (see SharedRegion).
constexpr int kWorkerRegionFd = 199;

/// Starts /proc/self/exe with env_var set to the number of its end of a socket (the parent keeps the other
/// end), for a static initializer that serves requests before main() (the GPU worker here, the compile worker
/// in compile_worker.cpp). what names the helper in errors ("the GPU worker"), hint is appended when the
/// spawn itself fails. region_fd >= 0 becomes kWorkerRegionFd there. Throws EnvironmentError.
WorkerProcess spawn_helper(const char* env_var, const char* what, const std::string& hint, int region_fd);

/// For the static initializer of a helper: if env_var is set (by spawn_helper), serves the socket it names
/// with serve(fd) and ends the process with serve's return value, before main() runs; otherwise returns.
void serve_as_helper(const char* env_var, int (*serve)(int fd));

/// Ends a helper process (kill_now: SIGKILL first, for a hung one; otherwise closing the socket ends it, and
/// SIGKILL follows after 5 s), reaps it, resets p and says how it ended ("exit code 0", "killed by signal 9").
std::string stop_helper(WorkerProcess& p, bool kill_now);

/// Starts /proc/self/exe as a GPU worker; region_fd (a SharedRegion's fd) becomes kWorkerRegionFd there.
/// Throws EnvironmentError if it cannot be started.
WorkerProcess spawn_worker(int region_fd);

/// Host memory shared between the backend and its executor (a memfd): inputs and verification outputs travel
/// through it instead of the socket, so a 256 MB output costs one device-to-host copy and no allocation per
/// trial, and a 256 MB input one copy into the region instead of a trip through the socket.
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

/// Bytes of a shared region that holds every output buffer of plan (each at a 64-byte aligned offset).
std::size_t output_region_bytes(const LaunchPlan& plan);

/// Sends one framed message (u64 length + payload). False if the peer is gone. Never raises SIGPIPE.
bool send_frame(int fd, const std::string& payload);

enum class RecvResult { ok, closed, timeout };
/// Receives one framed message. timeout_s <= 0 waits forever.
RecvResult recv_frame(int fd, std::string& payload, double timeout_s);

}  // namespace autotune::cuda::detail
