// Adapter of the compaction family (kernels_src/compaction): select flagged elements or those greater
// than a threshold, stable, with the count written to device memory. Problem dims n and select_pct (the
// percentage of selected elements, placed at random). See docs/compaction.md.
#include <algorithm>
#include <cstring>
#include <limits>

#include "tuner/core/error.hpp"
#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/registry.hpp"

namespace autotune::kernels {

namespace {

// Numbering shared with compaction.cu (DTYPE_ID) and the reduction and scan families.
enum class Elem { int32 = 0, float32 = 1, float64 = 2 };

// VARIANT 0 is three_phase; 1 (single_pass), 2 (single_pass_blocked: vector loads) and 3 (single_pass_bulk: the tile
// by bulk copies) are the one kernel compact_single_pass.
constexpr int kSinglePass = 1;
constexpr int kSinglePassBulk = 3;
constexpr std::int64_t kIntRange = 1000000000;

const char* const kRequiredParams[] = {"VARIANT", "BLOCK_SIZE", "ITEMS_PER_THREAD", "STAGE_OUTPUT"};

struct Kind {
  Elem elem = Elem::float32;
  bool select_if = false;  // true: x > 0; false: flags[i] != 0
  std::size_t size = 4;
};

Kind classify(const Workload& w) {
  Kind k;
  if (w.dtype == "int32") k.elem = Elem::int32;
  else if (w.dtype == "float32") k.elem = Elem::float32;
  else if (w.dtype == "float64") k.elem = Elem::float64;
  else
    throw UsageError("compaction workload " + w.key() + ": unsupported dtype '" + w.dtype +
                     "' (int32, float32, float64)");
  if (w.op == "flagged") k.select_if = false;
  else if (w.op == "if") k.select_if = true;
  else throw UsageError("compaction workload " + w.key() + ": unknown selection '" + w.op + "' (flagged, if)");
  k.size = static_cast<std::size_t>(dtype_size(w.dtype));
  return k;
}

class CompactionAdapter : public KernelAdapter {
 public:
  explicit CompactionAdapter(TuningSpec s) : KernelAdapter(std::move(s)) {
    require_params(spec_, "compaction", kRequiredParams);
    if (spec_.problem_dims != std::vector<std::string>{"n", "select_pct"})
      throw SpecError("/problem/dims", "the compaction family has the dimensions [\"n\", \"select_pct\"]");
    check_workloads(spec_, [](const Workload& w) { classify(w); });
  }

  std::vector<std::string> compile_options(const Workload& w) const override {
    const Kind k = kind(w);
    return {"-DDTYPE_ID=" + std::to_string(static_cast<int>(k.elem)),
            "-DSELECT_IF=" + std::string(k.select_if ? "1" : "0")};
  }

  LaunchPlan plan(const Config& c, const Workload& w, const ProblemKey& p, const DeviceInfo&) const override {
    const Kind k = kind(w);
    const std::int64_t n = problem(p).first;
    const TileShape shape = tile_shape("compaction", c, kSinglePassBulk, "0, 1, 2 or 3");
    const std::int64_t variant = shape.variant, block = shape.block, tile = shape.tile;
    auto tiles_of = [&shape](std::int64_t m) { return shape.tiles_of(m); };
    const std::int64_t tiles = tiles_of(n);

    LaunchPlan plan;
    plan.buffers.push_back({"in", static_cast<std::size_t>(n) * k.size, BufferRole::input});
    if (!k.select_if) plan.buffers.push_back({"flags", static_cast<std::size_t>(n), BufferRole::input});
    plan.buffers.push_back({"out", static_cast<std::size_t>(n) * k.size, BufferRole::output});
    plan.buffers.push_back({"count", 4, BufferRole::output});
    // Arguments every data kernel starts with: values, flags (a null pointer for "if"), threshold, n.
    std::vector<KernelArg> head = {KernelArg::buf("in"), k.select_if ? KernelArg::u64(0) : KernelArg::buf("flags"),
                                   threshold_arg(k), KernelArg::i64(n)};

    if (variant >= kSinglePass) {  // single_pass, single_pass_blocked, single_pass_bulk
      // Layout of tile_state: see "decoupled look-back" in compaction.cu. Zero when first used; the kernel
      // leaves it ready for its next launch, so the plan has no memset step.
      const std::size_t state_bytes = 8 + 8 * static_cast<std::size_t>(tiles);
      plan.buffers.push_back({"tile_state", state_bytes, BufferRole::state});
      if (c.get("CLEAR_STATE").value_or(0) != 0) {
        // CLEAR_STATE = 1: a memset of the whole state before every launch anyway (one more step in the
        // stream, but the status lines are then in the L2 when the look-backs read them).
        plan.steps.push_back(LaunchStep::fill32("tile_state", 0, state_bytes / 4));
      }
      LaunchStep s = kernel_step_1d("compaction", "compact_single_pass", tiles, block);
      s.args = head;
      s.args.push_back(KernelArg::buf("out"));
      s.args.push_back(KernelArg::buf("count"));
      s.args.push_back(KernelArg::buf("tile_state"));
      // single_pass_bulk keeps its tile's values in dynamic shared memory (kSharedBytes of compaction_bulk.cuh;
      // the flags travel in registers).
      if (variant == kSinglePassBulk)
        s.shared_bytes = static_cast<std::uint32_t>(tile * static_cast<std::int64_t>(k.size));
      plan.steps.push_back(std::move(s));
      return plan;
    }

    // Three-phase. The tile counts (m[0] = tiles of them) are scanned like the scan family's hierarchy:
    // level l scans m[l] counts in tiles_of(m[l]) tiles; m[l + 1] = tiles_of(m[l]). Scratch "partials" holds
    // raw[l] (counts of level l) and scanned[l] (their exclusive scan) for every level, plus raw[L] (one
    // element: the total of the last level, unused).
    const ScanLevels hierarchy(tiles, tile, 0, 4);
    const std::vector<std::int64_t>& m = hierarchy.m;
    const std::vector<std::size_t>&raw = hierarchy.raw, &scanned = hierarchy.scanned;
    const std::size_t levels = m.size();
    plan.buffers.push_back({"partials", hierarchy.bytes, BufferRole::scratch});
    LaunchStep count_step = kernel_step_1d("compaction", "compact_count", tiles, block);
    count_step.args = head;
    count_step.args.push_back(KernelArg::buf("partials", raw[0]));
    plan.steps.push_back(std::move(count_step));
    for (std::size_t l = 0; l < levels; ++l) {
      LaunchStep s = kernel_step_1d("compaction", "compact_scan_tiles", tiles_of(m[l]), block);
      s.args = {KernelArg::buf("partials", raw[l]), KernelArg::buf("partials", scanned[l]), KernelArg::i64(m[l]),
                KernelArg::buf("partials", raw[l + 1])};
      plan.steps.push_back(std::move(s));
    }
    for (std::size_t l = levels - 1; l-- > 0;) {
      LaunchStep s = kernel_step_1d("compaction", "compact_scan_add", tiles_of(m[l]) - 1, block);
      s.args = {KernelArg::buf("partials", scanned[l]), KernelArg::i64(m[l]),
                KernelArg::buf("partials", scanned[l + 1])};
      plan.steps.push_back(std::move(s));
    }
    LaunchStep scatter = kernel_step_1d("compaction", "compact_scatter", tiles, block);
    scatter.args = head;
    scatter.args.push_back(KernelArg::buf("partials", scanned[0]));
    scatter.args.push_back(KernelArg::buf("out"));
    scatter.args.push_back(KernelArg::buf("count"));
    plan.steps.push_back(std::move(scatter));
    return plan;
  }

  /// Exactly selected_count(n, select_pct) elements are selected, spread evenly over the chunks of
  /// for_each_chunk and at positions drawn uniformly within each (selection sampling). "flagged": flags are 0 or a
  /// random byte in [1, 255], values random and non-zero. "if": selected values are positive, the others negative
  /// (threshold 0).
  HostBuffers make_inputs(const Workload& w, const ProblemKey& p, std::uint64_t seed) const override {
    const Kind k = kind(w);
    const auto [n64, pct] = problem(p);
    const auto n = static_cast<std::size_t>(n64);
    std::vector<unsigned char> values = host_bytes(n * k.size);
    std::vector<unsigned char> flags = host_bytes(k.select_if ? 0 : n);
    const auto selected = static_cast<unsigned __int128>(selected_count(n64, pct));
    // Chunk [begin, end) selects floor(S * end / n) - floor(S * begin / n) of its elements (the counts add up
    // to S exactly), at positions drawn uniformly within the chunk.
    auto quota = [&](std::size_t i) { return static_cast<std::uint64_t>(selected * i / n); };
    for_each_chunk(n, seed, [&](Random& rng, std::size_t begin, std::size_t end) {
      std::uint64_t need = quota(end) - quota(begin);
      for (std::size_t i = begin; i < end; ++i) {
        const bool take = need > 0 && rng.bits() % static_cast<std::uint64_t>(end - i) < need;
        if (take) --need;
        const std::uint64_t r = rng.bits();
        const bool negative = k.select_if ? !take : (r & 1) != 0;
        switch (k.elem) {
          case Elem::int32: {
            const auto mag = static_cast<std::int32_t>(1 + (r >> 1) % kIntRange);
            store_element(values, i, negative ? -mag : mag);
            break;
          }
          case Elem::float32: {
            const float mag = static_cast<float>(static_cast<double>((r >> 40) + 1) * 0x1p-24);
            store_element(values, i, negative ? -mag : mag);
            break;
          }
          case Elem::float64: {
            const double mag = static_cast<double>((r >> 11) + 1) * 0x1p-53;
            store_element(values, i, negative ? -mag : mag);
            break;
          }
        }
        if (!k.select_if) flags[i] = take ? static_cast<unsigned char>(1 + (r >> 56) % 255) : 0;
      }
    });
    HostBuffers out;
    out["in"] = std::move(values);
    if (!k.select_if) out["flags"] = std::move(flags);
    return out;
  }

  std::optional<HostBuffers> reference(const HostBuffers& inputs, const Workload& w,
                                       const ProblemKey& p) const override {
    const Kind k = kind(w);
    const auto n = static_cast<std::size_t>(problem(p).first);
    auto in_it = inputs.find("in");
    if (in_it == inputs.end() || in_it->second.size() != n * k.size)
      throw UsageError("compaction reference: input buffer 'in' is missing or does not hold n elements");
    const std::vector<unsigned char>& in = in_it->second;
    const std::vector<unsigned char>* flags = nullptr;
    if (!k.select_if) {
      auto f_it = inputs.find("flags");
      if (f_it == inputs.end() || f_it->second.size() != n)
        throw UsageError("compaction reference: input buffer 'flags' is missing or does not hold n bytes");
      flags = &f_it->second;
    }
    // Two passes over the chunks on all cores: count the selection of each chunk, then copy each chunk's
    // selection to the place the counts before it give.
    std::vector<std::size_t> at((n + kChunkElements - 1) / kChunkElements + 1, 0);
    parallel_chunks(n, [&](std::size_t c, std::size_t begin, std::size_t end) {
      std::size_t m = 0;
      for (std::size_t i = begin; i < end; ++i) m += is_selected(k, in, flags, i) ? 1 : 0;
      at[c + 1] = m;
    });
    for (std::size_t c = 1; c < at.size(); ++c) at[c] += at[c - 1];
    std::vector<unsigned char> selected = host_bytes(at.back() * k.size);
    parallel_chunks(n, [&](std::size_t c, std::size_t begin, std::size_t end) {
      unsigned char* dst = selected.data() + at[c] * k.size;
      for (std::size_t i = begin; i < end; ++i) {
        if (!is_selected(k, in, flags, i)) continue;
        std::memcpy(dst, in.data() + i * k.size, k.size);
        dst += k.size;
      }
    });
    HostBuffers out;
    out["count"] = to_bytes(static_cast<std::uint32_t>(selected.size() / k.size));
    out["out"] = std::move(selected);
    return out;
  }

  std::string verify(const HostBuffers& outputs, const HostBuffers& expected, const Workload& w,
                     const ProblemKey& p) const override {
    const Kind k = kind(w);
    const auto n = static_cast<std::size_t>(problem(p).first);
    const std::string where = " (" + w.key() + ", " + p.key() + ")";
    auto count_it = outputs.find("count");
    auto out_it = outputs.find("out");
    if (count_it == outputs.end() || count_it->second.size() != 4) return "output 'count' is missing";
    if (out_it == outputs.end() || out_it->second.size() != n * k.size)
      return "output 'out' is missing or has the wrong size";
    auto want_count_it = expected.find("count");
    auto want_it = expected.find("out");
    if (want_count_it == expected.end() || want_it == expected.end()) return "expected values are missing";
    const auto count = load_element<std::uint32_t>(count_it->second, 0);
    const auto want_count = load_element<std::uint32_t>(want_count_it->second, 0);
    if (count != want_count)
      return "count = " + std::to_string(count) + " but expected " + std::to_string(want_count) + where;
    const std::vector<unsigned char>& got = out_it->second;
    const std::vector<unsigned char>& want = want_it->second;
    if (want.size() != static_cast<std::size_t>(want_count) * k.size) return "expected values are inconsistent";
    if (want.empty() || std::memcmp(got.data(), want.data(), want.size()) == 0) return "";  // empty: data() may be null
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < want_count; ++i) {
      if (std::memcmp(got.data() + i * k.size, want.data() + i * k.size, k.size) != 0 && bad++ == 0) first = i;
    }
    auto text = [&](const std::vector<unsigned char>& v) {
      return element_text(v, first, k.size, k.elem != Elem::int32);
    };
    return "out[" + std::to_string(first) + "] = " + text(got) + " but expected " + text(want) + "; " +
           std::to_string(bad) + " of " + std::to_string(want_count) + " selected elements differ" + where;
  }

  /// The same comparisons as verify(), for the comparison kernels: the count, then the selection (as many
  /// elements as the expected count) bit-exact.
  std::vector<OutputCheck> checks(const HostBuffers& expected, const Workload& w, const ProblemKey& p) const override {
    const Kind k = kind(w);
    problem(p);
    auto want = expected.find("out");
    if (want == expected.end()) return {};
    OutputCheck count;
    count.output = count.expected = "count";
    count.element_bytes = 4;
    count.count = 1;
    OutputCheck out;
    out.output = out.expected = "out";
    out.element_bytes = static_cast<std::uint32_t>(k.size);
    out.count = want->second.size() / k.size;
    out.floating = k.elem != Elem::int32;
    return {count, out};
  }

  /// Bytes every correct implementation must move: the values read once, the flags read once ("flagged"),
  /// the selected values written. (The three-phase variant reads its inputs twice; single_pass reads the
  /// values of unselected "flagged" elements not at all where whole sectors are unselected.)
  double bytes_moved(const Workload& w, const ProblemKey& p) const override {
    const Kind k = kind(w);
    const auto [n, pct] = problem(p);
    if (spec_.bytes_moved)
      return static_cast<double>(eval_expr(*spec_.bytes_moved, spec_.default_config(), p, DeviceInfo{}, w));
    const auto es = static_cast<double>(k.size);
    return static_cast<double>(n) * es + (k.select_if ? 0.0 : static_cast<double>(n)) +
           static_cast<double>(selected_count(n, pct)) * es;
  }

 private:
  Kind kind(const Workload& w) const {
    spec_.check_workload(w);
    return classify(w);
  }

  /// (n, select_pct); UsageError unless 1 <= n < 2^32 and 0 <= select_pct <= 100.
  std::pair<std::int64_t, std::int64_t> problem(const ProblemKey& p) const {
    spec_.check_problem(p);
    const std::int64_t n = p.at("n");
    const std::int64_t pct = p.at("select_pct");
    if (n < 1) throw UsageError("compaction: n must be at least 1");
    if (n > std::int64_t{0xffffffff}) throw UsageError("compaction: n must be below 2^32 (32-bit counts)");
    if (pct < 0 || pct > 100) throw UsageError("compaction: select_pct must be in [0, 100]");
    return {n, pct};
  }

  /// Number of selected elements: n * select_pct / 100 rounded to nearest (halves up).
  static std::int64_t selected_count(std::int64_t n, std::int64_t pct) { return (n * pct + 50) / 100; }

  static KernelArg threshold_arg(const Kind& k) {
    switch (k.elem) {
      case Elem::int32: return KernelArg::i32(0);
      case Elem::float32: return KernelArg::f32(0.0);
      case Elem::float64: return KernelArg::f64(0.0);
    }
    return KernelArg::i32(0);
  }

  static bool is_selected(const Kind& k, const std::vector<unsigned char>& in,
                          const std::vector<unsigned char>* flags, std::size_t i) {
    if (!k.select_if) return (*flags)[i] != 0;
    switch (k.elem) {
      case Elem::int32: return load_element<std::int32_t>(in, i) > 0;
      case Elem::float32: return load_element<float>(in, i) > 0.0f;
      case Elem::float64: return load_element<double>(in, i) > 0.0;
    }
    return false;
  }
};

}  // namespace

std::shared_ptr<const KernelAdapter> make_compaction_adapter(const TuningSpec& spec) {
  return std::make_shared<CompactionAdapter>(spec);
}

}  // namespace autotune::kernels
