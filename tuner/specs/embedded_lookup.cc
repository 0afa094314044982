#include "tuner/specs/embedded.hpp"

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

std::vector<const File*> headers_for(std::string_view source) {
  const std::string_view suffix = ".cuh";
  std::vector<bool> taken(file_count, false);
  std::vector<const File*> out;
  auto names = [](std::string_view text, std::string_view path) {
    for (auto at = text.find(path); at != std::string_view::npos; at = text.find(path, at + 1))
      if (at > 0 && text[at - 1] == '"' && at + path.size() < text.size() && text[at + path.size()] == '"') return true;
    return false;
  };
  // Until no header is added: a header named by the source or by a header taken before.
  for (bool added = true; added;) {
    added = false;
    for (std::size_t i = 0; i < file_count; ++i) {
      const std::string_view p = files[i].path;
      if (taken[i] || p.size() <= suffix.size() || p.substr(p.size() - suffix.size()) != suffix) continue;
      bool named = names(source, p);
      for (std::size_t k = 0; k < out.size() && !named; ++k) named = names({out[k]->data, out[k]->size}, p);
      if (named) {
        taken[i] = true;
        added = true;
        out.push_back(&files[i]);
      }
    }
  }
  std::vector<const File*> ordered;  // table order, whatever order they were found in
  for (std::size_t i = 0; i < file_count; ++i)
    if (taken[i]) ordered.push_back(&files[i]);
  return ordered;
}

}  // namespace autotune::embedded
