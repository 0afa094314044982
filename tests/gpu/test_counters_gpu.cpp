// Hardware counters on a real GPU (docs/observers.md "Hardware counters"): the three targets of the counter
// observer. The grid-stride reduction at 2^28 reads 4 n bytes from DRAM (within 2%) and the counters' bandwidth
// agrees with bytes / median time (within 5%); the transpose at 8192^2 shows the unpadded tile's shared-memory
// bank conflicts and not the padded one's; counters for every configuration add at most 2x to a tune's time.
// Where the machine refuses profiling, or CUPTI is missing, tuning goes on without counters.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "cli_support.hpp"
#include "cuda_session_support.hpp"
#include "tuner/cuda/counters.hpp"
#include "tuner/session/session.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

/// A brute-force session of spec (restricted by `restrict`) at problem p with these metrics; its ok trials.
struct CounterRun {
  std::vector<db::TrialRow> trials;
  std::string note;
  double seconds = 0;
};

CounterRun run_counters(const std::string& kernel, const std::string& restrict, const std::string& workload,
                        const std::string& problem, const std::vector<std::string>& metrics) {
  TuningSpec spec = specs::builtin_spec(kernel);
  spec.constraints.push_back(Expr::parse(restrict));
  cuda::TimingOptions to;
  to.metrics = metrics;
  autotune_test::CudaSession s(spec, to);
  const Workload w = Workload::parse(workload);
  const ProblemKey p = ProblemKey::parse(problem);
  session::Options opt;
  opt.bytes_moved = s.adapter->bytes_moved(w, p);
  const auto t0 = std::chrono::steady_clock::now();
  const session::Result r = session::run(spec, s.backend, *s.db, w, p, opt);
  CounterRun out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.note = s.backend.observer_note();
  db::TrialFilter f;
  f.session_id = r.session_id;
  for (auto& t : s.db->trials(f))
    if (t.m.ok()) out.trials.push_back(std::move(t));
  return out;
}

/// True when the counters could not be taken on this machine (no CUPTI, profiling refused): the test then says
/// why and checks that the trials were measured all the same.
bool counters_unavailable(const CounterRun& r) {
  for (const auto& t : r.trials)
    if (!t.m.observed.metrics.empty()) return false;
  WARN("no hardware counters on this machine: " << r.note);
  CHECK_FALSE(r.note.empty());
  CHECK_FALSE(r.trials.empty());
  return true;
}

}  // namespace

TEST_CASE("counters gpu: the grid-stride reduction at 2^28 reads 4 n bytes - the counters' bandwidth is bytes / time",
          "[gpu][counters]") {
  const double n = 268435456.0;
  const CounterRun r = run_counters(
      "reduction",
      "VARIANT >= 6 && KAHAN == 0 && FINAL == 0 && ITEMS_PER_THREAD == 4 && VEC == 4 && BLOCK_SIZE == 256 && "
      "(BLOCKS_PER_SM == 2 || BLOCKS_PER_SM == 4)",
      "float32/sum", "n=268435456", cuda::resolve_metrics("counters"));
  INFO("observer note: " << r.note);
  REQUIRE(r.trials.size() == 4);
  if (counters_unavailable(r)) return;
  for (const auto& t : r.trials) {
    const std::vector<Metric>& ms = t.m.observed.metrics;
    const double read = metric_value(ms, "dram_bytes_read"), write = metric_value(ms, "dram_bytes_write");
    const double gpu_ns = metric_value(ms, "gpu_time");
    const double counter_gbps = (read + write) / gpu_ns;
    INFO(t.config_json << ": read " << read << " B (" << read / (4 * n) << " x 4n), written " << write
                       << " B, gpu_time " << gpu_ns << " ns vs median " << t.m.median_ns << " ns, counters "
                       << counter_gbps << " GB/s vs bytes/median " << t.gbps << " GB/s, occupancy "
                       << metric_value(ms, "achieved_occupancy") << "%, method " << t.m.observed.method);
    CHECK(std::abs(read / (4 * n) - 1) <= 0.02);
    CHECK(std::abs(counter_gbps / t.gbps - 1) <= 0.05);
    CHECK(metric_value(ms, "achieved_occupancy") > 0);
    CHECK(metric_value(ms, "counter_replay_ms") > 0);
  }
}

TEST_CASE("counters gpu: the unpadded transpose tile has shared-memory bank conflicts, the padded one not",
          "[gpu][counters]") {
  const CounterRun r =
      run_counters("transpose", "VARIANT == 1 && TILE_DIM == 32 && BLOCK_ROWS == 8 && DIAGONAL == 0", "float32",
                   "cols=8192,rows=8192", cuda::resolve_metrics("shared_bank_conflicts,shared_wavefronts"));
  INFO("observer note: " << r.note);
  REQUIRE(r.trials.size() == 2);
  if (counters_unavailable(r)) return;
  double conflicts[2] = {0, 0}, wavefronts[2] = {0, 0};
  for (const auto& t : r.trials) {
    const int padded = Config::from_json(t.config_json).at("PADDING") == 1 ? 1 : 0;
    const std::vector<Metric>& ms = t.m.observed.metrics;
    conflicts[padded] = metric_value(ms, "shared_bank_conflicts_ld") + metric_value(ms, "shared_bank_conflicts_st");
    wavefronts[padded] = metric_value(ms, "shared_wavefronts");
  }
  const double elements = 8192.0 * 8192.0;
  INFO("bank conflicts: unpadded " << conflicts[0] << " (" << conflicts[0] / elements << " per element), padded "
                                   << conflicts[1] << "; shared wavefronts: unpadded " << wavefronts[0] << ", padded "
                                   << wavefronts[1]);
  // A 32-wide column of an unpadded 32 x 32 float tile sits in one bank: each warp's read of it is 32-way.
  CHECK(conflicts[0] > 0.5 * elements);
  CHECK(conflicts[1] < 0.1 * conflicts[0]);
  CHECK(wavefronts[0] > 2 * wavefronts[1]);
}

TEST_CASE("counters gpu: counters for every configuration add at most 2x to a tune", "[gpu][counters]") {
  // 26 configurations of the reduction at 2^26 (a second each of compile and timing at most).
  const std::string restrict = "VARIANT == 7 && KAHAN == 0 && FINAL == 0 && VEC == 4 && ITEMS_PER_THREAD == 4";
  const CounterRun plain = run_counters("reduction", restrict, "float32/sum", "n=67108864", {});
  const CounterRun counted =
      run_counters("reduction", restrict, "float32/sum", "n=67108864", cuda::resolve_metrics("counters"));
  // Where the replays' time went: the mean of each phase the observer writes into the method
  // ("...;phases=enable:0.00,setup:0.12,...").
  std::map<std::string, double> phase_ms;
  std::size_t replays = 0;
  for (const auto& t : counted.trials) {
    const std::string& m = t.m.observed.method;
    const std::size_t at = m.find("phases=");
    if (at == std::string::npos) continue;
    ++replays;
    std::size_t i = at + 7;
    while (i < m.size() && m[i] != ';') {
      const std::size_t colon = m.find(':', i), end = std::min(m.find(',', i), m.find(';', i));
      if (colon == std::string::npos || colon > end) break;
      phase_ms[m.substr(i, colon - i)] += std::atof(m.substr(colon + 1, end - colon - 1).c_str());
      i = end == std::string::npos ? m.size() : end + 1;
    }
  }
  std::string phases;
  for (const auto& [name, sum] : phase_ms)
    phases += " " + name + " " + std::to_string(sum / static_cast<double>(std::max<std::size_t>(replays, 1))) + " ms";
  WARN("without counters " << plain.seconds << " s, with " << counted.seconds << " s, " << counted.trials.size()
                           << " configurations; per replay (mean of " << replays << "):" << phases);
  INFO("without counters " << plain.seconds << " s, with " << counted.seconds << " s, " << counted.trials.size()
                           << " configurations; " << counted.note);
  REQUIRE(plain.trials.size() == counted.trials.size());
  if (counters_unavailable(counted)) return;
  CHECK(counted.seconds <= 2 * plain.seconds);
  for (const auto& t : plain.trials) CHECK(t.m.observed.metrics.empty());
  // The range profiler stays enabled on the context between replays: the timed samples of the configurations
  // after the first must not be slower for it. Geometric mean of median(with) / median(without), same configs.
  std::map<std::string, double> plain_median;
  for (const auto& t : plain.trials) plain_median[t.config_json] = t.m.median_ns;
  double log_sum = 0;
  int matched = 0;
  for (const auto& t : counted.trials) {
    const auto it = plain_median.find(t.config_json);
    if (it == plain_median.end() || !(it->second > 0) || !(t.m.median_ns > 0)) continue;
    log_sum += std::log(t.m.median_ns / it->second);
    ++matched;
  }
  REQUIRE(matched > 0);
  const double ratio = std::exp(log_sum / matched);
  INFO("timed medians with counters / without, geometric mean over " << matched << " configurations: " << ratio);
  CHECK(std::abs(ratio - 1) <= 0.03);
}

TEST_CASE("counters gpu: without CUPTI, tune --metrics measures all the same and says why once", "[gpu][counters]") {
  const std::string db = autotune_test::tmp_path("counters_gpu", "no_cupti.db");
  autotune_test::remove_db(db);
  ::setenv("AUTOTUNE_CUPTI", "/nonexistent/libcupti.so.13", 1);
  const autotune_test::Run t = autotune_test::run_cli(
      "--db " + db +
      " tune reduction --n 1048576 --dtype float32 --op sum --strategy brute_force --restrict "
      "'VARIANT == 7 && KAHAN == 0 && FINAL == 0 && VEC == 4 && ITEMS_PER_THREAD == 4 && BLOCK_SIZE == 256' "
      "--metrics counters");
  ::unsetenv("AUTOTUNE_CUPTI");
  INFO(t.out);
  CHECK(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("counters: /nonexistent/libcupti.so.13 cannot be loaded"));
  const autotune_test::Run b =
      autotune_test::run_cli("--db " + db + " best reduction --n 1048576 --dtype float32 --op sum --json");
  INFO(b.out);
  CHECK(b.code == 0);
  autotune_test::remove_db(db);
}
