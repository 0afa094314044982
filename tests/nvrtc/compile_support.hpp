// Helpers shared by the kernel compile tests of the nvrtc tier (tests/nvrtc/test_*_compile.cpp): the options
// the CUDA backend compiles a configuration with, many compilations on a few threads, and strict mode's
// missing-macro check. No GPU needed.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tuner/core/adapter.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/cuda/launcher.hpp"
#include "tuner/cuda/runtime.hpp"

namespace autotune_test {

/// Whether `needle` occurs in `hay` (an entry point's name in a CUBIN).
inline bool contains_bytes(const std::vector<unsigned char>& hay, const std::string& needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

/// The NVRTC options of configuration c for workload w in strict mode, as the CUDA backend builds them
/// (cuda::kernel_compile_options): the adapter's compile_options(w), then c's defines with -DAUTOTUNE_STRICT=1.
inline std::vector<std::string> strict_options(const autotune::KernelAdapter& a, const autotune::Config& c,
                                               const autotune::Workload& w) {
  return autotune::cuda::kernel_compile_options(a, w, c, false);
}

/// One compilation of compile_all: a configuration's options for one architecture ("sm_90").
struct CompileJob {
  std::string label;  // names the configuration in a failure
  std::vector<std::string> options;
  std::string arch;
};

/// Appends the jobs of configuration c of workload w with `options`: one for sm_80, one for sm_90.
inline void add_jobs(std::vector<CompileJob>& jobs, const autotune::TuningSpec& s, const autotune::Workload& w,
                     const autotune::Config& c, const std::vector<std::string>& options) {
  for (const char* arch : {"sm_80", "sm_90"}) jobs.push_back({w.key() + " " + c.str(&s.params), options, arch});
}

/// Compiles s's source (as the file `file`, e.g. "scan.cu") once per job on up to four threads (NVRTC is
/// thread-safe) and returns one line per failed job: its label and architecture with the start of the log, or
/// the entry points of s.kernels missing from the CUBIN.
inline std::vector<std::string> compile_all(const autotune::TuningSpec& s, const std::string& file,
                                            const std::vector<CompileJob>& jobs) {
  std::vector<std::string> failures;
  std::mutex mu;
  std::atomic<std::size_t> next{0};
  const unsigned threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < jobs.size(); i = next++) {
        const CompileJob& j = jobs[i];
        const autotune::cuda::CompileResult r =
            autotune::cuda::compile(s.source_text, s.headers, file, j.options, j.arch);
        std::string problem;
        if (!r.ok) {
          problem = r.log.substr(0, 2000);
        } else {
          for (const auto& k : s.kernels)
            if (!contains_bytes(r.cubin, k)) problem += "entry point " + k + " missing from the CUBIN; ";
        }
        if (!problem.empty()) {
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back(j.label + " [" + j.arch + "]: " + problem);
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  return failures;
}

/// Checks that every job of compile_all(s, file, jobs) compiles: one failed check per failure.
inline void check_all_compile(const autotune::TuningSpec& s, const std::string& file,
                              const std::vector<CompileJob>& jobs) {
  INFO(jobs.size() << " compilations");
  const std::vector<std::string> failures = compile_all(s, file, jobs);
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
}

/// Checks that s's source (as `file`) compiles alone for sm_90: no options, every macro at its default.
inline void check_compiles_at_defaults(const autotune::TuningSpec& s, const std::string& file) {
  const autotune::cuda::CompileResult r = autotune::cuda::compile(s.source_text, s.headers, file, {}, "sm_90");
  INFO(r.log);
  CHECK(r.ok);
}

/// Checks that s's source (as `file`) compiles for sm_90 with the options `all`, and, for each macro of `names`,
/// that `all` (which must define it once) without its -D fails with a log saying "<name> is not defined".
inline void check_missing_macros(const autotune::TuningSpec& s, const std::string& file,
                                 const std::vector<std::string>& all, std::initializer_list<const char*> names) {
  {
    const autotune::cuda::CompileResult ok = autotune::cuda::compile(s.source_text, s.headers, file, all, "sm_90");
    INFO(ok.log);
    REQUIRE(ok.ok);
  }
  for (const std::string name : names) {
    INFO(name);
    std::vector<std::string> missing;
    for (const auto& o : all)
      if (o.rfind("-D" + name + "=", 0) != 0) missing.push_back(o);
    REQUIRE(missing.size() + 1 == all.size());
    const autotune::cuda::CompileResult r = autotune::cuda::compile(s.source_text, s.headers, file, missing, "sm_90");
    INFO(r.log);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.log, Catch::Contains(name + " is not defined"));
  }
}

}  // namespace autotune_test
