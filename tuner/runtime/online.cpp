#include "tuner/runtime/online.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "db/database.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/text.hpp"
#include "tuner/cuda/online_device.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/online/record.hpp"
#include "tuner/runtime/binary_store.hpp"

namespace autotune::runtime_detail {

namespace {

constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);
// While the search runs, the application's host runs at most this many launches ahead of the GPU (a launch waits for
// the one this many before it), and a result is waited for once it is this many launches old. An application that
// enqueues far ahead of the GPU would otherwise see each round of the search take as long as the whole queue (on an
// H100, a loop about 1000 launches ahead verified no candidate in 2000 launches; a candidate's module load on a worker,
// likely waiting for the work queued before it, was not isolated); the GPU still has this many launches queued
// whenever the host waits.
constexpr std::uint64_t kMaxLag = 16;

double now_s() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

std::string basename_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::optional<online::Settings> online_settings(const std::string& option) {
  if (!trim(option).empty()) return online::parse_settings(option);
  const char* v = std::getenv("AUTOTUNE_ONLINE");
  return v == nullptr ? std::nullopt : online::parse_settings(v);
}

struct OnlineTuner::Impl {
  /// A configuration prepared by a worker: its bound plan, or why it cannot run.
  struct Prepared {
    std::size_t index = 0;
    std::shared_ptr<const cuda::PreparedPlan> plan;
    TrialStatus status = TrialStatus::ok;
    std::string message;
  };
  struct Pending {
    int token = 0;
    std::size_t index = kNoIndex;  // kNoIndex: the launch failed, the result is dropped
    std::uint64_t launch = 0;      // the application's launch that asked for it
  };

  explicit Impl(OnlineSetup s)
      : setup(std::move(s)),
        device_info(setup.launcher.device()),
        space(setup.spec.space(setup.problem, device_info, setup.workload)),
        device(setup.launcher) {}

  OnlineSetup setup;
  DeviceInfo device_info;
  ParameterSpace space;
  std::unique_ptr<online::Search> search;
  cuda::OnlineDevice device;
  std::vector<OutputCheck> checks;  // one per output buffer of the plans, in the plans' order
  std::string warm_source;
  std::map<std::size_t, std::shared_ptr<const cuda::PreparedPlan>> plans;  // prepared candidates by index
  std::vector<Pending> timings, verdicts;
  std::deque<std::pair<std::uint64_t, int>> marks;  // (launch, mark token) of the launches in flight
  std::string outcome;                              // after settling: what was recorded, or why not
  Config best_config;
  std::shared_ptr<const cuda::PreparedPlan> best_plan;
  std::uint64_t launches = 0;  // the application's launches of this problem so far

  // The workers: indices to prepare in, prepared configurations out.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::size_t> todo;
  std::vector<Prepared> done;
  bool stop = false;
  std::vector<std::thread> workers;

  void work() {
    BinaryStore store(setup.db_path, setup.cache_dir, setup.store_binaries);
    load_comparisons(store);
    for (;;) {
      std::size_t index = 0;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || !todo.empty(); });
        if (stop) return;
        index = todo.front();
        todo.pop_front();
      }
      Prepared p = prepare(index, store);
      std::lock_guard<std::mutex> lock(mu);
      done.push_back(std::move(p));
    }
  }
  std::string comparisons_error;  // under mu

  /// The comparison kernels from the binary stores, else compiled (and stored for the next process).
  void load_comparisons(BinaryStore& store) {
    try {
      if (device.comparisons_loaded()) return;
      const std::string key = device.comparisons_key();
      std::string note;
      if (auto hit = store.get(key, &note))
        if (device.load_comparisons(hit->image)) return;
      const std::vector<unsigned char> cubin = device.compile_comparisons();
      if (!cubin.empty()) store.put(key, cubin, "", &note);
    } catch (const Error& e) {
      std::lock_guard<std::mutex> lock(mu);
      comparisons_error = e.what();
    }
  }

  Prepared prepare(std::size_t index, BinaryStore& store) const {
    Prepared out;
    out.index = index;
    const Config c = space.config(index);
    LaunchPlan plan;
    try {
      plan = setup.adapter.plan(c, setup.workload, setup.problem, device_info);
    } catch (const Error& e) {
      out.status = TrialStatus::invalid;
      out.message = e.what();
      return out;
    }
    for (const BufferDecl& b : plan.buffers)
      if (b.role == BufferRole::scratch || b.role == BufferRole::state) {
        out.status = TrialStatus::invalid;
        out.message = "the launch plan has scratch buffers, which online tuning does not supply";
        return out;
      }
    try {
      const cuda::CompileRecipe recipe = cuda::compile_recipe(setup.adapter, setup.workload, c, setup.launcher.arch());
      std::string note;
      std::shared_ptr<const cuda::Module> module;
      if (auto hit = store.get(recipe.key, &note)) {
        try {
          module = setup.launcher.load(hit->image);
        } catch (const cuda::ModuleLoadError&) {
          store.forget(recipe.key);
        }
      }
      if (!module) {
        const cuda::CompileResult r =
            cuda::compile(setup.spec.source_text, setup.spec.headers, basename_of(setup.spec.source_path),
                          recipe.options, setup.launcher.arch());
        if (!r.ok) {
          out.status =
              cuda::exceeds_hardware_limits(r.log) ? TrialStatus::invalid_resources : TrialStatus::compile_error;
          out.message = r.log.size() > 2000 ? r.log.substr(0, 2000) + "..." : r.log;
          return out;
        }
        module = setup.launcher.load(r.cubin);
        store.put(recipe.key, r.cubin, r.log, &note);
      }
      out.plan = setup.launcher.prepare(module, plan);
    } catch (const UsageError& e) {
      out.status = TrialStatus::invalid_resources;
      out.message = e.what();
    } catch (const Error& e) {
      out.status = TrialStatus::launch_error;
      out.message = e.what();
    }
    return out;
  }

  const cuda::PreparedPlan& plan_of(std::size_t index) const {
    if (index == search->reference()) return *setup.reference_plan;
    return *plans.at(index);
  }

  /// The plan's buffer addresses: the caller's by name, outputs from `shadows` when given.
  void addresses(const cuda::PreparedPlan& p, const std::uintptr_t* user_ptrs,
                 const std::vector<std::uintptr_t>* shadows, std::vector<std::uintptr_t>& out) const {
    out.clear();
    std::size_t k = 0;
    for (const BufferDecl& b : p.plan().buffers) {
      if (shadows != nullptr && b.role == BufferRole::output) {
        out.push_back((*shadows)[k++]);
        continue;
      }
      std::uintptr_t a = 0;
      for (std::size_t u = 0; u < setup.buffers.size(); ++u)
        if (setup.buffers[u] == b.name) a = user_ptrs[u];
      out.push_back(a);
    }
  }

  void poll() {
    std::vector<Prepared> ready;
    {
      std::lock_guard<std::mutex> lock(mu);
      ready.swap(done);
    }
    for (Prepared& p : ready) {
      if (p.plan) {
        plans[p.index] = p.plan;
        search->prepared(p.index);
      } else {
        search->failed(p.index, p.status, p.message);
      }
    }
    for (auto it = timings.begin(); it != timings.end();) {
      const std::optional<double> ms = device.elapsed_ms(it->token);
      if (!ms) {
        ++it;
        continue;
      }
      if (it->index != kNoIndex) search->sampled(it->index, *ms);
      it = timings.erase(it);
    }
    for (auto it = verdicts.begin(); it != verdicts.end();) {
      const auto v = device.verdict(it->token);
      if (!v) {
        ++it;
        continue;
      }
      std::string message;
      for (std::size_t k = 0; k < checks.size() && message.empty(); ++k)
        if ((*v)[k] > checks[k].max_mismatches)
          message = std::to_string((*v)[k]) + " of " + std::to_string(checks[k].count) + " elements of '" +
                    checks[k].output + "' differ from the reference configuration's (online verification)";
      search->verified(it->index, message.empty(), message);
      it = verdicts.erase(it);
    }
  }

  /// Waits for the launches and the results that are more than kMaxLag launches old, and takes them in.
  void catch_up() {
    while (!marks.empty() && launches - marks.front().first > kMaxLag) {
      device.wait_mark(marks.front().second);
      marks.pop_front();
    }
    bool waited = false;
    for (const Pending& t : timings)
      if (launches - t.launch > kMaxLag) {
        device.wait_timing(t.token);
        waited = true;
      }
    for (const Pending& v : verdicts)
      if (launches - v.launch > kMaxLag) {
        device.wait_verdict(v.token);
        waited = true;
      }
    if (waited) poll();
  }

  void feed() {
    std::vector<std::size_t> next = search->to_prepare();
    if (next.empty()) return;
    {
      std::lock_guard<std::mutex> lock(mu);
      for (std::size_t i : next) todo.push_back(i);
    }
    cv.notify_all();
  }

  void timed_run(std::size_t index, const std::uintptr_t* user_ptrs, const std::uint64_t* scalars, void* stream) {
    std::vector<std::uintptr_t> ptrs;
    const cuda::PreparedPlan& p = plan_of(index);
    addresses(p, user_ptrs, nullptr, ptrs);
    const int token = device.begin_timing(stream);
    try {
      setup.launcher.run(p, ptrs.data(), stream, scalars);
    } catch (const Error& e) {
      device.end_timing(token, stream);
      timings.push_back({token, kNoIndex, launches});
      if (index == search->reference()) throw;  // the application's own launch failed
      search->failed(index, TrialStatus::launch_error, e.what());
      plain_run(search->reference(), user_ptrs, scalars, stream);
      return;
    }
    device.end_timing(token, stream);
    timings.push_back({token, index, launches});
  }

  void plain_run(std::size_t index, const std::uintptr_t* user_ptrs, const std::uint64_t* scalars, void* stream) {
    std::vector<std::uintptr_t> ptrs;
    const cuda::PreparedPlan& p = plan_of(index);
    addresses(p, user_ptrs, nullptr, ptrs);
    setup.launcher.run(p, ptrs.data(), stream, scalars);
  }

  /// The reference into the application's outputs (timed), the candidate into shadows of them (holding the outputs'
  /// contents before the launch, for outputs that are also inputs), and the comparison of the two.
  void verify_run(std::size_t run, std::size_t candidate, const std::uintptr_t* user_ptrs, const std::uint64_t* scalars,
                  void* stream) {
    const cuda::PreparedPlan& ref = plan_of(run);
    std::vector<std::uintptr_t> shadows, user_outputs, ref_ptrs;
    addresses(ref, user_ptrs, nullptr, ref_ptrs);
    std::size_t k = 0;
    for (std::size_t i = 0; i < ref.plan().buffers.size(); ++i) {
      const BufferDecl& b = ref.plan().buffers[i];
      if (b.role != BufferRole::output) continue;
      const std::uintptr_t shadow = device.shadow(k++, b.bytes);
      device.copy_async(shadow, ref_ptrs[i], b.bytes, stream);
      shadows.push_back(shadow);
      user_outputs.push_back(ref_ptrs[i]);
    }
    timed_run(run, user_ptrs, scalars, stream);
    try {
      const cuda::PreparedPlan& cand = plan_of(candidate);
      std::vector<std::uintptr_t> ptrs;
      addresses(cand, user_ptrs, &shadows, ptrs);
      setup.launcher.run(cand, ptrs.data(), stream, scalars);
      verdicts.push_back({device.compare(checks, shadows, user_outputs, stream), candidate, launches});
    } catch (const Error& e) {
      search->failed(candidate, TrialStatus::launch_error, e.what());
    }
  }

  void settle() {
    const std::size_t best = search->best();
    best_config = space.config(best);
    best_plan = best == search->reference() ? setup.reference_plan : plans.at(best);
    if (!setup.settings.record) {
      outcome = "not recorded (record=0)";
      return;
    }
    try {
      if (setup.db_path.empty()) throw UsageError("no database path");
      auto db = db::Database::open(setup.db_path, db::Database::Mode::read_write);
      online::RecordRequest r{setup.spec,
                              setup.workload,
                              setup.problem,
                              device_info,
                              space,
                              *search,
                              setup.settings.strategy,
                              setup.settings.seed,
                              setup.adapter.bytes_moved(setup.workload, setup.problem)};
      const std::int64_t session = online::record(*db, r);
      outcome = "recorded as online session " + std::to_string(session) + " in " + setup.db_path;
    } catch (const std::exception& e) {
      outcome = std::string("not recorded: ") + e.what();
      std::cerr << "autotune: online tuning of " << setup.spec.name << " (" << setup.problem.key()
                << "): its result was not recorded: " << e.what() << "\n";
    }
  }
};

OnlineTuner::OnlineTuner(OnlineSetup s) : impl_(std::make_unique<Impl>(std::move(s))) {
  Impl& m = *impl_;
  const std::ptrdiff_t ref = m.space.find(m.setup.reference);
  if (ref < 0)
    throw UsageError("its configuration " + m.setup.reference.str(&m.setup.spec.params) + " is not in the space");
  // The checks of the outputs, with the counts of the reference's plan.
  std::map<std::string, std::size_t> sizes;
  for (const BufferDecl& b : m.setup.reference_plan->plan().buffers) {
    if (b.role == BufferRole::scratch || b.role == BufferRole::state)
      throw UsageError("its launch plan has scratch buffers, which online tuning does not supply");
    if (b.role == BufferRole::output) sizes[b.name] = b.bytes;
  }
  const std::vector<OutputCheck> by_name = m.setup.adapter.checks_of_sizes(sizes, m.setup.workload, m.setup.problem);
  for (const BufferDecl& b : m.setup.reference_plan->plan().buffers) {
    if (b.role != BufferRole::output) continue;
    auto it = std::find_if(by_name.begin(), by_name.end(), [&](const OutputCheck& c) { return c.output == b.name; });
    if (it == by_name.end())
      throw UsageError("output '" + b.name + "' has no comparison the GPU can run (a verification callback?)");
    if (it->kind == OutputCheck::Kind::abs_tolerance || it->kind == OutputCheck::Kind::user_kernel)
      throw UsageError("output '" + b.name + "' is verified by a rule online tuning cannot run on the GPU");
    m.checks.push_back(*it);
  }
  std::unique_ptr<db::Database> db;
  try {
    if (!m.setup.db_path.empty()) db = db::Database::open(m.setup.db_path, db::Database::Mode::read_only);
  } catch (const std::exception&) {
    db.reset();  // no warm start
  }
  auto strategy = online::make_strategy(m.setup.settings, m.space, m.setup.spec, m.setup.workload, m.setup.problem,
                                        m.device_info, db.get(), &m.warm_source);
  m.search = std::make_unique<online::Search>(m.space, static_cast<std::size_t>(ref), std::move(strategy),
                                              m.setup.settings.budget);
  m.best_config = m.setup.reference;
  m.best_plan = m.setup.reference_plan;
  const std::size_t threads =
      std::clamp<std::size_t>(std::thread::hardware_concurrency() / 2, 1, m.setup.settings.budget.ahead);
  for (std::size_t i = 0; i < threads; ++i) m.workers.emplace_back([&m] { m.work(); });
}

OnlineTuner::~OnlineTuner() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  for (auto& t : impl_->workers) t.join();
}

void OnlineTuner::launch(const std::uintptr_t* user_ptrs, const std::uint64_t* scalars, void* stream) {
  Impl& m = *impl_;
  ++m.launches;
  m.poll();
  m.catch_up();
  m.feed();
  // Verifications wait for the comparison kernels (compiled by the first worker); if they cannot be had, every
  // candidate fails with that error and the search settles on the reference.
  std::string error;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    error = m.comparisons_error;
  }
  const bool can_verify = m.device.comparisons_loaded();
  if (!error.empty())
    for (const online::Entry& e : m.search->entries())
      if (e.stage == online::Stage::ready) m.search->failed(e.index, TrialStatus::launch_error, error);
  const online::Step s = m.search->next(now_s(), can_verify);
  if (m.search->settled() && m.outcome.empty()) m.settle();
  if (s.verify)
    m.verify_run(s.run, *s.verify, user_ptrs, scalars, stream);
  else if (s.sample)
    m.timed_run(s.run, user_ptrs, scalars, stream);
  else
    m.plain_run(s.run, user_ptrs, scalars, stream);  // settled: next() gives the best
  if (!m.search->settled()) m.marks.emplace_back(m.launches, m.device.mark(stream));
}

bool OnlineTuner::settled() const { return impl_->search->settled() && !impl_->outcome.empty(); }
const Config& OnlineTuner::best_config() const { return impl_->best_config; }
std::shared_ptr<const cuda::PreparedPlan> OnlineTuner::best_plan() const { return impl_->best_plan; }

std::string OnlineTuner::status() const {
  const Impl& m = *impl_;
  std::size_t judged = 0, failed = 0;
  for (const online::Entry& e : m.search->entries()) {
    if (e.stage == online::Stage::done) ++judged;
    if (e.stage == online::Stage::failed) ++failed;
  }
  const std::string counts = std::to_string(judged) + " configurations judged, " + std::to_string(failed) + " failed";
  if (!settled())
    return "searching: " + std::to_string(m.search->launches_used()) + " of " +
           std::to_string(m.setup.settings.budget.launches) + " launches, " + counts +
           (m.warm_source.empty() ? "" : "; warm start: " + m.warm_source);
  return "settled on " + m.best_config.str(&m.setup.spec.params) + " (" + m.search->settle_reason() + "; " + counts +
         "); " + m.outcome;
}

}  // namespace autotune::runtime_detail
