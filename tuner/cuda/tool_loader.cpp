#include "tuner/cuda/tool_loader.hpp"

#include "tuner/core/error.hpp"
#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/trial_reply.hpp"

namespace autotune::cuda::detail {

void ToolLoader::begin_compile(const std::string& arch) {
  arch_ = arch;
  if (!cubin_.empty() || compile_.valid()) return;
  compile_ = std::async(std::launch::async, [a = arch_] {
               return compile(tool_kernels_source(), {}, "autotune_tools.cu", tool_kernels_options(), a);
             }).share();
}

void ToolLoader::install(ExecutorClient& executor) {
  if (cubin_.empty()) {
    begin_compile(arch_);
    CompileResult r = compile_.get();
    if (!r.ok)
      throw EnvironmentError("the tuner's own kernels do not compile for " + arch_ + ":\n" +
                             excerpt(r.log, kLogExcerpt));
    cubin_ = std::move(r.cubin);
  }
  ToolKernelsRequest q;
  q.cubin = cubin_;
  executor.call_ok(q, "loading the tool kernels failed", kToolsTimeoutS);
}

void ToolLoader::install_once(ExecutorClient& executor) {
  if (installed_) return;
  install(executor);
  installed_ = true;
}

void ToolLoader::reinstall(ExecutorClient& executor) {
  if (installed_) install(executor);
}

}  // namespace autotune::cuda::detail
