// crash_session: a tuning session on the synthetic backend, for the reliability tests that kill it with
// SIGKILL (tests/cpu/test_kill.cpp), run several copies against one database at once
// (tests/cpu/test_concurrent_writers.cpp) or start with a file size limit (tests/cpu/test_disk_full.cpp).
//
// Usage: crash_session --db PATH [--kernel NAME] [--n N] [--delay-us D] [--batch B]
//                      [--print-valid]
//   --kernel          spec name (default "crash_kernel", any text); different names are different kernels
//   --n               problem size (default 1024); different sizes are different problems
//   --delay-us        artificial time per evaluation in microseconds (default 300), so that a kill
//                     lands in the middle of a session
//   --batch           configurations per committed batch (default 8)
//   --print-valid     print the config hash of every valid configuration ("valid <hash>") and exit
//
// Output (stdout, flushed line by line):
//   progress evaluated=E reused=R        after each committed batch
//   done evaluated=E reused=R failed=F valid=V session=S
// Exit codes: 0 done, 2 bad arguments, 4 DbError (message on stderr), 1 any other error.
#include <chrono>
#include <nlohmann/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "db/database.hpp"
#include "tuner/core/error.hpp"
#include "tuner/session/session.hpp"
#include "tuner/sim/synthetic.hpp"

using namespace autotune;

namespace {

/// 16 x 6 x 5 = 480 configurations; the constraint leaves 408 (for every n). Configurations with C == 3
/// are injected failures, so failed trials are exercised too.
TuningSpec make_spec(const std::string& kernel) {
  return TuningSpec::from_json_text(R"J({
    "name": )J" + nlohmann::json(kernel).dump() + R"J(, "family": "synthetic", "source": "none.cu", "kernels": ["k"],
    "parameters": [
      {"name": "A", "range": [1, 16]},
      {"name": "B", "values": [1, 2, 4, 8, 16, 32]},
      {"name": "C", "values": [1, 2, 3, 4, 5]}
    ],
    "constraints": ["(A + B + C) % 7 != 0"],
    "problem": {"dims": ["n"]},
    "workloads": ["float32/sum"]
  })J",
                                    ".", false);
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "crash_session: %s\n", why.c_str());
  std::exit(2);
}

long long to_int(const char* s, const char* flag) {
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (!*s || *end || v < 0) usage(std::string("bad value for ") + flag + ": '" + s + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string db_path, kernel = "crash_kernel";
  long long n = 1024, delay_us = 300, batch = 8;
  bool print_valid = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) usage("missing value for " + a);
      return argv[++i];
    };
    if (a == "--db") db_path = next();
    else if (a == "--kernel") kernel = next();
    else if (a == "--n") n = to_int(next(), "--n");
    else if (a == "--delay-us") delay_us = to_int(next(), "--delay-us");
    else if (a == "--batch") batch = to_int(next(), "--batch");
    else if (a == "--print-valid") print_valid = true;
    else usage("unknown argument '" + a + "'");
  }
  if (n < 1 || batch < 1) usage("--n and --batch must be at least 1");
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  try {
    const TuningSpec spec = make_spec(kernel);
    const Workload w = Workload::parse("float32/sum");
    const ProblemKey p = ProblemKey::parse("n=" + std::to_string(n));
    if (print_valid) {
      const ParameterSpace space = spec.space(p, sim::SyntheticBackend::fake_device(), w);
      for (std::size_t i = 0; i < space.size(); ++i) std::printf("valid %s\n", space.config(i).hash().c_str());
      return 0;
    }
    if (db_path.empty()) usage("--db is required");

    // The artificial delay lives in the time function, which the backend calls once per evaluation
    // of a configuration that is not an injected failure.
    const auto delay = std::chrono::microseconds(delay_us);
    sim::SyntheticBackend backend(sim::SyntheticBackend::fake_device(), [delay](const Config& c) {
      if (delay.count() > 0) std::this_thread::sleep_for(delay);
      double t = 1000;
      for (const auto& [name, v] : c.values()) t += 10.0 * static_cast<double>(v) * (name == "A" ? 3 : 1);
      return t;
    });
    backend.inject_failure_when("C", 3, TrialStatus::wrong_result);

    auto db = db::Database::open(db_path);
    session::Options opt;
    opt.batch = static_cast<std::size_t>(batch);
    opt.bytes_moved = 4.0 * static_cast<double>(n);
    opt.on_progress = [](const session::Progress& pr) {
      std::printf("progress evaluated=%zu reused=%zu\n", pr.evaluated, pr.reused);
    };
    const session::Result r = session::run(spec, backend, *db, w, p, opt);
    std::printf("done evaluated=%zu reused=%zu failed=%zu valid=%zu session=%lld\n", r.evaluated, r.reused,
                r.failed, r.space_size, static_cast<long long>(r.session_id));
    return 0;
  } catch (const DbError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 4;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
