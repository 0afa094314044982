#include "tuner/cuda/tool_module.hpp"

#include "tuner/core/error.hpp"
#include "tuner/cuda/device_kernels.hpp"

namespace autotune::cuda::detail {

void ToolModule::load(const std::vector<unsigned char>& cubin) {
  if (module_ != nullptr) {
    CUmodule m = module_;
    module_ = nullptr;
    flush_ = nullptr;
    draw_ = nullptr;
    for (CUfunction& f : prefix_) f = nullptr;
    compare_.clear();
    check(d_.module_unload(m), "cuModuleUnload");
  }
  check(d_.module_load_data(&module_, cubin.data()), "cuModuleLoadData(tool kernels)");
  check(d_.module_get_function(&flush_, module_, kL2FlushKernel), "cuModuleGetFunction(L2 flush)");
  check(d_.module_get_function(&draw_, module_, kDrawKernel), "cuModuleGetFunction(draw)");
  const char* prefix_names[] = {kPrefixTotalsKernel, kPrefixCarriesKernel, kPrefixWriteKernel};
  for (int k = 0; k < 3; ++k)
    check(d_.module_get_function(&prefix_[k], module_, prefix_names[k]), "cuModuleGetFunction(prefix)");
}

CUfunction ToolModule::compare(const std::string& name) {
  if (module_ == nullptr) throw EnvironmentError("GPU executor: a comparison was requested before the tool kernels");
  auto it = compare_.find(name);
  if (it != compare_.end()) return it->second;
  CUfunction fn = nullptr;
  check(d_.module_get_function(&fn, module_, name.c_str()), "cuModuleGetFunction(comparison kernel)");
  return compare_.emplace(name, fn).first->second;
}

void ToolModule::destroy() noexcept {
  if (module_ != nullptr) d_.module_unload(module_);
  module_ = nullptr;
}

}  // namespace autotune::cuda::detail
