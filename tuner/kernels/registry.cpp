#include "tuner/kernels/registry.hpp"

#include <algorithm>

#include "tuner/core/error.hpp"
#include "tuner/kernels/embedded.hpp"

namespace autotune::kernels {

namespace {

std::string dir_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

/// The embedded kernel headers the spec's source includes, so that a header's text is part of its source hash.
void add_headers(TuningSpec& s) {
  for (const embedded::File* h : embedded::headers_for(s.source_text)) s.headers[h->path] = std::string(h->data, h->size);
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

TuningSpec load_spec(const std::string& name_or_path, const StoredSpecs& stored) {
  auto ends_with = [&](const std::string& suf) {
    return name_or_path.size() >= suf.size() && name_or_path.compare(name_or_path.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (ends_with(".json") || name_or_path.find('/') != std::string::npos) {
    TuningSpec s = TuningSpec::from_file(name_or_path);
    add_headers(s);
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

std::shared_ptr<const KernelAdapter> make_adapter(const TuningSpec& spec) {
  if (spec.is_stub())
    throw UsageError("kernel " + spec.name + " is a spec stub created by an import: it has parameters and problem "
                     "sizes but no source, entry points, arguments or launch. Replay, summarise or compare its "
                     "recorded trials (tune --simulate, summary, best, compare-strategies); to run it on a GPU, "
                     "complete the spec (docs/interop.md) and tune the completed .json file");
  if (spec.family == "reduction") return make_reduction_adapter(spec);
  if (spec.family == "user") return make_user_adapter(spec);
  if (spec.family == "transpose") return make_transpose_adapter(spec);
  if (spec.family == "scan") return make_scan_adapter(spec);
  if (spec.family == "compaction") return make_compaction_adapter(spec);
  throw UsageError("kernel " + spec.name + ": unknown family '" + spec.family + "' (known: reduction, scan, transpose, compaction, user)");
}

}  // namespace autotune::kernels
