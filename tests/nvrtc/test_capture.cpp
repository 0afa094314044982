// Captures of launches (tuner/runtime/capture.*) without a GPU: the settings from the environment's values, the
// files a capture writes (a spec that loads, the data named by content and stored once), and that the capture's
// spec gives the tuner exactly the captured inputs, scalars and outputs while keeping the identity of the
// captured spec. The launch itself is captured in tests/gpu/test_capture_gpu.cpp.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "test_support.hpp"
#include "tuner/core/identity.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/runtime/capture.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using namespace autotune::runtime_detail;
namespace fs = std::filesystem;

namespace {

const std::string kSpec = autotune_test::data_dir() + "/launch_api/two_step.tune.json";

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::uint64_t bits_of(std::int32_t v) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)); }

/// A launch of two_step at n: x = i * 7 - 50, bias {1, 2, 3, 4}, a = -3, shift = 11, n; the outputs as the
/// kernel computes them (tmp = a * x + bias[i % 4], out = tmp + shift).
CaptureRecord two_step_launch(const TuningSpec& spec, std::int32_t n) {
  std::vector<std::int32_t> x(static_cast<std::size_t>(n)), tmp(x.size()), out(x.size());
  const std::int32_t bias[4] = {1, 2, 3, 4};
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<std::int32_t>(i) * 7 - 50;
    tmp[i] = -3 * x[i] + bias[i % 4];
    out[i] = tmp[i] + 11;
  }
  CaptureRecord r;
  r.from = kSpec;
  r.workload = spec.workloads.front();
  r.problem.dims["n"] = n;
  r.config = spec.default_config();
  r.match = "spec_default";
  r.device = "NVIDIA H100 80GB HBM3";
  r.args.resize(7);
  r.args[0].before = bytes_of(x);
  r.args[1].after = bytes_of(tmp);
  r.args[2].after = bytes_of(out);
  r.args[3].before = bytes_of(std::vector<std::int32_t>(bias, bias + 4));
  r.args[4].scalar_bits = bits_of(-3);
  r.args[5].scalar_bits = bits_of(11);
  r.args[6].scalar_bits = bits_of(n);
  return r;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("autotune_capture_" + std::to_string(::getpid()));
  TempDir() { fs::remove_all(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::size_t files_in(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("capture: settings from the environment's values", "[nvrtc][capture]") {
  const CaptureSettings s = CaptureSettings::parse(" saxpy , two_*,", "", "");
  CHECK(s.patterns == std::vector<std::string>{"saxpy", "two_*"});
  CHECK(s.dir == "autotune-captures");
  CHECK(s.max_bytes == (1ull << 30));
  CHECK(s.matches("saxpy"));
  CHECK(s.matches("two_step"));
  CHECK_FALSE(s.matches("saxpy2"));
  CHECK_FALSE(s.matches("reduction"));
  CHECK(CaptureSettings::parse("*", "caps", "512M").max_bytes == 512ull << 20);
  CHECK(CaptureSettings::parse("*", "caps", "4096").max_bytes == 4096);
  CHECK(CaptureSettings::parse("*", "caps", "2g").max_bytes == 2ull << 30);
  CHECK(CaptureSettings::parse("*", "caps", "").dir == "caps");
  for (const char* bad : {"0", "-5", "12X", "M", "1.5G", "99999999999999999999"})
    CHECK_THROWS_WITH(CaptureSettings::parse("*", "", bad), Catch::Contains("AUTOTUNE_CAPTURE_MAX_BYTES must be"));

  ::unsetenv("AUTOTUNE_CAPTURE");
  CHECK_FALSE(CaptureSettings::from_env().has_value());
  ::setenv("AUTOTUNE_CAPTURE", "k1", 1);
  ::setenv("AUTOTUNE_CAPTURE_DIR", "/tmp/x", 1);
  ::setenv("AUTOTUNE_CAPTURE_MAX_BYTES", "1K", 1);
  const auto e = CaptureSettings::from_env();
  REQUIRE(e.has_value());
  CHECK(e->dir == "/tmp/x");
  CHECK(e->max_bytes == 1024);
  CHECK(e->matches("k1"));
  ::unsetenv("AUTOTUNE_CAPTURE");
  ::unsetenv("AUTOTUNE_CAPTURE_DIR");
  ::unsetenv("AUTOTUNE_CAPTURE_MAX_BYTES");
}

TEST_CASE("capture: scalar values are written as literals that read back exactly", "[nvrtc][capture]") {
  auto f32 = [](float v) {
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof v);
    return b;
  };
  for (float v : {0.1f, -2.5f, 3.0f, 1e-30f, 16777217.0f}) {
    const std::string t = scalar_text("float32", f32(v));
    CHECK(static_cast<float>(std::stod(t)) == v);
  }
  double d = 0.1;
  std::uint64_t db = 0;
  std::memcpy(&db, &d, sizeof d);
  CHECK(std::stod(scalar_text("float64", db)) == 0.1);
  CHECK(scalar_text("int32", bits_of(-3)) == "-3");
  CHECK(scalar_text("uint32", 4000000000ull) == "4000000000");
  CHECK(scalar_text("int8", 0xffull) == "-1");
  CHECK(scalar_text("int64", static_cast<std::uint64_t>(-9000000000ll)) == "-9000000000");
  CHECK_THROWS_WITH(scalar_text("uint64", ~0ull), Catch::Contains("out of the range"));
}

TEST_CASE("capture: the capture's spec reproduces the launch and keeps the captured spec's identity",
          "[nvrtc][capture]") {
  TempDir tmp;
  const TuningSpec spec = specs::load_spec(kSpec);
  CaptureSettings s = CaptureSettings::parse("two_step", tmp.path.string(), "");
  const CaptureRecord r = two_step_launch(spec, 1000);
  const std::string path = write_capture(s, spec, r);
  CHECK(fs::path(path).filename() == "two_step_n=1000.tune.json");
  CHECK(capture_bytes(r) == 3 * 4000 + 16);

  const TuningSpec cap = specs::load_spec(path);
  CHECK(cap.name == spec.name);
  CHECK(cap.source_text == spec.source_text);
  CHECK(cap.kernels == spec.kernels);
  CHECK(code_identity(cap) == code_identity(spec));  // the trials it gets count as the kernel's
  CHECK(cap.spec_hash() == spec.spec_hash());
  REQUIRE(cap.captured.has_value());
  CHECK(data_tag(cap) == "");  // the problem the application asks for: its spec names no file
  REQUIRE(cap.problem_sizes.size() == 1);
  CHECK(cap.problem_sizes.front().key() == "n=1000");
  CHECK(cap.workloads.size() == 1);
  CHECK_FALSE(cap.reference.has_value());  // the captured outputs are the expected values
  CHECK_THAT(cap.reference_text(), Catch::Contains("expected values of tmp from data/int32-1000-"));
  CHECK(cap.arguments[4].value == "-3");
  CHECK(cap.arguments[5].value == "11");
  CHECK(cap.arguments[6].value == "1000");

  // The tuner's inputs and expected values of the capture are the launch's.
  auto adapter = kernels::make_adapter(cap);
  const ProblemKey p = cap.problem_sizes.front();
  const HostBuffers in = adapter->make_inputs(cap.workloads.front(), p, 1);
  CHECK(in.at("x") == r.args[0].before);
  CHECK(in.at("bias") == r.args[3].before);
  const auto expected = adapter->reference(in, cap.workloads.front(), p);
  REQUIRE(expected.has_value());
  CHECK(expected->at("tmp") == r.args[1].after);
  CHECK(expected->at("out") == r.args[2].after);
  CHECK(adapter->verify({{"tmp", r.args[1].after}, {"out", r.args[2].after}}, *expected, cap.workloads.front(), p) ==
        "");
  HostBuffers wrong = {{"tmp", r.args[1].after}, {"out", r.args[2].after}};
  wrong["out"][8] ^= 1;
  CHECK_FALSE(adapter->verify(wrong, *expected, cap.workloads.front(), p).empty());

  // Layout: the spec, four data files (x, tmp, out, bias) and the source.
  CHECK(files_in(tmp.path) == 6);
  CHECK(fs::is_directory(tmp.path / "data"));
  CHECK(fs::is_directory(tmp.path / "sources"));
}

TEST_CASE("capture: identical argument data is stored once", "[nvrtc][capture]") {
  TempDir tmp;
  const TuningSpec spec = specs::load_spec(kSpec);
  CaptureSettings s = CaptureSettings::parse("two_step", tmp.path.string(), "");
  write_capture(s, spec, two_step_launch(spec, 1000));
  const std::size_t one = files_in(tmp.path);

  // Another problem with other data: a spec and three data files more (bias and the source are the same).
  write_capture(s, spec, two_step_launch(spec, 2000));
  CHECK(files_in(tmp.path) == one + 4);

  // The same launch again (a later run of the application, the capture removed): nothing new but the spec.
  fs::remove(tmp.path / "two_step_n=1000.tune.json");
  write_capture(s, spec, two_step_launch(spec, 1000));
  CHECK(files_in(tmp.path) == one + 4);

  // Outputs equal to an input share its file: out's data given as x's.
  CaptureRecord r = two_step_launch(spec, 3000);
  r.args[2].after = r.args[0].before;
  write_capture(s, spec, r);
  CHECK(files_in(tmp.path) == one + 4 + 3);  // spec, x (= out), tmp
  const TuningSpec cap = specs::load_spec((tmp.path / "two_step_n=3000.tune.json").string());
  CHECK(cap.arguments[0].init.file == cap.arguments[2].expected->file);
}

TEST_CASE("capture: what cannot be captured is refused with the reason", "[nvrtc][capture]") {
  TempDir tmp;
  const TuningSpec spec = specs::load_spec(kSpec);
  CaptureSettings s = CaptureSettings::parse("two_step", tmp.path.string(), "");
  CaptureRecord r = two_step_launch(spec, 1000);
  r.args[0].before.pop_back();  // 3999 bytes: no whole number of int32
  CHECK_THROWS_WITH(write_capture(s, spec, r), Catch::Contains("no whole number of int32"));
  r.args.pop_back();
  CHECK_THROWS_WITH(write_capture(s, spec, r), Catch::Contains("6 arguments captured, the spec has 7"));
  TuningSpec in_code = spec;
  in_code.spec_text.clear();
  CHECK_THROWS_WITH(write_capture(s, in_code, two_step_launch(spec, 1000)), Catch::Contains("no JSON text"));
  CHECK(capture_file_name("my kernel/v2", ProblemKey::parse("rows=3,cols=4@abc")) ==
        "my_kernel_v2_cols=4_rows=3.tune.json");
}
