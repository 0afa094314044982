// Typed exceptions for environment failures (configuration failures are TrialStatus values, not exceptions).
#pragma once
#include <stdexcept>
#include <string>

namespace autotune {

/// Base of every error the project throws on purpose. what() is a one-line message for the user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A tuning spec is malformed. pointer() is the JSON pointer of the offending field ("" = whole document).
class SpecError : public Error {
 public:
  SpecError(std::string pointer, const std::string& msg)
      : Error(pointer.empty() ? msg : ("at " + pointer + ": " + msg)), pointer_(std::move(pointer)) {}
  const std::string& pointer() const { return pointer_; }
  /// The same error with a context in front ("FILE: at /ptr: msg"): the pointer is kept, not printed twice.
  static SpecError in_context(const std::string& context, const SpecError& e) {
    SpecError out("", context + ": " + e.what());
    out.pointer_ = e.pointer_;
    return out;
  }

 private:
  std::string pointer_;
};

/// A constraint or launch expression cannot be parsed or evaluated (unknown variable, division by zero).
class ExprError : public Error {
 public:
  using Error::Error;
};

/// The database is unusable (not SQLite, corrupt, newer schema, read-only, disk full).
class DbError : public Error {
 public:
  using Error::Error;
};

/// The machine cannot do what was asked (no NVIDIA driver, no GPU, NVRTC missing, out of device memory).
class EnvironmentError : public Error {
 public:
  using Error::Error;
};

/// The user asked for something that does not exist or cannot work (unknown kernel, n too large, bad flag).
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace autotune
