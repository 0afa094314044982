// Tests of the hardware counters without a GPU (docs/observers.md): the short names (tuner/cuda/counters.cpp),
// what CUPTI's host API makes of them for Hopper (the real libcupti.so.13 of the toolkit: no GPU needed), and the
// counter observer's replay against a fake CUPTI (tests/tools/fake_cupti.cpp) loaded through the same dlopen
// boundary: its values, its passes, a missing CUPTI, and a machine that refuses profiling, at open or at a replay.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tuner/core/error.hpp"
#include "tuner/cuda/counter_observer.hpp"
#include "tuner/cuda/counters.hpp"

#if __has_include(<cupti_range_profiler.h>) && defined(FAKE_CUPTI_LIB)
#include "tools/fake_cupti.hpp"
#include "tuner/cuda/cupti.hpp"
#include "tuner/cuda/cupti_host.hpp"
#include "tuner/cuda/cupti_range.hpp"
#include "tuner/cuda/dl_library.hpp"
#define AUTOTUNE_TEST_FAKE_CUPTI 1
#endif

using namespace autotune;
using namespace autotune::cuda;
using namespace autotune::cuda::detail;

TEST_CASE("counters: short names, groups and CUPTI names resolve - an unknown name is refused", "[nvrtc][counters]") {
  CHECK(resolve_metrics("counters") == default_counter_metrics());
  CHECK(resolve_metrics("dram_bytes, l2_hit_rate,dram_bytes_read") ==
        std::vector<std::string>{"dram_bytes_read", "dram_bytes_write", "l2_hit_rate"});
  CHECK(resolve_metrics("shared_bank_conflicts") ==
        std::vector<std::string>{"shared_bank_conflicts_ld", "shared_bank_conflicts_st"});
  CHECK(resolve_metrics("smsp__inst_executed.sum") == std::vector<std::string>{"smsp__inst_executed.sum"});
  CHECK_THROWS_WITH(resolve_metrics("dram,counters"),
                    Catch::Contains("unknown metric 'dram'") && Catch::Contains("achieved_occupancy"));
  CHECK_THROWS_AS(resolve_metrics(" , "), UsageError);
  CHECK(cupti_metric_name("achieved_occupancy") == "sm__warps_active.avg.pct_of_peak_sustained_active");
  CHECK(cupti_metric_name("smsp__inst_executed.sum") == "smsp__inst_executed.sum");
  CHECK(counter_unit("dram_bytes_read") == "byte");
  CHECK(counter_unit("smsp__inst_executed.sum").empty());
}

TEST_CASE("counters: CUPTI's host API knows every short name on GH100, in a few passes", "[nvrtc][counters]") {
  std::vector<std::string> all;
  for (const CounterMetric& m : counter_metrics()) all.emplace_back(m.name);
  CounterPlan plan;
  try {
    plan = plan_counters("GH100", all);
  } catch (const EnvironmentError& e) {
    // Without CUPTI in the toolkit there is nothing to check; the observer then says why (next test).
    WARN("no CUPTI here: " << e.what());
    return;
  }
  REQUIRE(plan.dims.size() == all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    INFO(all[i] << " (" << cupti_metric_name(all[i]) << "): CUPTI's dimension " << plan.dims[i]);
    CHECK_FALSE(plan.dims[i].empty());
  }
  CHECK(plan.dims[0] == "byte");  // dram_bytes_read
  CHECK(plan.passes >= 1);
  const CounterPlan defaults = plan_counters("GH100", default_counter_metrics());
  WARN("GH100: the default counters take " << defaults.passes << " passes, all of them " << plan.passes);
  CHECK(defaults.passes == 1);  // the default set costs one run of the plan per configuration
  CHECK(defaults.passes <= plan.passes);
  CHECK(plan_counters("GH100", {"dram_bytes_read"}).passes == 1);
  CHECK_THROWS_WITH(plan_counters("GH100", {"dram__no_such_metric.sum"}),
                    Catch::Contains("does not know the metric dram__no_such_metric.sum"));
}

#ifdef AUTOTUNE_TEST_FAKE_CUPTI
namespace {

/// The fake's control block, reset to its defaults, and the process's counter hosts forgotten (a test sees the
/// host calls of its own openings).
fake_cupti::Control& control() {
  counter_hosts().clear();
  void* lib = dlopen(FAKE_CUPTI_LIB, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lib != nullptr);
  auto fn = reinterpret_cast<fake_cupti::ControlFn>(dlsym(lib, "fake_cupti_control"));
  REQUIRE(fn != nullptr);
  *fn() = fake_cupti::Control{};
  return *fn();
}

const Cupti& fake_api() {
  static std::unique_ptr<Cupti> api = [] {
    std::string why;
    auto a = load_cupti(FAKE_CUPTI_LIB, &why);
    INFO(why);
    REQUIRE(a != nullptr);
    return a;
  }();
  return *api;
}

/// Runs, flushes and synchronisations of a replay, counted.
struct Plan {
  int runs = 0, flushes = 0, syncs = 0;
  std::function<void()> run = [this] { ++runs; };
  TimedRuns timed() {
    return TimedRuns{run, [this] { ++flushes; }, [this] { ++syncs; }, 1.0};
  }
};

}  // namespace

TEST_CASE("counters: a replay under a fake CUPTI adds each metric, its cost and its passes", "[nvrtc][counters]") {
  fake_cupti::Control& c = control();
  c.passes = 3;
  const std::vector<std::string> metrics = {"dram_bytes_read", "achieved_occupancy", "smsp__inst_executed.sum"};
  std::string why;
  auto obs = open_counter_observer(fake_api(), ObserverSite{"", 0, nullptr}, metrics, &why);
  INFO(why);
  REQUIRE(obs != nullptr);
  TimeRequest q;
  q.metrics = metrics;
  CHECK(obs->serves(q));
  TimeRequest other;
  other.metrics = {"l2_hit_rate"};
  CHECK_FALSE(obs->serves(other));

  Plan plan;
  Observation o;
  o.method = "nvml;energy=none";
  obs->after_timing(q, plan.timed(), o);
  CHECK(obs->note().empty());
  CHECK(plan.runs == 3);     // one run of the plan per pass
  CHECK(plan.flushes == 3);  // the L2 flushed before each pass
  CHECK(c.starts == 3);
  CHECK(c.pushes == 3);
  CHECK(c.pops == 3);
  CHECK(plan.syncs == 3);  // once per pass: the flush is queued inside the pass, not waited for
  CHECK(c.enables == 1);
  CHECK(c.disables == 0);  // kept enabled for the next configuration
  CHECK(c.data_sizes == 1);
  CHECK(c.image_inits == 1);
  CHECK(c.set_configs == 1);
  CHECK(c.decodes == 1);
  REQUIRE(o.metrics.size() == 4);
  CHECK(o.metrics[0] == Metric{"dram_bytes_read", 1000, "byte"});
  CHECK(o.metrics[1] == Metric{"achieved_occupancy", 2000, "percent"});
  CHECK(o.metrics[2] == Metric{"smsp__inst_executed.sum", 3000, "byte"});  // CUPTI's dimension (the fake's)
  CHECK(o.metrics[3].name == "counter_replay_ms");
  CHECK(o.metrics[3].unit == "ms");
  CHECK(o.metrics[3].value >= 0);
  CHECK_THAT(o.method, Catch::StartsWith("nvml;energy=none + cupti;passes=3;replay=") &&
                           Catch::Contains(";phases=enable:") && Catch::Contains(",evaluate:") &&
                           Catch::EndsWith(";flush=queued"));

  // The next configuration: the same profiler, its counter data image initialised and configured again.
  Observation o2;
  obs->after_timing(q, plan.timed(), o2);
  CHECK(obs->note().empty());
  CHECK(plan.runs == 6);
  CHECK(c.enables == 1);
  CHECK(c.data_sizes == 1);
  CHECK(c.image_inits == 2);
  CHECK(c.set_configs == 2);
  CHECK(c.decodes == 2);
  REQUIRE(o2.metrics.size() == 4);
  CHECK(o2.metrics[0] == Metric{"dram_bytes_read", 1000, "byte"});
  CHECK_THAT(o2.method, Catch::StartsWith("cupti;passes=3;replay=") && Catch::Contains("phases=enable:0.00,"));
  obs.reset();
  CHECK(c.disables == 1);  // disabled when the observer closes
}

TEST_CASE("counters: the configuration image is built once per chip and metric set, and reused", "[nvrtc][counters]") {
  fake_cupti::Control& c = control();
  const std::vector<std::string> a = {"dram_bytes_read", "achieved_occupancy"}, b = {"l2_hit_rate"};
  std::string why;
  auto first = open_counter_observer(fake_api(), ObserverSite{}, a, &why);
  REQUIRE(first != nullptr);
  CHECK(c.host_inits == 1);
  CHECK(counter_hosts().size() == 1);
  first.reset();  // closing an observer keeps its host
  CHECK(c.host_deinits == 0);
  auto again = open_counter_observer(fake_api(), ObserverSite{}, a, &why);
  REQUIRE(again != nullptr);
  CHECK(c.host_inits == 1);  // reused: same library, chip, availability and metrics
  auto other = open_counter_observer(fake_api(), ObserverSite{}, b, &why);
  REQUIRE(other != nullptr);
  CHECK(c.host_inits == 2);  // another metric set
  std::snprintf(c.chip, sizeof c.chip, "%s", "GB100");
  auto other_chip = open_counter_observer(fake_api(), ObserverSite{}, a, &why);
  REQUIRE(other_chip != nullptr);
  CHECK(c.host_inits == 3);  // another chip
  CHECK(counter_hosts().size() == 3);

  bool built = true;
  const auto host = counter_hosts().get(fake_api(), "GB100", nullptr, a, &built);
  CHECK(built);  // no availability image (planning without a GPU) is a key of its own
  counter_hosts().get(fake_api(), "GB100", nullptr, a, &built);
  CHECK_FALSE(built);
  CHECK(host->passes() == c.passes);
  CHECK(host->dims() == std::vector<std::string>{"byte", "byte"});

  // The observer reopened for the first metric set replays with the cached host.
  TimeRequest q;
  q.metrics = a;
  Plan plan;
  Observation o;
  again->after_timing(q, plan.timed(), o);
  CHECK(again->note().empty());
  REQUIRE(o.metrics.size() == 3);
  CHECK(o.metrics[1] == Metric{"achieved_occupancy", 2000, "percent"});
  CHECK(c.host_inits == 4);  // the replay built nothing
  counter_hosts().clear();
  CHECK(c.host_deinits == 0);  // the hosts held by open observers (and here) live on until they close
  again.reset();
  other.reset();
  other_chip.reset();
  CHECK(c.host_deinits == 3);
}

TEST_CASE("counters: AUTOTUNE_CUPTI_REPLAY's flags - reenable, sync_flush, config_once", "[nvrtc][counters]") {
  ReplayOptions d = parse_replay_options("", false);
  CHECK(d.keep_enabled);
  CHECK(d.queue_flush);
  CHECK_FALSE(d.debug);
  CHECK_FALSE(d.config_once);
  ReplayOptions all = parse_replay_options(" reenable , sync_flush,config_once", true);
  CHECK_FALSE(all.keep_enabled);
  CHECK_FALSE(all.queue_flush);
  CHECK(all.config_once);
  CHECK(all.debug);
  CHECK_THROWS_WITH(parse_replay_options("reenable,keep", false),
                    Catch::Contains("AUTOTUNE_CUPTI_REPLAY: unknown flag 'keep'") && Catch::Contains("sync_flush"));

  fake_cupti::Control& c = control();
  c.passes = 2;
  const std::vector<std::string> metrics = {"dram_bytes_read"};
  TimeRequest q;
  q.metrics = metrics;
  std::string why;
  SECTION("reenable: the profiler is enabled and disabled around every replay, the flush waited for") {
    ::setenv("AUTOTUNE_CUPTI_REPLAY", "reenable,sync_flush", 1);
    auto obs = open_counter_observer(fake_api(), ObserverSite{}, metrics, &why);
    ::unsetenv("AUTOTUNE_CUPTI_REPLAY");
    REQUIRE(obs != nullptr);
    Plan plan;
    Observation o;
    obs->after_timing(q, plan.timed(), o);
    obs->after_timing(q, plan.timed(), o);
    CHECK(c.enables == 2);
    CHECK(c.disables == 2);
    CHECK(c.data_sizes == 2);
    CHECK(plan.runs == 4);
    CHECK(plan.syncs == 8);  // after each flush and after each pass
    CHECK_THAT(o.method, Catch::EndsWith(";flush=synced;reenable"));
  }
  SECTION("config_once: one-pass metrics are configured at the first replay only") {
    c.passes = 1;
    ::setenv("AUTOTUNE_CUPTI_REPLAY", "config_once", 1);
    auto obs = open_counter_observer(fake_api(), ObserverSite{}, metrics, &why);
    ::unsetenv("AUTOTUNE_CUPTI_REPLAY");
    REQUIRE(obs != nullptr);
    Plan plan;
    Observation o;
    obs->after_timing(q, plan.timed(), o);
    obs->after_timing(q, plan.timed(), o);
    obs->after_timing(q, plan.timed(), o);
    CHECK(c.enables == 1);
    CHECK(c.image_inits == 3);
    CHECK(c.set_configs == 1);
    CHECK(plan.runs == 3);
    CHECK_THAT(o.method, Catch::EndsWith(";flush=queued;config_once"));
  }
  SECTION("config_once with metrics of several passes: configured at every replay all the same") {
    ::setenv("AUTOTUNE_CUPTI_REPLAY", "config_once", 1);
    auto obs = open_counter_observer(fake_api(), ObserverSite{}, metrics, &why);
    ::unsetenv("AUTOTUNE_CUPTI_REPLAY");
    REQUIRE(obs != nullptr);
    Plan plan;
    Observation o;
    obs->after_timing(q, plan.timed(), o);
    obs->after_timing(q, plan.timed(), o);
    CHECK(c.set_configs == 2);
    CHECK(plan.runs == 4);
  }
  SECTION("an unknown flag: the observer does not open and says why") {
    ::setenv("AUTOTUNE_CUPTI_REPLAY", "fast", 1);
    auto obs = open_counter_observer(fake_api(), ObserverSite{}, metrics, &why);
    ::unsetenv("AUTOTUNE_CUPTI_REPLAY");
    CHECK(obs == nullptr);
    CHECK_THAT(why, Catch::Contains("unknown flag 'fast'"));
  }
}

TEST_CASE("counters: a plan that fails during a replay leaves the range profiler disabled", "[nvrtc][counters]") {
  fake_cupti::Control& c = control();
  std::string why;
  auto obs = open_counter_observer(fake_api(), ObserverSite{}, {"dram_bytes_read"}, &why);
  REQUIRE(obs != nullptr);
  TimeRequest q;
  q.metrics = {"dram_bytes_read"};
  const std::function<void()> failing = [] { throw std::runtime_error("the plan's launch failed"); };
  int syncs = 0;
  const TimedRuns r{failing, [] {}, [&syncs] { ++syncs; }, 1.0};
  Observation o;
  CHECK_THROWS_WITH(obs->after_timing(q, r, o), "the plan's launch failed");
  CHECK(c.enables == 1);
  CHECK(c.disables == 1);
  CHECK(o.metrics.empty());
  // The next configuration enables it again.
  Plan plan;
  obs->after_timing(q, plan.timed(), o);
  CHECK(obs->note().empty());
  CHECK(c.enables == 2);
  CHECK(o.metrics.size() == 2);
}

TEST_CASE("counters: a missing CUPTI, an unknown metric or a refused permission leave the trial without counters",
          "[nvrtc][counters]") {
  std::string why;
  CHECK(load_cupti("/nonexistent/libcupti.so.13", &why) == nullptr);
  CHECK_THAT(why, Catch::Contains("/nonexistent/libcupti.so.13 cannot be loaded"));

  SECTION("refused when the counters are opened") {
    fake_cupti::Control& c = control();
    c.availability_result = 35;  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
    CHECK(open_counter_observer(fake_api(), ObserverSite{}, {"dram_bytes_read"}, &why) == nullptr);
    CHECK_THAT(why, Catch::Contains("refuses GPU performance counters") && Catch::Contains("ERR_NVGPUCTRPERM") &&
                        Catch::Contains("tuning goes on without counters") &&
                        Catch::Contains("NVreg_RestrictProfilingToAdminUsers=0"));
  }
  SECTION("refused when a replay starts: no counters, one note, no further replays") {
    fake_cupti::Control& c = control();
    c.start_result = 35;
    auto obs = open_counter_observer(fake_api(), ObserverSite{}, {"dram_bytes_read"}, &why);
    REQUIRE(obs != nullptr);
    TimeRequest q;
    q.metrics = {"dram_bytes_read"};
    Plan plan;
    Observation o;
    obs->after_timing(q, plan.timed(), o);
    CHECK(o.metrics.empty());
    CHECK(o.method.empty());
    CHECK_THAT(obs->note(), Catch::Contains("cuptiRangeProfilerStart") && Catch::Contains("ERR_NVGPUCTRPERM"));
    CHECK(c.enables == c.disables);  // the range profiler is disabled again
    obs->after_timing(q, plan.timed(), o);
    CHECK(c.starts == 1);  // refused once: no further replays
    CHECK(plan.runs == 0);
    CHECK_FALSE(obs->note().empty());
  }
  SECTION("a metric the chip does not have") {
    fake_cupti::Control& c = control();
    std::snprintf(c.unknown_metric, sizeof c.unknown_metric, "%s", "dram__bytes_write.sum");
    CHECK(open_counter_observer(fake_api(), ObserverSite{}, {"dram_bytes_read", "dram_bytes_write"}, &why) == nullptr);
    CHECK_THAT(why, Catch::Contains("does not know the metric dram__bytes_write.sum on GH100"));
  }
}
#endif

#ifdef AUTOTUNE_TEST_FAKE_CUPTI
TEST_CASE("counters: the tool-library loader names a missing library or entry point - AUTOTUNE_* chooses",
          "[nvrtc][counters]") {
  std::string why;
  DlLibrary missing;
  CHECK_FALSE(missing.open("/nonexistent/libtool.so.1", &why));
  CHECK_THAT(why, Catch::StartsWith("/nonexistent/libtool.so.1 cannot be loaded ("));

  DlLibrary lib;
  REQUIRE(lib.open(FAKE_CUPTI_LIB, &why));
  decltype(&cuptiRangeProfilerStart) start = nullptr;
  decltype(&cuptiRangeProfilerStop) absent = nullptr;
  CHECK(lib.resolve(&start, "cuptiRangeProfilerStart"));
  CHECK(start != nullptr);
  CHECK_FALSE(lib.resolve(&absent, "cuptiNoSuchEntryPoint"));
  CHECK(absent == nullptr);
  CHECK(lib.missing() == nullptr);  // resolve() is for optional entry points
  lib.need(&start, "cuptiRangeProfilerStart");
  CHECK(lib.missing() == nullptr);
  lib.need(&absent, "cuptiNoSuchEntryPoint");
  lib.need(&absent, "cuptiNorThisOne");
  REQUIRE(lib.missing() != nullptr);
  CHECK(std::string(lib.missing()) == "cuptiNoSuchEntryPoint");  // the first one missing

  ::setenv("AUTOTUNE_TEST_TOOL", "off", 1);
  CHECK(library_choice("AUTOTUNE_TEST_TOOL").off);
  CHECK(library_choice("AUTOTUNE_TEST_TOOL").library.empty());
  ::setenv("AUTOTUNE_TEST_TOOL", "/opt/libtool.so.2", 1);
  CHECK_FALSE(library_choice("AUTOTUNE_TEST_TOOL").off);
  CHECK(library_choice("AUTOTUNE_TEST_TOOL").library == "/opt/libtool.so.2");
  ::unsetenv("AUTOTUNE_TEST_TOOL");
  CHECK_FALSE(library_choice("AUTOTUNE_TEST_TOOL").off);
  CHECK(library_choice("AUTOTUNE_TEST_TOOL").library.empty());

  // LoadedOnce: the first get() loads, later ones return the same (or the same reason) without loading again.
  LoadedOnce<int> once;
  int loads = 0;
  const auto refuse = [&loads](std::string* reason) -> std::unique_ptr<int> {
    ++loads;
    *reason = "not here";
    return nullptr;
  };
  std::string r1, r2;
  CHECK(once.get(&r1, refuse) == nullptr);
  CHECK(once.get(&r2, refuse) == nullptr);
  CHECK(loads == 1);
  CHECK(r2 == "not here");
}
#endif
