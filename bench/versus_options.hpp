// Command-line options of bench/versus_libraries.cu: the Options struct, --help and the parser (host code only).
// Included once, by versus_libraries.cu.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace versus {

// ---- options --------------------------------------------------------------------------------------------------

const char* const kFamilies[] = {"reduction", "scan", "compaction", "transpose"};

struct Options {
  std::string db;
  std::set<std::string> only;  // empty: every family
  int reps = 30;
  int warmup = 3;
  std::string csv;
  std::string flush = "read";  // read | memset
  std::uint64_t seed = 1;
  int device = 0;
  bool quick = false;
  std::vector<std::string> match;  // empty: every case; else cases whose label contains one of these
  std::vector<int> sizes;          // log2 of n for reduction, scan and compaction; empty: each family's default
  std::vector<std::string> scan_ops = {"inclusive_sum"};  // inclusive_sum, exclusive_sum, inclusive_max
  std::vector<int> select = {50, 5};                      // percent selected by the compaction cases
};

const char* const kScanOps[] = {"inclusive_sum", "exclusive_sum", "inclusive_max"};

inline void print_help(std::FILE* f) {
  std::fprintf(f,
               "usage: versus_libraries [options]\n"
               "\n"
               "Times the tuned kernels of the autotune launch API (configurations looked up in a tuning\n"
               "database for this GPU and size) against CUB, cuBLAS and a device-to-device copy, in one run.\n"
               "Every output (ours and the library's) is checked against a CPU reference before timing.\n"
               "\n"
               "Cases (defaults; see --sizes, --scan-ops, --select): reduction (sum) and scan (inclusive sum)\n"
               "at 2^20, 2^24, 2^28 for int32 and float32;\n"
               "compaction (flagged, if x > 0) at 2^24 and 2^28 with 50%% and 5%% selected, int32 and float32;\n"
               "transpose float32 4096x4096, 8192x8192, 4000x4000.\n"
               "\n"
               "options:\n"
               "  --db PATH        tuning database (default: $AUTOTUNE_DB, else ./autotune.db); a missing one\n"
               "                   makes ours run the spec defaults (reported per case)\n"
               "  --only LIST      families to run, comma-separated: reduction,scan,compaction,transpose\n"
               "  --reps N         timed samples per implementation and case, median reported (default 30)\n"
               "  --warmup N       untimed runs before sampling (default 3)\n"
               "  --csv PATH       also write the results as CSV\n"
               "  --flush MODE     cold L2 before every sample: 'read' (a kernel reads a buffer of 2x L2;\n"
               "                   default) or 'memset' (writes it, like `autotune tune`)\n"
               "  --seed N         seed of the inputs (default 1)\n"
               "  --device N       GPU ordinal (default 0)\n"
               "  --quick          only the smallest size of each family (a smoke test)\n"
               "  --match LIST     only cases whose label contains one of these comma-separated texts,\n"
               "                   e.g. 'float32 n=2^28' or 'flagged n=2^28 50%%' (for a profiler run)\n"
               "  --sizes LIST     log2 of n for reduction, scan and compaction, comma-separated, each in\n"
               "                   [10, 30] (default: 20,24,28; compaction 24,28), e.g. 20,22,24,26,28,30\n"
               "  --scan-ops LIST  scan operators: inclusive_sum (default), exclusive_sum, inclusive_max\n"
               "                   (CUB: InclusiveSum, ExclusiveSum, InclusiveScan with cuda::maximum)\n"
               "  --select LIST    percent selected in the compaction cases, each in [1, 99] (default 50,5)\n"
               "  --help           this text\n"
               "\n"
               "Exit status: 0 every case ran and verified; 1 an implementation failed or gave a wrong result\n"
               "(the table says which); 2 bad arguments; 3 no usable CUDA GPU.\n");
}

inline bool parse_int(const std::string& s, long long lo, long long hi, long long* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end == nullptr || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

/// Returns -1 to continue, else an exit status.
inline int parse_args(int argc, char** argv, Options* o) {
  const char* env_db = std::getenv("AUTOTUNE_DB");
  o->db = env_db != nullptr && *env_db != '\0' ? env_db : "autotune.db";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* v) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "versus_libraries: %s needs a value (see --help)\n", a.c_str());
        return false;
      }
      *v = argv[++i];
      return true;
    };
    std::string v;
    long long n = 0;
    if (a == "--help" || a == "-h") {
      print_help(stdout);
      return 0;
    } else if (a == "--quick") {
      o->quick = true;
    } else if (a == "--db" || a == "--csv" || a == "--only" || a == "--flush" || a == "--reps" || a == "--warmup" ||
               a == "--seed" || a == "--device" || a == "--match" || a == "--sizes" || a == "--scan-ops" ||
               a == "--select") {
      if (!value(&v)) return 2;
      if (a == "--sizes" || a == "--select") {
        const bool sizes = a == "--sizes";
        std::vector<int>& list = sizes ? o->sizes : o->select;
        list.clear();
        std::stringstream ss(v);
        std::string f;
        while (std::getline(ss, f, ',')) {
          if (!parse_int(f, sizes ? 10 : 1, sizes ? 30 : 99, &n)) {
            std::fprintf(stderr, "versus_libraries: %s takes integers in [%d, %d], comma-separated (got '%s')\n",
                         a.c_str(), sizes ? 10 : 1, sizes ? 30 : 99, v.c_str());
            return 2;
          }
          list.push_back(static_cast<int>(n));
        }
      } else if (a == "--scan-ops") {
        o->scan_ops.clear();
        std::stringstream ss(v);
        std::string f;
        while (std::getline(ss, f, ',')) {
          if (std::find_if(std::begin(kScanOps), std::end(kScanOps), [&](const char* k) { return f == k; }) ==
              std::end(kScanOps)) {
            std::fprintf(stderr,
                         "versus_libraries: unknown scan operator '%s' (inclusive_sum, exclusive_sum, inclusive_max)\n",
                         f.c_str());
            return 2;
          }
          o->scan_ops.push_back(f);
        }
        if (o->scan_ops.empty()) {
          std::fprintf(stderr, "versus_libraries: --scan-ops needs at least one operator\n");
          return 2;
        }
      } else if (a == "--db") {
        o->db = v;
      } else if (a == "--csv") {
        o->csv = v;
      } else if (a == "--flush") {
        if (v != "read" && v != "memset") {
          std::fprintf(stderr, "versus_libraries: --flush must be 'read' or 'memset' (got '%s')\n", v.c_str());
          return 2;
        }
        o->flush = v;
      } else if (a == "--match") {
        std::stringstream ss(v);
        std::string f;
        while (std::getline(ss, f, ','))
          if (!f.empty()) o->match.push_back(f);
        if (o->match.empty()) {
          std::fprintf(stderr, "versus_libraries: --match needs at least one non-empty text\n");
          return 2;
        }
      } else if (a == "--only") {
        std::stringstream ss(v);
        std::string f;
        while (std::getline(ss, f, ',')) {
          if (f.empty()) continue;
          if (std::find_if(std::begin(kFamilies), std::end(kFamilies), [&](const char* k) { return f == k; }) ==
              std::end(kFamilies)) {
            std::fprintf(stderr, "versus_libraries: unknown family '%s' (reduction, scan, compaction, transpose)\n",
                         f.c_str());
            return 2;
          }
          o->only.insert(f);
        }
      } else if (a == "--reps") {
        if (!parse_int(v, 5, 10000, &n)) {
          std::fprintf(stderr, "versus_libraries: --reps must be an integer in [5, 10000] (got '%s')\n", v.c_str());
          return 2;
        }
        o->reps = static_cast<int>(n);
      } else if (a == "--warmup") {
        if (!parse_int(v, 0, 1000, &n)) {
          std::fprintf(stderr, "versus_libraries: --warmup must be an integer in [0, 1000] (got '%s')\n", v.c_str());
          return 2;
        }
        o->warmup = static_cast<int>(n);
      } else if (a == "--seed") {
        if (!parse_int(v, 0, std::numeric_limits<long long>::max(), &n)) {
          std::fprintf(stderr, "versus_libraries: --seed must be a non-negative integer (got '%s')\n", v.c_str());
          return 2;
        }
        o->seed = static_cast<std::uint64_t>(n);
      } else {
        if (!parse_int(v, 0, 1024, &n)) {
          std::fprintf(stderr, "versus_libraries: --device must be a GPU ordinal (got '%s')\n", v.c_str());
          return 2;
        }
        o->device = static_cast<int>(n);
      }
    } else {
      std::fprintf(stderr, "versus_libraries: unknown argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  return -1;
}

}  // namespace versus
