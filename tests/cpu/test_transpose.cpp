// Transpose family host adapter (tuner/kernels/transpose.cpp): specs, space, plans, inputs, reference,
// verification and bytes moved. No GPU, no NVRTC.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/core/error.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/sim/synthetic.hpp"
#include "tuner/specs/embedded.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using autotune::kernels::load_element;

namespace {

const Workload kF32{"float32", ""};
const Workload kF64{"float64", ""};

ProblemKey dims(std::int64_t rows, std::int64_t cols) {
  ProblemKey p;
  p.dims = {{"rows", rows}, {"cols", cols}};
  return p;
}

Config config(Value variant, Value tile, Value block_rows, Value padding = 0, Value diagonal = 0) {
  return Config({{"VARIANT", variant}, {"TILE_DIM", tile}, {"BLOCK_ROWS", block_rows}, {"PADDING", padding},
                 {"DIAGONAL", diagonal}});
}

std::shared_ptr<const KernelAdapter> adapter(const std::string& name) {
  return kernels::make_transpose_adapter(specs::builtin_spec(name));
}

// The embedded spec JSON, edited by f, parsed as a spec with the embedded source.
template <typename F>
TuningSpec edited_spec(const std::string& path, F f) {
  auto text = embedded::find(path);
  REQUIRE(text);
  nlohmann::json j = nlohmann::json::parse(std::string(*text));
  f(j);
  TuningSpec s = TuningSpec::from_json_text(j.dump(), "", false);
  s.source_text = std::string(*embedded::find("transpose/transpose.cu"));
  return s;
}

}  // namespace

TEST_CASE("transpose specs are embedded and their spaces have the intended size", "[cpu][transpose]") {
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  for (const std::string name : {"transpose", "transpose_copy"}) {
    INFO(name);
    const TuningSpec s = specs::builtin_spec(name);
    CHECK(s.family == "transpose");
    CHECK_FALSE(s.source_text.empty());
    CHECK(s.problem_sizes.front() == dims(8192, 8192));
    REQUIRE(s.workloads.size() == 2);
    CHECK(s.workloads[0] == kF32);
    CHECK(s.workloads[1] == kF64);
    CHECK_NOTHROW(kernels::make_transpose_adapter(s));
    for (const Workload& w : s.workloads) {
      for (const ProblemKey& p : s.problem_sizes) {
        const ParameterSpace space = s.space(p, d, w);
        // (TILE_DIM, BLOCK_ROWS): 16 x {2,4,8,16}, 32 x {1,...,32}, 64 x {1,...,16} = 15 shapes;
        // transpose: naive x 2 block orders + tiled x 2 paddings x 2 block orders.
        CHECK(space.size() == (name == "transpose" ? 90u : 15u));
        CHECK(space.default_index() >= 0);
      }
    }
  }
  // Every valid config keeps the tiled variant's static shared memory under the 48 KiB default limit.
  const TuningSpec s = specs::builtin_spec("transpose");
  const ParameterSpace space = s.space(dims(8192, 8192), d, kF64);
  for (std::size_t i = 0; i < space.size(); ++i) {
    const Config c = space.config(i);
    CHECK(c.at("TILE_DIM") % c.at("BLOCK_ROWS") == 0);
    CHECK(c.at("TILE_DIM") * c.at("BLOCK_ROWS") <= 1024);
    if (c.at("VARIANT") == 0) CHECK(c.at("PADDING") == 0);
    CHECK(c.at("TILE_DIM") * (c.at("TILE_DIM") + c.at("PADDING")) * 8 <= 49152);
  }
}

TEST_CASE("transpose compile options name the element type", "[cpu][transpose]") {
  auto a = adapter("transpose");
  CHECK(a->compile_options(kF32) == std::vector<std::string>{"-DDTYPE_ID=1"});
  CHECK(a->compile_options(kF64) == std::vector<std::string>{"-DDTYPE_ID=2"});
  CHECK_THROWS_AS(a->compile_options(Workload{"int32", ""}), UsageError);
  CHECK_THROWS_AS(a->compile_options(Workload{"float32", "sum"}), UsageError);
}

TEST_CASE("transpose plans cover partial tiles with a one-dimensional grid", "[cpu][transpose]") {
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  auto a = adapter("transpose");

  LaunchPlan plan = a->plan(config(1, 32, 8, 1), kF32, dims(4097, 1023), d);
  REQUIRE(plan.buffers.size() == 2);
  REQUIRE(plan.find("in"));
  REQUIRE(plan.find("out"));
  CHECK(plan.find("in")->role == BufferRole::input);
  CHECK(plan.find("out")->role == BufferRole::output);
  CHECK(plan.find("in")->bytes == 4097u * 1023u * 4u);
  CHECK(plan.find("out")->bytes == 4097u * 1023u * 4u);
  REQUIRE(plan.steps.size() == 1);
  const LaunchStep& s = plan.steps[0];
  CHECK(s.kind == LaunchStep::Kind::kernel);
  CHECK(s.kernel == "transpose");
  CHECK(s.grid == std::array<std::uint32_t, 3>{32 * 129, 1, 1});  // ceil(1023/32) x ceil(4097/32) tiles
  CHECK(s.block == std::array<std::uint32_t, 3>{32, 8, 1});
  CHECK(s.shared_bytes == 0);
  REQUIRE(s.args.size() == 6);
  CHECK(s.args[0].kind == KernelArg::Kind::buffer);
  CHECK(s.args[0].buffer == "in");
  CHECK(s.args[1].buffer == "out");
  CHECK(s.args[2].kind == KernelArg::Kind::i32);
  CHECK(s.args[2].i == 4097);  // rows
  CHECK(s.args[3].i == 1023);  // cols
  CHECK(s.args[4].kind == KernelArg::Kind::u32);
  CHECK(s.args[4].i == 32);   // tiles_x
  CHECK(s.args[5].i == 129);  // tiles_y

  plan = a->plan(config(0, 64, 16), kF64, dims(4097, 1023), d);
  CHECK(plan.steps[0].grid[0] == 16 * 65);
  CHECK(plan.steps[0].block == std::array<std::uint32_t, 3>{64, 16, 1});
  CHECK(plan.find("out")->bytes == 4097u * 1023u * 8u);

  plan = a->plan(config(1, 16, 2, 0, 1), kF32, dims(1, 1), d);
  CHECK(plan.steps[0].grid[0] == 1);
  CHECK(plan.find("in")->bytes == 4);

  // Tall and wide matrices stay on grid.x (gridDim.y would be limited to 65535).
  plan = a->plan(config(1, 16, 2), kF32, dims(1048576 * 2, 1), d);
  CHECK(plan.steps[0].grid[0] == 131072);
  plan = a->plan(config(1, 16, 2), kF32, dims(1, 1000001), d);
  CHECK(plan.steps[0].grid[0] == 62501);

  auto copy = adapter("transpose_copy");
  plan = copy->plan(config(2, 32, 8), kF32, dims(33, 17), d);
  CHECK(plan.steps[0].kernel == "tiled_copy");
  CHECK(plan.steps[0].grid[0] == 2);
  CHECK(plan.find("out")->bytes == 33u * 17u * 4u);
}

TEST_CASE("transpose plans reject impossible problems and mismatched configs", "[cpu][transpose]") {
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  auto a = adapter("transpose");
  const Config c = config(1, 32, 8, 1);
  CHECK_THROWS_AS(a->plan(c, kF32, dims(0, 5), d), UsageError);
  CHECK_THROWS_AS(a->plan(c, kF32, dims(5, 0), d), UsageError);
  CHECK_THROWS_AS(a->plan(c, kF32, dims(std::int64_t{1} << 30, 1), d), UsageError);
  CHECK_THROWS_AS(a->plan(c, kF32, ProblemKey::parse("n=5"), d), UsageError);
  CHECK_THROWS_AS(a->plan(c, Workload{"int32", ""}, dims(5, 5), d), UsageError);
  CHECK_THROWS_AS(a->plan(config(2, 32, 8), kF32, dims(5, 5), d), UsageError);  // the copy variant
  CHECK_THROWS_AS(adapter("transpose_copy")->plan(c, kF32, dims(5, 5), d), UsageError);
  CHECK_THROWS_AS(a->plan(Config({{"VARIANT", 1}}), kF32, dims(5, 5), d), UsageError);
  // More tiles than a grid can hold.
  CHECK_THROWS_WITH(a->plan(config(0, 16, 2), kF32, dims((1 << 30) - 1, (1 << 30) - 1), d),
                    Catch::Contains("tiles"));
}

TEST_CASE("transpose inputs are seeded, finite, non-zero and distinct", "[cpu][transpose]") {
  auto a = adapter("transpose");
  SECTION("float32 across the 2^24-element boundary") {
    const ProblemKey p = dims(4097, 4097);  // 16785409 > 2^24 elements
    const HostBuffers in = a->make_inputs(kF32, p, 42);
    REQUIRE(in.size() == 1);
    const std::vector<unsigned char>& b = in.at("in");
    REQUIRE(b.size() == 4097u * 4097u * 4u);
    std::vector<std::uint32_t> bits(b.size() / 4);
    std::memcpy(bits.data(), b.data(), b.size());
    std::size_t not_normal = 0, out_of_range = 0;
    for (std::uint32_t x : bits) {
      float f;
      std::memcpy(&f, &x, 4);
      not_normal += std::isnormal(f) ? 0 : 1;
      const std::uint32_t exponent = (x >> 23) & 0xFF;
      out_of_range += exponent >= 64 && exponent < 192 ? 0 : 1;
    }
    CHECK(not_normal == 0);
    CHECK(out_of_range == 0);
    std::sort(bits.begin(), bits.end());
    CHECK(std::adjacent_find(bits.begin(), bits.end()) == bits.end());
  }
  SECTION("float64") {
    const HostBuffers in = a->make_inputs(kF64, dims(1000, 999), 7);
    const std::vector<unsigned char>& b = in.at("in");
    REQUIRE(b.size() == 1000u * 999u * 8u);
    std::vector<std::uint64_t> bits(b.size() / 8);
    std::memcpy(bits.data(), b.data(), b.size());
    std::size_t not_normal = 0;
    for (std::uint64_t x : bits) {
      double v;
      std::memcpy(&v, &x, 8);
      not_normal += std::isnormal(v) ? 0 : 1;
    }
    CHECK(not_normal == 0);
    std::sort(bits.begin(), bits.end());
    CHECK(std::adjacent_find(bits.begin(), bits.end()) == bits.end());
  }
  SECTION("deterministic in the seed") {
    const ProblemKey p = dims(33, 17);
    CHECK(a->make_inputs(kF32, p, 1) == a->make_inputs(kF32, p, 1));
    CHECK(a->make_inputs(kF32, p, 1) != a->make_inputs(kF32, p, 2));
    CHECK(a->make_inputs(kF64, p, 1) == a->make_inputs(kF64, p, 1));
    CHECK(a->make_inputs(kF64, p, 1) != a->make_inputs(kF64, p, 2));
  }
}

TEST_CASE("transpose reference moves every element to its transposed place", "[cpu][transpose]") {
  auto a = adapter("transpose");
  for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{{1, 1}, {1, 7}, {7, 1}, {3, 5}, {130, 67}}) {
    INFO(rows << " x " << cols);
    const ProblemKey p = dims(rows, cols);
    const HostBuffers in32 = a->make_inputs(kF32, p, 3);
    const auto ref32 = a->reference(in32, kF32, p);
    REQUIRE(ref32);
    const std::vector<unsigned char>& out32 = ref32->at("out");
    REQUIRE(out32.size() == in32.at("in").size());
    const HostBuffers in64 = a->make_inputs(kF64, p, 3);
    const auto ref64 = a->reference(in64, kF64, p);
    REQUIRE(ref64);
    const std::vector<unsigned char>& out64 = ref64->at("out");
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        REQUIRE(load_element<std::uint32_t>(out32, c * rows + r) ==
                load_element<std::uint32_t>(in32.at("in"), r * cols + c));
        REQUIRE(load_element<std::uint64_t>(out64, c * rows + r) ==
                load_element<std::uint64_t>(in64.at("in"), r * cols + c));
      }
    }
  }
  CHECK_THROWS_AS(a->reference(HostBuffers{}, kF32, dims(3, 5)), UsageError);

  auto copy = adapter("transpose_copy");
  const HostBuffers in = copy->make_inputs(kF64, dims(33, 17), 9);
  const auto ref = copy->reference(in, kF64, dims(33, 17));
  REQUIRE(ref);
  CHECK(ref->at("out") == in.at("in"));
}

TEST_CASE("transpose verify is bit-exact and names the first wrong element", "[cpu][transpose]") {
  auto a = adapter("transpose");
  const ProblemKey p = dims(33, 17);  // output is 17 x 33
  const HostBuffers in = a->make_inputs(kF32, p, 11);
  const HostBuffers expected = *a->reference(in, kF32, p);
  CHECK(a->verify(expected, expected, kF32, p).empty());

  SECTION("two swapped elements") {
    HostBuffers got = expected;
    auto& o = got["out"];
    const std::size_t i = 5 * 33 + 20, j = 5 * 33 + 21;  // out[5][20] and out[5][21]
    std::swap_ranges(o.begin() + 4 * i, o.begin() + 4 * i + 4, o.begin() + 4 * j);
    const std::string msg = a->verify(got, expected, kF32, p);
    CHECK_THAT(msg, Catch::Contains("out[5][20]"));
    CHECK_THAT(msg, Catch::Contains("in[20][5]"));
    CHECK_THAT(msg, Catch::Contains("2 of 561 elements differ"));
    CHECK_THAT(msg, Catch::Contains("belongs at out[5][21]"));
  }
  SECTION("one flipped bit") {
    HostBuffers got = expected;
    got["out"][4 * 560] ^= 1;  // the last element's lowest mantissa bit
    CHECK_THAT(a->verify(got, expected, kF32, p), Catch::Contains("out[16][32]"));
  }
  SECTION("an element never written") {
    HostBuffers got = expected;
    std::fill(got["out"].begin() + 4 * 40, got["out"].begin() + 4 * 41, 0xFF);
    const std::string msg = a->verify(got, expected, kF32, p);
    CHECK_THAT(msg, Catch::Contains("out[1][7]"));
    CHECK_THAT(msg, Catch::Contains("poison"));
  }
  SECTION("the untransposed input is wrong") {
    HostBuffers got{{"out", in.at("in")}};
    CHECK_FALSE(a->verify(got, expected, kF32, p).empty());
  }
  SECTION("wrong size or missing output") {
    HostBuffers got = expected;
    got["out"].pop_back();
    CHECK_THAT(a->verify(got, expected, kF32, p), Catch::Contains("bytes"));
    CHECK_FALSE(a->verify(HostBuffers{}, expected, kF32, p).empty());
  }
  SECTION("float64") {
    const HostBuffers in64 = a->make_inputs(kF64, p, 11);
    const HostBuffers exp64 = *a->reference(in64, kF64, p);
    HostBuffers got = exp64;
    got["out"][8 * 100 + 7] ^= 0x80;  // sign bit of out[3][1]
    CHECK_THAT(a->verify(got, exp64, kF64, p), Catch::Contains("out[3][1]"));
  }

  // The copy compares against the input layout.
  auto copy = adapter("transpose_copy");
  const HostBuffers cexp = *copy->reference(in, kF32, p);
  CHECK(copy->verify(HostBuffers{{"out", in.at("in")}}, cexp, kF32, p).empty());
  HostBuffers cgot = cexp;
  cgot["out"][4 * (2 * 17 + 3)] ^= 4;
  CHECK_THAT(copy->verify(cgot, cexp, kF32, p), Catch::Contains("out[2][3]") && Catch::Contains("in[2][3]"));
}

TEST_CASE("transpose bytes moved are one read and one write of the matrix", "[cpu][transpose]") {
  const DeviceInfo d = sim::SyntheticBackend::fake_device();
  for (const std::string name : {"transpose", "transpose_copy"}) {
    const TuningSpec s = specs::builtin_spec(name);
    auto a = kernels::make_transpose_adapter(s);
    for (const auto& p : {dims(8192, 8192), dims(4097, 1023), dims(1, 1)}) {
      const double r = static_cast<double>(p.at("rows")), c = static_cast<double>(p.at("cols"));
      CHECK(a->bytes_moved(kF32, p) == 2 * r * c * 4);
      CHECK(a->bytes_moved(kF64, p) == 2 * r * c * 8);
      // The spec's documented expression agrees.
      REQUIRE(s.bytes_moved);
      CHECK(static_cast<double>(eval_expr(*s.bytes_moved, s.default_config(), p, d, kF64)) == 2 * r * c * 8);
    }
  }
}

TEST_CASE("transpose adapter rejects specs that do not fit the family", "[cpu][transpose]") {
  using nlohmann::json;
  const std::string path = "transpose/transpose.tune.json";
  CHECK_NOTHROW(kernels::make_transpose_adapter(edited_spec(path, [](json&) {})));
  auto pointer_of = [](const TuningSpec& s) {
    try {
      kernels::make_transpose_adapter(s);
    } catch (const SpecError& e) {
      return e.pointer();
    }
    return std::string("(no error)");
  };
  CHECK(pointer_of(edited_spec(path, [](json& j) { j["family_options"]["mode"] = "sideways"; })) ==
        "/family_options/mode");
  CHECK(pointer_of(edited_spec(path, [](json& j) { j["family_options"]["extra"] = 1; })) == "/family_options/extra");
  CHECK(pointer_of(edited_spec(path, [](json& j) { j["family_options"]["mode"] = "copy"; })) == "/parameters");
  CHECK(pointer_of(edited_spec(path, [](json& j) { j["parameters"][0]["values"] = {0, 1, 2}; })) == "/parameters");
  CHECK(pointer_of(edited_spec(path, [](json& j) { j["parameters"].erase(4); })) == "/parameters");
  CHECK(pointer_of(edited_spec(path, [](json& j) { j["workloads"] = json::array({"float32", "int32"}); })) == "/workloads/1");
  CHECK(pointer_of(edited_spec(path, [](json& j) {
          j["problem"] = json::parse(R"({"dims": ["n"], "sizes": [{"n": 4}]})");
        })) == "/problem/dims");
  CHECK(pointer_of(edited_spec(path, [](json& j) { j.erase("launch"); })) == "/launch");
  // A launch geometry that does not match the kernel's contract is a spec error at plan time.
  const TuningSpec bad = edited_spec(path, [](json& j) { j["launch"][0]["block"] = json::array({"TILE_DIM", 1}); });
  auto a = kernels::make_transpose_adapter(bad);
  CHECK_THROWS_AS(a->plan(config(1, 32, 8, 1), kF32, dims(64, 64), sim::SyntheticBackend::fake_device()), SpecError);
}
