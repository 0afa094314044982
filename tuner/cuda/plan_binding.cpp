#include "tuner/cuda/plan_binding.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "tuner/core/error.hpp"
#include "tuner/cuda/runtime.hpp"

namespace autotune::cuda::detail {

namespace {

// Static plus dynamic shared memory above this needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
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

/// `text` without white space.
std::string squeeze(const std::string& text) {
  std::string out;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(mangled);
}

/// The attribute, or nothing where the driver cannot tell yet (e.g. CUDA_ERROR_FUNCTION_NOT_LOADED for a handle
/// that lazy module loading has not loaded): the pre-check is then skipped and the launch itself reports.
std::optional<int> function_attribute(const Driver& d, CUfunction fn, CUfunction_attribute a) {
  int v = 0;
  if (d.func_get_attribute(&v, a, fn) != CUDA_SUCCESS) return std::nullopt;
  return v;
}

/// Throws the invalid_resources error when step s cannot launch with function fn (see bind_plan).
void check_resources(const Driver& d, CUfunction fn, const LaunchStep& s) {
  const std::uint64_t threads = static_cast<std::uint64_t>(s.block[0]) * s.block[1] * s.block[2];
  const auto max_threads_attr = function_attribute(d, fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  const auto regs_attr = function_attribute(d, fn, CU_FUNC_ATTRIBUTE_NUM_REGS);
  const auto shared_attr = function_attribute(d, fn, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  if (!max_threads_attr || !regs_attr || !shared_attr) return;
  const int max_threads = *max_threads_attr, regs = *regs_attr, static_shared = *shared_attr;
  int optin = 0;
  CUdevice dev = 0;
  if (d.ctx_get_device(&dev) == CUDA_SUCCESS)
    d.device_get_attribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
  std::string why;
  if (threads > static_cast<std::uint64_t>(max_threads))
    why = std::to_string(threads) + " threads per block, but with " + std::to_string(regs) +
          " registers per thread at most " + std::to_string(max_threads) + " can run";
  else if (optin > 0 && static_cast<std::uint64_t>(static_shared) + s.shared_bytes > static_cast<std::uint64_t>(optin))
    why = std::to_string(static_shared) + " B static + " + std::to_string(s.shared_bytes) +
          " B dynamic shared memory per block, more than the device's " + std::to_string(optin) + " B";
  if (!why.empty())
    throw CudaCallError(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "resource pre-check",
                        std::string(kInvalidResourcesPrefix) + "kernel " + s.kernel + " asks for " + why +
                            " (registers " + std::to_string(regs) + ", static shared " + std::to_string(static_shared) +
                            " B; not launched)");
}

std::size_t argument_bytes(const KernelArg& a) {
  switch (a.kind) {
    case KernelArg::Kind::i32:
    case KernelArg::Kind::u32:
    case KernelArg::Kind::f32:
      return 4;
    case KernelArg::Kind::i64:
    case KernelArg::Kind::u64:
    case KernelArg::Kind::f64:
    case KernelArg::Kind::buffer:
      return 8;
  }
  return 0;
}

/// "8-byte scalar (float64 1.75)": a scalar argument as the errors name it, by size, type and value (the plan
/// keeps no argument names; the value tells which of the spec's arguments it is); "given at each run" for a
/// scalar of the launch API.
std::string scalar_text(const KernelArg& a) {
  std::string type, value;
  switch (a.kind) {
    case KernelArg::Kind::i32:
      type = "int32";
      break;
    case KernelArg::Kind::u32:
      type = "uint32";
      break;
    case KernelArg::Kind::i64:
      type = "int64";
      break;
    case KernelArg::Kind::u64:
      type = "uint64";
      break;
    case KernelArg::Kind::f32:
      type = "float32";
      break;
    case KernelArg::Kind::f64:
      type = "float64";
      break;
    case KernelArg::Kind::buffer:
      break;
  }
  if (a.scalar >= 0) {
    value = "given at each run";
  } else if (a.kind == KernelArg::Kind::f32 || a.kind == KernelArg::Kind::f64) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", a.f);
    value = buf;
  } else {
    value = std::to_string(a.i);
  }
  return std::to_string(argument_bytes(a)) + "-byte scalar (" + type + " " + value + ")";
}

/// The parameter sizes of fn: from the image's own records where `known` has them (nothing is asked past the
/// last parameter), else from cuFuncGetParamInfo index by index until it refuses one. nullopt: nothing is known
/// (a driver without cuFuncGetParamInfo, or one that answers nothing for index 0).
std::optional<std::vector<std::size_t>> parameter_sizes(const Driver& d, CUfunction fn, const std::string& kernel,
                                                        const ParameterSizes* known) {
  if (known != nullptr) {
    const char* symbol = nullptr;
    const std::string name =
        d.func_get_name && d.func_get_name(&symbol, fn) == CUDA_SUCCESS && symbol != nullptr ? symbol : kernel;
    auto it = known->find(name);
    if (it != known->end()) return it->second;
  }
  if (!d.func_get_param_info) return std::nullopt;
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0; i <= kMaxKernelArgs; ++i) {
    std::size_t offset = 0, size = 0;
    if (d.func_get_param_info(fn, i, &offset, &size) != CUDA_SUCCESS) break;
    sizes.push_back(size);
  }
  if (sizes.empty()) {
    // A driver that knows the entry point but answers nothing for index 0 tells nothing: no check.
    std::size_t offset = 0, size = 0;
    if (d.func_get_param_info(fn, 0, &offset, &size) != CUDA_ERROR_INVALID_VALUE) return std::nullopt;
  }
  return sizes;
}

/// Throws UsageError when the arguments of step s do not match the parameters of fn in number or size (a
/// spec's argument list written for another version of the kernel: without the check the kernel reads
/// whatever lies in the parameter space). Nothing is checked where the parameters are not known.
void check_parameters(const Driver& d, CUfunction fn, const LaunchStep& s, const ParameterSizes* known) {
  const std::optional<std::vector<std::size_t>> found = parameter_sizes(d, fn, s.kernel, known);
  if (!found) return;
  const std::vector<std::size_t>& sizes = *found;
  auto describe = [&s]() {
    std::string out;
    for (const KernelArg& a : s.args)
      out += (out.empty() ? "" : ", ") + (a.kind == KernelArg::Kind::buffer ? a.buffer + " (pointer)" : scalar_text(a));
    return out.empty() ? std::string("none") : out;
  };
  if (sizes.size() != s.args.size())
    throw UsageError("kernel " + s.kernel + " takes " + std::to_string(sizes.size()) + " parameter" +
                     (sizes.size() == 1 ? "" : "s") + ", but the launch passes " + std::to_string(s.args.size()) +
                     " argument" + (s.args.size() == 1 ? "" : "s") + ": " + describe() +
                     " (the spec's arguments must follow the kernel's parameter list)");
  // A scalar wider than its parameter is fine where the parameter is its low bytes (an int32 slot for a char or
  // bool parameter); a pointer must meet a pointer, a double a double, and no parameter may be wider than what
  // is passed (the kernel would read bytes nobody wrote).
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const KernelArg& a = s.args[i];
    const std::size_t bytes = argument_bytes(a);
    const bool whole =
        a.kind == KernelArg::Kind::buffer || a.kind == KernelArg::Kind::f64 || a.kind == KernelArg::Kind::f32;
    if (sizes[i] > bytes || (whole && sizes[i] != bytes))
      throw UsageError("kernel " + s.kernel + "'s parameter " + std::to_string(i + 1) + " has " +
                       std::to_string(sizes[i]) + " bytes, but the launch passes " +
                       (s.args[i].kind == KernelArg::Kind::buffer
                            ? "buffer '" + s.args[i].buffer + "' (an 8-byte pointer)"
                            : "a " + scalar_text(s.args[i])) +
                       " (arguments: " + describe() + ")");
  }
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

}  // namespace autotune::cuda::detail

namespace autotune::cuda {

bool entry_point_matches(const std::string& expression, const std::string& demangled) {
  std::string name = demangled;
  // The parameter list: from the '(' that closes at the end, at template depth 0.
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      else if (name[i] == '(' && --depth == 0) {
        name.resize(i);
        break;
      }
    }
  }
  if (name.rfind("void ", 0) == 0) name = name.substr(5);  // templates carry their return type
  return detail::squeeze(name) == detail::squeeze(expression);
}

}  // namespace autotune::cuda

namespace autotune::cuda::detail {

CUfunction resolve_function(const Driver& d, CUmodule module, const std::string& name, const ParameterSizes* symbols) {
  // Where the image's entry points are known, a name that is none of their symbols (a C++ name expression such as
  // "scale<256>") goes to the search by demangled name at once: cuModuleGetFunction would refuse it, an error that
  // a CUDA API checker (compute-sanitizer) reports as the application's.
  if (symbols == nullptr || symbols->count(name) != 0 || !d.module_get_function_count) {
    CUfunction fn = nullptr;
    CUresult r = d.module_get_function(&fn, module, name.c_str());
    if (r == CUDA_SUCCESS) return fn;
    if (r != CUDA_ERROR_NOT_FOUND || !d.module_get_function_count)
      throw_call_error(r, "cuModuleGetFunction(" + name + ")");
  }
  unsigned count = 0;
  check(d.module_get_function_count(&count, module), "cuModuleGetFunctionCount");
  std::vector<CUfunction> fns(count);
  if (count) check(d.module_enumerate_functions(fns.data(), count, module), "cuModuleEnumerateFunctions");
  for (CUfunction f : fns) {
    const char* mangled = nullptr;
    if (d.func_get_name(&mangled, f) != CUDA_SUCCESS || mangled == nullptr) continue;
    if (entry_point_matches(name, demangle(mangled))) return f;
  }
  throw_call_error(CUDA_ERROR_NOT_FOUND, "cuModuleGetFunction(" + name + ") (no function of that C++ name either)");
}

std::string BoundStep::describe() const {
  if (kind == LaunchStep::Kind::memset32) return "cuMemsetD32Async(" + name + ")";
  return "cuLaunchKernel(" + name + ", grid " + dims_text(grid) + ", block " + dims_text(block) + ", " +
         std::to_string(shared_bytes) + " B dynamic shared)";
}

BoundPlan bind_plan(const Driver& d, CUmodule module, const LaunchPlan& plan, const ParameterSizes* parameters) {
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
    if (fit == functions.end())
      fit = functions.emplace(s.kernel, resolve_function(d, module, s.kernel, parameters)).first;
    st.fn = fit->second;
    check_resources(d, st.fn, s);
    check_parameters(d, st.fn, s, parameters);
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
        if (a.scalar >= 0) st.scalar_patches.push_back({st.args.size(), static_cast<std::size_t>(a.scalar)});
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
    // A kernel with static shared arrays reaches the limit earlier: the two add up (a launch past it without
    // the attribute fails with CUDA_ERROR_INVALID_VALUE).
    const int static_shared =
        function_attribute(d, functions.at(kernel), CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES).value_or(0);
    if (static_cast<std::uint64_t>(static_shared) + bytes <= kDefaultSharedLimit) continue;
    const CUresult r = d.func_set_attribute(functions.at(kernel), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(bytes));
    if (r != CUDA_SUCCESS)
      throw_call_error(
          r, "cuFuncSetAttribute(" + kernel + ", MAX_DYNAMIC_SHARED_SIZE_BYTES=" + std::to_string(bytes) + ")");
  }
  return out;
}

std::vector<BoundConstant> bind_constants(const Driver& d, CUmodule module, const LaunchPlan& plan) {
  std::vector<BoundConstant> out;
  for (const auto& c : plan.constants) {
    BoundConstant bc;
    bc.symbol = c.symbol;
    bc.buffer = buffer_index(plan, c.buffer);
    std::size_t bytes = 0;
    const CUresult r = d.module_get_global(&bc.address, &bytes, module, c.symbol.c_str());
    if (r == CUDA_ERROR_NOT_FOUND)
      throw UsageError("constant argument '" + c.buffer + "': the module has no symbol '" + c.symbol +
                       "' (declare it as __constant__ at namespace scope, e.g. `__constant__ float " + c.symbol +
                       "[N];`)");
    if (r != CUDA_SUCCESS) throw_call_error(r, "cuModuleGetGlobal(" + c.symbol + ")");
    bc.bytes = plan.buffers[bc.buffer].bytes;
    if (bc.bytes > bytes)
      throw UsageError("constant argument '" + c.buffer + "' has " + std::to_string(bc.bytes) + " bytes, symbol '" +
                       c.symbol + "' only " + std::to_string(bytes));
    out.push_back(std::move(bc));
  }
  return out;
}

void copy_constants(const Driver& d, const std::vector<BoundConstant>& constants, const std::uintptr_t* buffers,
                    CUstream stream) {
  for (const BoundConstant& c : constants) {
    if (c.bytes == 0) continue;
    check(d.memcpy_dtod_async(c.address, static_cast<CUdeviceptr>(buffers[c.buffer]), c.bytes, stream),
          ("cuMemcpyDtoDAsync(constant " + c.symbol + ")").c_str());
  }
}

void enqueue(const Driver& d, const BoundPlan& plan, const std::uintptr_t* buffers, CUstream stream,
             const std::uint64_t* scalars) {
  std::array<std::uint64_t, kMaxKernelArgs> slots;
  std::array<void*, kMaxKernelArgs> ptrs;
  for (const auto& st : plan.steps) {
    if (st.kind == LaunchStep::Kind::memset32) {
      const CUresult r = d.memset_d32_async(static_cast<CUdeviceptr>(buffers[st.buffer]) + st.offset_bytes, st.value,
                                            st.count, stream);
      if (r != CUDA_SUCCESS) throw_call_error(r, st.describe());
      continue;
    }
    const std::size_t n = st.args.size();
    for (std::size_t i = 0; i < n; ++i) {
      slots[i] = st.args[i];
      ptrs[i] = &slots[i];
    }
    for (const auto& patch : st.patches)
      slots[patch.slot] = to_slot<CUdeviceptr>(static_cast<CUdeviceptr>(buffers[patch.buffer]) + st.args[patch.slot]);
    if (scalars != nullptr)
      for (const auto& patch : st.scalar_patches) slots[patch.slot] = scalars[patch.scalar];
    const CUresult r = d.launch_kernel(st.fn, st.grid[0], st.grid[1], st.grid[2], st.block[0], st.block[1],
                                       st.block[2], st.shared_bytes, stream, n ? ptrs.data() : nullptr, nullptr);
    if (r != CUDA_SUCCESS) throw_call_error(r, st.describe());
  }
}

}  // namespace autotune::cuda::detail
