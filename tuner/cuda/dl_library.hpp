// Internal to tuner/cuda: the one way the optional tool libraries (NVML in nvml.cpp, CUPTI in cupti.cpp) are
// loaded: dlopen with RTLD_NOW | RTLD_LOCAL (their symbols stay out of the global namespace), never closed, each
// entry point resolved into a typed slot, and the process's copy loaded once with the reason kept when it cannot
// be. Nothing links these libraries, so a machine without them still runs the tuner.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace autotune::cuda::detail {

/// A shared library opened with dlopen and never closed, and the entry points resolved from it. Not thread-safe.
class DlLibrary {
 public:
  /// Opens library (a name for dlopen's search or a path). False and *why ("<library> cannot be loaded
  /// (<dlerror>)") when it cannot be opened.
  bool open(const std::string& library, std::string* why);

  /// Resolves symbol into slot; false (and *slot nullptr) when the library has no such symbol. For an optional
  /// entry point or one with an older name to try next.
  template <typename Fn>
  bool resolve(Fn* slot, const char* symbol) const {
    *slot = reinterpret_cast<Fn>(lookup(symbol));
    return *slot != nullptr;
  }
  /// Resolves an entry point the library must have; the first one missing is remembered (missing()).
  template <typename Fn>
  void need(Fn* slot, const char* symbol) {
    if (!resolve(slot, symbol) && missing_ == nullptr) missing_ = symbol;
  }
  /// The first symbol need() did not find, nullptr when it found all.
  const char* missing() const { return missing_; }

 private:
  void* lookup(const char* symbol) const;
  void* handle_ = nullptr;
  const char* missing_ = nullptr;
};

/// What an environment variable (AUTOTUNE_NVML, AUTOTUNE_CUPTI) says of a tool library.
struct LibraryChoice {
  bool off = false;     // the variable is "off"
  std::string library;  // what it names; "" when unset or empty (the default search)
};
LibraryChoice library_choice(const char* env_var);

/// The process's copy of a tool's entry points (Api: a struct with its slots), loaded by the first get() and
/// kept for the process; the reason it could not be loaded is kept too. Thread-safe.
template <typename Api>
class LoadedOnce {
 public:
  /// The loaded entry points, loading them with load on the first call; nullptr and *why (when why is not null)
  /// when they could not be (load's reason, remembered).
  const Api* get(std::string* why, const std::function<std::unique_ptr<Api>(std::string* why)>& load) {
    std::call_once(once_, [&] { loaded_ = load(&reason_); });
    if (loaded_ == nullptr && why != nullptr) *why = reason_;
    return loaded_.get();
  }

 private:
  std::once_flag once_;
  std::unique_ptr<Api> loaded_;
  std::string reason_;
};

}  // namespace autotune::cuda::detail
