// The identity of a kernel's code: what decides whether recorded trials still measure the kernel that would be
// compiled today. It follows the code the compiler sees, not the text: comments, white space, line splices and
// line markers do not count, a header the source includes by name counts as its text at the include (so moving
// code between a source and its header keeps the identity), include guards and `#pragma once` do not count, and
// the fallbacks of tunable macros (`#ifndef BLOCK_SIZE ... #endif`, dead in every tuned compilation because every
// parameter is passed as -DNAME=value) do not count. Every other token does, in order. docs/database.md says
// what invalidates trials and why.
#pragma once
#include <map>
#include <set>
#include <string>

#include "tuner/core/spec.hpp"

namespace autotune {

/// "c1:" + 16 hex digits: the version of these rules and the hash of normalized_code() of the spec's source with
/// its headers, its entry points, its extra defines and compile options. The macros taken as defined are the spec's
/// parameters, its `defines` and AUTOTUNE_STRICT (every tuned compilation passes them). A stub (no source) has the
/// identity of its imported rows, kImportedSourceHash. Thread-safe; no compiler needed (the lookup library uses it).
std::string code_identity(const TuningSpec& spec);

/// The token stream behind code_identity(): tokens joined by single spaces, preprocessor directives kept as
/// "# name tokens" lines. `headers` maps include names to texts (inlined once each where included in quotes);
/// conditionals on whether a macro of `defined` is defined (#ifdef, #ifndef, #if [!]defined(X), their #elif,
/// #else) are resolved as "defined", every other conditional is kept with all its branches.
std::string normalized_code(const std::string& source, const std::map<std::string, std::string>& headers,
                            const std::set<std::string>& defined);

}  // namespace autotune
