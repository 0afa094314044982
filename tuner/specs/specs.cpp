// Built-in kernel specs (embedded at build time), spec files and stored stubs by name; no adapter code.
#include "tuner/specs/specs.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tuner/core/error.hpp"
#include "tuner/specs/embedded.hpp"
#include "tuner/specs/t1.hpp"

namespace autotune::specs {

namespace {

std::string dir_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

/// The embedded kernel headers the spec's source includes, so that a header's text is part of its source hash.
void add_headers(TuningSpec& s) {
  for (const embedded::File* h : embedded::headers_for(s.source_text))
    s.headers[h->path] = std::string(h->data, h->size);
}

/// The names a text includes in quotes (#include "name"), in order of appearance.
std::vector<std::string> quoted_includes(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while ((at = text.find("#include", at)) != std::string::npos) {
    at += 8;
    std::size_t q = at;
    while (q < text.size() && (text[q] == ' ' || text[q] == '\t')) ++q;
    if (q >= text.size() || text[q] != '"') continue;
    const std::size_t end = text.find('"', q + 1);
    if (end == std::string::npos || text.find('\n', q) < end) continue;
    out.push_back(text.substr(q + 1, end - q - 1));
  }
  return out;
}

/// A spec file's headers: every name its source (and, recursively, those headers) includes in quotes, read from
/// the source's folder where the file exists there, else the embedded kernel header of that name; a name found in
/// neither is left to the compiler (which reports it). Throws SpecError when a header exists but cannot be read.
void add_file_headers(TuningSpec& s, const std::string& source_dir) {
  std::vector<std::string> todo = quoted_includes(s.source_text);
  if (s.reference)
    for (std::string& name : quoted_includes(s.reference->source_text)) todo.push_back(std::move(name));
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (s.headers.count(name)) continue;
    // Next to the source, else one folder up (a tree laid out like kernels_src/: <family>/x.cu includes
    // "common/y.cuh"), else the embedded kernel header of that name.
    const std::filesystem::path dir(source_dir.empty() ? "." : source_dir);
    std::filesystem::path local = dir / name;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(local, ec)) local = dir.parent_path() / name;
    std::string text;
    if (std::filesystem::is_regular_file(local, ec)) {
      std::ifstream in(local, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      if (!in && !in.eof()) throw SpecError("/source", "cannot read the header " + local.string());
      text = ss.str();
    } else if (auto e = embedded::find(name)) {
      text = std::string(*e);
    } else {
      continue;
    }
    for (std::string& inner : quoted_includes(text)) todo.push_back(std::move(inner));
    s.headers[name] = std::move(text);
  }
}

/// Earlier texts of the built-in kernel `s` with its code identity (kernels_src/source_history.json, written by
/// scripts/source_history.sh): their trials count as this source's.
void add_equivalent_sources(TuningSpec& s) {
  static const nlohmann::json history = [] {
    const auto text = embedded::find("source_history.json");
    return text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  }();
  if (!history.is_object() || !history.contains("sources")) return;
  const std::string identity = s.code_identity(), current = s.source_hash();
  for (const auto& e : history["sources"])
    if (e.value("kernel", "") == s.name && e.value("identity", "") == identity && e.value("source_hash", "") != current)
      s.equivalent_sources.push_back(e.value("source_hash", ""));
}

/// The folder of a spec file's source (its headers are looked for there).
std::string source_dir_of(const TuningSpec& s, const std::string& spec_path) {
  const std::string spec_dir = dir_of(spec_path);
  const bool absolute = !s.source_path.empty() && s.source_path[0] == '/';
  return dir_of(absolute || spec_dir.empty() ? s.source_path : spec_dir + "/" + s.source_path);
}

TuningSpec load_embedded(const std::string& spec_path) {
  auto text = embedded::find(spec_path);
  if (!text) throw UsageError("embedded spec '" + spec_path + "' is missing");
  TuningSpec s;
  try {
    s = TuningSpec::from_json_text(std::string(*text), "", false);
  } catch (const SpecError& e) {
    throw SpecError::in_context("kernels_src/" + spec_path, e);
  }
  auto src_path = dir_of(spec_path) + "/" + s.source_path;
  auto src = embedded::find(src_path);
  if (!src) throw SpecError("/source", "kernels_src/" + src_path + " is not embedded");
  s.source_text = std::string(*src);
  add_headers(s);
  add_equivalent_sources(s);
  return s;
}

}  // namespace

std::vector<std::string> builtin_names() {
  std::vector<std::string> out;
  for (const auto& p : embedded::spec_paths()) out.push_back(load_embedded(p).name);
  std::sort(out.begin(), out.end());
  return out;
}

TuningSpec builtin_spec(const std::string& name) {
  // Fast path: <family>/<name>.tune.json holds spec `name` by convention.
  for (const auto& p : embedded::spec_paths()) {
    auto slash = p.find_last_of('/');
    if (p.substr(slash + 1) == name + ".tune.json") {
      TuningSpec s = load_embedded(p);
      if (s.name == name) return s;
    }
  }
  std::string known;
  for (const auto& p : embedded::spec_paths()) {
    TuningSpec s = load_embedded(p);
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw UsageError("unknown kernel '" + name + "' (built-in kernels: " + known +
                   "; or give the path of a .json spec, or the name of a kernel imported into the database)");
}

bool is_builtin(const std::string& name) {
  for (const auto& p : embedded::spec_paths())
    if (load_embedded(p).name == name) return true;
  return false;
}

TuningSpec load_spec_text(const std::string& text, const std::string& spec_path) {
  const std::string dir = dir_of(spec_path);
  TuningSpec s;
  try {
    s = TuningSpec::from_json_text(text, dir.empty() ? "." : dir, true);
  } catch (const SpecError& e) {
    throw SpecError::in_context(spec_path, e);
  }
  add_file_headers(s, source_dir_of(s, spec_path));
  return s;
}

TuningSpec load_spec(const std::string& name_or_path, const StoredSpecs& stored) {
  auto ends_with = [&](const std::string& suf) {
    return name_or_path.size() >= suf.size() &&
           name_or_path.compare(name_or_path.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (ends_with(".json") || name_or_path.find('/') != std::string::npos) {
    TuningSpec s = TuningSpec::from_file(name_or_path);
    add_file_headers(s, source_dir_of(s, name_or_path));
    return s;
  }
  if (stored && !is_builtin(name_or_path))
    if (auto text = stored(name_or_path)) {
      try {
        return TuningSpec::from_json_text(*text, "", false);
      } catch (const SpecError& e) {
        throw SpecError::in_context("stored spec of kernel '" + name_or_path + "'", e);
      }
    }
  return builtin_spec(name_or_path);
}

TuningSpec resolve_kernel(const std::string& name_or_path, const StoredSpecs& stored,
                          std::vector<std::string>* notes) {
  const bool path = name_or_path.find('/') != std::string::npos ||
                    (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0);
  if (path)
    if (auto text = t1_spec_text(name_or_path, notes)) return load_spec_text(*text, name_or_path);
  return load_spec(name_or_path, stored);
}

}  // namespace autotune::specs
