#include "tuner/cuda/problem_buffers.hpp"

#include <cstring>
#include <utility>
#include <vector>

#include "tuner/cuda/device_kernels.hpp"

namespace autotune::cuda::detail {

void ProblemBuffers::upload(const UploadRequest& q) {
  if (q.offset > q.region_bytes || q.bytes > q.region_bytes - q.offset)
    throw UsageError("buffer '" + q.name + "' lies beyond the shared region");
  const unsigned char* data = region_.map(q.fd, q.region_bytes) + q.offset;
  DeviceBuffer& b = memory_.exact_size(q.expected ? expected_[q.name] : inputs_[q.name], q.bytes);
  memory_.copy_to_device(b.ptr, data, q.bytes);
  if (!q.expected) sources_[q.name] = HostInput{q.fd, q.region_bytes, q.offset, q.bytes};
}

DrawRequest::Reply ProblemBuffers::draw(const DrawRecipe& r) {
  if (tools_.draw() == nullptr)
    throw UsageError("input '" + r.name + "' cannot be drawn: the tool kernels are not loaded");
  if (r.count == 0 || r.chunk == 0) throw UsageError("input '" + r.name + "': a draw needs elements and a chunk size");
  DeviceBuffer& b = memory_.exact_size(inputs_[r.name], r.bytes());
  sources_[r.name] = r;
  const std::size_t words = static_cast<std::size_t>(r.chunks()) * kDrawSummaryWords;
  const DeviceMemory::Scratch summary(memory_, words * 8);
  launch_draw(b.ptr, r, summary.ptr());
  std::vector<std::uint64_t> host(words);
  check(memory_.driver().memcpy_dtoh(host.data(), summary.ptr(), words * 8), "cuMemcpyDtoH(draw summaries)");
  DrawRequest::Reply reply;
  reply.chunks.resize(static_cast<std::size_t>(r.chunks()));
  for (std::size_t c = 0; c < reply.chunks.size(); ++c) {
    const std::uint64_t* w = host.data() + c * kDrawSummaryWords;
    DrawChunk& out = reply.chunks[c];
    double* doubles[] = {&out.sum, &out.comp, &out.max_abs, &out.min, &out.max};
    for (int k = 0; k < 5; ++k) std::memcpy(doubles[k], w + k, 8);
    out.hash = w[5];
    out.wrapped = static_cast<std::uint32_t>(w[6]);
  }
  return reply;
}

PrefixRequest::Reply ProblemBuffers::prefix(const PrefixRecipe& r) {
  if (tools_.prefix(0) == nullptr)
    throw UsageError("expected values '" + r.values + "' cannot be made: the tool kernels are not loaded");
  auto in = inputs_.find(r.input);
  if (in == inputs_.end() || in->second.bytes != r.bytes() || r.chunk == 0 || r.values.empty() ||
      r.float_sum() == r.tolerance.empty())
    throw UsageError("expected values '" + r.values + "': no input '" + r.input + "' of " + std::to_string(r.count) +
                     " elements on the device, or a malformed prefix recipe");
  CUdeviceptr src = in->second.ptr, values = memory_.exact_size(expected_[r.values], r.bytes()).ptr, tolerance = 0;
  if (r.float_sum()) tolerance = memory_.exact_size(expected_[r.tolerance], r.bytes()).ptr;
  unsigned long long count = r.count, chunk = r.chunk, chunks = r.chunks();
  int elem = static_cast<int>(r.elem), is_max = r.max ? 1 : 0, exclusive = r.exclusive ? 1 : 0;
  double scale = r.scale;
  const DeviceMemory::Scratch state(memory_, static_cast<std::size_t>(chunks) * kPrefixStateWords * 8);
  CUdeviceptr carries = state.ptr();
  void* totals_args[] = {&src, &count, &chunk, &elem, &is_max, &carries};
  void* carries_args[] = {&carries, &chunks, &elem, &is_max};
  void* write_args[] = {&src, &values, &tolerance, &count, &chunk, &elem, &is_max, &exclusive, &scale, &carries};
  const auto blocks = static_cast<unsigned>((chunks + kDrawBlockThreads - 1) / kDrawBlockThreads);
  const std::pair<unsigned, void**> launches[] = {{blocks, totals_args}, {1, carries_args}, {blocks, write_args}};
  const Driver& d = memory_.driver();
  for (int k = 0; k < 3; ++k) {
    CUresult e = d.launch_kernel(tools_.prefix(k), launches[k].first, 1, 1, kDrawBlockThreads, 1, 1, 0,
                                 memory_.stream(), launches[k].second, nullptr);
    if (e != CUDA_SUCCESS) throw_call_error(e, "cuLaunchKernel(prefix)");
  }
  PrefixRequest::Reply reply;
  std::vector<std::uint64_t> words(static_cast<std::size_t>(chunks) * kPrefixStateWords);
  check(d.memcpy_dtoh(words.data(), carries, words.size() * 8), "cuMemcpyDtoH(prefix hashes)");
  for (std::size_t c = 0; c < chunks; ++c) reply.hashes.push_back(words[c * kPrefixStateWords]);
  return reply;
}

void ProblemBuffers::launch_draw(CUdeviceptr dst, const DrawRecipe& r, CUdeviceptr summary) {
  unsigned long long count = r.count, chunk = r.chunk, seed = r.seed;
  int kind = static_cast<int>(r.kind), sum = r.sum ? 1 : 0;
  long long lo = r.lo, hi = r.hi;
  void* args[] = {&dst, &count, &chunk, &seed, &kind, &lo, &hi, &sum, &summary};
  const unsigned blocks = static_cast<unsigned>((r.chunks() + kDrawBlockThreads - 1) / kDrawBlockThreads);
  const Driver& d = memory_.driver();
  CUresult e =
      d.launch_kernel(tools_.draw(), blocks, 1, 1, kDrawBlockThreads, 1, 1, 0, memory_.stream(), args, nullptr);
  if (e != CUDA_SUCCESS) throw_call_error(e, "cuLaunchKernel(draw)");
  check(d.stream_synchronize(memory_.stream()), "cuStreamSynchronize(draw)");
}

void ProblemBuffers::restore_inputs() {
  for (const auto& [name, source] : sources_) {
    const CUdeviceptr ptr = inputs_.at(name).ptr;
    if (const auto* r = std::get_if<DrawRecipe>(&source)) {
      launch_draw(ptr, *r, 0);
    } else if (const auto& h = std::get<HostInput>(source); h.bytes != 0) {
      memory_.copy_to_device(ptr, region_.map(h.fd, h.region_bytes) + h.offset, h.bytes);
    }
  }
}

void ProblemBuffers::release() {
  for (auto* group : {&inputs_, &expected_}) {
    for (auto& [name, b] : *group) memory_.free_checked(b);
    group->clear();
  }
  sources_.clear();
}

void ProblemBuffers::destroy() noexcept {
  for (auto* group : {&inputs_, &expected_})
    for (auto& [name, b] : *group) memory_.free_quietly(b);
}

}  // namespace autotune::cuda::detail
