// The reduction family on a real GPU through CudaBackend: every variant x workload on odd sizes, verified
// against the CPU reference (or the reference kernels for custom operators without one) on poisoned outputs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "executor_support.hpp"
#include "gpu_support.hpp"
#include "tuner/core/compile.hpp"
#include "tuner/core/draw.hpp"
#include "tuner/core/error.hpp"
#include "tuner/cuda/device_kernels.hpp"
#include "tuner/cuda/executor_client.hpp"
#include "tuner/cuda/messages.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/cuda/worker_process.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/embedded.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using namespace autotune::cuda;
using autotune_test::for_each_draw_setting;
using autotune_test::require_gpu;

namespace {

const std::int64_t kSizes[] = {1, 1000, (std::int64_t{1} << 20) + 3, 3 * (std::int64_t{1} << 20) + 7};

TimingOptions quick_options(bool isolate = true) {
  TimingOptions o;
  o.isolate = isolate;
  o.warmup = 1;
  o.samples = 7;
  o.flush_l2 = false;
  o.max_seconds_per_config = 0.2;
  return o;
}

ProblemKey problem(std::int64_t n) {
  ProblemKey p;
  p.dims["n"] = n;
  return p;
}

/// Per variant: FINAL 0 and 1, and for the grid-stride variants small/large blocks, wide/scalar loads and
/// Kahan where valid. Invalid combinations for the workload are skipped.
std::vector<Config> configs_for(const TuningSpec& s, const ParameterSpace& space) {
  std::vector<Config> out;
  auto add = [&](Config c) {
    if (space.is_valid(c) && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
  };
  for (int v = 0; v < 8; ++v) {
    Config c = s.default_config();
    c.set("VARIANT", v);
    if (v < 6) {
      for (const char* p : {"ITEMS_PER_THREAD", "VEC", "BLOCKS_PER_SM"}) c.set(p, 1);
      c.set("KAHAN", 0);
    }
    for (int final_ : {0, 1}) {
      c.set("FINAL", final_);
      add(c);
      Config small = c;
      small.set("BLOCK_SIZE", 64);
      if (v >= 6) {
        small.set("BLOCKS_PER_SM", 32);
        small.set("ITEMS_PER_THREAD", 8);
        small.set("VEC", 2);
        small.set("KAHAN", 1);
        add(small);
        small.set("KAHAN", 0);
      }
      add(small);
      Config large = c;
      large.set("BLOCK_SIZE", 1024);
      if (v >= 6) {
        large.set("BLOCKS_PER_SM", 2);
        large.set("ITEMS_PER_THREAD", 1);
        large.set("VEC", 1);
      }
      add(large);
      if (v >= 6) {
        Config wide = c;
        wide.set("ITEMS_PER_THREAD", 4);
        wide.set("VEC", 4);
        wide.set("KAHAN", 1);
        add(wide);
      }
    }
  }
  return out;
}

/// Runs every config of every workload on every size; one failed check per configuration that does not verify.
void check_all_verify(const TuningSpec& spec, const std::vector<Workload>& workloads) {
  auto adapter = kernels::make_adapter(spec);
  MemoryBinaryCache cache;
  CudaBackend backend(adapter, quick_options(), &cache);
  const DeviceInfo d = backend.device();
  std::vector<std::string> failures;
  int checked = 0;
  for (const auto& w : workloads) {
    for (std::int64_t n : kSizes) {
      const ProblemKey p = problem(n);
      const std::vector<Config> configs = configs_for(spec, spec.space(p, d, w));
      backend.prepare(w, p, 1234);
      const std::vector<Measurement> r = backend.evaluate(configs);
      REQUIRE(r.size() == configs.size());
      for (std::size_t i = 0; i < r.size(); ++i) {
        ++checked;
        if (!r[i].ok())
          failures.push_back(w.key() + " n=" + std::to_string(n) + " " + configs[i].str(&spec.params) + ": " +
                             to_string(r[i].status) + " " + r[i].log.substr(0, 600));
      }
    }
  }
  WARN(checked << " configurations checked on " << d.name);
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
}

}  // namespace

TEST_CASE("reduction: every variant and workload verifies on odd sizes", "[gpu][reduction]") {
  require_gpu();
  const TuningSpec spec = specs::builtin_spec("reduction");
  check_all_verify(spec, spec.workloads);
}

TEST_CASE("reduction: custom operators verified by the reference kernels", "[gpu][reduction]") {
  require_gpu();
  auto text = embedded::find("reduction/reduction.tune.json");
  REQUIRE(text);
  nlohmann::json j = nlohmann::json::parse(std::string(*text));
  // int32 bitwise or (4 bytes: FINAL=1 through a 32-bit compare-and-swap) and the lexicographic maximum of
  // float2 points (8 bytes: 64-bit compare-and-swap); neither has a CPU reference.
  j["family_options"]["custom_ops"].push_back(
      {{"name", "bitor"}, {"dtype", "int32"}, {"combine", "(a | b)"}, {"identity", "0"}});
  j["family_options"]["custom_ops"].push_back(
      {{"name", "lexmax"},
       {"dtype", "float2"},
       {"combine", "((b.x > a.x || (b.x == a.x && b.y > a.y)) ? b : a)"},
       {"identity", "make_float2(__int_as_float(0xff800000), __int_as_float(0xff800000))"}});
  j["workloads"] = nlohmann::json::array({"int32/bitor", "float2/lexmax"});
  TuningSpec spec = TuningSpec::from_json_text(j.dump(), "", false);
  spec.source_text = specs::builtin_spec("reduction").source_text;
  check_all_verify(spec, spec.workloads);
}

TEST_CASE("reduction: a kernel that drops the n % VEC tail is rejected", "[gpu][reduction]") {
  require_gpu();
  TuningSpec spec = specs::builtin_spec("reduction");
  const std::string tail_code = "if (V > 1) {";
  const std::size_t at = spec.source_text.find(tail_code);
  REQUIRE(at != std::string::npos);
  spec.source_text.replace(at, tail_code.size(), "if (false) {");
  auto adapter = kernels::make_adapter(spec);
  CudaBackend backend(adapter, quick_options());
  Config base = spec.default_config();  // variant 7, 4-wide loads
  Config vec2 = base, vec1 = base;
  vec2.set("VEC", 2);
  vec1.set("VEC", 1);
  // The larger size's inputs are drawn on the GPU (64 MiB and more): after a wrong result they are drawn again.
  for (const std::int64_t n : {(std::int64_t{1} << 20) + 3, (std::int64_t{1} << 24) + 3}) {
    for (const char* wk : {"float32/sum", "int32/sum", "float64/sum"}) {
      INFO(wk << " n=" << n);
      backend.prepare(Workload::parse(wk), problem(n), 99);
      const std::vector<Measurement> r = backend.evaluate({base, vec2, vec1});
      CHECK(r[0].status == TrialStatus::wrong_result);  // 3 elements dropped
      CHECK(r[1].status == TrialStatus::wrong_result);  // 1 element dropped
      CHECK(r[2].status == TrialStatus::ok);            // no tail
    }
  }
}

TEST_CASE("reduction: after a fault a new GPU worker draws the inputs again", "[gpu][reduction]") {
  require_gpu();
  TuningSpec spec = specs::builtin_spec("reduction");
  const std::string tail_code = "if (V > 1) {";
  const std::size_t at = spec.source_text.find(tail_code);
  REQUIRE(at != std::string::npos);
  spec.source_text.replace(at, tail_code.size(), "if (V == 2) __trap();\n  " + tail_code);
  auto adapter = kernels::make_adapter(spec);
  CudaBackend backend(adapter, quick_options());
  Config base = spec.default_config();  // 4-wide loads
  Config vec2 = base, vec1 = base;
  vec2.set("VEC", 2);
  vec1.set("VEC", 1);
  // 2^24 + 3 values: 64 MiB and more, drawn on the GPU; the fault ends the worker, and its replacement has
  // nothing until the backend restores the inputs and the expected values.
  backend.prepare(Workload::parse("float32/sum"), problem((std::int64_t{1} << 24) + 3), 17);
  const std::vector<Measurement> r = backend.evaluate({base, vec2, vec1, base});
  CHECK(r[0].status == TrialStatus::ok);
  CHECK(r[1].status == TrialStatus::runtime_fault);
  INFO(r[2].log);
  CHECK(r[2].status == TrialStatus::ok);
  CHECK(r[3].status == TrialStatus::ok);
}

TEST_CASE("reduction: the GPU draws the inputs bit for bit as the host makes them", "[gpu][reduction]") {
  require_gpu();
  const TuningSpec spec = specs::builtin_spec("reduction");
  auto adapter = kernels::make_adapter(spec);
  detail::SharedRegion region;
  region.create();
  detail::ExecutorClient executor(false, 0, region);
  autotune_test::load_tool_kernels(executor);
  // Several chunks and a part of one.
  const ProblemKey p = problem(5 * static_cast<std::int64_t>(kernels::kChunkElements) + 1001);
  for (const char* key : {"int32/sum", "int32/max", "float32/sum", "float32/min", "float64/sum", "float64/max"}) {
    INFO(key);
    const Workload w = Workload::parse(key);
    const std::vector<DrawRecipe> draws = adapter->device_draws(w, p, 4321);
    REQUIRE(draws.size() == 1);
    const std::vector<DrawChunk> host = summarize_draw(draws.front(), adapter->make_inputs(w, p, 4321).at("in"));
    detail::DrawRequest q;
    q.recipe = draws.front();
    const std::vector<DrawChunk> device = executor.call_ok(q, "drawing").chunks;
    REQUIRE(device.size() == host.size());
    for (std::size_t c = 0; c < host.size(); ++c) {
      INFO("chunk " << c);
      CHECK(device[c].hash == host[c].hash);  // every element's bits, in order
      CHECK(device[c].sum == host[c].sum);
      CHECK(device[c].comp == host[c].comp);
      CHECK(device[c].max_abs == host[c].max_abs);
      CHECK(device[c].min == host[c].min);
      CHECK(device[c].max == host[c].max);
      CHECK(device[c].wrapped == host[c].wrapped);
    }
    CHECK(*adapter->reference_of_draws({{"in", device}}, w, p) ==
          *adapter->reference(adapter->make_inputs(w, p, 4321), w, p));
  }
}

TEST_CASE("reduction: inputs drawn on the GPU verify what inputs made on the host verify", "[gpu][reduction]") {
  require_gpu();
  const TuningSpec spec = specs::builtin_spec("reduction");
  auto adapter = kernels::make_adapter(spec);
  const ProblemKey p = problem((std::int64_t{1} << 24) + 5);  // 64 MiB and more: drawn on the GPU by default
  MemoryBinaryCache cache;
  for_each_draw_setting(
      adapter, quick_options(), &cache,
      {"int32/sum", "int32/min", "float32/sum", "float32/max", "float64/sum", "float64/min"},
      [&](CudaBackend& backend, const Workload& w, bool on_device, TimingOptions::Verify) {
        const BackendStats before = backend.stats();
        backend.prepare(w, p, 5);
        const std::vector<Config> configs = configs_for(spec, spec.space(p, backend.device(), w));
        const std::vector<Measurement> r = backend.evaluate(
            std::vector<Config>(configs.begin(), configs.begin() + std::min<std::size_t>(6, configs.size())));
        for (const Measurement& m : r) {
          INFO(m.log);
          CHECK(m.status == TrialStatus::ok);
        }
        const BackendStats part = backend.stats() - before;
        CHECK(part.setup_ms.count("draw") == (on_device ? 1u : 0u));
      });
}

// Hidden (run under compute-sanitizer --tool memcheck / racecheck): one run of every variant in-process.
TEST_CASE("reduction: every variant once, in-process, for compute-sanitizer", "[gpu][reduction][.sanitize]") {
  const TuningSpec spec = specs::builtin_spec("reduction");
  auto adapter = kernels::make_adapter(spec);
  TimingOptions o = quick_options(false);
  o.warmup = 0;
  o.samples = 1;
  CudaBackend backend(adapter, o);
  const DeviceInfo d = backend.device();
  for (const char* wk : {"float32/sum", "float64/max", "float3/maxmag"}) {
    const Workload w = Workload::parse(wk);
    const ProblemKey p = problem(100003);
    std::vector<Config> configs;
    const ParameterSpace space = spec.space(p, d, w);
    for (int v = 0; v < 8; ++v)
      for (int f = 0; f < 2; ++f) {
        Config c = spec.default_config();
        c.set("VARIANT", v);
        c.set("FINAL", f);
        c.set("BLOCK_SIZE", 128);
        if (v < 6)
          for (const char* name : {"ITEMS_PER_THREAD", "VEC", "BLOCKS_PER_SM"}) c.set(name, 1);
        if (space.is_valid(c)) configs.push_back(c);
      }
    backend.prepare(w, p, 5);
    const std::vector<Measurement> r = backend.evaluate(configs);
    for (std::size_t i = 0; i < r.size(); ++i) {
      INFO(wk << " " << configs[i].str(&spec.params) << ": " << r[i].log);
      CHECK(r[i].ok());
    }
  }
}

// Hidden (run with "[.bench]"): GB/s of every variant at n = 2^26 float32/sum, for a sanity check of the
// kernels against the copy bandwidth measured in the same run. Prints a table; asserts nothing on speed.
TEST_CASE("reduction: bandwidth of each variant", "[gpu][reduction][.bench]") {
  const TuningSpec spec = specs::builtin_spec("reduction");
  auto adapter = kernels::make_adapter(spec);
  TimingOptions o;
  o.flush_l2 = true;
  CudaBackend backend(adapter, o);
  const DeviceInfo d = backend.device();
  const Workload w = Workload::parse("float32/sum");
  const ProblemKey p = problem(std::int64_t{1} << 26);
  backend.prepare(w, p, 1);
  const double copy = backend.copy_bandwidth_gbps();
  std::vector<Config> configs;
  const ParameterSpace space = spec.space(p, d, w);
  for (int v = 0; v < 8; ++v)
    for (int b : {256, 512})
      for (int f = 0; f < 2; ++f) {
        Config c = spec.default_config();
        c.set("VARIANT", v);
        c.set("FINAL", f);
        c.set("BLOCK_SIZE", b);
        if (v < 6)
          for (const char* name : {"ITEMS_PER_THREAD", "VEC", "BLOCKS_PER_SM"}) c.set(name, 1);
        else
          c.set("BLOCKS_PER_SM", 2048 / b);
        if (space.is_valid(c)) configs.push_back(c);
      }
  const std::vector<Measurement> r = backend.evaluate(configs);
  std::printf("%s, n = 2^26 float32/sum, copy %.0f GB/s (read + write)\n", d.name.c_str(), copy);
  for (std::size_t i = 0; i < r.size(); ++i) {
    const double gbps = r[i].ok() ? adapter->bytes_moved(w, p) / r[i].median_ns : 0;
    std::printf("%-90s %-10s %8.1f us %7.0f GB/s %.2f of copy\n", configs[i].str(&spec.params).c_str(),
                to_string(r[i].status), r[i].median_ns / 1000, gbps, gbps / copy);
    CHECK(r[i].ok());
  }
}
