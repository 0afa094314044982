// A scope's wall time added to a counter.
#pragma once
#include <chrono>

namespace autotune {

/// Adds the wall time of its scope to a counter in milliseconds, however the scope ends. Not thread-safe
/// (the counter is a plain double).
class ScopedTimer {
 public:
  explicit ScopedTimer(double& total_ms) : total_ms_(total_ms), start_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() { total_ms_ += elapsed_ms(); }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  double& total_ms_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace autotune
