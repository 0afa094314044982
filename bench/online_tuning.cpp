// Online tuning inside an application (docs/lookup.md "Online tuning"; needs a GPU): a loop of launches of a kernel of
// your own through autotune::Kernel, as an application makes them, on the legacy default stream.
//
//   build/bench/online_tuning --spec examples/online/smooth.tune.json --db tune.db --n 50000000
//       [--launches 2000] [--online "200"] [--check] [--steady 500] [--overhead 20000]
//
// --online S: RuntimeOptions::online (as AUTOTUNE_ONLINE; "" = no online tuning: the database's answer as it is).
// Prints, one "key: value" per line: the wall time of the whole loop (the first launch prepares the problem: lookup,
// binary, plan; the loop ends with a synchronisation), the choice before and after, the online status; with --check,
// every launch's output is copied back and compared bit for bit with the spec default's (computed once, by a Kernel
// without a database), and the launches that differ are counted; --steady N: after the loop, N more launches timed
// alone (the configuration the loop settled on), as ms per launch; --overhead N: the host time per call of N launches
// of a 1024-element problem after the search of that problem settled (same Kernel), against a Kernel without online
// tuning on the same database (opened anew, so that it serves the recorded online answer at level exact).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tuner/core/error.hpp"
#include "tuner/runtime/launch.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

struct Options {
  std::string spec = "examples/online/smooth.tune.json", db, online = "200";
  long long n = 50000000, launches = 2000, steady = 0, overhead = 0;
  bool check = false;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "%s\nusage: online_tuning --db DB [--spec SPEC] [--n N] [--launches L] [--online S] [--check] "
               "[--steady N] [--overhead N]\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value of " + a).c_str());
      return argv[++i];
    };
    if (a == "--spec")
      o.spec = value();
    else if (a == "--db")
      o.db = value();
    else if (a == "--online")
      o.online = value();
    else if (a == "--n")
      o.n = std::atoll(value().c_str());
    else if (a == "--launches")
      o.launches = std::atoll(value().c_str());
    else if (a == "--steady")
      o.steady = std::atoll(value().c_str());
    else if (a == "--overhead")
      o.overhead = std::atoll(value().c_str());
    else if (a == "--check")
      o.check = true;
    else
      usage(("unknown argument " + a).c_str());
  }
  if (o.db.empty()) usage("--db is required");
  if (o.n < 1 || o.n > 0x7fffffff || o.launches < 1) usage("--n must be in 1 .. 2^31-1 and --launches at least 1");
  return o;
}

void print_choice(const char* when, const autotune::Choice& c) {
  std::printf("%s config: %s\n%s match: %s\n", when, c.config_text.c_str(), when,
              autotune::lookup::to_string(c.answer.match));
  if (!c.online.empty()) std::printf("%s online: %s\n", when, c.online.c_str());
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  const auto n = static_cast<std::size_t>(o.n);
  std::vector<float> host(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(0.5f, 2.0f);
  for (float& v : host) v = dist(rng);
  autotune::DeviceBuffer in(n * sizeof(float)), out(n * sizeof(float));
  in.upload(host.data(), n * sizeof(float));

  std::vector<float> expected, got;
  if (o.check) {  // the spec default's output, by a Kernel without a database
    autotune::Kernel reference(o.spec, "");
    reference.launch(nullptr, {o.n},
                     {autotune::DevicePtr(in.ptr()), autotune::DevicePtr(out.ptr()), static_cast<int>(o.n)});
    expected.resize(n);
    out.download(expected.data(), n * sizeof(float));
    got.resize(n);
  }

  autotune::RuntimeOptions ro;
  ro.online = o.online.empty() ? "off" : o.online;
  autotune::Kernel k(o.spec, o.db, ro);
  print_choice("before", k.choice({o.n}));
  long long differing = 0;
  const auto start = clock_type::now();
  for (long long l = 0; l < o.launches; ++l) {
    k.launch(nullptr, {o.n}, {autotune::DevicePtr(in.ptr()), autotune::DevicePtr(out.ptr()), static_cast<int>(o.n)});
    if (o.check) {
      std::fill(got.begin(), got.end(), 0.0f);
      out.download(got.data(), n * sizeof(float));
      if (std::memcmp(got.data(), expected.data(), n * sizeof(float)) != 0) ++differing;
    }
  }
  autotune::synchronize();
  const double total = ms_since(start);
  std::printf("launches: %lld\nloop ms: %.3f\nms per launch: %.5f\n", o.launches, total, total / o.launches);
  if (o.check) std::printf("launches with outputs differing from the spec default's: %lld\n", differing);
  print_choice("after", k.choice({o.n}));

  if (o.steady > 0) {
    const auto t = clock_type::now();
    for (long long l = 0; l < o.steady; ++l)
      k.launch(nullptr, {o.n}, {autotune::DevicePtr(in.ptr()), autotune::DevicePtr(out.ptr()), static_cast<int>(o.n)});
    autotune::synchronize();
    std::printf("steady ms per launch: %.5f\n", ms_since(t) / o.steady);
  }
  if (o.overhead > 0) {
    const long long small = 1024;
    // Settle the small problem's search first (its launches are the search's), then time the calls.
    for (int l = 0; l < 100000 && k.choice({small}).online.rfind("searching", 0) == 0; ++l)
      k.launch(nullptr, {small},
               {autotune::DevicePtr(in.ptr()), autotune::DevicePtr(out.ptr()), static_cast<int>(small)});
    autotune::synchronize();
    autotune::RuntimeOptions off;
    off.online = "off";
    // The same file under another path string: a Lookup of its own, which reads the file as it is now.
    const auto slash = o.db.rfind('/');
    const std::string again =
        slash == std::string::npos ? "./" + o.db : o.db.substr(0, slash) + "/." + o.db.substr(slash);
    autotune::Kernel plain(o.spec, again, off);
    auto per_call = [&](autotune::Kernel& kk) {
      kk.launch(nullptr, {small},
                {autotune::DevicePtr(in.ptr()), autotune::DevicePtr(out.ptr()), static_cast<int>(small)});
      autotune::synchronize();
      const auto t = clock_type::now();
      for (long long l = 0; l < o.overhead; ++l)
        kk.launch(nullptr, {small},
                  {autotune::DevicePtr(in.ptr()), autotune::DevicePtr(out.ptr()), static_cast<int>(small)});
      const double us = ms_since(t) * 1000.0 / static_cast<double>(o.overhead);
      autotune::synchronize();
      return us;
    };
    double a = 1e30, b = 1e30;
    for (int r = 0; r < 3; ++r) {
      a = std::min(a, per_call(k));
      b = std::min(b, per_call(plain));
    }
    print_choice("overhead settled", k.choice({small}));
    print_choice("overhead plain", plain.choice({small}));
    std::printf("host us per call, settled online Kernel: %.3f\nhost us per call, Kernel without online tuning: %.3f\n",
                a, b);
  }
  return 0;
} catch (const autotune::Error& e) {
  std::fprintf(stderr, "online_tuning: %s\n", e.what());
  return 1;
}
