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

TuningSpec load_embedded(const std::string& spec_path) {
  auto text = embedded::find(spec_path);
  if (!text) throw UsageError("embedded spec '" + spec_path + "' is missing");
  TuningSpec s;
  try {
    s = TuningSpec::from_json_text(std::string(*text), "", false);
  } catch (const SpecError& e) {
    throw SpecError(e.pointer(), "kernels_src/" + spec_path + ": " + e.what());
  }
  auto src_path = dir_of(spec_path) + "/" + s.source_path;
  auto src = embedded::find(src_path);
  if (!src) throw SpecError("/source", "kernels_src/" + src_path + " is not embedded");
  s.source_text = std::string(*src);
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
                   "; or give the path of a .json spec)");
}

TuningSpec load_spec(const std::string& name_or_path) {
  auto ends_with = [&](const std::string& suf) {
    return name_or_path.size() >= suf.size() && name_or_path.compare(name_or_path.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (ends_with(".json") || name_or_path.find('/') != std::string::npos) return TuningSpec::from_file(name_or_path);
  return builtin_spec(name_or_path);
}

std::shared_ptr<const KernelAdapter> make_adapter(const TuningSpec& spec) {
  if (spec.family == "reduction") return make_reduction_adapter(spec);
  if (spec.family == "user") return make_user_adapter(spec);
  if (spec.family == "transpose") return make_transpose_adapter(spec);
  if (spec.family == "scan") return make_scan_adapter(spec);
  if (spec.family == "compaction") return make_compaction_adapter(spec);
  throw UsageError("kernel " + spec.name + ": unknown family '" + spec.family + "' (known: reduction, scan, transpose, compaction, user)");
}

}  // namespace autotune::kernels
