// A launch plan: buffers and the ordered steps (kernel launches, memsets) of one run of a configuration.
// Pure data: the CUDA backend executes it; the family adapters build it.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace autotune {

/// Contents of host-side buffers by name.
using HostBuffers = std::map<std::string, std::vector<unsigned char>>;

enum class BufferRole {
  input,    // filled from make_inputs() once; never written by a correct kernel
  output,   // poisoned before the verification run, compared by verify()
  scratch,  // temporary storage; poisoned before the verification run
  state,    // kernel state kept between runs: zero-filled once when the plan is loaded (never poisoned); the
            // kernels leave it ready for their next run (the single-pass scan's and compaction's tile state)
};

struct BufferDecl {
  std::string name;
  std::size_t bytes = 0;
  BufferRole role = BufferRole::input;
  /// output: the input (a name of make_inputs()) this buffer starts from before the verified run instead of the
  /// poison, for a kernel that reads what it updates (an in-out argument); "" = poisoned.
  std::string initial = {};
};

struct KernelArg {
  enum class Kind { buffer, i32, u32, i64, u64, f32, f64 };
  Kind kind = Kind::i32;
  std::string buffer;  // Kind::buffer: name of a BufferDecl (passed as a device pointer)
  std::int64_t i = 0;
  double f = 0;
  std::size_t offset_bytes = 0;  // Kind::buffer: pointer offset
  /// Scalar kinds: the index of a value the caller gives at each run that replaces this one (the launch API of
  /// tuner/runtime passes an application's scalars so); -1: the value above, fixed.
  int scalar = -1;

  static KernelArg buf(std::string name, std::size_t offset = 0) {
    KernelArg a; a.kind = Kind::buffer; a.buffer = std::move(name); a.offset_bytes = offset; return a;
  }
  static KernelArg i32(std::int64_t v) { KernelArg a; a.kind = Kind::i32; a.i = v; return a; }
  static KernelArg u32(std::int64_t v) { KernelArg a; a.kind = Kind::u32; a.i = v; return a; }
  static KernelArg i64(std::int64_t v) { KernelArg a; a.kind = Kind::i64; a.i = v; return a; }
  static KernelArg u64(std::int64_t v) { KernelArg a; a.kind = Kind::u64; a.i = v; return a; }
  static KernelArg f32(double v) { KernelArg a; a.kind = Kind::f32; a.f = v; return a; }
  static KernelArg f64(double v) { KernelArg a; a.kind = Kind::f64; a.f = v; return a; }
};

struct LaunchStep {
  enum class Kind { kernel, memset32 };
  Kind kind = Kind::kernel;
  // kernel
  std::string kernel;
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t shared_bytes = 0;  // dynamic shared memory
  std::vector<KernelArg> args;
  // memset32: fill `count` 32-bit words of `buffer` from byte `offset_bytes` on with `value` (part of the
  // timed sequence)
  std::string buffer;
  std::uint32_t value = 0;
  std::size_t count = 0;
  std::size_t offset_bytes = 0;  // a multiple of 4

  /// A memset32 step: `count` 32-bit words of `buffer` from byte `offset` on set to `value`.
  static LaunchStep fill32(std::string buffer, std::uint32_t value, std::size_t count, std::size_t offset = 0) {
    LaunchStep s;
    s.kind = Kind::memset32;
    s.buffer = std::move(buffer);
    s.value = value;
    s.count = count;
    s.offset_bytes = offset;
    return s;
  }
};

/// A __constant__ (or __device__) symbol of the module filled from an input buffer when the plan is loaded,
/// before any step runs (the kernels only read it): Kernel Tuner's cmem_args.
struct ConstantFill {
  std::string symbol;  // name in the source, e.g. "d_vertices" (a C++ name is looked up as written)
  std::string buffer;  // the input BufferDecl whose bytes are copied; at most the symbol's size
};

struct LaunchPlan {
  std::vector<BufferDecl> buffers;
  std::vector<LaunchStep> steps;
  std::vector<ConstantFill> constants;
  const BufferDecl* find(const std::string& name) const {
    for (const auto& b : buffers) if (b.name == name) return &b;
    return nullptr;
  }
};

}  // namespace autotune
