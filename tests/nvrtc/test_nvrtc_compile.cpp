// NVRTC compilation without a GPU: CUBIN for explicit architectures, logs, defines, cache keys.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cctype>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tuner/core/error.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/specs/embedded.hpp"

using namespace autotune;
using namespace autotune::cuda;
using autotune_test::read_data;

namespace {

const char* kAxpy = R"(
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

bool is_elf(const std::vector<unsigned char>& b) {
  return b.size() > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
}

}  // namespace

TEST_CASE("nvrtc_version is major.minor", "[nvrtc]") {
  const std::string v = nvrtc_version();
  const auto dot = v.find('.');
  REQUIRE(dot != std::string::npos);
  CHECK(dot > 0);
  CHECK(dot + 1 < v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i != dot) CHECK(std::isdigit(static_cast<unsigned char>(v[i])));
  }
}

TEST_CASE("compile produces CUBIN for sm_80 and sm_90 without a GPU", "[nvrtc]") {
  for (const std::string arch : {"sm_80", "sm_90"}) {
    INFO(arch);
    CompileResult r = compile(kAxpy, {}, "axpy.cu", {}, arch);
    INFO(r.log);
    REQUIRE(r.ok);
    CHECK(is_elf(r.cubin));
    CHECK(r.ms > 0);
    CHECK_FALSE(r.cached);
  }
  // The two architectures give different binaries.
  CHECK(compile(kAxpy, {}, "axpy.cu", {}, "sm_80").cubin != compile(kAxpy, {}, "axpy.cu", {}, "sm_90").cubin);
}

TEST_CASE("the verification timeout: explicit, or derived from the fastest verification run", "[nvrtc]") {
  TimingOptions o;
  CHECK(o.timeout_seconds == 0);                                    // automatic by default
  CHECK(effective_timeout(o, 0) == kAutoTimeoutCeiling);            // nothing verified yet
  CHECK(effective_timeout(o, 0.001) == kAutoTimeoutFloor);          // fast kernels: the floor
  CHECK(effective_timeout(o, 0.5) == Approx(0.5 * kAutoTimeoutFactor));
  CHECK(effective_timeout(o, 30) == kAutoTimeoutCeiling);           // a sane ceiling
  o.timeout_seconds = 3;
  CHECK(effective_timeout(o, 0) == 3);
  CHECK(effective_timeout(o, 100) == 3);
}

TEST_CASE("compile accepts a bare number as arch and rejects virtual architectures", "[nvrtc]") {
  CHECK(compile(kAxpy, {}, "axpy.cu", {}, "90").ok);
  CompileResult r = compile(kAxpy, {}, "axpy.cu", {}, "compute_90");
  CHECK_FALSE(r.ok);
  CHECK(r.log.find("sm_90") != std::string::npos);
}

TEST_CASE("a syntax error is a result with the log", "[nvrtc]") {
  CompileResult r = compile("extern \"C\" __global__ void k() { int x = ; }", {}, "broken.cu", {}, "sm_90");
  CHECK_FALSE(r.ok);
  CHECK(r.cubin.empty());
  CHECK(r.log.find("error") != std::string::npos);
  CHECK(r.log.find("broken.cu") != std::string::npos);
}

TEST_CASE("an unknown option is a result, not an exception", "[nvrtc]") {
  CompileResult r = compile(kAxpy, {}, "axpy.cu", {"--no-such-option-xyz"}, "sm_90");
  CHECK_FALSE(r.ok);
  CHECK_FALSE(r.log.empty());
  // The failed call and where it was made.
  CHECK_THAT(r.log, Catch::Contains("nvrtcCompileProgram failed at tuner/cuda/nvrtc_compile.cpp:"));
}

TEST_CASE("defines reach the source", "[nvrtc]") {
  const char* src = R"(
#if !defined(FOO) || FOO != 42
#error "FOO is not 42"
#endif
extern "C" __global__ void k(int* out) { *out = FOO; }
)";
  CHECK(compile(src, {}, "foo.cu", {"-DFOO=42"}, "sm_90").ok);
  CompileResult wrong = compile(src, {}, "foo.cu", {"-DFOO=7"}, "sm_90");
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.log.find("FOO is not 42") != std::string::npos);
  CHECK_FALSE(compile(src, {}, "foo.cu", {}, "sm_90").ok);
}

TEST_CASE("the toolkit headers (CCCL) are on the include path", "[nvrtc]") {
  const char* src = R"(
#include <cuda/std/cstdint>
#include <cub/block/block_reduce.cuh>
extern "C" __global__ void sum(const int* in, int* out) {
  using Reduce = cub::BlockReduce<int, 128>;
  __shared__ typename Reduce::TempStorage tmp;
  cuda::std::int32_t v = Reduce(tmp).Sum(in[threadIdx.x]);
  if (threadIdx.x == 0) *out = v;
}
)";
  CompileResult r = compile(src, {}, "cub_sum.cu", {}, "sm_90");
  INFO(r.log);
  CHECK(r.ok);
}

TEST_CASE("the test kernel compiles in strict mode with every macro and fails without", "[nvrtc]") {
  const std::string src = read_data("scale_test.cu");
  Config c(std::map<std::string, Value>{{"BLOCK_SIZE", 256}, {"VARIANT", 0}});
  CompileResult ok = compile(src, {}, "scale_test.cu", config_defines(c), "sm_90");
  INFO(ok.log);
  CHECK(ok.ok);
  CompileResult strict = compile(src, {}, "scale_test.cu", {"-DAUTOTUNE_STRICT=1", "-DVARIANT=0"}, "sm_90");
  CHECK_FALSE(strict.ok);
  CHECK(strict.log.find("BLOCK_SIZE is not defined") != std::string::npos);
}

TEST_CASE("ptxas refusing static shared memory past 48 KB reads as the hardware's limit", "[nvrtc]") {
  const std::string src = R"(
extern "C" __global__ void big(float* out) {
  __shared__ float tile[TILE];
  tile[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = tile[TILE - 1 - threadIdx.x];
}
)";
  CompileResult fits = compile(src, {}, "big.cu", {"-DTILE=12288"}, "sm_90");  // 48 KB
  INFO(fits.log);
  CHECK(fits.ok);
  CompileResult past = compile(src, {}, "big.cu", {"-DTILE=16384"}, "sm_90");  // 64 KB
  INFO(past.log);
  CHECK_FALSE(past.ok);
  CHECK(exceeds_hardware_limits(past.log));
  CompileResult broken = compile("this is not CUDA", {}, "broken.cu", {}, "sm_90");
  CHECK_FALSE(broken.ok);
  CHECK_FALSE(exceeds_hardware_limits(broken.log));
}

TEST_CASE("compile is thread-safe", "[nvrtc]") {
  std::vector<CompileResult> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&results, t] {
      results[t] = compile(kAxpy, {}, "axpy" + std::to_string(t) + ".cu", {"-DUNUSED=" + std::to_string(t)},
                           t % 2 ? "sm_80" : "sm_90");
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& r : results) {
    CHECK(r.ok);
    CHECK(is_elf(r.cubin));
  }
}

TEST_CASE("binary_key depends on source, options and arch", "[nvrtc]") {
  const std::string k = binary_key(kAxpy, {}, {"-DA=1"}, "sm_90");
  CHECK(k.size() == 16);
  CHECK(k == binary_key(kAxpy, {}, {"-DA=1"}, "sm_90"));
  CHECK(k != binary_key(kAxpy, {}, {"-DA=2"}, "sm_90"));
  CHECK(k != binary_key(kAxpy, {}, {"-DA=1"}, "sm_80"));
  CHECK(k != binary_key(std::string(kAxpy) + " ", {}, {"-DA=1"}, "sm_90"));
  CHECK(k != binary_key(kAxpy, {}, {"-DA=1", "-DB=1"}, "sm_90"));
  // Option boundaries matter.
  CHECK(binary_key("s", {}, {"-DA", "=1"}, "sm_90") != binary_key("s", {}, {"-DA=", "1"}, "sm_90"));
}

TEST_CASE("config_defines gives -DNAME=value per parameter and strict mode", "[nvrtc]") {
  Config c(std::map<std::string, Value>{{"ITEMS_PER_THREAD", 4}, {"BLOCK_SIZE", 256}, {"OFFSET", -3}});
  const std::vector<std::string> expected{"-DBLOCK_SIZE=256", "-DITEMS_PER_THREAD=4", "-DOFFSET=-3",
                                          "-DAUTOTUNE_STRICT=1"};
  CHECK(config_defines(c) == expected);
  CHECK(config_defines(Config{}) == std::vector<std::string>{"-DAUTOTUNE_STRICT=1"});
}

TEST_CASE("without a driver, list_devices says so", "[nvrtc]") {
  std::string reason;
  if (driver_available(&reason)) {
    CHECK_FALSE(list_devices().empty());
    return;
  }
  CHECK(reason.find("no NVIDIA driver/GPU found") != std::string::npos);
  try {
    list_devices();
    FAIL("list_devices() did not throw");
  } catch (const EnvironmentError& e) {
    CHECK(std::string(e.what()).find("no NVIDIA driver/GPU found") != std::string::npos);
  }
}

TEST_CASE("compile hands exactly the given headers to NVRTC by name", "[nvrtc]") {
  // A user kernel that includes the look-back header of the single-pass kernels: no include path leads there.
  const std::string src = "#include \"common/lookback.cuh\"\n"
                          "extern \"C\" __global__ void tag(unsigned* out) { *out = lookback::generation_tag(*out); }\n";
  const auto embedded_header = embedded::find("common/lookback.cuh");
  REQUIRE(embedded_header);
  const CompileResult r = compile(src, {{"common/lookback.cuh", std::string(*embedded_header)}}, "tag.cu", {}, "sm_90");
  INFO(r.log);
  CHECK(r.ok);
  // Nothing is added behind the caller's back: without the header the include fails.
  CHECK_FALSE(compile(src, {}, "tag.cu", {}, "sm_90").ok);
  // A header of the user's own under the same name is the one compiled, not the built-in one.
  const Headers own = {{"common/lookback.cuh", "namespace lookback { __device__ unsigned generation_tag(unsigned x) "
                                               "{ return x + 7; } }\n#define OWN_LOOKBACK 1\n"}};
  const std::string uses_own = src + "#ifndef OWN_LOOKBACK\n#error the built-in header was compiled\n#endif\n";
  const CompileResult mine = compile(uses_own, own, "tag.cu", {}, "sm_90");
  INFO(mine.log);
  CHECK(mine.ok);
  CHECK(binary_key(src, own, {}, "sm_90") != binary_key(src, {{"common/lookback.cuh", std::string(*embedded_header)}}, {}, "sm_90"));
}
