#if __has_include(<cupti_range_profiler.h>)
#include "tuner/cuda/cupti_range.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "tuner/core/error.hpp"

namespace autotune::cuda::detail {
namespace {

constexpr const char* kRangeName = "autotune";

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

ReplayOptions parse_replay_options(const std::string& flags, bool debug) {
  ReplayOptions o;
  o.debug = debug;
  std::size_t at = 0;
  while (at <= flags.size()) {
    std::size_t comma = flags.find(',', at);
    if (comma == std::string::npos) comma = flags.size();
    std::string flag = flags.substr(at, comma - at);
    flag.erase(0, flag.find_first_not_of(" \t"));
    flag.erase(flag.find_last_not_of(" \t") + 1);
    at = comma + 1;
    if (flag.empty()) continue;
    if (flag == "reenable") {
      o.keep_enabled = false;
    } else if (flag == "sync_flush") {
      o.queue_flush = false;
    } else if (flag == "config_once") {
      o.config_once = true;
    } else {
      throw UsageError("AUTOTUNE_CUPTI_REPLAY: unknown flag '" + flag + "' (known: reenable, sync_flush, config_once)");
    }
  }
  return o;
}

ReplayOptions replay_options_from_env(std::string* error) {
  const char* flags = std::getenv("AUTOTUNE_CUPTI_REPLAY");
  const char* debug = std::getenv("AUTOTUNE_CUPTI_DEBUG");
  const bool on = debug != nullptr && *debug != '\0' && std::string(debug) != "0";
  try {
    return parse_replay_options(flags != nullptr ? flags : "", on);
  } catch (const UsageError& e) {
    *error = e.what();
    return parse_replay_options("", on);
  }
}

std::string ReplayPhases::text() const {
  char s[160];
  std::snprintf(s, sizeof s, "enable:%.2f,setup:%.2f,runs:%.2f,decode:%.2f,evaluate:%.2f,disable:%.2f", enable, setup,
                runs, decode, evaluate, disable);
  return s;
}

RangeProfiler::RangeProfiler(const Cupti& api, CUcontext ctx, const CounterHost& host) : api_(api), host_(host) {
  auto p = sized<CUpti_RangeProfiler_Enable_Params>();
  p.ctx = ctx;
  check_cupti(api_, api_.range_enable(&p), "cuptiRangeProfilerEnable");
  object_ = p.pRangeProfilerObject;
  try {
    auto size = sized<CUpti_RangeProfiler_GetCounterDataSize_Params>();
    size.pRangeProfilerObject = object_;
    size.pMetricNames = const_cast<const char**>(host_.names().data());
    size.numMetrics = host_.names().size();
    size.maxNumOfRanges = 1;
    size.maxNumRangeTreeNodes = 1;
    check_cupti(api_, api_.range_get_counter_data_size(&size), "cuptiRangeProfilerGetCounterDataSize");
    image_.assign(size.counterDataSize, 0);
  } catch (...) {
    disable();
    throw;
  }
}

RangeProfiler::~RangeProfiler() { disable(); }

void RangeProfiler::disable() noexcept {
  if (object_ == nullptr) return;
  auto p = sized<CUpti_RangeProfiler_Disable_Params>();
  p.pRangeProfilerObject = object_;
  api_.range_disable(&p);
  object_ = nullptr;
}

void RangeProfiler::setup(const ReplayOptions& options) {
  // The image holds one range: the previous replay's is cleared by initialising it again, and the configuration
  // is set again so that the replay starts at pass 0 and decodes into this image (config_once: only the first
  // time, for one-pass metrics).
  auto init = sized<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>();
  init.pRangeProfilerObject = object_;
  init.counterDataSize = image_.size();
  init.pCounterData = image_.data();
  check_cupti(api_, api_.range_counter_data_image_initialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");
  if (configured_ && options.config_once && host_.passes() <= 1) return;
  auto set = sized<CUpti_RangeProfiler_SetConfig_Params>();
  set.pRangeProfilerObject = object_;
  set.configSize = host_.config().size();
  set.pConfig = host_.config().data();
  set.counterDataImageSize = image_.size();
  set.pCounterDataImage = image_.data();
  set.range = CUPTI_UserRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = 1;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  check_cupti(api_, api_.range_set_config(&set), "cuptiRangeProfilerSetConfig");
  configured_ = true;
}

bool RangeProfiler::pass(const TimedRuns& r, const ReplayOptions& options) {
  if (!options.queue_flush) {
    r.flush_l2();
    r.sync();
  }
  auto start = sized<CUpti_RangeProfiler_Start_Params>();
  start.pRangeProfilerObject = object_;
  check_cupti(api_, api_.range_start(&start), "cuptiRangeProfilerStart");
  // Outside the range (work between Start and PushRange is in no range of a user-range configuration): the
  // flush is queued, and the range's start and the plan's launches queue behind it while it runs.
  if (options.queue_flush) r.flush_l2();
  auto push = sized<CUpti_RangeProfiler_PushRange_Params>();
  push.pRangeProfilerObject = object_;
  push.pRangeName = kRangeName;
  check_cupti(api_, api_.range_push(&push), "cuptiRangeProfilerPushRange");
  r.run();
  auto pop = sized<CUpti_RangeProfiler_PopRange_Params>();
  pop.pRangeProfilerObject = object_;
  check_cupti(api_, api_.range_pop(&pop), "cuptiRangeProfilerPopRange");
  auto stop = sized<CUpti_RangeProfiler_Stop_Params>();
  stop.pRangeProfilerObject = object_;
  check_cupti(api_, api_.range_stop(&stop), "cuptiRangeProfilerStop");
  r.sync();
  return stop.isAllPassSubmitted != 0;
}

void RangeProfiler::decode() {
  auto p = sized<CUpti_RangeProfiler_DecodeData_Params>();
  p.pRangeProfilerObject = object_;
  check_cupti(api_, api_.range_decode(&p), "cuptiRangeProfilerDecodeData");
  if (p.numOfRangeDropped != 0) throw CuptiError("CUPTI dropped the replay's range", false);
}

std::vector<std::uint8_t>& RangeProfiler::replay(const TimedRuns& r, const ReplayOptions& options,
                                                 std::size_t max_passes, ReplayPhases& t) {
  auto t0 = Clock::now();
  setup(options);
  t.setup += ms_since(t0);
  t0 = Clock::now();
  for (bool done = false; !done;) {
    if (++t.passes > max_passes)
      throw CuptiError("the replay did not end after " + std::to_string(max_passes) + " passes", false);
    done = pass(r, options);
  }
  t.runs += ms_since(t0);
  t0 = Clock::now();
  decode();
  t.decode += ms_since(t0);
  return image_;
}

}  // namespace autotune::cuda::detail
#endif
