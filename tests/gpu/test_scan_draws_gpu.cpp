// The scan's inputs drawn on the GPU and its expected values made there (KernelAdapter::device_draws and
// device_reference, the prefix tool kernels): the same bytes as make_inputs() and reference() on the host, the
// same verdicts as the host path, wrong results still caught, and the expected values made again for a new worker.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "executor_support.hpp"
#include "gpu_support.hpp"
#include "scan_support.hpp"
#include "tuner/core/compile.hpp"
#include "tuner/core/draw.hpp"
#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/executor_client.hpp"
#include "tuner/cuda/messages.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/cuda/worker_process.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using namespace autotune::cuda;
using autotune_test::for_each_draw_setting;
using autotune_test::require_gpu;
using autotune_test::size_n;

namespace {

// Every workload of the scan spec.
const char* const kWorkloads[] = {"int32/inclusive_sum",   "int32/exclusive_sum",   "int32/inclusive_max",
                                  "int32/exclusive_max",   "float32/inclusive_sum", "float32/exclusive_sum",
                                  "float32/inclusive_max", "float64/inclusive_sum", "float64/exclusive_sum"};

/// The prefix kernels' hash of each chunk (device_kernels.hpp) over expected buffers made on the host.
std::vector<std::uint64_t> chunk_hashes(const PrefixRecipe& r, const HostBuffers& expected) {
  const std::vector<unsigned char>& values = expected.at(r.values);
  const std::vector<unsigned char>* tolerance = r.tolerance.empty() ? nullptr : &expected.at(r.tolerance);
  const std::size_t es = r.element_bytes();
  std::vector<std::uint64_t> out;
  for (std::uint64_t c = 0; c < r.chunks(); ++c) {
    std::uint64_t hash = kDrawHashBasis;
    for (std::uint64_t i = c * r.chunk; i < std::min(r.count, (c + 1) * r.chunk); ++i) {
      for (const std::vector<unsigned char>* b : {&values, tolerance}) {
        if (b == nullptr) continue;
        std::uint64_t word = 0;
        std::memcpy(&word, b->data() + i * es, es);
        hash = draw_hash_step(hash, word);
      }
    }
    out.push_back(hash);
  }
  return out;
}

TimingOptions quick_options() {
  TimingOptions o;
  o.isolate = true;  // a trapping configuration ends its worker, not the test
  o.warmup = 1;
  o.samples = 3;
  o.flush_l2 = false;
  o.max_seconds_per_config = 0.2;
  return o;
}

/// The default configuration of the scan spec with VARIANT v, made valid in `space` as the 2^28 test does, or
/// else the space's first configuration of that variant.
Config variant_config(const TuningSpec& s, const ParameterSpace& space, Value v) {
  Config c = s.default_config();
  c.set("VARIANT", v);
  if (v >= 8) c.set("VEC", 4);
  if (v == 10) c.set("PADDING", 0);
  if (!space.is_valid(c)) c.set("ITEMS_PER_THREAD", 4);
  if (!space.is_valid(c)) c.set("PADDING", 0);
  for (std::size_t i = 0; i < space.size() && !space.is_valid(c); ++i)
    if (space.config(i).at("VARIANT") == v) c = space.config(i);
  REQUIRE(space.is_valid(c));
  return c;
}

}  // namespace

TEST_CASE("scan: the GPU draws the inputs and makes the expected values bit for bit as the host", "[gpu][scan]") {
  require_gpu();
  auto adapter = kernels::make_adapter(specs::builtin_spec("scan"));
  detail::SharedRegion region;
  region.create();
  detail::ExecutorClient executor(false, 0, region);
  autotune_test::load_tool_kernels(executor);
  // Several chunks and a part of one: the carries between chunks and the last chunk's end both matter.
  for (const std::int64_t n : {std::int64_t{1}, 5 * static_cast<std::int64_t>(kernels::kChunkElements) + 1001}) {
    const ProblemKey p = size_n(n);
    for (const char* key : kWorkloads) {
      INFO(key << ", n = " << n);
      const Workload w = Workload::parse(key);
      const HostBuffers in = adapter->make_inputs(w, p, 4321);
      const std::vector<DrawRecipe> draws = adapter->device_draws(w, p, 4321);
      REQUIRE(draws.size() == 1);
      const std::vector<DrawChunk> host = summarize_draw(draws.front(), in.at("in"));
      detail::DrawRequest q;
      q.recipe = draws.front();
      const std::vector<DrawChunk> device = executor.call_ok(q, "drawing").chunks;
      REQUIRE(device.size() == host.size());
      for (std::size_t c = 0; c < host.size(); ++c) CHECK(device[c].hash == host[c].hash);  // every input's bits
      detail::PrefixRequest made;
      made.recipe = *adapter->device_reference(w, p);
      const std::vector<std::uint64_t> hashes = executor.call_ok(made, "making the expected values").hashes;
      CHECK(hashes == chunk_hashes(made.recipe, *adapter->reference(in, w, p)));
      // The hashes are of these values: another seed's reference hashes otherwise (n = 1: an exclusive scan's
      // one value is the identity whatever the input).
      if (n > 1)
        CHECK(hashes != chunk_hashes(made.recipe, *adapter->reference(adapter->make_inputs(w, p, 4322), w, p)));
    }
  }
  // A recipe that names no input on the device is refused with its names.
  detail::PrefixRequest bad;
  bad.recipe = *adapter->device_reference(Workload::parse("float32/inclusive_sum"), size_n(1000));
  bad.recipe.input = "nowhere";
  CHECK_THROWS_WITH(executor.call_ok(bad, "making the expected values"), Catch::Contains("nowhere"));
}

TEST_CASE("scan: inputs drawn and expected values made on the GPU verify what the host's verify", "[gpu][scan]") {
  require_gpu();
  const TuningSpec spec = specs::builtin_spec("scan");
  auto adapter = kernels::make_adapter(spec);
  const ProblemKey p = size_n((std::int64_t{1} << 24) + 5);  // 64 MiB and more of float32: drawn by default
  MemoryBinaryCache cache;
  for_each_draw_setting(adapter, quick_options(), &cache,
                        {"int32/inclusive_sum", "int32/exclusive_max", "float32/inclusive_sum", "float32/exclusive_sum",
                         "float64/inclusive_sum", "float32/inclusive_max"},
                        [&](CudaBackend& backend, const Workload& w, bool on_device, TimingOptions::Verify verify) {
                          const BackendStats before = backend.stats();
                          backend.prepare(w, p, 5);
                          const ParameterSpace space = spec.space(p, backend.device(), w);
                          std::vector<Config> configs;
                          for (Value v : {0, 4, 5, 10}) configs.push_back(variant_config(spec, space, v));
                          for (const Measurement& m : backend.evaluate(configs)) {
                            INFO(m.log);
                            CHECK(m.status == TrialStatus::ok);
                          }
                          // The GPU draws only where it also makes the expected values, which only the GPU's
                          // verification reads.
                          const bool drawn = on_device && verify == TimingOptions::Verify::device;
                          const BackendStats part = backend.stats() - before;
                          CHECK(part.setup_ms.count("draw") == (drawn ? 1u : 0u));
                          CHECK(part.setup_ms.count("upload") == (drawn ? 0u : 1u));
                        });
}

TEST_CASE("scan: expected values made on the GPU catch a wrong result and are made again for a new worker",
          "[gpu][scan]") {
  require_gpu();
  TuningSpec spec = specs::builtin_spec("scan");
  // Planted: VARIANT 1 adds 1000 to the offsets of one thread's elements in the last tile; VARIANT 2 traps,
  // which ends the worker (its replacement has no inputs or expected values until the backend makes them again).
  const std::string offset_code = "const value_t off = offsets[tile];";
  const std::size_t at = spec.source_text.find(offset_code);
  REQUIRE(at != std::string::npos);
  spec.source_text.replace(at, offset_code.size(),
                           "if (VARIANT == 2) __trap();\n  value_t off = offsets[tile];\n"
                           "  if (VARIANT == 1 && blockIdx.x + 1 == gridDim.x && threadIdx.x == 0) "
                           "off = combine(off, static_cast<value_t>(1000));");
  auto adapter = kernels::make_adapter(spec);
  CudaBackend backend(adapter, quick_options());
  const ProblemKey p = size_n((std::int64_t{1} << 24) + 5);
  for (const char* key : {"float32/inclusive_sum", "int32/exclusive_sum"}) {
    INFO(key);
    const Workload w = Workload::parse(key);
    const BackendStats before = backend.stats();
    backend.prepare(w, p, 11);
    CHECK((backend.stats() - before).setup_ms.count("draw") == 1u);
    const ParameterSpace space = spec.space(p, backend.device(), w);
    const Config base = variant_config(spec, space, 0), wrong = variant_config(spec, space, 1),
                 trap = variant_config(spec, space, 2), single = variant_config(spec, space, 4);
    const std::vector<Measurement> r = backend.evaluate({base, wrong, trap, single, wrong});
    CHECK(r[0].status == TrialStatus::ok);
    INFO(r[1].log);
    CHECK(r[1].status == TrialStatus::wrong_result);
    CHECK(r[2].status == TrialStatus::runtime_fault);
    INFO(r[3].log);
    CHECK(r[3].status == TrialStatus::ok);            // the new worker's expected values verify a correct scan
    CHECK(r[4].status == TrialStatus::wrong_result);  // and still catch the wrong one
  }
}
