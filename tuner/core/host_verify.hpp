// The verification of a program that embeds the tuner: a spec whose top-level "verification" has "callback": true
// is verified on the host by a function the program registered (the Python package's Kernel Tuner `verify`
// callable, through the C interface's gat_set_verify_callback), with every output of the verification run and the
// expected values (docs/spec-format.md "Verification"). One hook per process; the user adapter calls it.
#pragma once
#include <functional>
#include <string>

#include "tuner/core/plan.hpp"

namespace autotune {

/// Decides whether a verification run of kernel `kernel` is correct (outputs and expected values by argument name,
/// little-endian bytes): "" when it is, else why not (the trial's log).
/// Called from the thread that measures (not the thread that registered it); may throw, which counts as wrong with
/// the exception's message.
using HostVerifyHook =
    std::function<std::string(const std::string& kernel, const HostBuffers& outputs, const HostBuffers& expected)>;

/// Registers the hook (an empty function removes it). Thread-safe.
void set_host_verify_hook(HostVerifyHook hook);

/// Runs the hook. UsageError when none is registered (a spec asks for a callback in a program that gave none).
std::string run_host_verify_hook(const std::string& kernel, const HostBuffers& outputs, const HostBuffers& expected);

}  // namespace autotune
