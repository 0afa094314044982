// Prints the best recorded configuration of a built-in kernel with its match level and provenance.
//   lookup_only <db> [kernel=reduction] [n=67108864] [device="NVIDIA H200"] [cc=90] [workload=float32/sum]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tuner/core/error.hpp"
#include "tuner/lookup/lookup.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <db> [kernel] [n] [device] [cc] [workload]\n", argv[0]);
    return 2;
  }
  const std::string db = argv[1];
  const std::string kernel = argc > 2 ? argv[2] : "reduction";
  const long long n = argc > 3 ? std::atoll(argv[3]) : 67108864;
  const std::string device = argc > 4 ? argv[4] : "NVIDIA H200";
  const int cc = argc > 5 ? std::atoi(argv[5]) : 90;
  const auto workload = autotune::Workload::parse(argc > 6 ? argv[6] : "float32/sum");
  try {
    autotune::Lookup lk(db);
    autotune::ProblemKey p;
    p.dims["n"] = n;
    auto a = lk.best(kernel, workload, autotune::DeviceKey(device, cc), p);
    std::printf("kernel: %s %s n=%lld on %s (cc %d)\n", kernel.c_str(), workload.key().c_str(), n, device.c_str(), cc);
    std::printf("config: %s\n", a->config.to_json().c_str());
    std::printf("match: %s (level %d)\n", autotune::lookup::to_string(a->match), autotune::lookup::level(a->match));
    if (a->match != autotune::lookup::Match::spec_default)
      std::printf("measured on: %s at %s, session %lld, %.1f us\n", a->device.c_str(), a->problem.c_str(),
                  static_cast<long long>(a->session_id), a->median_ns / 1e3);
    if (!a->note.empty()) std::printf("note: %s\n", a->note.c_str());
    return 0;
  } catch (const autotune::Error& e) {
    std::fprintf(stderr, "lookup_only: %s\n", e.what());
    return 2;
  }
}
