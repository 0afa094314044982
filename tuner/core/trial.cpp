#include "tuner/core/trial.hpp"

#include <stdexcept>

namespace autotune {

namespace {
constexpr TrialStatus kAll[] = {TrialStatus::ok, TrialStatus::compile_error, TrialStatus::launch_error,
                                TrialStatus::wrong_result, TrialStatus::runtime_fault, TrialStatus::timeout,
                                TrialStatus::invalid};
}

const char* to_string(TrialStatus s) {
  switch (s) {
    case TrialStatus::ok: return "ok";
    case TrialStatus::compile_error: return "compile_error";
    case TrialStatus::launch_error: return "launch_error";
    case TrialStatus::wrong_result: return "wrong_result";
    case TrialStatus::runtime_fault: return "runtime_fault";
    case TrialStatus::timeout: return "timeout";
    case TrialStatus::invalid: return "invalid";
  }
  return "unknown";
}

TrialStatus trial_status_from_string(const std::string& s) {
  for (TrialStatus t : kAll)
    if (s == to_string(t)) return t;
  throw std::invalid_argument("unknown trial status '" + s + "'");
}

}  // namespace autotune
