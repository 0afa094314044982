// The draws of the reduction and the scan on the GPU: an executor of the tuner's own
// (tuner/cuda/executor_client.hpp) with the tool kernels loaded, for the tests that run its requests directly, and
// the backend settings (inputs drawn on the GPU or made on the host, verified on either) the tests run through.
#pragma once
#include <catch2/catch.hpp>

#include <initializer_list>
#include <memory>
#include <string>

#include "tuner/core/adapter.hpp"
#include "tuner/core/compile.hpp"
#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/executor_client.hpp"
#include "tuner/cuda/messages.hpp"
#include "tuner/cuda/runtime.hpp"

namespace autotune_test {

/// Compiles the tool kernels for the executor's GPU and loads them into it, as CudaBackend does.
inline void load_tool_kernels(autotune::cuda::detail::ExecutorClient& executor) {
  namespace detail = autotune::cuda::detail;
  const autotune::CompileResult tools =
      autotune::cuda::compile(detail::tool_kernels_source(), {}, "autotune_tools.cu", detail::tool_kernels_options(),
                              "sm_" + std::to_string(executor.device().cc));
  INFO(tools.log);
  REQUIRE(tools.ok);
  detail::ToolKernelsRequest load;
  load.cubin = tools.cubin;
  executor.call_ok(load, "loading the tool kernels");
}

/// For each workload of `keys`: a backend with `base`'s options, inputs drawn on the GPU or made on the host, and
/// verification on the GPU or the host (every combination, each with a backend of its own), then
/// check(backend, workload, on_device, verify) with the combination named in the test's context.
template <class Check>
void for_each_draw_setting(const std::shared_ptr<const autotune::KernelAdapter>& adapter,
                           const autotune::cuda::TimingOptions& base, autotune::BinaryCache* cache,
                           std::initializer_list<const char*> keys, Check&& check) {
  using autotune::cuda::TimingOptions;
  for (const bool on_device : {true, false}) {
    for (const auto verify : {TimingOptions::Verify::device, TimingOptions::Verify::host}) {
      TimingOptions o = base;
      o.draw_on_device = on_device;
      o.verify = verify;
      autotune::cuda::CudaBackend backend(adapter, o, cache);
      for (const char* key : keys) {
        INFO(key << (on_device ? ", drawn on the GPU" : ", made on the host")
                 << (verify == TimingOptions::Verify::host ? ", verified on the host" : ""));
        check(backend, autotune::Workload::parse(key), on_device, verify);
      }
    }
  }
}

}  // namespace autotune_test
