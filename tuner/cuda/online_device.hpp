// The GPU side of online tuning in the launch API (tuner/runtime/online.*, docs/lookup.md "Online tuning"), in the
// context of a Launcher: launches timed between events that are polled, never waited for; the shadow buffers a
// candidate writes instead of the application's outputs, and the copies into them; the comparison of a candidate's
// outputs with the reference's by the tuner's comparison kernels (tool kernels, device_kernels.hpp), whose verdicts
// come back through pinned memory and are polled too. No CUDA header: pointers are std::uintptr_t, streams void*.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/check.hpp"
#include "tuner/cuda/launcher.hpp"

namespace autotune::cuda {

/// Not thread-safe but for load_comparisons(), which may run on another thread than the rest. Errors throw
/// EnvironmentError (CudaCallError) with the driver's message.
class OnlineDevice {
 public:
  explicit OnlineDevice(const Launcher& launcher);
  /// Waits for the context's work, then frees events, buffers and the comparison module; ignores errors.
  ~OnlineDevice();
  OnlineDevice(const OnlineDevice&) = delete;
  OnlineDevice& operator=(const OnlineDevice&) = delete;

  /// Records the start of a timed launch on stream; the token for end_timing() and elapsed_ms().
  int begin_timing(void* stream);
  void end_timing(int token, void* stream);
  /// The milliseconds between the two events once both have completed (their slot is free again), else nullopt.
  std::optional<double> elapsed_ms(int token);
  /// Waits on the host until the timed launch of token has completed (then elapsed_ms() has its time).
  void wait_timing(int token);
  /// Records a mark on stream (an event without timing); wait_mark() waits for it on the host and frees it.
  int mark(void* stream);
  void wait_mark(int token);

  /// Device memory of at least `bytes` for shadow `slot` (kept and reused; grown by reallocating, after waiting for
  /// the context's work).
  std::uintptr_t shadow(std::size_t slot, std::size_t bytes);
  /// Enqueues a device-to-device copy on stream.
  void copy_async(std::uintptr_t dst, std::uintptr_t src, std::size_t bytes, void* stream) const;

  /// The key of the comparison kernels' binary for the launcher's GPU in a binary cache (their source, options and
  /// architecture).
  std::string comparisons_key() const;
  /// Loads the comparison kernels from `cubin` (a binary cached under comparisons_key()); false where the driver
  /// refuses it (then compile them). Once; may run on any thread.
  bool load_comparisons(const std::vector<unsigned char>& cubin);
  /// Compiles (NVRTC) and loads the comparison kernels, once; returns the binary (to cache), empty if they were
  /// loaded already. May run on any thread.
  std::vector<unsigned char> compile_comparisons();
  bool comparisons_loaded() const;
  /// Enqueues on stream the comparison of got[i] with want[i] for each checks[i] (kinds bits, float_equal and
  /// rel_tolerance), and the copy of their mismatch counts to the host; the token for verdict().
  /// Throws UsageError for a kind it cannot run (abs_tolerance, user_kernel), EnvironmentError before
  /// load_comparisons().
  int compare(const std::vector<OutputCheck>& checks, const std::vector<std::uintptr_t>& got,
              const std::vector<std::uintptr_t>& want, void* stream);
  /// The mismatches of each check once the comparison has completed (its slot is free again), else nullopt.
  std::optional<std::vector<std::uint64_t>> verdict(int token);
  /// Waits on the host until the comparison of token has completed (then verdict() has its counts).
  void wait_verdict(int token);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace autotune::cuda
