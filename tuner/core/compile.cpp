#include "tuner/core/compile.hpp"

#include "tuner/core/backend.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "tuner/core/error.hpp"
#include "tuner/core/timer.hpp"

namespace autotune {

namespace {
// The abandoned flag of the task this pool thread runs (null outside a task).
thread_local const std::atomic<bool>* t_abandoned = nullptr;
}  // namespace

bool compile_abandoned() { return t_abandoned != nullptr && t_abandoned->load(std::memory_order_relaxed); }

std::optional<CompileResult> MemoryBinaryCache::get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  CompileResult r = it->second;
  r.cached = true;
  return r;
}

void MemoryBinaryCache::put(const std::string& key, const CompileResult& r) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_[key] = r;
}

std::size_t MemoryBinaryCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

CompileStats CompileStats::operator-(const CompileStats& o) const {
  CompileStats d;
  d.compiled = compiled - o.compiled;
  d.taken = taken - o.taken;
  d.cache_hits = cache_hits - o.cache_hits;
  d.failed = failed - o.failed;
  d.unused = unused - o.unused;
  d.cancelled = cancelled - o.cancelled;
  d.thread_ms = thread_ms - o.thread_ms;
  d.compiler_ms = compiler_ms - o.compiler_ms;
  d.cpu_ms = cpu_ms - o.cpu_ms;
  d.voluntary_switches = voluntary_switches - o.voluntary_switches;
  d.involuntary_switches = involuntary_switches - o.involuntary_switches;
  d.minor_faults = minor_faults - o.minor_faults;
  d.active_threads = active_threads;
  d.shrinks = shrinks - o.shrinks;
  d.wait_ms = wait_ms - o.wait_ms;
  d.cache_ms = cache_ms - o.cache_ms;
  return d;
}

BackendStats BackendStats::operator-(const BackendStats& o) const {
  BackendStats d;
  d.compile = compile - o.compile;
  d.compile_jobs = compile_jobs;
  d.verify_ms = verify_ms - o.verify_ms;
  d.benchmark_ms = benchmark_ms - o.benchmark_ms;
  d.verified = verified - o.verified;
  d.timed = timed - o.timed;
  d.setup_ms = setup_ms;
  return d;
}

CompilePipeline::CompilePipeline(int jobs, BinaryCache* cache)
    : cache_(cache),
      rule_(jobs > 0 ? static_cast<std::size_t>(jobs) : default_compile_jobs(), kInitialThreads),
      worked_(rule_.cap(), false) {
  stats_.active_threads = rule_.active();
  // Threads are started as the rule puts them to work (an idle thread would still wake on every queued task).
  for (std::size_t t = 0; t < rule_.active(); ++t) threads_.emplace_back([this, t] { work(t); });
}

CompilePipeline::~CompilePipeline() {
  cancel();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void CompilePipeline::maybe_grow() {
  bool queued = false;
  for (auto* q : {&demanded_, &speculative_})
    for (const EntryPtr& e : *q) queued = queued || e->state == State::queued;
  if (!rule_.on_wait(queued)) return;
  stats_.active_threads = rule_.active();
  while (threads_.size() < rule_.active()) {
    const std::size_t t = threads_.size();
    threads_.emplace_back([this, t] { work(t); });  // it takes mu_ once this thread releases it
  }
}

void CompilePipeline::work(std::size_t index) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    EntryPtr e;
    work_cv_.wait(lock, [&] {
      if (stop_ || index >= rule_.active()) return true;  // stopping, or this thread was stopped by the rule
      // Demanded tasks first; entries that started elsewhere or were dropped are skipped.
      for (auto* q : {&demanded_, &speculative_}) {
        while (!q->empty() && q->front()->state != State::queued) q->pop_front();
        if (!q->empty()) {
          e = q->front();
          q->pop_front();
          return true;
        }
      }
      return false;
    });
    if (stop_ || !e) return;
    e->state = State::running;
    Task task = std::move(e->task);
    lock.unlock();
    std::optional<CompileResult> result;
    std::exception_ptr error;
    double ms = 0;
    {
      ScopedTimer timer(ms);
      t_abandoned = &e->abandoned;
      try {
        result = task();
      } catch (...) {
        error = std::current_exception();
      }
      t_abandoned = nullptr;
    }
    lock.lock();
    if (rule_.on_finished(index, ms, result ? result->cpu_ms : 0.0, !worked_[index])) {
      stats_.active_threads = rule_.active();
      ++stats_.shrinks;
    }
    worked_[index] = true;
    ++stats_.compiled;
    stats_.thread_ms += ms;
    if (result) {
      stats_.compiler_ms += result->ms;
      stats_.cpu_ms += result->cpu_ms;
      stats_.voluntary_switches += result->voluntary_switches;
      stats_.involuntary_switches += result->involuntary_switches;
      stats_.minor_faults += result->minor_faults;
    }
    if (e->state == State::dropped) {
      ++stats_.unused;
      continue;
    }
    e->result = std::move(result);
    e->error = error;
    e->state = State::done;
    done_cv_.notify_all();
  }
}

CompilePipeline::EntryPtr CompilePipeline::make_entry(const std::string& key, Task task) {
  auto e = std::make_shared<Entry>();
  if (cache_ != nullptr) {
    double ms = 0;
    std::optional<CompileResult> hit;
    {
      ScopedTimer timer(ms);
      hit = cache_->get(key);
    }
    std::lock_guard<std::mutex> lock(mu_);
    stats_.cache_ms += ms;
    if (hit) {
      hit->cached = true;
      e->result = std::move(hit);
      e->from_cache = true;
      e->stored = true;
      e->state = State::done;
      return e;
    }
  }
  e->task = std::move(task);
  return e;
}

void CompilePipeline::drop(const EntryPtr& e) {
  if (e->state == State::queued) ++stats_.cancelled;
  if (e->state == State::done && !e->from_cache && !e->stored && !e->error) ++stats_.unused;
  e->state = State::dropped;  // a running task sees this when it finishes; queues skip it
  e->task = nullptr;
}

void CompilePipeline::submit(const std::string& key, Task task) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    Entry& e = *it->second;
    if (e.demands++ == 0 && e.state == State::queued) {
      demanded_.push_back(it->second);  // promoted ahead of the speculation
      lock.unlock();
      work_cv_.notify_all();  // threads not put to work wait on it too: one could take the only wake-up
    }
    return;
  }
  lock.unlock();
  EntryPtr e = make_entry(key, std::move(task));
  lock.lock();
  e->demands = 1;
  entries_[key] = e;
  if (e->state == State::queued) {
    demanded_.push_back(e);
    lock.unlock();
    work_cv_.notify_all();  // threads not put to work wait on it too: one could take the only wake-up
  }
}

CompileResult CompilePipeline::take(const std::string& key) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second->demands == 0) {
    throw Error("compile pipeline: no submitted task for key " + key + " (never submitted, or cancelled)");
  }
  EntryPtr e = it->second;
  if (e->state != State::done) {
    maybe_grow();
    ScopedTimer timer(stats_.wait_ms);  // under mu_ again when the wait returns
    done_cv_.wait(lock, [&] { return e->state == State::done || e->state == State::dropped; });
  }
  if (e->state == State::dropped) throw Error("compile pipeline: the task for key " + key + " was cancelled");
  if (--e->demands == 0) entries_.erase(it);
  if (e->error) std::rethrow_exception(e->error);
  CompileResult r;
  if (e->demands > 0) r = *e->result;  // submitted again: the next take needs it too
  else r = std::move(*e->result);
  ++stats_.taken;
  if (e->from_cache) ++stats_.cache_hits;
  if (!r.ok) ++stats_.failed;
  const bool store = cache_ != nullptr && !e->stored;
  e->stored = true;
  lock.unlock();
  if (store) {
    double ms = 0;
    {
      ScopedTimer timer(ms);
      cache_->put(key, r);
    }
    lock.lock();
    stats_.cache_ms += ms;
  }
  return r;
}

void CompilePipeline::prefetch(std::vector<Item> items) {
  std::unique_lock<std::mutex> lock(mu_);
  const std::uint64_t round = ++round_;
  bool queued = false;
  for (Item& item : items) {
    auto it = entries_.find(item.key);
    if (it != entries_.end()) {
      it->second->round = round;
      continue;
    }
    lock.unlock();
    EntryPtr e = make_entry(item.key, std::move(item.task));
    lock.lock();
    e->round = round;
    entries_[item.key] = e;
    if (e->state == State::queued) {
      speculative_.push_back(e);
      queued = true;
    }
  }
  // Speculation named in neither this call nor the previous one, and never demanded, is stale.
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second->demands == 0 && it->second->round + 1 < round) {
      drop(it->second);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  lock.unlock();
  if (queued) work_cv_.notify_all();
}

bool CompilePipeline::ready(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  return it != entries_.end() && it->second->state == State::done;
}

bool CompilePipeline::settled(const std::string& key) const {
  auto it = entries_.find(key);
  // Gone (cancelled) or finished: take() answers at once either way.
  return it == entries_.end() || it->second->state == State::done || it->second->state == State::dropped;
}

bool CompilePipeline::wait_any_for(const std::vector<std::string>& keys, double seconds) {
  std::unique_lock<std::mutex> lock(mu_);
  bool promoted = false;
  for (const std::string& k : keys) {
    auto it = entries_.find(k);
    if (it == entries_.end()) continue;
    Entry& e = *it->second;
    if (e.state == State::queued && e.demands == 0 && !e.promoted) {
      e.promoted = promoted = true;
      demanded_.push_back(it->second);
    }
  }
  if (promoted) work_cv_.notify_all();
  auto any = [&] {
    for (const std::string& k : keys)
      if (settled(k)) return true;
    return false;
  };
  if (any()) return true;
  if (!(seconds > 0)) return false;
  maybe_grow();
  ScopedTimer timer(stats_.wait_ms);  // under mu_ again when the wait returns
  return done_cv_.wait_for(lock, std::chrono::duration<double>(seconds), any);
}

void CompilePipeline::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, e] : entries_) {
    if (e->state == State::running) e->abandoned = true;  // the task may stop early (compile_abandoned())
    drop(e);
  }
  entries_.clear();
  demanded_.clear();
  speculative_.clear();
  done_cv_.notify_all();
}

void CompilePipeline::consume_in_order(std::vector<Item> items,
                                       const std::function<void(std::size_t, CompileResult)>& consume) {
  try {
    for (Item& item : items) submit(item.key, std::move(item.task));
    for (std::size_t i = 0; i < items.size(); ++i) consume(i, take(items[i].key));
  } catch (...) {
    cancel();
    throw;
  }
}

std::size_t CompilePipeline::wait_any(const std::vector<std::string>& keys, const std::vector<bool>& consumed) {
  std::unique_lock<std::mutex> lock(mu_);
  auto ready = [&]() -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (consumed[i]) continue;
      if (settled(keys[i])) return i;
    }
    return std::nullopt;
  };
  if (std::optional<std::size_t> i = ready()) return *i;
  maybe_grow();
  std::optional<std::size_t> found;
  ScopedTimer timer(stats_.wait_ms);  // under mu_ again when the wait returns
  done_cv_.wait(lock, [&] { return (found = ready()).has_value(); });
  return *found;
}

void CompilePipeline::consume_as_ready(std::vector<Item> items,
                                       const std::function<void(std::size_t, CompileResult)>& consume) {
  try {
    std::vector<std::string> keys;
    keys.reserve(items.size());
    for (Item& item : items) {
      keys.push_back(item.key);
      submit(item.key, std::move(item.task));
    }
    std::vector<bool> consumed(items.size(), false);
    for (std::size_t left = items.size(); left > 0; --left) {
      const std::size_t i = wait_any(keys, consumed);
      consumed[i] = true;
      consume(i, take(keys[i]));
    }
  } catch (...) {
    cancel();
    throw;
  }
}

CompileStats CompilePipeline::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace autotune
