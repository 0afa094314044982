// The arguments of autotune::Kernel::launch (launch.hpp) checked against a spec's and packed for the launch:
// device pointers of its buffers and constants in argument order, the scalars as their parameters' types.
// Internal to tuner/runtime (not installed); needs no GPU, so the cpu tier tests it.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "tuner/core/spec.hpp"
#include "tuner/runtime/launch.hpp"

namespace autotune::runtime_detail {

class KernelArguments {
 public:
  /// Most arguments a spec may have: kernel parameters (buffers and scalars), and as many constants again.
  static constexpr std::size_t kMaxArgs = 32;

  /// Throws UsageError for a spec that is not of family "user" or has too many arguments.
  explicit KernelArguments(const TuningSpec& spec);

  /// Checks args against the spec's arguments (their number; a pointer for each buffer and constant, with the
  /// element type where the pointer tells one; a number for each scalar, of its kind and within its dtype) and
  /// writes buffers[i] for the i-th buffer or constant (room for 2 x kMaxArgs) and scalars[k] for the k-th
  /// scalar (room for kMaxArgs). Throws UsageError naming the first argument that does not match.
  void pack(const Arg* args, std::size_t count, std::uintptr_t* buffers, std::uint64_t* scalars) const;
  void pack(std::initializer_list<Arg> args, std::uintptr_t* buffers, std::uint64_t* scalars) const {
    pack(args.begin(), args.size(), buffers, scalars);
  }

  /// The names of the buffer and constant arguments, in spec order (the plan buffers the caller supplies).
  std::vector<std::string> buffer_names() const;

 private:
  struct Slot {
    std::string name;
    ArgSpec::Kind kind = ArgSpec::Kind::buffer;
    std::string dtype;
    std::size_t index = 0;  // into the buffers (buffer, constant) or the scalars
  };
  std::string what(const Slot& s, std::size_t i) const;
  std::string expected() const;
  std::uint64_t scalar(const Slot& s, std::size_t i, const Arg& a) const;

  std::vector<Slot> slots_;  // one per spec argument, in order
  std::string kernel_;
};

}  // namespace autotune::runtime_detail
