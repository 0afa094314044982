#include "tuner/cuda/config_compiler.hpp"

#include "tuner/cuda/runtime.hpp"

namespace autotune::cuda::detail {

std::vector<std::string> ConfigCompiler::options_for(const Workload& w, const Config& c, bool reference) const {
  return kernel_compile_options(*adapter_, w, c, reference);
}

std::string ConfigCompiler::program_name() const {
  const TuningSpec& spec = adapter_->spec();
  if (!spec.source_path.empty()) {
    auto slash = spec.source_path.find_last_of('/');
    return slash == std::string::npos ? spec.source_path : spec.source_path.substr(slash + 1);
  }
  return (spec.name.empty() ? std::string("kernel") : spec.name) + ".cu";
}

// The key hashes the whole source and its headers (tens of KB) and a configuration is named several times
// (upcoming, its batch, the readiness checks of a time-limited batch, evaluated), so keys are kept by their options
// (which include the workload's macros).
const std::string& ConfigCompiler::key_for(const std::vector<std::string>& options) {
  std::string joined;
  for (const std::string& o : options) {
    joined += o;
    joined += '\0';
  }
  auto known = keys_by_options_.find(joined);
  if (known == keys_by_options_.end())
    known = keys_by_options_
                .emplace(std::move(joined),
                         spec_binary_key(adapter_->spec(), options, arch_))
                .first;
  return known->second;
}

std::vector<CompilePipeline::Item> ConfigCompiler::items(const Workload& w, const std::vector<Config>& configs) {
  std::vector<CompilePipeline::Item> items;
  items.reserve(configs.size());
  for (const Config& c : configs) {
    std::vector<std::string> options = options_for(w, c);
    CompilePipeline::Item item;
    item.key = key_for(options);
    item.task = [spec = &adapter_->spec(), name = program_name(), options = std::move(options), a = arch_,
                 processes = processes_] {
      return processes ? compile_in_worker(spec->source_text, spec->headers, name, options, a)
                       : compile(spec->source_text, spec->headers, name, options, a);
    };
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace autotune::cuda::detail
