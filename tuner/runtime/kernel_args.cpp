// KernelArguments (kernel_args.hpp): the caller's arguments of autotune::Kernel::launch against the spec's.
#include "tuner/runtime/kernel_args.hpp"

#include <cstring>
#include <limits>
#include <utility>

#include "tuner/core/error.hpp"

namespace autotune::runtime_detail {

namespace {

template <class T>
std::uint64_t packed(T v) {
  std::uint64_t slot = 0;
  std::memcpy(&slot, &v, sizeof v);
  return slot;
}

bool is_floating(const std::string& dtype) { return dtype == "float32" || dtype == "float64"; }

/// The [min, max] of an integer dtype, as long doubles (exact for every 64-bit bound).
std::pair<long double, long double> integer_range(const std::string& dtype) {
  if (dtype == "int8") return {-128.0L, 127.0L};
  if (dtype == "uint8") return {0.0L, 255.0L};
  if (dtype == "int16") return {-32768.0L, 32767.0L};
  if (dtype == "uint16") return {0.0L, 65535.0L};
  if (dtype == "int32") return {-2147483648.0L, 2147483647.0L};
  if (dtype == "uint32") return {0.0L, 4294967295.0L};
  if (dtype == "int64")
    return {static_cast<long double>(std::numeric_limits<std::int64_t>::min()),
            static_cast<long double>(std::numeric_limits<std::int64_t>::max())};
  return {0.0L, static_cast<long double>(std::numeric_limits<std::uint64_t>::max())};
}

}  // namespace

KernelArguments::KernelArguments(const TuningSpec& spec) : kernel_(spec.name) {
  if (spec.family != "user")
    throw UsageError("autotune::Kernel launches kernels of your own (specs of family \"user\"); " + spec.name +
                     " is of family " + spec.family + ": use its class (autotune::Reduction, Scan, ...)");
  std::size_t buffers = 0, scalars = 0;
  for (const ArgSpec& a : spec.arguments)
    slots_.push_back({a.name, a.kind, a.dtype, a.kind == ArgSpec::Kind::scalar ? scalars++ : buffers++});
  if (scalars > kMaxArgs || buffers > 2 * kMaxArgs)
    throw UsageError("kernel " + spec.name + " has more than " + std::to_string(kMaxArgs) + " arguments");
}

std::vector<std::string> KernelArguments::buffer_names() const {
  std::vector<std::string> out;
  for (const Slot& s : slots_)
    if (s.kind != ArgSpec::Kind::scalar) out.push_back(s.name);
  return out;
}

std::string KernelArguments::what(const Slot& s, std::size_t i) const {
  return "argument " + std::to_string(i + 1) + " ('" + s.name + "') of " + kernel_;
}

std::string KernelArguments::expected() const {
  std::string out;
  for (const Slot& s : slots_) {
    const char* kind = s.kind == ArgSpec::Kind::scalar     ? " scalar"
                       : s.kind == ArgSpec::Kind::constant ? " constant data: a device pointer"
                                                           : " buffer: a device pointer";
    out += (out.empty() ? "" : ", ") + s.name + " (" + s.dtype + kind + ")";
  }
  return out;
}

std::uint64_t KernelArguments::scalar(const Slot& s, std::size_t i, const Arg& a) const {
  if (a.kind() == Arg::Kind::pointer)
    throw UsageError(what(s, i) + " is a " + s.dtype + " scalar, but a pointer was given");
  if (is_floating(s.dtype)) {
    double v = a.floating();
    if (a.kind() == Arg::Kind::integer) v = static_cast<double>(static_cast<std::int64_t>(a.bits()));
    if (a.kind() == Arg::Kind::unsigned_integer) v = static_cast<double>(a.bits());
    return s.dtype == "float32" ? packed(static_cast<float>(v)) : packed(v);
  }
  if (a.kind() == Arg::Kind::floating)
    throw UsageError(what(s, i) + " is a " + s.dtype + " scalar, but a floating-point number (" +
                     std::to_string(a.floating()) + ") was given");
  const bool negative = a.kind() == Arg::Kind::integer && static_cast<std::int64_t>(a.bits()) < 0;
  const long double v =
      negative ? static_cast<long double>(static_cast<std::int64_t>(a.bits())) : static_cast<long double>(a.bits());
  const auto [lo, hi] = integer_range(s.dtype);
  if (v < lo || v > hi)
    throw UsageError(what(s, i) + " is a " + s.dtype + " scalar, which cannot hold " +
                     (negative ? std::to_string(static_cast<std::int64_t>(a.bits())) : std::to_string(a.bits())));
  return a.bits();  // two's complement, little-endian: the low bytes are the value in the narrower type
}

void KernelArguments::pack(const Arg* args, std::size_t count, std::uintptr_t* buffers, std::uint64_t* scalars) const {
  if (count != slots_.size())
    throw UsageError(kernel_ + " takes " + std::to_string(slots_.size()) + " arguments, " + std::to_string(count) +
                     " were given (expected: " + expected() + ")");
  for (std::size_t i = 0; i < count; ++i) {
    const Arg& a = args[i];
    const Slot& s = slots_[i];
    if (s.kind == ArgSpec::Kind::scalar) {
      scalars[s.index] = scalar(s, i, a);
    } else {
      const char* kind = s.kind == ArgSpec::Kind::constant ? " constant" : " buffer";
      if (a.kind() != Arg::Kind::pointer)
        throw UsageError(what(s, i) + " is a " + s.dtype + kind + ": give its device pointer, not a number");
      if (*a.dtype() != '\0' && s.dtype != a.dtype())
        throw UsageError(what(s, i) + " holds " + s.dtype + ", but the pointer given points to " + a.dtype());
      buffers[s.index] = static_cast<std::uintptr_t>(a.bits());
    }
  }
}

}  // namespace autotune::runtime_detail
