#include "tuner/cuda/problem_data.hpp"

#include <algorithm>
#include <utility>

#include "tuner/cuda/messages.hpp"

namespace autotune::cuda::detail {
namespace {

std::size_t aligned64(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

/// Problems whose data in the shared region reach this size get its pages allocated ahead.
constexpr std::size_t kPrefaultFrom = std::size_t{64} << 20;

}  // namespace

void ProblemData::reset() {
  prefault_.wait_all();  // the previous problem's allocation ahead, if it still runs
  inputs_end_ = 0;
  drawn_.clear();
  made_.clear();
}

void ProblemData::prefault(const LaunchPlan& plan, bool inputs_drawn) {
  std::size_t inputs = 0, largest = 0;
  for (const auto& b : plan.buffers) {
    if (b.role == BufferRole::input && !inputs_drawn) inputs += aligned64(b.bytes);
    if (b.role == BufferRole::output) largest = std::max(largest, b.bytes);
  }
  const std::size_t total = inputs + aligned64(largest);
  if (total < kPrefaultFrom) return;
  try {
    region_.reserve(total);
    prefault_ = RegionPrefault(region_.fd(), inputs, total);
  } catch (const std::exception&) {  // no thread or no room: the copies allocate the pages, as without this
  }
}

void ProblemData::upload_inputs(const HostBuffers& inputs) {
  prefault_.wait_first();
  std::vector<std::pair<const HostBuffers::value_type*, std::size_t>> placed;  // input, offset
  std::size_t end = 0;
  for (const auto& in : inputs) {
    placed.emplace_back(&in, end);
    end += aligned64(in.second.size());
  }
  region_.reserve(end);
  unsigned char* base = region_.map(region_.fd(), end);
  for (const auto& [in, offset] : placed) parallel_copy(base + offset, in->second.data(), in->second.size());
  inputs_end_ = end;
  drawn_.clear();
  for (const auto& [in, offset] : placed) {
    UploadRequest q;
    q.name = in->first;
    q.fd = executor_.region_fd();
    q.region_bytes = end;
    q.offset = offset;
    q.bytes = in->second.size();
    executor_.call_ok(q, "uploading the inputs failed");
  }
}

DrawSummaries ProblemData::draw(const std::vector<DrawRecipe>& draws) {
  DrawSummaries out;
  for (const DrawRecipe& r : draws) {
    DrawRequest q;
    q.recipe = r;
    const std::string what = "drawing input '" + r.name + "' on the GPU failed";
    out[r.name] = executor_.call_ok(q, what.c_str()).chunks;
  }
  inputs_end_ = 0;
  drawn_ = draws;
  return out;
}

std::vector<std::uint64_t> ProblemData::make_expected(const PrefixRecipe& recipe) {
  PrefixRequest q;
  q.recipe = recipe;
  const std::string what = "making the expected values '" + recipe.values + "' on the GPU failed";
  std::vector<std::uint64_t> hashes = executor_.call_ok(q, what.c_str()).hashes;
  made_.push_back(recipe);
  return hashes;
}

std::set<std::string> ProblemData::expected_made() const {
  std::set<std::string> names;
  for (const PrefixRecipe& r : made_) {
    names.insert(r.values);
    if (!r.tolerance.empty()) names.insert(r.tolerance);
  }
  return names;
}

void ProblemData::upload_expected(const HostBuffers& expected, const std::set<std::string>& names) {
  prefault_.wait_all();
  for (const std::string& name : names) {
    const std::vector<unsigned char>& data = expected.at(name);
    const std::size_t end = inputs_end_ + aligned64(data.size());
    region_.reserve(end);
    parallel_copy(region_.map(region_.fd(), end) + inputs_end_, data.data(), data.size());
    UploadRequest q;
    q.name = name;
    q.expected = true;
    q.fd = executor_.region_fd();
    q.region_bytes = end;
    q.offset = inputs_end_;
    q.bytes = data.size();
    executor_.call_ok(q, "uploading the expected values failed");
  }
}

void ProblemData::restore_inputs(const std::function<HostBuffers()>& make) {
  if (drawn_.empty()) {
    upload_inputs(make());
    return;
  }
  const std::vector<DrawRecipe> draws = drawn_;
  const std::vector<PrefixRecipe> made = made_;
  draw(draws);
  made_.clear();
  for (const PrefixRecipe& r : made) make_expected(r);
}

std::size_t ProblemData::device_input_bytes() const {
  std::size_t bytes = inputs_end_;
  for (const DrawRecipe& r : drawn_) bytes += r.bytes();
  return bytes;
}

}  // namespace autotune::cuda::detail
