// Host adapter of the transpose family (kernels_src/transpose): the transpose itself (spec "transpose",
// family_options {"mode": "transpose"}) and its roofline reference, a copy with the same tiling (spec
// "transpose_copy", {"mode": "copy"}). Both read a row-major rows x cols matrix "in" and write "out"
// (cols x rows for the transpose, rows x cols for the copy); verification is bit-exact.
//
// The copy is a separate spec rather than a VARIANT of the transpose because verify() and reference()
// do not see the configuration: one spec has one expected output, and a copy must never be able to
// become the "best transpose".
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/core/error.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/registry.hpp"

namespace autotune::kernels {

namespace {

// rows and cols must stay below 2^30 so that the kernel's int tile offsets (tile index * TILE_DIM, up to
// dim + 63) cannot overflow.
constexpr std::int64_t kMaxDim = (std::int64_t{1} << 30) - 1;
// One block per tile on a one-dimensional grid.
constexpr std::int64_t kMaxBlocks = 2147483647;
// Tile edge of the CPU reference's blocked transpose (elements); any value works, this keeps a tile of
// doubles (32 KiB) in L1.
constexpr std::int64_t kCpuTile = 64;

enum class Mode { transpose, copy };

const char* const kParams[] = {"VARIANT", "TILE_DIM", "BLOCK_ROWS", "PADDING", "DIAGONAL"};

struct Dims {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::size_t elements() const { return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols); }
};

// ---- seeded inputs -----------------------------------------------------------------------------------

// A seeded bijection of [0, 2^bits): affine map, xorshift, odd multiply, xorshift (each step invertible
// modulo 2^bits).
struct Permutation {
  int bits = 0;
  std::uint64_t mask = 0, a = 1, b = 0, c = 1;

  Permutation(int k, Random& rng)
      : bits(k), mask((std::uint64_t{1} << k) - 1), a(rng.bits() | 1), b(rng.bits()), c(rng.bits() | 1) {}

  std::uint64_t operator()(std::uint64_t x) const {
    x = (x * a + b) & mask;
    x ^= x >> (bits / 2);
    x = (x * c) & mask;
    x ^= x >> (bits / 3 + 1);
    return x;
  }
};

std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// Element i as float32 bits: sign and mantissa from a permutation of the low 24 bits of i, exponent field
// 64 + ((i >> 24) + hash(low bits)) mod 128. Finite, normal, non-zero, and distinct for i < 2^31 (the
// mantissa gives back the low bits, and with them the exponent gives back i >> 24).
void fill_float32(std::vector<unsigned char>& out, std::size_t count, std::uint64_t seed) {
  Random rng(seed);
  const Permutation perm(24, rng);
  const std::uint64_t salt = rng.bits();
  parallel_chunks(count, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint64_t low = i & 0xFFFFFFu;
      const std::uint64_t m = perm(low);
      const std::uint64_t exponent = 64 + (((i >> 24) + mix64(low ^ salt)) & 127);
      const auto bits = static_cast<std::uint32_t>(((m >> 23) << 31) | (exponent << 23) | (m & 0x7FFFFFu));
      store_element(out, i, bits);
    }
  });
}

// Element i as float64 bits: sign and mantissa from a permutation of the low 53 bits of i (distinct for
// every i < 2^53), exponent field 959 + hash(i) mod 128 (magnitudes about 2^-64 to 2^63).
void fill_float64(std::vector<unsigned char>& out, std::size_t count, std::uint64_t seed) {
  Random rng(seed);
  const Permutation perm(53, rng);
  const std::uint64_t salt = rng.bits();
  parallel_chunks(count, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint64_t m = perm(i);
      const std::uint64_t exponent = 959 + (mix64(i ^ salt) & 127);
      const std::uint64_t bits = ((m >> 52) << 63) | (exponent << 52) | (m & 0xFFFFFFFFFFFFFull);
      store_element(out, i, bits);
    }
  });
}

// ---- CPU reference -----------------------------------------------------------------------------------

// out (cols x rows) = transpose of in (rows x cols), element type W (a same-sized unsigned integer: the
// reference moves bits, never values). Blocked so that both sides stay in cache.
template <typename W>
void transpose_bits(const unsigned char* in, unsigned char* out, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t r0 = 0; r0 < rows; r0 += kCpuTile) {
    const std::int64_t r1 = std::min(rows, r0 + kCpuTile);
    for (std::int64_t c0 = 0; c0 < cols; c0 += kCpuTile) {
      const std::int64_t c1 = std::min(cols, c0 + kCpuTile);
      for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t c = c0; c < c1; ++c) {
          std::memcpy(out + (c * rows + r) * sizeof(W), in + (r * cols + c) * sizeof(W), sizeof(W));
        }
      }
    }
  }
}

double value_of(const unsigned char* p, int es) {
  if (es == 4) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

// "1.5 (0x3fc00000)": the value (float32 with 9 significant digits, enough to round-trip) and its bits
// (little-endian bytes printed most significant first).
std::string describe_element(const unsigned char* p, int es) {
  std::vector<unsigned char> be(p, p + es);
  std::reverse(be.begin(), be.end());
  std::string value;
  if (es == 4 && std::isfinite(value_of(p, es))) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", value_of(p, es));
    value = buf;
  } else {
    value = format_number(value_of(p, es));
  }
  return value + " (0x" + hex_bytes(be) + ")";
}

// ---- the adapter -------------------------------------------------------------------------------------

// Immutable after construction (which throws SpecError if the spec does not fit the family); every method
// is const and thread-safe. Problems outside 1 <= rows, cols < 2^30, workloads other than float32/float64
// and configs lacking a parameter or of the other mode's VARIANT are UsageError.
class TransposeAdapter : public KernelAdapter {
 public:
  explicit TransposeAdapter(TuningSpec s) : KernelAdapter(std::move(s)) { validate_spec(); }

  std::vector<std::string> compile_options(const Workload& w) const override {
    return {"-DDTYPE_ID=" + std::to_string(element_size(w) == 4 ? 1 : 2)};
  }

  LaunchPlan plan(const Config& c, const Workload& w, const ProblemKey& p, const DeviceInfo& d) const override {
    const int es = element_size(w);
    const Dims dims = dims_of(p);
    const std::int64_t tile = param(c, "TILE_DIM");
    const std::int64_t block_rows = param(c, "BLOCK_ROWS");
    const std::int64_t variant = param(c, "VARIANT");
    if (mode_ == Mode::copy ? variant != 2 : (variant != 0 && variant != 1)) {
      throw UsageError("kernel " + spec_.name + ": VARIANT=" + std::to_string(variant) + " is not a " +
                       (mode_ == Mode::copy ? "copy (2)" : "transpose (0 or 1)") + " variant");
    }
    if (tile < 1 || block_rows < 1) {
      throw UsageError("kernel " + spec_.name + ": TILE_DIM and BLOCK_ROWS must be positive (config " + c.str() + ")");
    }
    const std::int64_t tiles_x = (dims.cols + tile - 1) / tile;
    const std::int64_t tiles_y = (dims.rows + tile - 1) / tile;
    if (tiles_x * tiles_y > kMaxBlocks) {
      throw UsageError("kernel " + spec_.name + ": " + p.key() + " needs " + std::to_string(tiles_x * tiles_y) +
                       " tiles of " + std::to_string(tile) + " x " + std::to_string(tile) +
                       ", more than one grid can hold (" + std::to_string(kMaxBlocks) + ")");
    }

    // Geometry from the spec's launch expressions, checked against what the kernel assumes.
    const LaunchSpec& l = spec_.launches.front();
    auto ev = [&](const Expr& e) { return eval_expr(e, c, p, d, w); };
    const std::int64_t grid[3] = {ev(l.grid_x), ev(l.grid_y), ev(l.grid_z)};
    const std::int64_t block[3] = {ev(l.block_x), ev(l.block_y), ev(l.block_z)};
    if (grid[0] != tiles_x * tiles_y || grid[1] != 1 || grid[2] != 1 || block[0] != tile ||
        block[1] != block_rows || block[2] != 1) {
      throw SpecError("/launch/0", "kernel " + spec_.name + ": the launch must be grid ceil_div(cols, TILE_DIM) * "
                                   "ceil_div(rows, TILE_DIM), block [TILE_DIM, BLOCK_ROWS] (got grid " +
                                       std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" +
                                       std::to_string(grid[2]) + ", block " + std::to_string(block[0]) + "x" +
                                       std::to_string(block[1]) + "x" + std::to_string(block[2]) + " for " +
                                       p.key() + ")");
    }

    LaunchPlan plan;
    const std::size_t bytes = dims.elements() * static_cast<std::size_t>(es);
    plan.buffers.push_back({"in", bytes, BufferRole::input});
    plan.buffers.push_back({"out", bytes, BufferRole::output});
    LaunchStep s;
    s.kind = LaunchStep::Kind::kernel;
    s.kernel = l.kernel;
    s.grid = {static_cast<std::uint32_t>(grid[0]), 1, 1};
    s.block = {static_cast<std::uint32_t>(block[0]), static_cast<std::uint32_t>(block[1]), 1};
    s.shared_bytes = 0;  // the tile is static shared memory (at most 64 * 65 * 8 bytes = 32.5 KiB)
    s.args = {KernelArg::buf("in"),      KernelArg::buf("out"),     KernelArg::i32(dims.rows),
              KernelArg::i32(dims.cols), KernelArg::u32(tiles_x), KernelArg::u32(tiles_y)};
    plan.steps.push_back(std::move(s));
    return plan;
  }

  HostBuffers make_inputs(const Workload& w, const ProblemKey& p, std::uint64_t seed) const override {
    const int es = element_size(w);
    const Dims dims = dims_of(p);
    std::vector<unsigned char> in = host_bytes(dims.elements() * static_cast<std::size_t>(es));
    if (es == 4) fill_float32(in, dims.elements(), seed);
    else fill_float64(in, dims.elements(), seed);
    HostBuffers out;
    out["in"] = std::move(in);
    return out;
  }

  std::optional<HostBuffers> reference(const HostBuffers& inputs, const Workload& w,
                                       const ProblemKey& p) const override {
    const int es = element_size(w);
    const Dims dims = dims_of(p);
    auto it = inputs.find("in");
    const std::size_t bytes = dims.elements() * static_cast<std::size_t>(es);
    if (it == inputs.end() || it->second.size() != bytes) {
      throw UsageError("kernel " + spec_.name + ": reference() needs input 'in' of " + std::to_string(bytes) +
                       " bytes for " + p.key());
    }
    HostBuffers expected;
    std::vector<unsigned char>& out = expected["out"];
    if (mode_ == Mode::copy) {
      out = it->second;
    } else {
      out = host_bytes(bytes);
      if (es == 4) transpose_bits<std::uint32_t>(it->second.data(), out.data(), dims.rows, dims.cols);
      else transpose_bits<std::uint64_t>(it->second.data(), out.data(), dims.rows, dims.cols);
    }
    return expected;
  }

  std::string verify(const HostBuffers& outputs, const HostBuffers& expected, const Workload& w,
                     const ProblemKey& p) const override {
    const int es = element_size(w);
    const Dims dims = dims_of(p);
    auto got_it = outputs.find("out");
    auto want_it = expected.find("out");
    if (got_it == outputs.end()) return "output 'out' missing";
    if (want_it == expected.end()) return "expected output 'out' missing";
    const std::vector<unsigned char>& got = got_it->second;
    const std::vector<unsigned char>& want = want_it->second;
    const std::size_t bytes = dims.elements() * static_cast<std::size_t>(es);
    if (got.size() != bytes || want.size() != bytes) {
      return "output 'out' has " + std::to_string(got.size()) + " bytes, expected " + std::to_string(bytes);
    }
    if (std::memcmp(got.data(), want.data(), bytes) == 0) return "";

    // Out-of-line: locate and describe the first mismatch, and count them all.
    std::size_t first = 0, wrong = 0;
    bool found = false;
    for (std::size_t i = 0; i < dims.elements(); ++i) {
      if (std::memcmp(got.data() + i * es, want.data() + i * es, es) != 0) {
        if (!found) first = i;
        found = true;
        ++wrong;
      }
    }
    const unsigned char* g = got.data() + first * es;
    const unsigned char* e = want.data() + first * es;
    // Output layout: cols x rows for the transpose, rows x cols for the copy.
    const std::int64_t out_cols = mode_ == Mode::copy ? dims.cols : dims.rows;
    const auto out_r = static_cast<std::int64_t>(first) / out_cols;
    const auto out_c = static_cast<std::int64_t>(first) % out_cols;
    const std::int64_t in_r = mode_ == Mode::copy ? out_r : out_c;
    const std::int64_t in_c = mode_ == Mode::copy ? out_c : out_r;
    bool poison = true;
    for (int k = 0; k < es; ++k) poison = poison && g[k] == 0xFF;
    std::string msg = "out[" + std::to_string(out_r) + "][" + std::to_string(out_c) + "] = " +
                      describe_element(g, es) + ", expected in[" + std::to_string(in_r) + "][" +
                      std::to_string(in_c) + "] = " + describe_element(e, es);
    if (poison) {
      msg += " (never written: still the poison pattern)";
    } else {
      // Inputs are bit-distinct, so a value that exists elsewhere in the expected output was misplaced.
      for (std::size_t k = 0; k < dims.elements(); ++k) {
        if (k != first && std::memcmp(want.data() + k * es, g, es) == 0) {
          msg += " (a misplaced element: it belongs at out[" + std::to_string(static_cast<std::int64_t>(k) / out_cols) +
                 "][" + std::to_string(static_cast<std::int64_t>(k) % out_cols) + "])";
          break;
        }
      }
    }
    msg += "; " + std::to_string(wrong) + " of " + std::to_string(dims.elements()) + " elements differ";
    return msg;
  }

  /// The same comparison as verify(), for the comparison kernels: every element bit-exact.
  std::vector<OutputCheck> checks(const HostBuffers&, const Workload& w, const ProblemKey& p) const override {
    OutputCheck c;
    c.output = c.expected = "out";
    c.element_bytes = static_cast<std::uint32_t>(element_size(w));
    c.count = dims_of(p).elements();
    c.floating = true;
    return {c};
  }

  double bytes_moved(const Workload& w, const ProblemKey& p) const override {
    const Dims dims = dims_of(p);
    return 2.0 * static_cast<double>(dims.rows) * static_cast<double>(dims.cols) * element_size(w);
  }

 private:
  Mode mode_ = Mode::transpose;

  void validate_spec() {
    // family_options: {"mode": "transpose" | "copy"}, default transpose.
    nlohmann::json opts;
    try {
      opts = nlohmann::json::parse(spec_.family_options_json);
    } catch (const nlohmann::json::exception& e) {
      throw SpecError("/family_options", std::string("malformed JSON: ") + e.what());
    }
    if (!opts.is_object()) throw SpecError("/family_options", "expected an object");
    for (auto it = opts.begin(); it != opts.end(); ++it) {
      if (it.key() != "mode") {
        throw SpecError("/family_options/" + it.key(),
                        "unknown option '" + it.key() + "' (the transpose family knows: mode)");
      }
    }
    if (opts.contains("mode")) {
      const auto& m = opts["mode"];
      if (m == "transpose") mode_ = Mode::transpose;
      else if (m == "copy") mode_ = Mode::copy;
      else throw SpecError("/family_options/mode", "mode must be \"transpose\" or \"copy\"");
    }

    if (spec_.problem_dims.size() != 2 ||
        !(std::count(spec_.problem_dims.begin(), spec_.problem_dims.end(), "rows") == 1 &&
          std::count(spec_.problem_dims.begin(), spec_.problem_dims.end(), "cols") == 1)) {
      throw SpecError("/problem/dims", "the transpose family needs the dims [\"rows\", \"cols\"]");
    }
    for (std::size_t i = 0; i < spec_.workloads.size(); ++i) {
      const Workload& w = spec_.workloads[i];
      if ((w.dtype != "float32" && w.dtype != "float64") || !w.op.empty()) {
        throw SpecError("/workloads/" + std::to_string(i),
                        "the transpose family supports the workloads float32 and float64, not '" + w.key() + "'");
      }
    }
    for (const char* name : kParams) {
      if (spec_.find_param(name) == nullptr) {
        throw SpecError("/parameters", std::string("the transpose family needs the parameter ") + name);
      }
    }
    for (Value v : spec_.find_param("VARIANT")->values) {
      const bool ok = mode_ == Mode::copy ? v == 2 : (v == 0 || v == 1);
      if (!ok) {
        throw SpecError("/parameters", "VARIANT " + std::to_string(v) + " does not belong to mode " +
                                           (mode_ == Mode::copy ? "copy (only 2)" : "transpose (0 naive, 1 tiled)"));
      }
    }
    const std::string entry = mode_ == Mode::copy ? "tiled_copy" : "transpose";
    if (spec_.launches.size() != 1 || spec_.launches.front().kernel != entry) {
      throw SpecError("/launch", "the transpose family needs exactly one launch step, of kernel '" + entry + "'");
    }
  }

  int element_size(const Workload& w) const {
    spec_.check_workload(w);
    return w.dtype == "float32" ? 4 : 8;
  }

  Dims dims_of(const ProblemKey& p) const {
    spec_.check_problem(p);
    Dims d{p.at("rows"), p.at("cols")};
    if (d.rows < 1 || d.cols < 1 || d.rows > kMaxDim || d.cols > kMaxDim) {
      throw UsageError("kernel " + spec_.name + ": rows and cols must be between 1 and " + std::to_string(kMaxDim) +
                       " (got " + p.key() + ")");
    }
    return d;
  }

  std::int64_t param(const Config& c, const std::string& name) const {
    auto v = c.get(name);
    if (!v) throw UsageError("kernel " + spec_.name + ": config " + c.str() + " lacks the parameter " + name);
    return *v;
  }
};

}  // namespace

std::shared_ptr<const KernelAdapter> make_transpose_adapter(const TuningSpec& spec) {
  return std::make_shared<TransposeAdapter>(spec);
}

}  // namespace autotune::kernels
