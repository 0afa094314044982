#include "tuner/kernels/embedded.hpp"

namespace autotune::embedded {

std::optional<std::string_view> find(std::string_view path) {
  for (std::size_t i = 0; i < file_count; ++i)
    if (path == files[i].path) return std::string_view(files[i].data, files[i].size);
  return std::nullopt;
}

std::vector<std::string> spec_paths() {
  std::vector<std::string> out;
  const std::string_view suffix = ".tune.json";
  for (std::size_t i = 0; i < file_count; ++i) {
    std::string_view p = files[i].path;
    if (p.size() > suffix.size() && p.substr(p.size() - suffix.size()) == suffix) out.emplace_back(p);
  }
  return out;
}

}  // namespace autotune::embedded
