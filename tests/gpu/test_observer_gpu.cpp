// Observers on a real GPU with NVML (libnvidia-ml.so.1): clocks, power and energy are recorded with every
// measured trial and are plausible (non-zero, below the board's power limit); Hopper has the energy counter;
// an energy objective session answers from them.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>

#include "db/ranking.hpp"
#include "tuner/cuda/nvml.hpp"
#include "tuner/cuda/observer.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/session/session.hpp"

using namespace autotune;

namespace {

/// A few reduction configurations at 2^26 floats (256 MiB read per run, about 0.1 ms on an H100).
struct ReductionCell {
  TuningSpec spec = specs::builtin_spec("reduction");
  std::shared_ptr<const KernelAdapter> adapter;
  Workload w = Workload::parse("float32/sum");
  ProblemKey p = ProblemKey::parse("n=67108864");
  cuda::TimingOptions timing;
  std::unique_ptr<cuda::CudaBackend> backend;
  std::unique_ptr<db::Database> db = db::Database::open(":memory:");
  ReductionCell() {
    // 8 configurations: two block sizes, every grid size they allow.
    spec.constraints.push_back(Expr::parse("VARIANT == 7 && KAHAN == 0 && ITEMS_PER_THREAD == 4 && VEC == 4 && "
                                           "FINAL == 0 && (BLOCK_SIZE == 256 || BLOCK_SIZE == 1024)"));
    adapter = kernels::make_adapter(spec);
    timing.energy_ms = 200;
    backend = std::make_unique<cuda::CudaBackend>(adapter, timing);
  }
  /// A brute-force session by this objective.
  session::Result tune(Objective o) {
    session::Options opt;
    opt.bytes_moved = adapter->bytes_moved(w, p);
    opt.objective = o;
    return session::run(spec, *backend, *db, w, p, opt);
  }
};

}  // namespace

TEST_CASE("observer: NVML is found and knows this GPU by its UUID", "[gpu][observer]") {
  std::string why;
  const cuda::detail::Nvml* api = cuda::detail::nvml(&why);
  INFO(why);
  REQUIRE(api != nullptr);
  const DeviceInfo dev = cuda::list_devices().front();
  auto obs = cuda::detail::Observer::open(*api, dev.uuid, &why);
  INFO(why);
  REQUIRE(obs != nullptr);
  const cuda::detail::NvmlSample s = obs->sample();
  CHECK(s.sm_mhz > 0);
  CHECK(s.mem_mhz > 0);
  CHECK(s.power_w > 0);
  CHECK(s.temperature_c > 0);
}

TEST_CASE("observer: every measured trial records plausible clocks, power and energy", "[gpu][observer]") {
  ReductionCell cell;
  const session::Result r = cell.tune(Objective::time);
  INFO("observer note: " << cell.backend->observer_note());
  CHECK(cell.backend->observer_note().empty());
  REQUIRE(r.evaluated > 3);
  const bool hopper = cell.backend->device().cc >= 90;
  db::TrialFilter f;
  f.session_id = r.session_id;
  for (const auto& t : cell.db->trials(f)) {
    if (!t.m.ok()) continue;
    const Observation& o = t.m.observed;
    INFO(t.config_json << " " << o.method << " power " << o.power_w << " W, limit " << o.power_limit_w << " W, energy "
                       << o.energy_j << " J, SM " << o.sm_clock_min_mhz << ".." << o.sm_clock_mhz << " MHz, memory "
                       << o.mem_clock_mhz << " MHz, " << o.temperature_c << " C, reasons "
                       << throttle_reason_names(o.throttle_reasons) << ", median " << t.m.median_ns << " ns");
    REQUIRE(o.observed());
    if (hopper) CHECK_THAT(o.method, Catch::Contains("energy=counter"));
    CHECK(o.sm_clock_mhz > 100);
    CHECK(o.sm_clock_mhz < 5000);
    CHECK(o.sm_clock_min_mhz <= o.sm_clock_mhz);
    CHECK(o.mem_clock_mhz > 100);
    CHECK(o.temperature_c > 5);
    CHECK(o.temperature_c < 100);
    REQUIRE(o.power_limit_w > 50);
    CHECK(o.power_w > 20);                       // a busy board draws well above idle
    CHECK(o.power_w < 1.05 * o.power_limit_w);   // below the board limit
    REQUIRE(o.has_energy());
    // Energy per run is the window's mean power times the time of one back-to-back run, which is at most the
    // flushed median and not far below it.
    const double joules_at_median = o.power_w * t.m.median_ns * 1e-9;
    CHECK(o.energy_j < 1.5 * joules_at_median);
    CHECK(o.energy_j > 0.2 * joules_at_median);
  }
}

TEST_CASE("observer: an energy objective session ranks and looks up by joules per run", "[gpu][observer][objective]") {
  ReductionCell cell;
  const session::Result r = cell.tune(Objective::energy);
  REQUIRE_FALSE(r.top.empty());
  for (std::size_t i = 1; i < r.top.size(); ++i)
    CHECK(r.top[i - 1].m.observed.energy_j <= r.top[i].m.observed.energy_j);
  const lookup::Answer a = lookup::best(*cell.db, cell.spec, cell.w, cell.backend->device(), cell.p, Objective::energy);
  CHECK(a.match == lookup::Match::exact);
  CHECK(a.observed.has_energy());
  CHECK(a.config.to_json() == db::rank_trials(cell.db->trials({}), Objective::energy, true).front().config_json);
}
