// The compile stage of a backend, without knowing what compiles: a CompilePipeline runs compile tasks on a
// pool of threads ahead of their consumer, answers from a BinaryCache first, and hands results out in the
// consumer's order. The CUDA backend feeds it NVRTC compilations; the synthetic backend feeds it simulated
// ones, so that the cpu tests exercise the same code.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tuner/core/compile_concurrency.hpp"

namespace autotune {

/// Outcome of one compilation. A failure is a result (ok = false, log says why), not an exception.
struct CompileResult {
  bool ok = false;
  std::vector<unsigned char> cubin;  // the compiled image (a CUBIN for the CUDA backend)
  std::string log;                   // compiler log (always kept for failures)
  double ms = 0;                     // wall time of the compilation
  /// What the compiling thread spent (getrusage RUSAGE_THREAD around the compilation; 0 where not measured, e.g.
  /// a cached result): CPU time (user + system), context switches (voluntary: it waited; involuntary: it was
  /// preempted) and minor page faults.
  double cpu_ms = 0;
  long long voluntary_switches = 0, involuntary_switches = 0, minor_faults = 0;
  bool cached = false;               // true if taken from a BinaryCache
  /// C++ entry points compiled as NVRTC name expressions: expression ("my_kernel<float, 4>") -> lowered
  /// (mangled) name in the image. Filled by a fresh compilation only (not kept by a BinaryCache): a loaded
  /// module resolves C++ names itself (tuner/cuda/plan_binding.hpp).
  std::map<std::string, std::string> lowered_names;
};

/// Persistent store of compiled images, failures included, by a key that covers everything the image depends
/// on (source, options, compiler version, architecture). A CompilePipeline calls it only from its consumer's
/// thread.
class BinaryCache {
 public:
  virtual ~BinaryCache() = default;
  virtual std::optional<CompileResult> get(const std::string& key) = 0;
  virtual void put(const std::string& key, const CompileResult& r) = 0;
};

/// A BinaryCache in memory (tests, and sessions that want no persistence). Thread-safe.
class MemoryBinaryCache : public BinaryCache {
 public:
  std::optional<CompileResult> get(const std::string& key) override;
  void put(const std::string& key, const CompileResult& r) override;
  std::size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, CompileResult> entries_;
};

/// Counters of a CompilePipeline; times in milliseconds. Subtracting two snapshots gives the figures of the
/// work in between.
struct CompileStats {
  std::size_t compiled = 0;    // compilations run to completion (speculative ones that were never used too)
  std::size_t taken = 0;       // results handed out by take()
  std::size_t cache_hits = 0;  // of those, answered by the cache (never compiled)
  std::size_t failed = 0;      // of those, compile failures (fresh or cached)
  std::size_t unused = 0;      // speculative compilations that finished but were dropped before anyone took them
  std::size_t cancelled = 0;   // tasks dropped before they started
  double thread_ms = 0;        // sum of the compilations' wall times on the pool threads
  /// Sums over the compilations run of CompileResult's figures: the compiler's own wall time (in a worker process:
  /// without the messages to it), its CPU time, context switches and minor page faults.
  double compiler_ms = 0, cpu_ms = 0;
  long long voluntary_switches = 0, involuntary_switches = 0, minor_faults = 0;
  double wait_ms = 0;          // wall time take() waited for an unfinished compilation (the consumer idled)
  double cache_ms = 0;         // time spent in BinaryCache::get/put
  /// Pool threads put to work so far (CompilePipeline starts few and adds them while the consumer waits); not a
  /// sum: operator- keeps this side's value.
  std::size_t active_threads = 0;
  std::size_t shrinks = 0;  // threads stopped because adding them did not pay (ConcurrencyRule's verdict)

  CompileStats operator-(const CompileStats& o) const;
};

/// For a task running on a CompilePipeline's thread: true once cancel() (or the pipeline's destruction) dropped
/// it, so that its result will be discarded and it may return at once. False outside a pipeline's task.
bool compile_abandoned();

/// Runs compile tasks on a fixed pool of threads.
/// - submit(key, task) asks for a result that take(key) will collect; results are collected in the order the
///   consumer chooses (usually submission order) and are the same whatever the number of threads.
/// - prefetch(items) names what will probably be submitted soon: those tasks run when no submitted task waits,
///   so that compilation runs ahead of the consumer across its batches. Each call replaces the speculation of
///   the call before the previous one: an entry named in neither of the last two calls and never submitted is
///   dropped (skipped if not started, its result discarded otherwise).
/// - One key is compiled at most once while an entry for it exists: a submit of a key that is queued, running
///   or done (e.g. prefetched) waits for that entry instead of compiling again.
/// - The cache is asked first (on the consumer's thread), so a hit never compiles; fresh results, failures
///   included, are put into the cache when taken.
/// - cancel() and the destructor skip every task not yet started and wait for the running ones, which they mark
///   abandoned: a task that asks compile_abandoned() may stop early (the compile workers are killed), so that a
///   session ended by its time limit does not wait for the slowest compilation in flight.
/// - Threads are put to work as needed (ConcurrencyRule, compile_concurrency.hpp): kInitialThreads at first, one
///   more each time the consumer has to wait for a result while tasks are queued, and one fewer when the last one
///   added did not add compile work at once or made each compilation cost far more CPU time; jobs is the cap.
/// Thread-safety: submit, prefetch, take, cancel and stats are for one consumer thread; tasks run on the pool's
/// threads and must be thread-safe.
class CompilePipeline {
 public:
  using Task = std::function<CompileResult()>;
  struct Item {
    std::string key;
    Task task;
  };

  static constexpr std::size_t kInitialThreads = 4;

  /// jobs <= 0: default_compile_jobs() (this process's share of the node's cores). cache may be null; it must
  /// outlive the pipeline.
  CompilePipeline(int jobs, BinaryCache* cache);
  ~CompilePipeline();
  CompilePipeline(const CompilePipeline&) = delete;
  CompilePipeline& operator=(const CompilePipeline&) = delete;

  /// The cap: most threads at once.
  int jobs() const { return static_cast<int>(rule_.cap()); }

  /// Demands the result for key (compiled by task unless cached or already in the pipeline). Each submit is
  /// matched by one take.
  void submit(const std::string& key, Task task);
  /// Blocks until key's result is ready and returns it. Rethrows the exception of a task that threw; throws
  /// Error if key was not submitted or was cancelled.
  CompileResult take(const std::string& key);
  /// Speculative tasks (see the class comment), in the order they should run.
  void prefetch(std::vector<Item> items);
  /// Whether key's result is there to take without waiting (compiled, or found in the cache by an earlier
  /// submit). Never compiles or asks the cache.
  bool ready(const std::string& key) const;
  /// Blocks until the entry of one of keys is done (or gone: take() would not wait for the compiler then) or
  /// `seconds` pass (0: does not wait); true when one is, false when the time passed first. The queued ones among
  /// keys are compiled next, ahead of other speculation, as if submitted. A wait puts one more thread to work as
  /// take()'s does, and counts as time waited for the compiler. For the one consumer thread.
  bool wait_any_for(const std::vector<std::string>& keys, double seconds);
  /// Drops every entry: tasks not yet started are skipped, running ones finish and are discarded.
  void cancel();
  /// Submits every item, then hands the results to consume(i, result) in the items' order, so that the consumer
  /// works on item i while the threads compile the ones after it. If anything throws, cancel() and rethrow.
  void consume_in_order(std::vector<Item> items, const std::function<void(std::size_t, CompileResult)>& consume);
  /// Like consume_in_order, but hands out whichever result is ready first (the lowest index among the ready ones),
  /// so that the consumer (the GPU) never waits for a slow compilation while a later one is done. Every item is
  /// consumed exactly once; consume(i, ...) must not depend on the order.
  void consume_as_ready(std::vector<Item> items, const std::function<void(std::size_t, CompileResult)>& consume);

  CompileStats stats() const;

 private:
  enum class State { queued, running, done, dropped };
  struct Entry {
    State state = State::queued;
    Task task;
    std::optional<CompileResult> result;
    std::exception_ptr error;
    int demands = 0;          // submits not yet taken
    std::uint64_t round = 0;  // last prefetch call that named it
    bool from_cache = false;
    bool stored = false;      // put into the cache already
    bool promoted = false;    // queued in demanded_ by wait_any_for without a submit
    std::atomic<bool> abandoned{false};  // running when cancel() dropped it (read by compile_abandoned())
  };
  using EntryPtr = std::shared_ptr<Entry>;

  void work(std::size_t index);
  /// Under mu_: the consumer is about to wait; asks rule_ whether to put one more thread to work.
  void maybe_grow();
  /// Under mu_: whether take(key) would answer without waiting for the compiler (key done, dropped or gone).
  bool settled(const std::string& key) const;
  /// Blocks until the entry of one of keys[i] with !consumed[i] is done (or dropped) and returns the lowest such i.
  std::size_t wait_any(const std::vector<std::string>& keys, const std::vector<bool>& consumed);
  /// A new entry for key: done at once on a cache hit, else queued. Caller holds no lock.
  EntryPtr make_entry(const std::string& key, Task task);
  void drop(const EntryPtr& e);  // mu_ held

  BinaryCache* cache_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // a task was queued, or stop_
  std::condition_variable done_cv_;  // a task finished
  std::map<std::string, EntryPtr> entries_;
  std::deque<EntryPtr> demanded_, speculative_;
  std::uint64_t round_ = 0;
  bool stop_ = false;
  ConcurrencyRule rule_;              // threads 0 .. rule_.active()-1 take tasks
  std::vector<bool> worked_;          // per thread: it has finished a task (its next ones are steady)
  std::vector<std::thread> threads_;  // started as rule_ puts them to work; written under mu_
  CompileStats stats_;
};

}  // namespace autotune
