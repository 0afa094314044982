// Lookup latency (CPU only): cold open (constructor + first answer) and warm cached lookups, single- and
// multi-threaded, against the shipped H200 recording (or a database given as the first argument).
//
//     build/bench/lookup_latency [db] [--seconds S]
//
// Prints one table; numbers are quoted in docs/lookup.md with the machine they were measured on.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tuner/lookup/lookup.hpp"

#ifndef AUTOTUNE_SOURCE_DIR
#define AUTOTUNE_SOURCE_DIR "."
#endif

using namespace autotune;
using Clock = std::chrono::steady_clock;

namespace {

double since_ns(Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

ProblemKey n_of(std::int64_t n) {
  ProblemKey p;
  p.dims["n"] = n;
  return p;
}

struct Question {
  const char* kernel;
  Workload w;
  DeviceKey d;
  ProblemKey p;
};

}  // namespace

int main(int argc, char** argv) {
  std::string db = std::string(AUTOTUNE_SOURCE_DIR) + "/tests/data/recorded_h200.db";
  double seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atof(argv[++i]);
    else db = argv[i];
  }
  const Workload sum{"float32", "sum"};
  const DeviceKey h200("NVIDIA H200", 90);
  Lookup::Options quiet;
  quiet.warn = [](const std::string&) {};

  // Cold: a new Lookup (opens the file read-only, checks it) and its first answer (loads the built-in spec
  // and the rows of reduction/float32/sum, then answers).
  std::vector<double> open_ns, first_ns, second_kernel_ns;
  std::string first_match;
  for (int rep = 0; rep < 15; ++rep) {
    auto t0 = Clock::now();
    Lookup lk(db, quiet);
    open_ns.push_back(since_ns(t0));
    t0 = Clock::now();
    auto a = lk.best("reduction", sum, h200, n_of(67108864));
    first_ns.push_back(since_ns(t0));
    first_match = lookup::to_string(a->match);
    t0 = Clock::now();
    lk.best("transpose", Workload{"float32", ""}, h200, ProblemKey::parse("cols=4096,rows=4096"));
    second_kernel_ns.push_back(since_ns(t0));
  }

  // Warm: the same question again and again, and a rotation over questions of every level.
  Lookup lk(db, quiet);
  const std::vector<Question> qs = {
      {"reduction", sum, h200, n_of(67108864)},                         // exact
      {"reduction", sum, h200, n_of(100000000)},                        // nearest size
      {"reduction", sum, DeviceKey("NVIDIA H100 80GB HBM3", 90), n_of(1 << 20)},  // same cc
      {"reduction", sum, DeviceKey("NVIDIA A100-SXM4-80GB", 80), n_of(1 << 20)},  // spec default
      {"transpose", Workload{"float32", ""}, h200, ProblemKey::parse("cols=8192,rows=8192")},
  };
  for (const auto& q : qs) lk.best(q.kernel, q.w, q.d, q.p);  // fill the cache

  auto warm = [&](std::size_t nq) {
    std::size_t iters = 0, sink = 0;
    const auto t0 = Clock::now();
    const auto deadline = t0 + std::chrono::duration<double>(seconds);
    while (Clock::now() < deadline) {
      for (int i = 0; i < 1000; ++i) {
        const Question& q = qs[(iters + static_cast<std::size_t>(i)) % nq];
        sink += static_cast<std::size_t>(lk.best(q.kernel, q.w, q.d, q.p)->match);
      }
      iters += 1000;
    }
    const double ns = since_ns(t0) / static_cast<double>(iters);
    if (sink == 12345) std::printf(" ");
    return ns;
  };
  const double warm_same = warm(1);
  const double warm_rotating = warm(qs.size());

  const unsigned threads = std::max(2u, std::thread::hardware_concurrency());
  std::atomic<std::size_t> total{0};
  std::vector<std::thread> pool;
  const auto t0 = Clock::now();
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::size_t iters = 0, sink = 0;
      const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
      while (Clock::now() < deadline) {
        for (int i = 0; i < 1000; ++i) {
          const Question& q = qs[(t + iters + static_cast<std::size_t>(i)) % qs.size()];
          sink += static_cast<std::size_t>(lk.best(q.kernel, q.w, q.d, q.p)->match);
        }
        iters += 1000;
      }
      total += iters + (sink == 12345 ? 1 : 0);
    });
  }
  for (auto& th : pool) th.join();
  const double wall = since_ns(t0);
  const double per_thread_ns = wall * threads / static_cast<double>(total.load());

  // A missing database: the spec default, also cached.
  Lookup missing("/nonexistent/autotune.db", quiet);
  missing.best("reduction", sum, h200, n_of(1 << 20));
  std::size_t miss_iters = 0;
  const auto tm = Clock::now();
  while (miss_iters < 2000000) {
    missing.best("reduction", sum, h200, n_of(1 << 20));
    ++miss_iters;
  }
  const double missing_ns = since_ns(tm) / static_cast<double>(miss_iters);

  std::printf("lookup latency, database %s (first answer: %s)\n", db.c_str(), first_match.c_str());
  std::printf("%-58s %14s\n", "measure", "median");
  std::printf("%-58s %11.3f ms\n", "cold: Lookup constructor (open read-only + checks)", median(open_ns) / 1e6);
  std::printf("%-58s %11.3f ms\n", "cold: first answer (spec + rows of one kernel/workload)", median(first_ns) / 1e6);
  std::printf("%-58s %11.3f ms\n", "cold: first answer of a second kernel", median(second_kernel_ns) / 1e6);
  std::printf("%-58s %11.1f ns\n", "warm: the same question, 1 thread", warm_same);
  std::printf("%-58s %11.1f ns\n", "warm: 5 questions in rotation, 1 thread", warm_rotating);
  char label[96];
  std::snprintf(label, sizeof label, "warm: 5 questions, %u threads (wall x threads / lookups)", threads);
  std::printf("%-58s %11.1f ns\n", label, per_thread_ns);
  std::printf("%-58s %11.1f ns\n", "warm: missing database (spec default), 1 thread", missing_ns);
  std::printf("hardware threads here: %u\n", std::thread::hardware_concurrency());
  return 0;
}
