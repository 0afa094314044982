#include "tuner/cuda/plan_run.hpp"
#include <algorithm>

#include <optional>
#include <utility>

namespace autotune::cuda::detail {

void PlanRun::ensure_work(const std::string& name, std::size_t bytes) {
  DeviceBuffer& b = work_[name];
  if (b.ptr != 0 && b.bytes >= bytes) return;
  memory_.free_checked(b);
  b = memory_.allocate(bytes);
}

void PlanRun::load(LaunchPlan plan, const std::vector<unsigned char>& cubin,
                   const std::map<std::string, DeviceBuffer>& inputs) {
  plan_ = std::move(plan);
  addresses_.clear();
  for (const auto& b : plan_.buffers) {
    if (b.role == BufferRole::input) {
      auto it = inputs.find(b.name);
      if (it == inputs.end() || it->second.bytes < b.bytes) {
        throw UsageError("launch plan input buffer '" + b.name + "' (" + std::to_string(b.bytes) +
                         " bytes) was not provided by the adapter's make_inputs()");
      }
      addresses_.push_back(it->second.ptr);
    } else {
      ensure_work(b.name, b.bytes);
      addresses_.push_back(work_.at(b.name).ptr);
    }
  }
  check(d_.module_load_data(&module_, cubin.data()), "cuModuleLoadData");
  // The parameter lists from the image: the launch checks ask the driver nothing past a kernel's last parameter.
  const std::optional<ParameterSizes> parameters = cubin_parameter_sizes(cubin.data(), cubin.size());
  bound_ = bind_plan(d_, module_, plan_, parameters ? &*parameters : nullptr);
  copy_constants(d_, bind_constants(d_, module_, plan_), addresses_.data(), memory_.stream());  // __constant__ inputs
}

bool PlanRun::fill(bool state, unsigned char byte, const std::map<std::string, DeviceBuffer>& inputs) {
  bool any = false;
  for (const auto& b : plan_.buffers) {
    if (b.role == BufferRole::input || (b.role == BufferRole::state) != state || b.bytes == 0) continue;
    if (!b.initial.empty()) {
      auto it = inputs.find(b.initial);
      if (it == inputs.end() || it->second.bytes < b.bytes)
        throw UsageError("the initial values '" + b.initial + "' of output '" + b.name + "' were not uploaded");
      check(d_.memcpy_dtod_async(work_.at(b.name).ptr, it->second.ptr, b.bytes, memory_.stream()), "cuMemcpyDtoDAsync");
    } else {
      check(d_.memset_d8(work_.at(b.name).ptr, byte, b.bytes), "cuMemsetD8");
    }
    any = true;
  }
  return any;
}

std::vector<OutputPlace> PlanRun::copy_outputs(SharedRegion& region, int fd, std::uint64_t region_bytes,
                                               std::uint64_t outputs_at) {
  unsigned char* base = region.map(fd, region_bytes);
  std::vector<OutputPlace> places;
  std::size_t offset = outputs_at;
  for (std::size_t i = 0; i < plan_.buffers.size(); ++i) {
    const BufferDecl& b = plan_.buffers[i];
    if (b.role != BufferRole::output) continue;
    if (b.bytes != 0)
      check(d_.memcpy_dtoh(base + offset, static_cast<CUdeviceptr>(addresses_[i]), b.bytes), "cuMemcpyDtoH");
    places.push_back({b.name, offset, b.bytes});
    offset += (b.bytes + 63) / 64 * 64;
  }
  return places;
}

std::vector<std::vector<unsigned char>> PlanRun::output_bytes() const {
  std::vector<std::vector<unsigned char>> out;
  for (std::size_t i = 0; i < plan_.buffers.size(); ++i) {
    const BufferDecl& b = plan_.buffers[i];
    if (b.role != BufferRole::output) continue;
    out.emplace_back(b.bytes);
    if (b.bytes != 0)
      check(d_.memcpy_dtoh(out.back().data(), static_cast<CUdeviceptr>(addresses_[i]), b.bytes), "cuMemcpyDtoH");
  }
  return out;
}

std::string PlanRun::repeat_mismatch(const std::vector<std::vector<unsigned char>>& before) const {
  const std::vector<std::vector<unsigned char>> now = output_bytes();
  std::size_t k = 0;
  for (const BufferDecl& b : plan_.buffers) {
    if (b.role != BufferRole::output) continue;
    if (k >= before.size() || k >= now.size()) break;
    const std::vector<unsigned char>& x = before[k];
    const std::vector<unsigned char>& y = now[k];
    ++k;
    const auto diff = std::mismatch(x.begin(), x.end(), y.begin(), y.end());
    if (diff.first == x.end() && diff.second == y.end()) continue;
    return "output '" + b.name + "' differs from byte " + std::to_string(diff.first - x.begin()) + " on (" +
           std::to_string(x.size()) + " bytes)";
  }
  return {};
}

void PlanRun::unload() {
  bound_.steps.clear();
  if (module_ != nullptr) {
    CUmodule m = module_;
    module_ = nullptr;
    check(d_.module_unload(m), "cuModuleUnload");
  }
}

void PlanRun::unload_quietly() noexcept {
  bound_.steps.clear();
  if (module_ != nullptr) d_.module_unload(module_);
  module_ = nullptr;
}

void PlanRun::forget() noexcept {
  bound_.steps.clear();
  module_ = nullptr;
}

void PlanRun::release() {
  for (auto& [name, b] : work_) memory_.free_checked(b);
  work_.clear();
}

void PlanRun::destroy() noexcept {
  unload_quietly();
  for (auto& [name, b] : work_) memory_.free_quietly(b);
}

}  // namespace autotune::cuda::detail
