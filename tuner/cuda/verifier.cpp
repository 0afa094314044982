#include "tuner/cuda/verifier.hpp"

#include <algorithm>

#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/plan_binding.hpp"

namespace autotune::cuda::detail {
namespace {

const DeviceBuffer& expected_buffer(const std::map<std::string, DeviceBuffer>& expected, const std::string& name) {
  auto it = expected.find(name);
  if (it == expected.end()) throw UsageError("expected values '" + name + "' were not uploaded");
  return it->second;
}

}  // namespace

void Verifier::load_user_kernels(const std::vector<unsigned char>& cubin) {
  if (user_ != nullptr) {
    CUmodule m = user_;
    user_ = nullptr;
    user_fns_.clear();
    check(d_.module_unload(m), "cuModuleUnload(comparison kernels)");
  }
  check(d_.module_load_data(&user_, cubin.data()), "cuModuleLoadData(comparison kernels)");
}

CUfunction Verifier::compare_function(const OutputCheck& c) {
  if (c.kind == OutputCheck::Kind::user_kernel) {
    if (user_ == nullptr)
      throw EnvironmentError("GPU executor: comparison kernel '" + c.kernel + "' requested before its module");
    auto it = user_fns_.find(c.kernel);
    if (it != user_fns_.end()) return it->second;
    return user_fns_.emplace(c.kernel, resolve_function(d_, user_, c.kernel)).first->second;
  }
  return tools_.compare(compare_kernel_name(c));
}

CheckVerdict Verifier::compare(const OutputCheck& c, const LaunchPlan& plan,
                               const std::vector<std::uintptr_t>& addresses,
                               const std::map<std::string, DeviceBuffer>& expected) {
  const BufferDecl* out = plan.find(c.output);
  if (out == nullptr || out->role != BufferRole::output)
    throw UsageError("comparison of '" + c.output + "': not an output buffer of the launch plan");
  const auto got = static_cast<CUdeviceptr>(addresses[static_cast<std::size_t>(out - plan.buffers.data())]);
  const DeviceBuffer& want = expected_buffer(expected, c.expected);
  const DeviceBuffer* tol =
      c.kind == OutputCheck::Kind::abs_tolerance ? &expected_buffer(expected, c.tolerance) : nullptr;
  c.validate(out->bytes, want.bytes, tol != nullptr ? tol->bytes : 0);
  CheckVerdict v;
  if (c.count == 0) return v;
  if (results_.ptr == 0) results_ = memory_.allocate(2 * kCompareMaxBlocks * sizeof(std::uint64_t));
  if (c.kind == OutputCheck::Kind::user_kernel) return compare_by_user_kernel(c, got, want.ptr);
  const std::uint64_t blocks =
      std::clamp<std::uint64_t>((c.count + kCompareMinChunk - 1) / kCompareMinChunk, 1, kCompareMaxBlocks);
  std::uint64_t chunk = (c.count + blocks - 1) / blocks;
  CUdeviceptr got_arg = got, want_arg = want.ptr, tol_arg = tol != nullptr ? tol->ptr : 0;
  unsigned long long count = c.count;
  unsigned es = c.element_bytes;
  double relative = c.relative, absolute = c.absolute;
  CUdeviceptr results = results_.ptr;
  void* args[] = {&got_arg, &want_arg, &tol_arg, &count, &chunk, &es, &relative, &absolute, &results};
  const CUresult r = d_.launch_kernel(compare_function(c), static_cast<unsigned>(blocks), 1, 1, kCompareBlockThreads, 1,
                                      1, 0, memory_.stream(), args, nullptr);
  if (r != CUDA_SUCCESS) throw_call_error(r, "cuLaunchKernel(" + compare_kernel_name(c) + ")");
  std::vector<std::uint64_t> per_block(2 * blocks);
  check(d_.memcpy_dtoh(per_block.data(), results, per_block.size() * sizeof(std::uint64_t)), "cuMemcpyDtoH");
  for (std::uint64_t b = 0; b < blocks; ++b) {
    if (per_block[2 * b] == 0) continue;
    v.mismatches += per_block[2 * b];
    if (v.examples.size() < kMaxMismatchExamples)
      v.examples.push_back(example(c, got, want.ptr, tol, per_block[2 * b + 1]));
  }
  return v;
}

CheckVerdict Verifier::compare_by_user_kernel(const OutputCheck& c, CUdeviceptr got, CUdeviceptr want) {
  const std::uint64_t start[2] = {0, ~std::uint64_t{0}};
  CUdeviceptr results = results_.ptr;
  check(d_.memcpy_htod(results, start, sizeof start), "cuMemcpyHtoD(comparison result)");
  const std::uint64_t blocks = std::clamp<std::uint64_t>(
      (c.count + kUserCompareBlockThreads - 1) / kUserCompareBlockThreads, 1, kUserCompareMaxBlocks);
  CUdeviceptr got_arg = got, want_arg = want;
  unsigned long long count = c.count;
  void* args[] = {&got_arg, &want_arg, &count, &results};
  const CUresult r = d_.launch_kernel(compare_function(c), static_cast<unsigned>(blocks), 1, 1,
                                      kUserCompareBlockThreads, 1, 1, 0, memory_.stream(), args, nullptr);
  if (r != CUDA_SUCCESS) throw_call_error(r, "cuLaunchKernel(comparison kernel " + c.kernel + ")");
  std::uint64_t result[2] = {0, 0};
  check(d_.memcpy_dtoh(result, results, sizeof result), "cuMemcpyDtoH(comparison result)");
  CheckVerdict v;
  v.mismatches = result[0];
  if (v.mismatches > 0 && result[1] < c.count) v.examples.push_back(example(c, got, want, nullptr, result[1]));
  return v;
}

Mismatch Verifier::example(const OutputCheck& c, CUdeviceptr got, CUdeviceptr want, const DeviceBuffer* tol,
                           std::uint64_t i) {
  Mismatch m;
  m.index = i;
  m.got.resize(c.element_bytes);
  m.expected.resize(c.expected_element_bytes());
  check(d_.memcpy_dtoh(m.got.data(), got + i * m.got.size(), m.got.size()), "cuMemcpyDtoH");
  check(d_.memcpy_dtoh(m.expected.data(), want + i * m.expected.size(), m.expected.size()), "cuMemcpyDtoH");
  if (tol != nullptr) {
    if (c.reference_bytes == 4) {
      float t = 0;
      check(d_.memcpy_dtoh(&t, tol->ptr + i * 4, 4), "cuMemcpyDtoH");
      m.tolerance = t;
    } else {
      check(d_.memcpy_dtoh(&m.tolerance, tol->ptr + i * 8, 8), "cuMemcpyDtoH");
    }
  }
  return m;
}

void Verifier::destroy() noexcept {
  memory_.free_quietly(results_);
  if (user_ != nullptr) d_.module_unload(user_);
  user_ = nullptr;
}

}  // namespace autotune::cuda::detail
