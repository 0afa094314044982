// A GPU executor of the tuner's own (tuner/cuda/executor_client.hpp) with the tool kernels loaded, for the gpu
// tests that run its requests directly (the draws of the reduction and the scan).
#pragma once
#include <catch2/catch.hpp>

#include <string>

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

}  // namespace autotune_test
