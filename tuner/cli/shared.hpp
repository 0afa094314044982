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

}  // namespace autotune::cli
