// A fake libcupti.so for the nvrtc tier: the entry points the counter observer loads (tuner/cuda/cupti.cpp),
// answering from a control block that tests change through fake_cupti_control() (dlsym on the same handle). A
// replay takes Control::passes passes; metric i evaluates to 1000 x (i + 1); errors are CUPTI's numbers.
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <cstring>

#include "tools/fake_cupti.hpp"

namespace {

fake_cupti::Control g_control;
int g_host_token = 0, g_range_token = 0;
unsigned g_pass = 0;

}  // namespace

extern "C" {

// The control block the tests change.
fake_cupti::Control* fake_cupti_control() { return &g_control; }

CUptiResult cuptiGetResultString(CUptiResult r, const char** str) {
  *str = r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" : "CUPTI_ERROR_FAKE";
  return CUPTI_SUCCESS;
}
CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params*) { return CUPTI_SUCCESS; }
CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
  p->pChipName = g_control.chip;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) {
  p->counterAvailabilityImageSize = 8;
  return static_cast<CUptiResult>(g_control.availability_result);
}
CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
  ++g_control.host_inits;
  p->pHostObject = reinterpret_cast<CUpti_Profiler_Host_Object*>(&g_host_token);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params*) {
  ++g_control.host_deinits;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiProfilerHostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params* p) {
  if (std::strcmp(p->pMetricName, g_control.unknown_metric) == 0) return CUPTI_ERROR_INVALID_PARAMETER;
  p->pDimUnit = "byte";
  return CUPTI_SUCCESS;
}
CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params*) { return CUPTI_SUCCESS; }
CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  p->configImageSize = 16;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params*) { return CUPTI_SUCCESS; }
CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  p->numOfPasses = g_control.passes;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  for (std::size_t i = 0; i < p->numMetrics; ++i) p->pMetricValues[i] = 1000.0 * static_cast<double>(i + 1);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) {
  ++g_control.enables;
  g_pass = 0;
  p->pRangeProfilerObject = reinterpret_cast<CUpti_RangeProfiler_Object*>(&g_range_token);
  return CUPTI_SUCCESS;
}
CUptiResult cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params*) {
  ++g_control.disables;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
  ++g_control.data_sizes;
  p->counterDataSize = 32;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiRangeProfilerCounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params*) {
  ++g_control.image_inits;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) {
  ++g_control.set_configs;
  g_pass = p->passIndex;  // a replay starts at the pass it is set to
  return CUPTI_SUCCESS;
}
CUptiResult cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params*) {
  ++g_control.starts;
  return static_cast<CUptiResult>(g_control.start_result);
}
CUptiResult cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) {
  p->isAllPassSubmitted = ++g_pass >= g_control.passes ? 1 : 0;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params*) {
  ++g_control.pushes;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params*) {
  ++g_control.pops;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) {
  ++g_control.decodes;
  p->numOfRangeDropped = 0;
  return CUPTI_SUCCESS;
}
CUptiResult cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
  p->numTotalRanges = 1;
  return CUPTI_SUCCESS;
}

}  // extern "C"
