// The control block of the fake CUPTI (fake_cupti.cpp): tests reach it through the library's fake_cupti_control(),
// found with dlsym on the handle the counter observer's dlopen also gets.
#pragma once

namespace fake_cupti {

struct Control {
  int availability_result = 0;  // cuptiProfilerGetCounterAvailability's answer (35: insufficient privileges)
  int start_result = 0;         // cuptiRangeProfilerStart's answer
  unsigned passes = 2;          // passes the config image needs
  char chip[32] = "GH100";
  char unknown_metric[96] = "";  // a metric cuptiProfilerHostGetMetricProperties does not know
  // What happened: calls of Start, of Enable and Disable (they must pair), of Push and Pop.
  int starts = 0, enables = 0, disables = 0, pushes = 0, pops = 0;
  // Host objects initialised and deinitialised, counter data sizes asked, images initialised, configurations set,
  // decodes.
  int host_inits = 0, host_deinits = 0, data_sizes = 0, image_inits = 0, set_configs = 0, decodes = 0;
};

/// Signature of fake_cupti_control().
using ControlFn = Control* (*)();

}  // namespace fake_cupti
