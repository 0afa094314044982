// Kernel sources and specs from kernels_src/, embedded at build time (see cmake/Embed.cmake).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace autotune::embedded {

struct File {
  const char* path;  // relative to kernels_src/, e.g. "reduction/reduction.cu"
  const char* data;
  std::size_t size;
};

extern const File files[];
extern const std::size_t file_count;

/// Contents of an embedded file, or nullopt.
std::optional<std::string_view> find(std::string_view path);
/// Paths of every embedded "*.tune.json" spec.
std::vector<std::string> spec_paths();
/// The kernel headers ("*.cuh", e.g. "common/lookback.cuh") that `source` names in quotes (#include "...")
/// directly or through another of them, in table order: what NVRTC gets as named headers, the include name
/// being the path. Empty for a source that includes none. Thread-safe.
std::vector<const File*> headers_for(std::string_view source);

}  // namespace autotune::embedded
