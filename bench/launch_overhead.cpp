// Launch API overhead (needs a GPU):
//  1. first call of a new process with a cached binary (database) vs with a cold NVRTC compile: each phase
//     runs in a fresh child process (this executable with --phase), so NVRTC and the driver start cold;
//  2. steady-state host cost per call of Reduction<float>::sum vs enqueueing the same plan with direct
//     cuLaunchKernel calls (arguments pre-packed): batches of 100 calls timed on the host, then a sync;
//  3. the same two for a kernel of your own through autotune::Kernel (--spec, default the SAXPY example): first
//     call with a cached binary and cold, and its steady state against cuLaunchKernel with pre-packed arguments;
//     the first call captured (AUTOTUNE_CAPTURE) beside the device-to-host copies of the captured arguments.
//
//     build/bench/launch_overhead [--n N] [--reps R] [--out file.csv] [--spec examples/saxpy/saxpy.tune.json]
//
// Prints one table (and writes a CSV with --out). Compare figures only between runs on the same GPU kind.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/cuda/driver.hpp"
#include "tuner/cuda/launcher.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/runtime/launch.hpp"

extern char** environ;

using namespace autotune;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// Child: construct, first sum, synchronize; prints "first_ms=<ms> source=<binary source> compile_ms=<ms>".
int phase(const std::string& db, std::int64_t n) {
  const auto t0 = Clock::now();
  Reduction<float> r(db);
  DeviceBuffer in(static_cast<std::size_t>(n) * sizeof(float)), out(sizeof(float));
  std::vector<float> host(static_cast<std::size_t>(n), 1.0f);
  in.upload(host.data(), host.size() * sizeof(float));
  const auto t1 = Clock::now();  // the allocation/upload above is not part of "first launch"
  r.sum(in.ptr(), static_cast<std::size_t>(n), out.ptr());
  synchronize();
  const double first = ms_since(t1);
  const double total = ms_since(t0);
  const Choice c = r.choice(static_cast<std::size_t>(n));
  float result = 0;
  out.download(&result, sizeof result);
  std::printf("first_ms=%.3f total_ms=%.3f source=%s compile_ms=%.3f prepare_ms=%.3f ok=%d\n", first, total,
              to_string(c.binary), c.compile_ms, c.prepare_ms, result == static_cast<float>(n) ? 1 : 0);
  return 0;
}

/// Child, for a spec of your own (the SAXPY example's arguments: x, y, out, a, n): as phase().
int user_phase(const std::string& db, const std::string& spec_path, std::int64_t n) {
  const auto t0 = Clock::now();
  Kernel k(spec_path, db);
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  DeviceBuffer x(bytes), y(bytes), out(bytes);
  std::vector<float> host(static_cast<std::size_t>(n), 1.0f);
  x.upload(host.data(), bytes);
  y.upload(host.data(), bytes);
  const auto t1 = Clock::now();
  k.launch(nullptr, {n}, {DevicePtr(x.ptr()), DevicePtr(y.ptr()), DevicePtr(out.ptr()), 2.0f, static_cast<int>(n)});
  synchronize();
  const double first = ms_since(t1);
  const double total = ms_since(t0);
  const Choice c = k.choice({n});
  out.download(host.data(), bytes);
  const bool ok = std::all_of(host.begin(), host.end(), [](float v) { return v == 3.0f; });
  std::printf("first_ms=%.3f total_ms=%.3f source=%s compile_ms=%.3f prepare_ms=%.3f ok=%d\n", first, total,
              to_string(c.binary), c.compile_ms, c.prepare_ms, ok ? 1 : 0);
  return 0;
}

struct PhaseResult {
  double first_ms = 0;
  std::string source;
  double compile_ms = 0;
  bool ok = false;
};

/// capture_dir: the child runs with AUTOTUNE_CAPTURE naming every kernel and AUTOTUNE_CAPTURE_DIR=capture_dir.
PhaseResult run_phase(const std::string& db, std::int64_t n, const std::string& user_spec = "",
                      const std::string& capture_dir = "") {
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  const std::string out_file = db + ".phase.txt";
  std::string n_text = std::to_string(n);
  std::vector<std::string> args = {exe, "--phase", db, "--n", n_text};
  if (!user_spec.empty()) args.insert(args.end(), {"--user-phase", user_spec});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "AUTOTUNE_CAPTURE", 16) != 0) env_text.emplace_back(*e);
  if (!capture_dir.empty()) {
    env_text.emplace_back("AUTOTUNE_CAPTURE=*");
    env_text.push_back("AUTOTUNE_CAPTURE_DIR=" + capture_dir);
  }
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  PhaseResult r;
  if (posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), envp.data()) != 0) return r;
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(out_file);
  std::string line;
  std::getline(in, line);
  char source[32] = {};
  double total = 0, prepare = 0;
  int ok = 0;
  if (std::sscanf(line.c_str(), "first_ms=%lf total_ms=%lf source=%31s compile_ms=%lf prepare_ms=%lf ok=%d",
                  &r.first_ms, &total, source, &r.compile_ms, &prepare, &ok) == 6) {
    r.source = source;
    r.ok = ok == 1;
  }
  fs::remove(out_file);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = 1 << 24;
  int reps = 5;
  std::string csv;
  std::string phase_db, user_phase_spec;
  std::string spec_path = "examples/saxpy/saxpy.tune.json";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--n") && i + 1 < argc) n = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) csv = argv[++i];
    else if (!std::strcmp(argv[i], "--phase") && i + 1 < argc) phase_db = argv[++i];
    else if (!std::strcmp(argv[i], "--user-phase") && i + 1 < argc)
      user_phase_spec = argv[++i];
    else if (!std::strcmp(argv[i], "--spec") && i + 1 < argc)
      spec_path = argv[++i];
  }
  try {
    if (!phase_db.empty() && !user_phase_spec.empty()) return user_phase(phase_db, user_phase_spec, n);
    if (!phase_db.empty()) return phase(phase_db, n);
    std::string why;
    if (!cuda::driver_available(&why)) {
      std::fprintf(stderr, "launch_overhead needs a GPU: %s\n", why.c_str());
      return 3;
    }
    const fs::path dir = fs::temp_directory_path() / ("autotune_launch_bench_" + std::to_string(::getpid()));
    fs::create_directories(dir);

    // 1. First launch: cold compile (a fresh empty database each time) vs cached binary (the database the
    //    cold run filled).
    std::vector<double> cold, cached, nvrtc;
    bool all_ok = true;
    std::string cold_source, cached_source;
    for (int rep = 0; rep < reps; ++rep) {
      const std::string db = (dir / ("bench" + std::to_string(rep) + ".db")).string();
      db::Database::open(db);  // an empty tuning database: lookups give the spec default
      PhaseResult c = run_phase(db, n);
      PhaseResult h = run_phase(db, n);
      cold.push_back(c.first_ms);
      nvrtc.push_back(c.compile_ms);
      cached.push_back(h.first_ms);
      cold_source = c.source;
      cached_source = h.source;
      all_ok = all_ok && c.ok && h.ok;
    }

    // 2. Steady state in this process.
    const std::string db = (dir / "steady.db").string();
    db::Database::open(db);
    Reduction<float> r(db);
    DeviceBuffer in(static_cast<std::size_t>(n) * sizeof(float)), out(sizeof(float));
    std::vector<float> host(static_cast<std::size_t>(n), 1.0f);
    in.upload(host.data(), host.size() * sizeof(float));
    r.sum(in.ptr(), static_cast<std::size_t>(n), out.ptr());
    synchronize();
    const Choice choice = r.choice(static_cast<std::size_t>(n));

    // The same plan by direct cuLaunchKernel: compile the same configuration, pack the arguments once.
    const auto& d = cuda::detail::driver();
    cuda::Launcher launcher;
    const TuningSpec spec = specs::builtin_spec("reduction");
    auto adapter = kernels::make_adapter(spec);
    const Workload w{"float32", "sum"};
    ProblemKey p;
    p.dims["n"] = n;
    const LaunchPlan plan = adapter->plan(choice.answer.config, w, p, launcher.device());
    const auto options = cuda::kernel_compile_options(*adapter, w, choice.answer.config, false);
    const cuda::CompileResult cr = cuda::compile(spec.source_text, spec.headers, "reduction.cu", options, launcher.arch());
    if (!cr.ok) throw EnvironmentError("compile failed:\n" + cr.log);
    CUmodule module = nullptr;
    cuda::detail::check(d.module_load_data(&module, cr.cubin.data()), "cuModuleLoadData");
    std::vector<std::uintptr_t> scratch;
    std::map<std::string, std::uintptr_t> ptr;
    for (const auto& b : plan.buffers) {
      if (b.name == "in") ptr[b.name] = in.ptr();
      else if (b.name == "out") ptr[b.name] = out.ptr();
      else ptr[b.name] = scratch.emplace_back(launcher.allocate(b.bytes));
    }
    struct Direct {
      bool memset = false;
      CUfunction fn = nullptr;
      LaunchStep step;
      std::vector<std::uint64_t> slots;
      std::vector<void*> args;
      CUdeviceptr dst = 0;
    };
    std::vector<Direct> direct(plan.steps.size());
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
      Direct& x = direct[i];
      x.step = plan.steps[i];
      if (x.step.kind == LaunchStep::Kind::memset32) {
        x.memset = true;
        x.dst = ptr.at(x.step.buffer);
        continue;
      }
      cuda::detail::check(d.module_get_function(&x.fn, module, x.step.kernel.c_str()), "cuModuleGetFunction");
      for (const auto& a : x.step.args) {
        std::uint64_t slot = 0;
        switch (a.kind) {
          case KernelArg::Kind::buffer: slot = ptr.at(a.buffer) + a.offset_bytes; break;
          case KernelArg::Kind::f32: { float f = static_cast<float>(a.f); std::memcpy(&slot, &f, 4); break; }
          case KernelArg::Kind::f64: std::memcpy(&slot, &a.f, 8); break;
          default: slot = static_cast<std::uint64_t>(a.i); break;
        }
        x.slots.push_back(slot);
      }
      for (auto& s : x.slots) x.args.push_back(&s);
    }
    auto direct_call = [&] {
      for (auto& x : direct) {
        if (x.memset) {
          d.memset_d32_async(x.dst, x.step.value, x.step.count, nullptr);
          continue;
        }
        d.launch_kernel(x.fn, x.step.grid[0], x.step.grid[1], x.step.grid[2], x.step.block[0], x.step.block[1],
                        x.step.block[2], x.step.shared_bytes, nullptr, x.args.data(), nullptr);
      }
    };
    auto api_call = [&] { r.sum(in.ptr(), static_cast<std::size_t>(n), out.ptr()); };
    auto per_call_us = [&](auto&& call) {
      constexpr int kBatch = 100, kBatches = 50;
      std::vector<double> us;
      for (int b = 0; b < kBatches; ++b) {
        const auto t0 = Clock::now();
        for (int i = 0; i < kBatch; ++i) call();
        us.push_back(ms_since(t0) * 1e3 / kBatch);
        synchronize();
      }
      return median(us);
    };
    per_call_us(direct_call);  // warm both paths
    per_call_us(api_call);
    const double direct_us = per_call_us(direct_call);
    const double api_us = per_call_us(api_call);
    d.module_unload(module);
    for (auto s : scratch) launcher.free(s);

    const DeviceInfo& dev = launcher.device();
    std::printf("launch overhead on %s (cc %d), reduction float32/sum n=%lld, config %s [%s]\n", dev.name.c_str(),
                dev.cc, static_cast<long long>(n), choice.config_text.c_str(), lookup::to_string(choice.answer.match));
    std::printf("%-56s %12s\n", "measure (median)", "value");
    std::printf("%-56s %9.2f ms  (%s)\n", "first call, cold NVRTC compile (new process)", median(cold), cold_source.c_str());
    std::printf("%-56s %9.2f ms\n", "  of which NVRTC compile", median(nvrtc));
    std::printf("%-56s %9.2f ms  (%s)\n", "first call, cached binary (new process)", median(cached), cached_source.c_str());
    std::printf("%-56s %9.2f us\n", "steady state: direct cuLaunchKernel, per call", direct_us);
    std::printf("%-56s %9.2f us\n", "steady state: Reduction<float>::sum, per call", api_us);
    std::printf("%-56s %9.2f us\n", "  overhead of the API", api_us - direct_us);
    std::printf("results correct in the child processes: %s\n", all_ok ? "yes" : "NO");
    // 3. A kernel of your own through autotune::Kernel.
    std::vector<double> user_cold, user_cached, user_captured;
    std::string user_cached_source;
    bool user_ok = true;
    for (int rep = 0; rep < reps; ++rep) {
      const std::string udb = (dir / ("user" + std::to_string(rep) + ".db")).string();
      db::Database::open(udb);
      PhaseResult c = run_phase(udb, n, spec_path);
      PhaseResult h = run_phase(udb, n, spec_path);
      // The same first call, captured: the binary from the database as before, plus the capture's copies and files.
      const std::string caps = (dir / ("captures" + std::to_string(rep))).string();
      PhaseResult cap = run_phase(udb, n, spec_path, caps);
      const bool captured = fs::exists(caps) && !fs::is_empty(caps);
      user_cold.push_back(c.first_ms);
      user_cached.push_back(h.first_ms);
      user_captured.push_back(cap.first_ms);
      user_cached_source = h.source;
      user_ok = user_ok && c.ok && h.ok && cap.ok && captured;
    }
    Kernel k(spec_path, db);
    const std::size_t ubytes = static_cast<std::size_t>(n) * sizeof(float);
    DeviceBuffer ux(ubytes), uy(ubytes), uout(ubytes);
    const int un = static_cast<int>(n);
    auto user_api = [&] {
      k.launch(nullptr, {n}, {DevicePtr(ux.ptr()), DevicePtr(uy.ptr()), DevicePtr(uout.ptr()), 2.0f, un});
    };
    user_api();
    synchronize();
    const Choice uchoice = k.choice({n});
    auto uadapter = kernels::make_adapter(k.spec());
    ProblemKey up;
    up.dims["n"] = n;
    const LaunchPlan uplan = uadapter->plan(uchoice.answer.config, k.spec().workloads.front(), up, launcher.device());
    const auto uoptions =
        cuda::kernel_compile_options(*uadapter, k.spec().workloads.front(), uchoice.answer.config, false);
    const cuda::CompileResult ucr =
        cuda::compile(k.spec().source_text, k.spec().headers, "user.cu", uoptions, launcher.arch());
    if (!ucr.ok) throw EnvironmentError("compile failed:\n" + ucr.log);
    CUmodule umodule = nullptr;
    cuda::detail::check(d.module_load_data(&umodule, ucr.cubin.data()), "cuModuleLoadData");
    CUfunction ufn = nullptr;
    const LaunchStep& ustep = uplan.steps.front();
    cuda::detail::check(d.module_get_function(&ufn, umodule, ustep.kernel.c_str()), "cuModuleGetFunction");
    std::uint64_t uslots[5] = {ux.ptr(), uy.ptr(), uout.ptr(), 0, static_cast<std::uint64_t>(un)};
    const float two = 2.0f;
    std::memcpy(&uslots[3], &two, sizeof two);
    void* uargs[5] = {&uslots[0], &uslots[1], &uslots[2], &uslots[3], &uslots[4]};
    auto user_direct = [&] {
      d.launch_kernel(ufn, ustep.grid[0], ustep.grid[1], ustep.grid[2], ustep.block[0], ustep.block[1], ustep.block[2],
                      ustep.shared_bytes, nullptr, uargs, nullptr);
    };
    per_call_us(user_direct);
    per_call_us(user_api);
    const double user_direct_us = per_call_us(user_direct);
    const double user_api_us = per_call_us(user_api);
    d.module_unload(umodule);
    // What a capture copies: x and y before the launch, out after it, each once (synchronous copies), into host
    // memory allocated for it (as a capture's is: the first touch of its pages is part of the copy).
    std::vector<double> copy_ms;
    for (int r = 0; r < 5; ++r) {
      synchronize();
      const auto t = Clock::now();
      for (const DeviceBuffer* b : {&ux, &uy, &uout}) {
        std::unique_ptr<unsigned char[]> fresh(new unsigned char[ubytes]);
        b->download(fresh.get(), ubytes);
      }
      copy_ms.push_back(ms_since(t));
    }
    std::printf("kernel of your own: %s n=%lld, config %s [%s]\n", k.spec().name.c_str(), static_cast<long long>(n),
                uchoice.config_text.c_str(), lookup::to_string(uchoice.answer.match));
    std::printf("%-56s %9.2f ms\n", "first call, cold NVRTC compile (new process)", median(user_cold));
    std::printf("%-56s %9.2f ms  (%s)\n", "first call, cached binary (new process)", median(user_cached),
                user_cached_source.c_str());
    std::printf("%-56s %9.2f ms\n", "first call, cached binary, captured (AUTOTUNE_CAPTURE)", median(user_captured));
    std::printf("%-56s %9.2f ms\n", "  the captured arguments' device-to-host copies alone (fresh host memory)",
                median(copy_ms));
    std::printf("%-56s %9.2f us\n", "steady state: direct cuLaunchKernel, per call", user_direct_us);
    std::printf("%-56s %9.2f us\n", "steady state: Kernel::launch, per call", user_api_us);
    std::printf("%-56s %9.2f us\n", "  overhead of the API", user_api_us - user_direct_us);
    std::printf("results correct in the child processes: %s\n", user_ok ? "yes" : "NO");
    all_ok = all_ok && user_ok;
    if (!csv.empty()) {
      std::ofstream f(csv);
      f << "measure,value,unit\n"
        << "first_call_cold_compile," << median(cold) << ",ms\n"
        << "nvrtc_compile," << median(nvrtc) << ",ms\n"
        << "first_call_cached," << median(cached) << ",ms\n"
        << "steady_direct," << direct_us << ",us\n"
        << "steady_api," << api_us << ",us\n"
        << "user_first_call_cold_compile," << median(user_cold) << ",ms\n"
        << "user_first_call_cached," << median(user_cached) << ",ms\n"
        << "user_first_call_captured," << median(user_captured) << ",ms\n"
        << "user_capture_copies," << median(copy_ms) << ",ms\n"
        << "user_steady_direct," << user_direct_us << ",us\n"
        << "user_steady_api," << user_api_us << ",us\n";
    }
    fs::remove_all(dir);
    return all_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "launch_overhead: %s\n", e.what());
    return 1;
  }
}
