// Adapter of the scan family (kernels_src/scan): workloads int32/float32/float64 x inclusive/exclusive x
// sum/max, seeded inputs, CPU reference, launch plans (hierarchical multi-kernel scans and the single-pass
// decoupled look-back scan), verification with a prefix-scaled tolerance for floating-point sums.
// See docs/scan.md.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <future>
#include <limits>
#include <type_traits>

#include "tuner/core/error.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/registry.hpp"

namespace autotune::kernels {

namespace {

// Numbering shared with scan.cu (DTYPE_ID, OP_ID) and the reduction family.
enum class Elem { int32 = 0, float32 = 1, float64 = 2 };
enum class Op { sum = 0, max = 2 };

// VARIANT 4-10 run scan_single_pass (4 tile in shared memory, 5 in registers, 6 warp-transposed, 7 persistent
// blocks that prefetch, 8 persistent blocks, 9 persistent blocks with asynchronous copies, 10 bulk copies, one
// tile per block); 0-3 are hierarchical.
constexpr int kSinglePass = 4;
constexpr int kSinglePassPrefetch = 7;  // 7, 8 and 9: persistent blocks
constexpr int kSinglePassAsync = 9;
constexpr int kSinglePassBulk = 10;  // the last variant
// Depth allowance of the float tolerance beyond log2(n): the sequential part of a thread (ITEMS_PER_THREAD
// is at most 32 in the shipped spec).
constexpr double kSequentialDepth = 32;

/// The smallest V not below x, for x >= 0: x rounded to the nearest V, then the next V up where that fell below x
/// (std::nextafter towards infinity, done on the bits: for a non-negative finite value, the next one up has the
/// next bit pattern). The tolerance of every element goes through here, so it is kept cheap.
template <typename V>
V round_up(double x) {
  V t = static_cast<V>(x);
  if (static_cast<double>(t) < x) {
    using Bits = std::conditional_t<sizeof(V) == 4, std::uint32_t, std::uint64_t>;
    Bits b;
    std::memcpy(&b, &t, sizeof b);
    ++b;
    std::memcpy(&t, &b, sizeof t);
  }
  return t;
}

const char* const kRequiredParams[] = {"VARIANT", "BLOCK_SIZE", "ITEMS_PER_THREAD", "VEC", "PADDING"};

struct Kind {
  Elem elem = Elem::float32;
  Op op = Op::sum;
  bool exclusive = false;
  std::size_t size = 4;  // bytes per element
  bool float_sum() const { return op == Op::sum && elem != Elem::int32; }
};

/// "float32/inclusive_sum" -> Kind. Throws UsageError naming the supported forms.
Kind classify(const Workload& w) {
  Kind k;
  if (w.dtype == "int32") k.elem = Elem::int32;
  else if (w.dtype == "float32") k.elem = Elem::float32;
  else if (w.dtype == "float64") k.elem = Elem::float64;
  else throw UsageError("scan workload " + w.key() + ": unsupported dtype '" + w.dtype + "' (int32, float32, float64)");
  const auto us = w.op.find('_');
  const std::string kind = us == std::string::npos ? "" : w.op.substr(0, us);
  const std::string op = us == std::string::npos ? "" : w.op.substr(us + 1);
  if (kind == "inclusive") k.exclusive = false;
  else if (kind == "exclusive") k.exclusive = true;
  else throw UsageError("scan workload " + w.key() + ": the operator must be inclusive_<op> or exclusive_<op>");
  if (op == "sum") k.op = Op::sum;
  else if (op == "max") k.op = Op::max;
  else throw UsageError("scan workload " + w.key() + ": unknown operator '" + op + "' (sum, max)");
  k.size = static_cast<std::size_t>(dtype_size(w.dtype));
  return k;
}

double epsilon_of(Elem e) {
  return e == Elem::float32 ? static_cast<double>(std::numeric_limits<float>::epsilon())
                            : std::numeric_limits<double>::epsilon();
}

class ScanAdapter : public KernelAdapter {
 public:
  explicit ScanAdapter(TuningSpec s) : KernelAdapter(std::move(s)) {
    require_params(spec_, "scan", kRequiredParams);
    if (spec_.problem_dims != std::vector<std::string>{"n"})
      throw SpecError("/problem/dims", "the scan family has exactly one dimension, n");
    check_workloads(spec_, [](const Workload& w) { classify(w); });
  }

  std::vector<std::string> compile_options(const Workload& w) const override {
    const Kind k = kind(w);
    return {"-DDTYPE_ID=" + std::to_string(static_cast<int>(k.elem)),
            "-DOP_ID=" + std::to_string(static_cast<int>(k.op))};
  }

  LaunchPlan plan(const Config& c, const Workload& w, const ProblemKey& p, const DeviceInfo& d) const override {
    const Kind k = kind(w);
    const std::int64_t n = problem_n(p);
    const TileShape shape = tile_shape("scan", c, kSinglePassBulk, "0..10");
    const std::int64_t variant = shape.variant, block = shape.block, tile = shape.tile;
    const std::size_t es = k.size;
    auto tiles_of = [&shape](std::int64_t m) { return shape.tiles_of(m); };

    LaunchPlan plan;
    plan.buffers.push_back({"in", static_cast<std::size_t>(n) * es, BufferRole::input});
    plan.buffers.push_back({"out", static_cast<std::size_t>(n) * es, BufferRole::output});

    if (variant >= kSinglePass) {
      // Layout of tile_state: see "tile status" in scan.cu. Zero when first used; the kernel leaves it ready
      // for its next launch (generation-tagged status words), so the plan has no memset step.
      const auto tiles = static_cast<std::size_t>(tiles_of(n));
      const std::size_t flag_bytes = es == 4 ? 8 * tiles : align_up(4 * tiles, 8);
      const std::size_t value_bytes = es == 4 ? 0 : std::size_t{2} * 8 * tiles;
      plan.buffers.push_back({"tile_state", 8 + flag_bytes + value_bytes, BufferRole::state});
      if (c.get("CLEAR_STATE").value_or(0) != 0) {
        // CLEAR_STATE = 1: a memset of the launch word and the tags before every launch anyway (one more step
        // in the stream, but the status lines are then in the L2 when the look-backs read them).
        plan.steps.push_back(LaunchStep::fill32("tile_state", 0, (8 + flag_bytes) / 4));
      }
      // Persistent blocks (VARIANT 7, 8, 9): as many as 2048 threads per SM allow (blocks that do not fit start
      // when the others are done, find no tile left and end); at most one per tile.
      const bool persistent = variant >= kSinglePassPrefetch && variant <= kSinglePassAsync;
      const std::int64_t blocks =
          persistent
              ? std::min(tiles_of(n), std::max<std::int64_t>(1, d.sm_count) * std::max<std::int64_t>(1, 2048 / block))
              : tiles_of(n);
      LaunchStep s = kernel_step_1d("scan", "scan_single_pass", blocks, block);
      s.args = {KernelArg::buf("in"), KernelArg::buf("out"), KernelArg::i64(n), KernelArg::i32(k.exclusive ? 1 : 0),
                KernelArg::buf("tile_state")};
      // single_pass_bulk keeps its tile in dynamic shared memory (kSharedBytes of scan_bulk.cuh), less the
      // REG_ROWS rows of 16-byte vectors per thread that its lanes hold in registers.
      if (variant == kSinglePassBulk) {
        const std::int64_t reg_elems = block * c.get("REG_ROWS").value_or(0) * static_cast<std::int64_t>(16 / es);
        s.shared_bytes = static_cast<std::uint32_t>((tile - reg_elems) * static_cast<std::int64_t>(es));
      }
      plan.steps.push_back(std::move(s));
      return plan;
    }

    // Hierarchical: level l scans m[l] elements in tiles_of(m[l]) tiles; m[l + 1] = tiles_of(m[l]); the last
    // level has one tile. Scratch "partials" holds, for l >= 1, raw[l] (the tile totals of level l - 1) and
    // scan[l] (their exclusive scan), plus raw[L] (one element, the total of the last level, unused).
    const ScanLevels hierarchy(n, tile, 1, es);
    const std::vector<std::int64_t>& m = hierarchy.m;
    const std::vector<std::size_t>&raw = hierarchy.raw, &scanned = hierarchy.scanned;
    const std::size_t levels = m.size();
    plan.buffers.push_back({"partials", hierarchy.bytes, BufferRole::scratch});
    auto data = [&](std::size_t l) { return l == 0 ? KernelArg::buf("out") : KernelArg::buf("partials", scanned[l]); };
    for (std::size_t l = 0; l < levels; ++l) {
      LaunchStep s = kernel_step_1d("scan", "scan_tiles", tiles_of(m[l]), block);
      s.args = {l == 0 ? KernelArg::buf("in") : KernelArg::buf("partials", raw[l]), data(l), KernelArg::i64(m[l]),
                KernelArg::buf("partials", raw[l + 1]), KernelArg::i32(l == 0 ? (k.exclusive ? 1 : 0) : 1)};
      plan.steps.push_back(std::move(s));
    }
    for (std::size_t l = levels - 1; l-- > 0;) {
      LaunchStep s = kernel_step_1d("scan", "scan_add", tiles_of(m[l]) - 1, block);
      s.args = {data(l), KernelArg::i64(m[l]), KernelArg::buf("partials", scanned[l + 1])};
      plan.steps.push_back(std::move(s));
    }
    return plan;
  }

  HostBuffers make_inputs(const Workload& w, const ProblemKey& p, std::uint64_t seed) const override {
    const Kind k = kind(w);
    const auto n = static_cast<std::size_t>(problem_n(p));
    std::vector<unsigned char> bytes = host_bytes(n * k.size);
    const bool sum = k.op == Op::sum;
    for_each_chunk(n, seed, [&](Random& rng, std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        switch (k.elem) {
          case Elem::int32: {
            // Sums: small non-zero values, so that prefixes stay far from overflow (they would wrap exactly).
            // Max: a wide range, so that a missing tile offset shows.
            const auto v = static_cast<std::int32_t>(k.op == Op::sum ? uniform_nonzero_int(rng, -100, 100)
                                                                     : uniform_nonzero_int(rng, -(1 << 30), 1 << 30));
            store_element(bytes, i, v);
            break;
          }
          case Elem::float32:
            store_element(bytes, i, static_cast<float>(signed_input_value(rng, sum, 24)));
            break;
          case Elem::float64:
            store_element(bytes, i, signed_input_value(rng, sum, 53));
            break;
        }
      }
    });
    HostBuffers out;
    out["in"] = std::move(bytes);
    return out;
  }

  /// Every workload's inputs: the reference the GPU makes from them (device_reference()) needs no host copy.
  std::vector<DrawRecipe> device_draws(const Workload& w, const ProblemKey& p, std::uint64_t seed) const override {
    const Kind k = kind(w);
    const DrawRecipe::Kind drawn = k.elem == Elem::int32     ? DrawRecipe::Kind::int32_nonzero
                                   : k.elem == Elem::float32 ? DrawRecipe::Kind::float32_signed
                                                             : DrawRecipe::Kind::float64_signed;
    // as make_inputs()
    return {signed_input_draw("in", seed, problem_n(p), drawn, k.op == Op::sum, k.op == Op::sum ? 100 : 1 << 30)};
  }

  /// reference()'s expected buffers, made by the GPU's prefix kernels in reference()'s arithmetic.
  std::optional<PrefixRecipe> device_reference(const Workload& w, const ProblemKey& p) const override {
    const Kind k = kind(w);
    const auto n = static_cast<std::size_t>(problem_n(p));
    PrefixRecipe r;
    r.input = "in";
    r.elem = static_cast<PrefixRecipe::Elem>(static_cast<int>(k.elem));  // the same numbering
    r.max = k.op == Op::max;
    r.exclusive = k.exclusive;
    r.count = n;
    r.chunk = kChunkElements;
    const OutputCheck c = checks({}, w, p).front();
    r.values = c.expected;
    if (k.float_sum()) {
      r.tolerance = c.tolerance;
      r.scale = tolerance_scale(n, k);
    }
    return r;
  }

  std::optional<HostBuffers> reference(const HostBuffers& inputs, const Workload& w,
                                       const ProblemKey& p) const override {
    const Kind k = kind(w);
    const auto n = static_cast<std::size_t>(problem_n(p));
    auto it = inputs.find("in");
    if (it == inputs.end() || it->second.size() != n * k.size)
      throw UsageError("scan reference: input buffer 'in' is missing or does not hold n elements");
    const std::vector<unsigned char>& in = it->second;
    HostBuffers out;
    switch (k.elem) {
      case Elem::int32: out["out"] = int_reference(in, n, k); break;
      case Elem::float32:
        if (k.op == Op::sum) return float_sum_reference<float>(in, n, k);
        out["out"] = max_reference<float>(in, n, k.exclusive);
        break;
      case Elem::float64:
        if (k.op == Op::sum) return float_sum_reference<double>(in, n, k);
        out["out"] = max_reference<double>(in, n, k.exclusive);
        break;
    }
    return out;
  }

  std::string verify(const HostBuffers& outputs, const HostBuffers& expected, const Workload& w,
                     const ProblemKey& p) const override {
    const Kind k = kind(w);
    const auto n = static_cast<std::size_t>(problem_n(p));
    auto got_it = outputs.find("out");
    if (got_it == outputs.end()) return "output 'out' is missing";
    const std::vector<unsigned char>& got = got_it->second;
    if (got.size() != n * k.size)
      return "output 'out' has " + std::to_string(got.size()) + " bytes, expected " + std::to_string(n * k.size);
    const std::string where = " (" + w.key() + ", " + p.key() + ")";

    if (k.float_sum()) {
      // The comparison kernel's predicate, run on the host (tuner/core/check.hpp).
      const std::vector<OutputCheck> c = checks(expected, w, p);
      for (const char* name : {"reference", "tolerance"}) {
        auto it = expected.find(name);
        if (it == expected.end() || it->second.size() != n * c.front().reference_bytes)
          return "expected values lack the float reference and tolerance";
      }
      return verify_on_host(c, outputs, expected, where);
    }

    auto exp_it = expected.find("out");
    if (exp_it == expected.end() || exp_it->second.size() != got.size()) return "expected value 'out' is missing";
    const std::vector<unsigned char>& want = exp_it->second;
    if (k.elem == Elem::int32 && got == want) return "";
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < n; ++i) {
      bool ok;
      switch (k.elem) {
        case Elem::int32: ok = load_element<std::int32_t>(got, i) == load_element<std::int32_t>(want, i); break;
        // Max of floats compares values (+0 == -0: which zero wins a tie depends on the order).
        case Elem::float32: ok = load_element<float>(got, i) == load_element<float>(want, i); break;
        default: ok = load_element<double>(got, i) == load_element<double>(want, i); break;
      }
      if (!ok && bad++ == 0) first = i;
    }
    if (bad == 0) return "";
    auto text = [&](const std::vector<unsigned char>& v) {
      return element_text(v, first, k.size, k.elem != Elem::int32);
    };
    return "out[" + std::to_string(first) + "] = " + text(got) + " but expected " + text(want) + "; " +
           std::to_string(bad) + " of " + std::to_string(n) + " elements differ" + where;
  }

  /// The same comparisons as verify(), for the comparison kernels: float sums within the per-element
  /// tolerance, float maxima as values, integers bit-exact.
  std::vector<OutputCheck> checks(const HostBuffers&, const Workload& w, const ProblemKey& p) const override {
    const Kind k = kind(w);
    OutputCheck c;
    c.output = "out";
    c.count = static_cast<std::uint64_t>(problem_n(p));
    c.element_bytes = static_cast<std::uint32_t>(k.size);
    c.floating = k.elem != Elem::int32;
    c.expected = "out";
    if (k.float_sum()) {
      c.kind = OutputCheck::Kind::abs_tolerance;
      c.expected = "reference";
      c.tolerance = "tolerance";
      c.reference_bytes = k.elem == Elem::float32 ? 4 : 8;  // as float_sum_reference() stores them
    } else {
      c.kind = k.elem == Elem::int32 ? OutputCheck::Kind::bits : OutputCheck::Kind::float_equal;
    }
    return {c};
  }

  double bytes_moved(const Workload& w, const ProblemKey& p) const override {
    const Kind k = kind(w);
    const std::int64_t n = problem_n(p);
    if (spec_.bytes_moved)
      return static_cast<double>(eval_expr(*spec_.bytes_moved, spec_.default_config(), p, DeviceInfo{}, w));
    return 2.0 * static_cast<double>(n) * static_cast<double>(k.size);
  }

 private:
  Kind kind(const Workload& w) const {
    spec_.check_workload(w);
    return classify(w);
  }

  std::int64_t problem_n(const ProblemKey& p) const {
    spec_.check_problem(p);
    const std::int64_t n = p.at("n");
    if (n < 1) throw UsageError("scan: n must be at least 1");
    if (n > (std::int64_t{1} << 40)) throw UsageError("scan: n = " + std::to_string(n) + " is too large");
    return n;
  }

  /// The float tolerance per unit of the prefix of |x| (float_sum_reference()).
  double tolerance_scale(std::size_t n, const Kind& k) const {
    const double depth = std::ceil(std::log2(static_cast<double>(std::max<std::size_t>(n, 2)))) + kSequentialDepth;
    return spec_.tolerance * epsilon_of(k.elem) * depth;
  }

  static std::vector<unsigned char> int_reference(const std::vector<unsigned char>& in, std::size_t n, const Kind& k) {
    std::vector<unsigned char> out = host_bytes(n * 4);
    if (k.op == Op::sum) {
      std::uint32_t acc = 0;  // wraps modulo 2^32 like the kernel's unsigned arithmetic
      for (std::size_t i = 0; i < n; ++i) {
        const auto x = static_cast<std::uint32_t>(load_element<std::int32_t>(in, i));
        if (!k.exclusive) acc += x;
        store_element(out, i, static_cast<std::int32_t>(acc));
        if (k.exclusive) acc += x;
      }
    } else {
      std::int32_t acc = std::numeric_limits<std::int32_t>::min();
      for (std::size_t i = 0; i < n; ++i) {
        const std::int32_t x = load_element<std::int32_t>(in, i);
        if (!k.exclusive) acc = std::max(acc, x);
        store_element(out, i, acc);
        if (k.exclusive) acc = std::max(acc, x);
      }
    }
    return out;
  }

  template <typename V>
  static std::vector<unsigned char> max_reference(const std::vector<unsigned char>& in, std::size_t n, bool exclusive) {
    std::vector<unsigned char> out = host_bytes(n * sizeof(V));
    V acc = -std::numeric_limits<V>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
      const V x = load_element<V>(in, i);
      if (!exclusive) acc = std::max(acc, x);
      store_element(out, i, acc);
      if (exclusive) acc = std::max(acc, x);
    }
    return out;
  }

  /// Prefix sums and the per-element tolerance
  ///   tolerance_i = factor * eps * (ceil(log2 n) + 32) * sum_{j in prefix i} |x_j|
  /// (factor: the spec's "tolerance"; eps: machine epsilon of V): the rounding bound of a summation tree of
  /// that depth, so a dropped element or a missing tile offset larger than it is caught. Stored as V: for
  /// float, the reference rounded to float and the tolerance widened by that rounding and rounded up, so
  /// that the comparison kernel reads 12 instead of 20 bytes per element (it is bound by memory bandwidth);
  /// the rounding is below 1/30 of the tolerance (eps / 2 * |prefix| against 17 * eps * prefix of |x|).
  /// The arithmetic is PrefixRecipe's (tuner/core/draw.hpp), which the GPU's prefix kernels repeat bit for bit:
  /// Neumaier-compensated double sums per chunk, the chunks' totals carried in chunk order.
  template <typename V>
  HostBuffers float_sum_reference(const std::vector<unsigned char>& in, std::size_t n, const Kind& k) const {
    const double scale = tolerance_scale(n, k);
    // The two buffers are zero-filled at once (a 1 GB buffer takes about 0.2 s to fill on one thread).
    std::future<std::vector<unsigned char>> tol_made =
        std::async(std::launch::async, [&] { return host_bytes(n * sizeof(V)); });
    std::vector<unsigned char> ref = host_bytes(n * sizeof(V)), tol = tol_made.get();
    // Two passes over the chunks on all cores: the chunk totals, then each chunk's prefixes started from the
    // sum of the totals before it (in chunk order, so the result does not depend on the number of threads).
    struct Carry {
      double sum = 0, comp = 0, abs = 0;
    };
    std::vector<Carry> carry((n + kChunkElements - 1) / kChunkElements);
    parallel_chunks(n, [&](std::size_t c, std::size_t begin, std::size_t end) {
      Carry t;
      for (std::size_t i = begin; i < end; ++i) {
        const double x = static_cast<double>(load_element<V>(in, i));
        neumaier_add(t.sum, t.comp, x);
        t.abs += std::fabs(x);
      }
      carry[c] = t;
    });
    Carry run;
    for (Carry& c : carry) {  // exclusive prefixes of the totals
      const Carry t = c;
      c = run;
      neumaier_add(run.sum, run.comp, t.sum);
      run.comp += t.comp;
      run.abs += t.abs;
    }
    parallel_chunks(n, [&](std::size_t c, std::size_t begin, std::size_t end) {
      Carry acc = carry[c];
      for (std::size_t i = begin; i < end; ++i) {
        const double x = static_cast<double>(load_element<V>(in, i));
        if (!k.exclusive) {
          neumaier_add(acc.sum, acc.comp, x);
          acc.abs += std::fabs(x);
        }
        const double exact = acc.sum + acc.comp;
        const V rounded = static_cast<V>(exact);
        const double bound = scale * acc.abs + std::fabs(exact - static_cast<double>(rounded));
        store_element(tol, i, round_up<V>(bound));
        store_element(ref, i, rounded);
        if (k.exclusive) {
          neumaier_add(acc.sum, acc.comp, x);
          acc.abs += std::fabs(x);
        }
      }
    });
    HostBuffers out;
    out["reference"] = std::move(ref);
    out["tolerance"] = std::move(tol);
    return out;
  }
};

}  // namespace

std::shared_ptr<const KernelAdapter> make_scan_adapter(const TuningSpec& spec) {
  return std::make_shared<ScanAdapter>(spec);
}

}  // namespace autotune::kernels
