// The one recipe of a configuration's compilation: its NVRTC options and the key its binary is cached under.
// The tuner (CudaBackend), the launch API (tuner/runtime), `autotune explore` and the tests take both from here,
// so a binary the tuner cached is the binary an application finds, templated entry points included.
#include <algorithm>

#include "tuner/cuda/runtime.hpp"

namespace autotune::cuda {

namespace {

/// The adapter's options, the configuration's macros, then the spec's defines.
std::vector<std::string> build_options(const std::vector<std::string>& adapter_options, const Config& c,
                                       const std::map<std::string, std::string>& spec_defines,
                                       const std::vector<Param>& params) {
  std::vector<std::string> o = adapter_options;
  for (auto& s : config_defines(c, params)) o.push_back(std::move(s));
  for (const auto& [name, value] : spec_defines) o.push_back(value.empty() ? "-D" + name : "-D" + name + "=" + value);
  return o;
}

}  // namespace

std::vector<std::string> kernel_compile_options(const KernelAdapter& adapter, const Workload& w, const Config& c,
                                                bool reference) {
  const TuningSpec& spec = adapter.spec();
  std::vector<std::string> o = build_options(adapter.compile_options(w), c, spec.defines, spec.params);
  const bool own_source = spec.reference && !spec.reference->source.empty();
  // A reference kernel of its own is an entry point of the reference's source (the spec's unless it names one);
  // a reference configuration runs the spec's kernels.
  const bool reference_kernel = spec.reference && !spec.reference->configuration;
  std::vector<std::string> entries;
  if (!reference || !own_source) entries = spec.kernels;
  if (reference_kernel && (reference || !own_source) &&
      std::find(entries.begin(), entries.end(), spec.reference->launch.kernel) == entries.end())
    entries.push_back(spec.reference->launch.kernel);
  if (reference) {  // the comparison kernels are entry points of the reference's source
    for (const std::string& k : spec.compare_kernels())
      if (std::find(entries.begin(), entries.end(), k) == entries.end()) entries.push_back(k);
  }
  for (auto& e : entries) e = c.substitute(e);  // "scale<BLOCK_SIZE>" -> "scale<256>", as the plan names it
  for (auto& e : name_expression_options(entries)) o.push_back(std::move(e));
  return o;
}

std::string spec_binary_key(const TuningSpec& spec, const std::vector<std::string>& options, const std::string& arch) {
  return binary_key(spec.source_text, spec.headers, options, arch);
}

CompileRecipe compile_recipe(const KernelAdapter& adapter, const Workload& w, const Config& c, const std::string& arch,
                             bool reference) {
  CompileRecipe r;
  r.options = kernel_compile_options(adapter, w, c, reference);
  r.key = spec_binary_key(adapter.spec(), r.options, arch);
  return r;
}

}  // namespace autotune::cuda
