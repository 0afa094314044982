// Buffer handling shared by the CPU emulations of launch plans (tests/cpu/test_scan.cpp,
// tests/cpu/test_compaction.cpp): the buffers are prepared the way CudaBackend prepares them.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tuner/core/plan.hpp"

namespace autotune_test {

/// The plan's buffers before its first run: inputs copied from `inputs` (which must match the declared
/// sizes), kernel state (BufferRole::state) zeroed; outputs and scratch come from poison_for_run().
inline autotune::HostBuffers initial_buffers(const autotune::LaunchPlan& plan, const autotune::HostBuffers& inputs) {
  autotune::HostBuffers bufs;
  for (const auto& b : plan.buffers) {
    if (b.role == autotune::BufferRole::input) {
      REQUIRE(inputs.count(b.name));
      REQUIRE(inputs.at(b.name).size() == b.bytes);
      bufs[b.name] = inputs.at(b.name);
    } else if (b.role == autotune::BufferRole::state) {
      bufs[b.name] = std::vector<unsigned char>(b.bytes, 0);
    }
  }
  return bufs;
}

/// Outputs and scratch poisoned with 0xFF (NaN for floats, -1 for integers) before a run; state is kept.
inline void poison_for_run(const autotune::LaunchPlan& plan, autotune::HostBuffers& bufs) {
  for (const auto& b : plan.buffers)
    if (b.role == autotune::BufferRole::output || b.role == autotune::BufferRole::scratch)
      bufs[b.name] = std::vector<unsigned char>(b.bytes, 0xFF);
}

/// Whether the plan clears its kernel state itself before every run (a memset step on a state buffer).
inline bool clears_state(const autotune::LaunchPlan& plan) {
  for (const auto& s : plan.steps)
    if (s.kind == autotune::LaunchStep::Kind::memset32 && plan.find(s.buffer) != nullptr &&
        plan.find(s.buffer)->role == autotune::BufferRole::state)
      return true;
  return false;
}

/// Executes a memset32 step: `count` 32-bit words of its buffer from byte offset_bytes on set to `value`
/// (bounds checked).
inline void run_memset(const autotune::LaunchStep& s, autotune::HostBuffers& bufs) {
  REQUIRE(bufs.count(s.buffer));
  auto& b = bufs.at(s.buffer);
  REQUIRE(s.offset_bytes + s.count * 4 <= b.size());
  for (std::size_t i = 0; i < s.count; ++i) std::memcpy(b.data() + s.offset_bytes + 4 * i, &s.value, 4);
}

/// Bounds-checked typed view of a plan buffer from a pointer argument (a null pointer argument gives an
/// empty view): an access out of the buffer or through a null pointer fails the test.
template <typename V>
struct View {
  std::vector<unsigned char>* bytes = nullptr;
  std::size_t offset = 0;
  void check(std::int64_t i) const {
    if (bytes == nullptr) FAIL("access through a null pointer");
    if (i < 0 || offset + (static_cast<std::size_t>(i) + 1) * sizeof(V) > bytes->size())
      FAIL("access to element " << i << " at offset " << offset << " of a " << bytes->size() << "-byte buffer");
  }
  V at(std::int64_t i) const {
    check(i);
    V v;
    std::memcpy(&v, bytes->data() + offset + static_cast<std::size_t>(i) * sizeof(V), sizeof(V));
    return v;
  }
  void set(std::int64_t i, V v) const {
    check(i);
    std::memcpy(bytes->data() + offset + static_cast<std::size_t>(i) * sizeof(V), &v, sizeof(V));
  }
};

/// The plan's output buffers, taken from the buffers an emulation left.
inline autotune::HostBuffers outputs_of(const autotune::LaunchPlan& plan, autotune::HostBuffers& bufs) {
  autotune::HostBuffers out;
  for (const auto& b : plan.buffers)
    if (b.role == autotune::BufferRole::output) out[b.name] = bufs[b.name];
  return out;
}

/// How many steps of the plan launch `kernel`.
inline std::size_t steps_of(const autotune::LaunchPlan& plan, const std::string& kernel) {
  return static_cast<std::size_t>(std::count_if(plan.steps.begin(), plan.steps.end(),
                                                [&](const autotune::LaunchStep& s) { return s.kernel == kernel; }));
}

}  // namespace autotune_test
