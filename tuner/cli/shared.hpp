// Small pieces the CLI's sub-commands share.
#pragma once
#include <cstdio>
#include <fstream>
#include <string>

#include "db/binary_cache.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/text.hpp"
#include "tuner/core/trial.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/specs/specs.hpp"

namespace autotune::cli {

using db::DbBinaryCache;

/// "72.67 us" or "1.234 ms" (format_time_ns).
inline std::string fmt_time(double ns) { return format_time_ns(ns); }

/// Writes (replaces) a file; UsageError when it cannot be written completely.
inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UsageError("cannot write " + path);
  out << text;
  out.close();
  if (!out) throw UsageError("cannot write " + path + " (disk full?)");
}

/// What to do instead, for the error of `autotune COMMAND KERNEL` on a machine without an NVIDIA GPU: a built-in
/// kernel replays the H100 recording of the source tree; a user's kernel (a spec or T1 file) has no recording
/// until it is tuned on a GPU machine, so the way is to tune it there and replay that database here.
inline std::string no_gpu_hint(const std::string& command, const std::string& kernel) {
  std::string s = "\n  `autotune " + command + "` needs an NVIDIA GPU. ";
  if (command == "revalidate")
    return s + "It re-measures recorded configurations with today's kernel: run it on the GPU";
  const std::string replay = "autotune " + command + " " + kernel + " --simulate --from ";
  if (specs::is_builtin(kernel)) {
    s += "Without one, replay the trials recorded on an H100 (tests/data/ of the source tree): " + replay +
         "tests/data/recorded_h100.db";
    if (command == "tune")
      s += " --n 268435456 (every family at two sizes; the error of a missing size lists those recorded)";
  } else {
    s += "Without one, tune it on a GPU machine (autotune --db tuned.db tune " + kernel +
         "), bring tuned.db here and replay its trials: " + replay + "tuned.db (autotune best " + kernel +
         " --db tuned.db serves the best configuration)";
  }
  if (command == "explore") s += ", or print the plan with --plan-only";
  return s;
}

}  // namespace autotune::cli
