#include "tuner/cuda/plan_binding.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "tuner/core/error.hpp"

namespace autotune::cuda::detail {

namespace {

// Dynamic shared memory above this needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
constexpr std::uint32_t kDefaultSharedLimit = 48 * 1024;

template <typename T>
std::uint64_t to_slot(T v) {
  std::uint64_t slot = 0;
  std::memcpy(&slot, &v, sizeof v);
  return slot;
}

std::string dims_text(const std::array<std::uint32_t, 3>& a) {
  return std::to_string(a[0]) + "x" + std::to_string(a[1]) + "x" + std::to_string(a[2]);
}

std::size_t buffer_index(const LaunchPlan& plan, const std::string& name) {
  for (std::size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].name == name) return i;
  throw UsageError("launch plan refers to undeclared buffer '" + name + "'");
}

std::uint64_t scalar_slot(const KernelArg& a) {
  switch (a.kind) {
    case KernelArg::Kind::i32: return to_slot(static_cast<std::int32_t>(a.i));
    case KernelArg::Kind::u32: return to_slot(static_cast<std::uint32_t>(a.i));
    case KernelArg::Kind::i64: return to_slot(static_cast<std::int64_t>(a.i));
    case KernelArg::Kind::u64: return to_slot(static_cast<std::uint64_t>(a.i));
    case KernelArg::Kind::f32: return to_slot(static_cast<float>(a.f));
    case KernelArg::Kind::f64: return to_slot(static_cast<double>(a.f));
    case KernelArg::Kind::buffer: break;
  }
  throw UsageError("launch plan: unknown kernel argument kind");
}

BoundStep bind_memset(const LaunchPlan& plan, const LaunchStep& s) {
  BoundStep st;
  st.kind = s.kind;
  st.name = "memset32(" + s.buffer + ")";
  st.buffer = buffer_index(plan, s.buffer);
  const std::size_t bytes = plan.buffers[st.buffer].bytes;
  if (s.offset_bytes % 4 != 0) throw UsageError("launch plan: " + st.name + " starts at an unaligned offset");
  if (s.offset_bytes > bytes || s.count > (bytes - s.offset_bytes) / 4)
    throw UsageError("launch plan: " + st.name + " writes beyond the buffer's " + std::to_string(bytes) + " bytes");
  st.value = s.value;
  st.count = s.count;
  st.offset_bytes = s.offset_bytes;
  return st;
}

}  // namespace

std::string BoundStep::describe() const {
  if (kind == LaunchStep::Kind::memset32) return "cuMemsetD32Async(" + name + ")";
  return "cuLaunchKernel(" + name + ", grid " + dims_text(grid) + ", block " + dims_text(block) + ", " +
         std::to_string(shared_bytes) + " B dynamic shared)";
}

BoundPlan bind_plan(const Driver& d, CUmodule module, const LaunchPlan& plan) {
  BoundPlan out;
  std::map<std::string, CUfunction> functions;
  std::map<std::string, std::uint32_t> max_shared;
  for (const auto& s : plan.steps) {
    if (s.kind == LaunchStep::Kind::memset32) {
      out.steps.push_back(bind_memset(plan, s));
      continue;
    }
    BoundStep st;
    st.kind = s.kind;
    st.name = s.kernel;
    auto fit = functions.find(s.kernel);
    if (fit == functions.end()) {
      CUfunction fn = nullptr;
      const CUresult r = d.module_get_function(&fn, module, s.kernel.c_str());
      if (r != CUDA_SUCCESS) throw_call_error(r, "cuModuleGetFunction(" + s.kernel + ")");
      fit = functions.emplace(s.kernel, fn).first;
    }
    st.fn = fit->second;
    st.grid = s.grid;
    st.block = s.block;
    st.shared_bytes = s.shared_bytes;
    auto& ms = max_shared[s.kernel];
    ms = std::max(ms, s.shared_bytes);
    if (s.args.size() > kMaxKernelArgs)
      throw UsageError("launch plan: kernel " + s.kernel + " has more than " + std::to_string(kMaxKernelArgs) +
                       " arguments");
    for (const auto& a : s.args) {
      if (a.kind != KernelArg::Kind::buffer) {
        st.args.push_back(scalar_slot(a));
        continue;
      }
      const std::size_t b = buffer_index(plan, a.buffer);
      if (a.offset_bytes > plan.buffers[b].bytes)
        throw UsageError("launch plan: kernel " + s.kernel + " points beyond the " +
                         std::to_string(plan.buffers[b].bytes) + " bytes of buffer '" + a.buffer + "'");
      st.patches.push_back({st.args.size(), b});
      st.args.push_back(a.offset_bytes);
    }
    out.steps.push_back(std::move(st));
  }
  for (const auto& [kernel, bytes] : max_shared) {
    if (bytes <= kDefaultSharedLimit) continue;
    const CUresult r = d.func_set_attribute(functions.at(kernel), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(bytes));
    if (r != CUDA_SUCCESS)
      throw_call_error(r, "cuFuncSetAttribute(" + kernel + ", MAX_DYNAMIC_SHARED_SIZE_BYTES=" + std::to_string(bytes) + ")");
  }
  return out;
}

void enqueue(const Driver& d, const BoundPlan& plan, const std::uintptr_t* buffers, CUstream stream) {
  std::array<std::uint64_t, kMaxKernelArgs> slots;
  std::array<void*, kMaxKernelArgs> ptrs;
  for (const auto& st : plan.steps) {
    if (st.kind == LaunchStep::Kind::memset32) {
      const CUresult r = d.memset_d32_async(static_cast<CUdeviceptr>(buffers[st.buffer]) + st.offset_bytes, st.value, st.count, stream);
      if (r != CUDA_SUCCESS) throw_call_error(r, st.describe());
      continue;
    }
    const std::size_t n = st.args.size();
    for (std::size_t i = 0; i < n; ++i) {
      slots[i] = st.args[i];
      ptrs[i] = &slots[i];
    }
    for (const auto& patch : st.patches) slots[patch.slot] = to_slot<CUdeviceptr>(static_cast<CUdeviceptr>(buffers[patch.buffer]) + st.args[patch.slot]);
    const CUresult r = d.launch_kernel(st.fn, st.grid[0], st.grid[1], st.grid[2], st.block[0], st.block[1],
                                       st.block[2], st.shared_bytes, stream, n ? ptrs.data() : nullptr, nullptr);
    if (r != CUDA_SUCCESS) throw_call_error(r, st.describe());
  }
}

}  // namespace autotune::cuda::detail
