// The compile pipeline (tuner/core/compile.hpp), directly and through the synthetic backend's simulated
// compile stage in full sessions.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "search/strategy.hpp"
#include "tuner/core/compile.hpp"
#include "tuner/core/error.hpp"
#include "tuner/session/session.hpp"
#include "tuner/sim/synthetic.hpp"
#include "synthetic_session.hpp"

using namespace autotune;

namespace {

/// Holds tasks until opened; records the order in which tasks started.
class Gate {
 public:
  void open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void pass(const std::string& key) {
    std::unique_lock<std::mutex> lock(mu_);
    started_.push_back(key);
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  /// Waits until n tasks have started (or a generous deadline passes).
  bool started(std::size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return started_.size() >= n; });
  }
  std::vector<std::string> order() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  std::vector<std::string> started_;
};

CompilePipeline::Task gated(Gate& gate, const std::string& key, bool ok = true) {
  return [&gate, key, ok] {
    gate.pass(key);
    CompileResult r;
    r.ok = ok;
    r.log = key;
    return r;
  };
}

CompilePipeline::Task instant(const std::string& key, std::atomic<int>* runs = nullptr, int sleep_us = 0) {
  return [key, runs, sleep_us] {
    if (sleep_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    if (runs) ++*runs;
    CompileResult r;
    r.ok = true;
    r.log = key;
    r.cubin.assign(key.begin(), key.end());
    return r;
  };
}

using Fixture = autotune_test::SessionFixture;

sim::CompileStage stage(int jobs, BinaryCache* cache = nullptr, double compile_ms = 0) {
  sim::CompileStage s;
  s.jobs = jobs;
  s.cache = cache;
  s.compile_ms = compile_ms;
  return s;
}

/// Records the prefetch hints and evaluated batches the session hands to the backend.
class RecordingBackend : public sim::SyntheticBackend {
 public:
  std::vector<std::vector<Config>> hints, batches, expected;
  std::vector<std::string> calls;  // "expect" and "prepare", in order
  std::size_t devices = 1;
  std::size_t parallel_devices() const override { return devices; }
  // Always ready, so that a round under a time limit is one evaluate() call and `batches` are the rounds.
  bool ready(const Config&) override { return true; }
  void expect(const Workload& w, const ProblemKey& p, const std::vector<Config>& configs) override {
    calls.push_back("expect");
    expected.push_back(configs);
    SyntheticBackend::expect(w, p, configs);
  }
  void prepare(const Workload& w, const ProblemKey& p, std::uint64_t seed) override {
    calls.push_back("prepare");
    SyntheticBackend::prepare(w, p, seed);
  }
  void prefetch(const std::vector<Config>& configs) override {
    hints.push_back(configs);
    SyntheticBackend::prefetch(configs);
  }
  std::vector<Measurement> evaluate(const std::vector<Config>& configs) override {
    batches.push_back(configs);
    return SyntheticBackend::evaluate(configs);
  }
};

}  // namespace

TEST_CASE("pipeline results come out in the order they are taken, whatever the thread count", "[cpu][compile]") {
  for (int jobs : {1, 3, 8}) {
    CompilePipeline pipe(jobs, nullptr);
    CHECK(pipe.jobs() == jobs);
    std::vector<CompilePipeline::Item> items;
    for (int i = 0; i < 40; ++i) {
      const std::string key = "k" + std::to_string(i);
      items.push_back({key, instant(key, nullptr, (i * 37) % 5 * 200)});  // uneven durations
    }
    std::vector<std::string> got;
    pipe.consume_in_order(items, [&](std::size_t i, const CompileResult& r) {
      CHECK(r.log == items[i].key);
      got.push_back(r.log);
    });
    REQUIRE(got.size() == 40);
    CHECK(got.front() == "k0");
    CHECK(got.back() == "k39");
    CompileStats st = pipe.stats();
    CHECK(st.compiled == 40);
    CHECK(st.taken == 40);
    CHECK(st.cache_hits == 0);
  }
}

TEST_CASE("a key is compiled once however often it is submitted or prefetched", "[cpu][compile]") {
  CompilePipeline pipe(4, nullptr);
  std::atomic<int> runs{0};
  pipe.prefetch({{"a", instant("a", &runs)}, {"b", instant("b", &runs)}});
  pipe.submit("a", instant("a", &runs));
  pipe.submit("a", instant("a", &runs));
  CHECK(pipe.take("a").log == "a");
  CHECK(pipe.take("a").log == "a");
  CHECK_THROWS_AS(pipe.take("a"), Error);  // both submits are used up
  pipe.submit("b", instant("b", &runs));
  CHECK(pipe.take("b").log == "b");
  CHECK(runs == 2);
  CHECK(pipe.stats().compiled == 2);
}

TEST_CASE("ready says whether a key's result can be taken without waiting", "[cpu][compile]") {
  CompilePipeline pipe(2, nullptr);
  Gate gate;
  pipe.prefetch({{"a", gated(gate, "a")}});
  REQUIRE(gate.started(1));
  CHECK_FALSE(pipe.ready("a"));  // running
  CHECK_FALSE(pipe.ready("b"));  // never named
  gate.open();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!pipe.ready("a") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(pipe.ready("a"));
  pipe.submit("a", gated(gate, "a"));
  CHECK(pipe.take("a").log == "a");
  CHECK(pipe.stats().compiled == 1);  // asking compiled nothing more
}

TEST_CASE("wait_any_for returns when one key is done, or false when the time passes first", "[cpu][compile]") {
  Gate gate;
  CompilePipeline pipe(2, nullptr);
  pipe.prefetch({{"a", gated(gate, "a")}, {"b", gated(gate, "b")}});
  REQUIRE(gate.started(2));
  CHECK_FALSE(pipe.wait_any_for({"a", "b"}, 0.05));  // both still compiling
  CHECK(pipe.wait_any_for({"nowhere"}, 10));         // nothing compiles it: take() would not wait for a thread
  gate.open();
  CHECK(pipe.wait_any_for({"a", "b"}, 20));
  CHECK((pipe.ready("a") || pipe.ready("b")));

  // The keys waited for are compiled next, ahead of the speculation queued before them.
  Gate one;
  CompilePipeline single(1, nullptr);
  single.prefetch({{"x", gated(one, "x")}, {"p", gated(one, "p")}, {"q", gated(one, "q")}, {"c", gated(one, "c")}});
  REQUIRE(one.started(1));                     // x holds the only thread
  CHECK_FALSE(single.wait_any_for({"c"}, 0));  // 0: no wait
  one.open();
  REQUIRE(one.started(4));
  CHECK(one.order() == std::vector<std::string>{"x", "c", "p", "q"});
}

TEST_CASE("submitted tasks run before speculative ones", "[cpu][compile]") {
  Gate gate;
  CompilePipeline pipe(1, nullptr);
  pipe.prefetch({{"s0", gated(gate, "s0")}, {"s1", gated(gate, "s1")}, {"s2", gated(gate, "s2")}});
  REQUIRE(gate.started(1));  // the only thread holds s0
  pipe.submit("d0", gated(gate, "d0"));
  pipe.submit("s2", gated(gate, "s2"));  // promoted ahead of s1
  gate.open();
  CHECK(pipe.take("d0").log == "d0");
  CHECK(pipe.take("s2").log == "s2");
  pipe.submit("s1", gated(gate, "s1"));
  CHECK(pipe.take("s1").log == "s1");
  CHECK(gate.order() == std::vector<std::string>{"s0", "d0", "s2", "s1"});
}

TEST_CASE("stale speculation is dropped: skipped if not started, discarded if running", "[cpu][compile]") {
  Gate gate;
  CompilePipeline pipe(1, nullptr);
  pipe.prefetch({{"a0", gated(gate, "a0")}, {"a1", gated(gate, "a1")}, {"a2", gated(gate, "a2")}});
  REQUIRE(gate.started(1));  // a0 running
  pipe.prefetch({{"b0", gated(gate, "b0")}});
  pipe.prefetch({{"c0", gated(gate, "c0")}, {"b0", gated(gate, "b0")}});  // the a's are named in neither call
  CompileStats st = pipe.stats();
  CHECK(st.cancelled == 2);  // a1, a2
  gate.open();
  pipe.submit("c0", gated(gate, "c0"));
  pipe.submit("b0", gated(gate, "b0"));
  CHECK(pipe.take("c0").ok);
  CHECK(pipe.take("b0").ok);
  st = pipe.stats();
  CHECK(st.unused == 1);  // a0 finished after it was dropped
  CHECK(st.compiled == 3);
  const auto order = gate.order();
  CHECK(std::find(order.begin(), order.end(), "a1") == order.end());
}

TEST_CASE("cancel and destruction skip tasks that have not started", "[cpu][compile]") {
  std::atomic<int> runs{0};
  Gate gate;
  {
    CompilePipeline pipe(1, nullptr);
    for (int i = 0; i < 20; ++i) {
      const std::string key = "k" + std::to_string(i);
      pipe.submit(key, [&gate, &runs, key] {
        ++runs;
        gate.pass(key);
        return CompileResult{};
      });
    }
    REQUIRE(gate.started(1));
    pipe.cancel();
    CHECK_THROWS_WITH(pipe.take("k5"), Catch::Contains("never submitted, or cancelled"));
    CHECK(pipe.stats().cancelled == 19);
    gate.open();
    // Still usable after a cancel.
    pipe.submit("again", instant("again"));
    CHECK(pipe.take("again").log == "again");
  }
  CHECK(runs == 1);
  std::atomic<int> slow{0};
  {
    CompilePipeline pipe(2, nullptr);  // destroyed with queued work: joins without running it
    for (int i = 0; i < 50; ++i) pipe.submit("s" + std::to_string(i), instant("s", &slow, 20000));
  }
  CHECK(slow <= 4);  // what the two threads had started (a slow machine may let them start a second one)
}

TEST_CASE("cancel and destruction abandon running tasks: a task that asks compile_abandoned() returns at once",
          "[cpu][compile]") {
  CHECK_FALSE(compile_abandoned());  // outside a pipeline's task
  // A task that would run 20 s unless abandoned, the way a compile worker's wait is (tuner/cuda/compile_worker.cpp).
  std::atomic<bool> started{false}, saw{false};
  auto slow = [&started, &saw] {
    started = true;
    for (int i = 0; i < 2000 && !compile_abandoned(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    saw = compile_abandoned();
    return CompileResult{};
  };
  const auto t0 = std::chrono::steady_clock::now();
  {
    CompilePipeline pipe(2, nullptr);
    pipe.prefetch({{"slow", slow}});
    while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }  // the destructor cancels: the running task is told, and the join does not wait the 20 s
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(saw);
  CHECK(s < 10);
  // A task that runs to its end, taken as usual, is never told it was abandoned.
  CompilePipeline pipe(2, nullptr);
  std::atomic<bool> told{false};
  pipe.submit("kept", [&told] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    told = compile_abandoned();
    return CompileResult{};
  });
  pipe.take("kept");
  CHECK_FALSE(told);
}

TEST_CASE("a task's exception reaches take() and is not cached", "[cpu][compile]") {
  MemoryBinaryCache cache;
  CompilePipeline pipe(2, &cache);
  pipe.submit("bad", []() -> CompileResult { throw EnvironmentError("compiler unusable"); });
  CHECK_THROWS_AS(pipe.take("bad"), EnvironmentError);
  CHECK(cache.size() == 0);
}

TEST_CASE("the cache answers first, and fresh results and failures are stored when taken", "[cpu][compile]") {
  MemoryBinaryCache cache;
  Gate gate;
  gate.open();
  {
    CompilePipeline pipe(2, &cache);
    pipe.consume_in_order({{"ok", gated(gate, "ok")}, {"fails", gated(gate, "fails", false)}},
                          [](std::size_t, const CompileResult& r) { CHECK_FALSE(r.cached); });
    CHECK(cache.size() == 2);
    CHECK(pipe.stats().failed == 1);
  }
  CompilePipeline pipe(2, &cache);
  std::atomic<int> runs{0};
  pipe.submit("ok", instant("ok", &runs));
  pipe.submit("fails", instant("fails", &runs));
  CompileResult a = pipe.take("ok"), b = pipe.take("fails");
  CHECK(a.ok);
  CHECK(a.cached);
  CHECK_FALSE(b.ok);
  CHECK(b.cached);
  CHECK(b.log == "fails");
  CHECK(runs == 0);
  CompileStats st = pipe.stats();
  CHECK(st.cache_hits == 2);
  CHECK(st.compiled == 0);
  CHECK(st.failed == 1);
}

TEST_CASE("a prefetched result is not compiled again and the consumer does not wait for it", "[cpu][compile]") {
  CompilePipeline pipe(2, nullptr);
  std::atomic<int> runs{0};
  std::vector<CompilePipeline::Item> items;
  items.reserve(6);
  for (int i = 0; i < 6; ++i) items.push_back({"p" + std::to_string(i), instant("p", &runs, 1000)});
  pipe.prefetch(items);
  for (int spin = 0; spin < 2000 && pipe.stats().compiled < 6; ++spin)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(pipe.stats().compiled == 6);
  const CompileStats before = pipe.stats();
  pipe.consume_in_order(items, [](std::size_t, const CompileResult& r) { CHECK(r.ok); });
  const CompileStats d = pipe.stats() - before;
  CHECK(d.compiled == 0);
  CHECK(d.taken == 6);
  CHECK(d.wait_ms == 0);
  CHECK(runs == 6);
}

TEST_CASE("brute force names its next batch through upcoming()", "[cpu][compile]") {
  Fixture f;
  ParameterSpace space = f.spec.space(f.p, sim::SyntheticBackend::fake_device(), f.w);
  auto s = search::make_strategy("brute_force", space, 1);
  std::vector<std::size_t> next = s->upcoming(5);
  CHECK(next == std::vector<std::size_t>{0, 1, 2, 3, 4});
  CHECK(s->propose(5) == next);
  CHECK(s->upcoming(3) == std::vector<std::size_t>{5, 6, 7});
  CHECK(s->upcoming(3) == std::vector<std::size_t>{5, 6, 7});  // asking changes nothing
  CHECK(search::make_strategy("random_sample", space, 1)->upcoming(4).empty());
}

TEST_CASE("sessions compile ahead across batches through prefetch", "[cpu][compile][session]") {
  Fixture f;
  RecordingBackend be;
  be.enable_compile_stage(stage(4));
  session::Options opt;
  opt.batch = 8;
  session::Result r = session::run(f.spec, be, *f.db, f.w, f.p, opt);
  CHECK(r.evaluated == f.valid());
  REQUIRE(be.batches.size() >= 3);
  REQUIRE(be.hints.size() == be.batches.size());
  for (std::size_t k = 0; k < be.batches.size(); ++k) {
    const auto& hint = be.hints[k];
    const auto& batch = be.batches[k];
    // The hint names the batch first, then (except at the end) the next batch.
    REQUIRE(hint.size() >= batch.size());
    CHECK(std::vector<Config>(hint.begin(), hint.begin() + static_cast<std::ptrdiff_t>(batch.size())) == batch);
    if (k + 1 < be.batches.size())
      CHECK(std::vector<Config>(hint.begin() + static_cast<std::ptrdiff_t>(batch.size()), hint.end()) ==
            be.batches[k + 1]);
    else
      CHECK(hint.size() == batch.size());
  }
  // Nothing compiled twice, nothing wasted.
  CHECK(be.compilations() == f.valid());
  CHECK(r.timing.compiled == f.valid());
  CHECK(r.timing.unused_compiles == 0);
  CHECK(r.timing.compile_jobs == 4);
}

TEST_CASE("sessions name the first batch before the set-up, so that it compiles while the inputs are made",
          "[cpu][compile][session]") {
  Fixture f;
  RecordingBackend be;
  session::Options opt;
  opt.batch = 8;
  session::run(f.spec, be, *f.db, f.w, f.p, opt);
  REQUIRE(be.calls.size() == 2);
  CHECK(be.calls[0] == "expect");
  CHECK(be.calls[1] == "prepare");
  REQUIRE(be.expected.size() == 1);
  REQUIRE_FALSE(be.batches.empty());
  CHECK(be.expected[0] == be.batches[0]);
  // Resumed: what the database answers is not named (nothing to compile); a budget caps the list.
  RecordingBackend again;
  session::run(f.spec, again, *f.db, f.w, f.p, opt);
  REQUIRE(again.expected.size() == 1);
  CHECK(again.expected[0].empty());
  Fixture g;
  RecordingBackend capped;
  opt.budget = 3;
  session::run(g.spec, capped, *g.db, g.w, g.p, opt);
  REQUIRE(capped.expected.size() == 1);
  CHECK(capped.expected[0].size() == 3);
}

TEST_CASE("with several devices a fixed order goes out in a batch per device, other strategies as asked",
          "[cpu][compile][session]") {
  Fixture f;
  RecordingBackend two;
  two.devices = 2;
  session::Options opt;
  opt.batch = 8;
  const session::Result r = session::run(f.spec, two, *f.db, f.w, f.p, opt);  // brute force
  REQUIRE(two.batches.size() >= 2);
  CHECK(two.batches.front().size() == 16);
  REQUIRE(two.expected.size() == 1);
  CHECK(two.expected.front().size() == 16);
  CHECK(two.hints.front().size() == 32);  // this batch and the next
  // The same trials as one device with batches of 8.
  Fixture g;
  RecordingBackend one;
  session::run(g.spec, one, *g.db, g.w, g.p, opt);
  CHECK(one.batches.front().size() == 8);
  std::vector<Config> a, b;
  for (const auto& batch : two.batches) a.insert(a.end(), batch.begin(), batch.end());
  for (const auto& batch : one.batches) b.insert(b.end(), batch.begin(), batch.end());
  CHECK(a == b);
  CHECK(r.evaluated == f.valid());
  // A strategy whose proposals depend on the batch keeps the batch asked for.
  Fixture h;
  RecordingBackend random;
  random.devices = 2;
  opt.strategy = "random_sample";
  opt.budget = 20;
  session::run(h.spec, random, *h.db, h.w, h.p, opt);
  REQUIRE_FALSE(random.batches.empty());
  CHECK(random.batches.front().size() == 8);
}

TEST_CASE("a fixed order's rounds grow to about a second of measuring, each named to the backend before it starts",
          "[cpu][compile][session]") {
  Fixture f;
  RecordingBackend be;
  sim::CompileStage st = stage(2);
  st.run_ms = 20;  // a round of 2 takes about 40 ms: a second would hold 50, past the cap of 8 x 2
  be.enable_compile_stage(st);
  session::Options opt;
  opt.batch = 2;
  const session::Result r = session::run(f.spec, be, *f.db, f.w, f.p, opt);  // brute force
  CHECK(r.evaluated == f.valid());
  REQUIRE(be.batches.size() >= 4);
  CHECK(be.batches[0].size() == 2);
  CHECK(be.batches[1].size() == 2);  // named as upcoming before the first round was measured
  CHECK(be.batches[2].size() == 16);
  for (const auto& batch : be.batches) CHECK(batch.size() <= 16);
  // Every hint names its batch and then exactly the next one, so the compile threads work on what comes.
  REQUIRE(be.hints.size() == be.batches.size());
  for (std::size_t k = 0; k + 1 < be.batches.size(); ++k) {
    const auto& hint = be.hints[k];
    REQUIRE(hint.size() == be.batches[k].size() + be.batches[k + 1].size());
    CHECK(std::vector<Config>(hint.begin() + static_cast<std::ptrdiff_t>(be.batches[k].size()), hint.end()) ==
          be.batches[k + 1]);
  }
  // Under a time limit the rounds stay near a twentieth of it (1 s: 50 ms, about 10 configurations of 5 ms).
  Fixture g;
  RecordingBackend limited;
  st.run_ms = 5;
  limited.enable_compile_stage(st);
  opt.time_limit_s = 1.0;
  session::run(g.spec, limited, *g.db, g.w, g.p, opt);
  REQUIRE(limited.batches.size() >= 3);
  CHECK(limited.batches[2].size() >= 3);
  CHECK(limited.batches[2].size() <= 12);
}

TEST_CASE("pipeline threads are put to work while the consumer waits and never past jobs", "[cpu][compile]") {
  auto items_of = [](int n, int sleep_us) {
    std::vector<CompilePipeline::Item> items;
    for (int i = 0; i < n; ++i) {
      const std::string key = "k" + std::to_string(i);
      items.push_back({key, instant(key, nullptr, sleep_us)});
    }
    return items;
  };
  {
    CompilePipeline pipe(2, nullptr);  // fewer than the initial threads: all of them at once
    CHECK(pipe.stats().active_threads == 2);
  }
  {
    // Compilations slower than the consumer: it waits, and threads are added one at a time up to the cap.
    CompilePipeline pipe(16, nullptr);
    CHECK(pipe.stats().active_threads == CompilePipeline::kInitialThreads);
    std::size_t taken = 0;
    pipe.consume_in_order(items_of(200, 3000), [&](std::size_t, const CompileResult&) { ++taken; });
    CHECK(taken == 200);
    CHECK(pipe.stats().active_threads > CompilePipeline::kInitialThreads);
    CHECK(pipe.stats().active_threads <= 16);
    CHECK(pipe.jobs() == 16);
  }
  {
    // A consumer slower than the compilations never waits for long: no thread is added while nothing is queued.
    CompilePipeline pipe(16, nullptr);
    std::vector<CompilePipeline::Item> items = items_of(20, 0);
    pipe.consume_in_order(
        items, [&](std::size_t, const CompileResult&) { std::this_thread::sleep_for(std::chrono::milliseconds(5)); });
    CHECK(pipe.stats().active_threads <= CompilePipeline::kInitialThreads + 1);
  }
  {
    // Threads not put to work wait on the same condition: a single task must still reach a working thread (a
    // wake-up that went to one of the idle ones would leave it queued forever). Many rounds of one task each.
    CompilePipeline pipe(64, nullptr);
    for (int round = 0; round < 200; ++round) {
      const std::string key = "r" + std::to_string(round);
      pipe.submit(key, instant(key));
      CHECK(pipe.take(key).log == key);
    }
  }
}

TEST_CASE("jobs 1 and jobs 8 record identical trials", "[cpu][compile][session]") {
  auto run_with = [](int jobs) {
    Fixture f;
    sim::SyntheticBackend be;
    be.enable_compile_stage(stage(jobs, nullptr, 0.2));
    be.inject_failure_when("VEC", 4, TrialStatus::compile_error);
    be.inject_failure_when("ITEMS", 8, TrialStatus::wrong_result);
    session::Options opt;
    opt.batch = 7;
    session::Result r = session::run(f.spec, be, *f.db, f.w, f.p, opt);
    std::vector<std::string> rows;
    for (const auto& t : f.trials(r.session_id))
      rows.push_back(t.config_json + " " + to_string(t.m.status) + " " + std::to_string(t.m.median_ns) + " " +
                     std::to_string(t.m.compile_ms) + " " + t.m.log);
    return rows;
  };
  const auto one = run_with(1);
  const auto eight = run_with(8);
  CHECK(one.size() == Fixture().valid());
  CHECK(one == eight);
}

TEST_CASE("binary cache: misses compile, hits do not, failures stay failures", "[cpu][compile][session]") {
  MemoryBinaryCache cache;
  Fixture f1;
  sim::SyntheticBackend cold;
  cold.enable_compile_stage(stage(3, &cache));
  cold.inject_failure_when("VEC", 4, TrialStatus::compile_error);
  session::Result r1 = session::run(f1.spec, cold, *f1.db, f1.w, f1.p, {});
  CHECK(cold.compilations() == f1.valid());
  CHECK(cache.size() == f1.valid());
  CHECK(r1.timing.cache_hits == 0);
  CHECK(r1.timing.compile_failures > 0);

  // A fresh trial database with the same cache; the failure is no longer injected, yet the cached one stands.
  Fixture f2;
  sim::SyntheticBackend warm;
  warm.enable_compile_stage(stage(3, &cache));
  session::Result r2 = session::run(f2.spec, warm, *f2.db, f2.w, f2.p, {});
  CHECK(warm.compilations() == 0);
  CHECK(r2.timing.compiled == 0);
  CHECK(r2.timing.cache_hits == f2.valid());
  CHECK(r2.timing.compile_failures == r1.timing.compile_failures);
  const auto t1 = f1.trials(r1.session_id), t2 = f2.trials(r2.session_id);
  REQUIRE(t1.size() == t2.size());
  for (std::size_t i = 0; i < t1.size(); ++i) {
    CHECK(t1[i].config_hash == t2[i].config_hash);
    CHECK(t1[i].m.status == t2[i].m.status);
    CHECK(t1[i].m.log == t2[i].m.log);
    if (t1[i].m.status == TrialStatus::compile_error) CHECK_THAT(t2[i].m.log, Catch::Contains("VEC=4"));
    CHECK(t2[i].m.compile_ms == 0);
  }
}

TEST_CASE("a rerun on the same database compiles nothing", "[cpu][compile][session]") {
  Fixture f;
  sim::SyntheticBackend first;
  first.enable_compile_stage(stage(2));
  session::run(f.spec, first, *f.db, f.w, f.p, {});
  sim::SyntheticBackend again;
  again.enable_compile_stage(stage(2));
  session::Result r = session::run(f.spec, again, *f.db, f.w, f.p, {});
  CHECK(r.reused == f.valid());
  CHECK(again.compilations() == 0);
  CHECK(again.evaluations() == 0);
}

TEST_CASE("an environment failure mid-batch cancels the queued compilations", "[cpu][compile][session]") {
  Fixture f;
  sim::SyntheticBackend be;
  be.enable_compile_stage(stage(1, nullptr, 2));
  be.fail_environment_after(5);
  session::Options opt;
  opt.batch = 16;
  CHECK_THROWS_AS(session::run(f.spec, be, *f.db, f.w, f.p, opt), EnvironmentError);
  const BackendStats st = be.stats();
  CHECK(st.compile.cancelled > 0);
  CHECK(be.compilations() < f.valid());
}

TEST_CASE("a time limit stops a round between two configurations, not after the whole round",
          "[cpu][compile][session]") {
  // One compile thread at 40 ms a configuration: the first round (32 configurations) would take 1.3 s, more than
  // six times the limit.
  Fixture f;
  REQUIRE(f.valid() > 32);
  sim::SyntheticBackend be;
  be.enable_compile_stage(stage(1, nullptr, 40));
  session::Options opt;
  opt.time_limit_s = 0.2;
  const session::Result r = session::run(f.spec, be, *f.db, f.w, f.p, opt);
  CHECK(r.evaluated >= 1);
  CHECK(r.evaluated < 16);  // the round of 32 was cut where the limit passed
  // What was measured is recorded, what was dropped is not.
  CHECK(f.trials(r.session_id).size() == r.evaluated);
}

TEST_CASE("the time split adds up to the wall time", "[cpu][compile][session]") {
  Fixture f;
  sim::SyntheticBackend be;
  sim::CompileStage s = stage(2, nullptr, 1);
  s.run_ms = 1;
  be.enable_compile_stage(s);
  session::Result r = session::run(f.spec, be, *f.db, f.w, f.p, {});
  const session::TimeSplit& t = r.timing;
  CHECK(t.wall_s > 0);
  CHECK(t.compile_s >= 0.9 * f.valid() * 1e-3);  // every compilation slept 1 ms on a compile thread
  CHECK(t.benchmark_s >= 0.9 * f.valid() * 1e-3);
  CHECK(t.database_s > 0);
  const double parts = t.setup_s + t.idle_gpu_s + t.verify_s + t.benchmark_s + t.database_s + t.other_s;
  CHECK(parts == Approx(t.wall_s).epsilon(1e-6));
  CHECK(t.compiled == f.valid());
}

namespace {

/// Drives a ConcurrencyRule like a pipeline whose consumer always waits with tasks queued. Each round, every
/// active thread finishes one task: task t's own CPU time is cpu_of(t) (the configuration's compile cost, which
/// varies from task to task), and its wall time is that divided by share(k), the fraction of a core a thread
/// gets with k at work. First tasks take first_ms. Returns the active counts after each round.
std::vector<std::size_t> drive(ConcurrencyRule& rule, const std::function<double(std::size_t)>& share,
                               std::size_t rounds, const std::function<double(std::size_t)>& cpu_of,
                               double first_ms = 100) {
  std::vector<bool> worked(rule.cap(), false);
  std::vector<std::size_t> trace;
  std::size_t task = 0;
  for (std::size_t r = 0; r < rounds; ++r) {
    rule.on_wait(true);
    const std::size_t k = rule.active();
    for (std::size_t i = 0; i < k; ++i, ++task) {
      const double cpu = cpu_of(task);
      rule.on_finished(i, worked[i] ? cpu / share(k) : first_ms, worked[i] ? cpu : first_ms, !worked[i]);
      worked[i] = true;
    }
    trace.push_back(rule.active());
  }
  return trace;
}

/// Compile costs that vary 10x from one configuration to the next (small and large tiles alternate unevenly).
double mixed_cost(std::size_t t) { return (t % 3 == 0) ? 200.0 : (t % 7 == 0 ? 60.0 : 20.0); }

}  // namespace

TEST_CASE("concurrency rule: grows while more threads do more compile work at once, never past the cap",
          "[cpu][compile]") {
  // Free cores (each thread gets 95% of one): growth to the cap, whatever the configurations' compile costs.
  ConcurrencyRule rule(12, 4);
  CHECK(rule.active() == 4);
  const auto trace = drive(
      rule, [](std::size_t) { return 0.95; }, 80, mixed_cost);
  CHECK(trace.back() == 12);
  CHECK(rule.shrinks() == 0);
  CHECK(std::is_sorted(trace.begin(), trace.end()));
  // Not queued, or the added thread has not finished a task: no growth.
  ConcurrencyRule idle(8, 2);
  CHECK_FALSE(idle.on_wait(false));
  CHECK(idle.on_wait(true));
  CHECK_FALSE(idle.on_wait(true));  // the third thread has not finished its first task
  idle.on_finished(2, 100, 100, true);
  CHECK(idle.on_wait(true));
  CHECK(idle.active() == 4);
  // CPU time not measured (0): never a reason to stop a thread.
  ConcurrencyRule blind(10, 4);
  drive(
      blind, [](std::size_t k) { return k <= 5 ? 1.0 : 5.0 / static_cast<double>(k); }, 80,
      [](std::size_t) { return 0.0; });
  CHECK(blind.shrinks() == 0);
  CHECK(blind.active() == 10);
}

TEST_CASE("concurrency rule: shrinks when one more thread does not add compile work", "[cpu][compile]") {
  // Six cores free for compilation: past 6 threads they share them (each gets 6/k of a core), so the 7th adds
  // nothing. The varying compile costs must not hide that, nor make it shrink earlier.
  auto share = [](std::size_t k) { return k <= 6 ? 0.95 : 6.0 * 0.95 / static_cast<double>(k); };
  ConcurrencyRule rule(32, 4);
  const auto trace = drive(rule, share, 120, mixed_cost);
  CHECK(rule.shrinks() == 1);
  CHECK(rule.ceiling() == 6);
  CHECK(trace.back() == 6);
  CHECK(*std::max_element(trace.begin(), trace.end()) == 7);  // it tried 7 once, then stayed at 6
  // A slowdown in CPU time, not in waits (each thread keeps its core, but past 8 threads every compilation costs 5x
  // the CPU time): the level that caused it is given back.
  ConcurrencyRule cpu_bound(32, 4);
  std::size_t k_now = 4;
  drive(
      cpu_bound,
      [&](std::size_t k) {
        k_now = k;
        return 0.95;
      },
      120, [&](std::size_t t) { return mixed_cost(t) * (k_now <= 8 ? 1.0 : 5.0); });
  CHECK(cpu_bound.shrinks() == 1);
  CHECK(cpu_bound.active() == 8);
  // First compilations (start-up) do not count: threads whose first task is slow are not stopped for it.
  ConcurrencyRule startup(8, 4);
  drive(
      startup, [](std::size_t) { return 0.95; }, 60, mixed_cost, 5000);
  CHECK(startup.shrinks() == 0);
  CHECK(startup.active() == 8);
}

TEST_CASE("compile threads: a process's share of the node's cores", "[cpu][compile]") {
  CHECK(compile_jobs_share(32, 32, 1) == 32);  // alone on the node
  CHECK(compile_jobs_share(32, 32, 2) == 16);  // two unbound ranks share it
  CHECK(compile_jobs_share(32, 32, 3) == 10);
  CHECK(compile_jobs_share(8, 32, 2) == 8);  // bound by the launcher: the affinity set is its share already
  CHECK(compile_jobs_share(0, 16, 2) == 8);  // affinity unknown: the online cores
  CHECK(compile_jobs_share(2, 2, 4) == 1);   // never below one
  CHECK(compile_jobs_share(0, 0, 1) == 1);
  CHECK(default_compile_jobs() >= 1);
  CHECK(default_compile_jobs(1) >= default_compile_jobs(64));
  // A pipeline with the default cap never puts more threads to work than the share.
  CompilePipeline pipe(0, nullptr);
  CHECK(static_cast<std::size_t>(pipe.jobs()) == default_compile_jobs());
}

TEST_CASE("consume_as_ready hands out ready results first, each item once, and the results stay with their items",
          "[cpu][compile]") {
  CompilePipeline pipe(4, nullptr);
  std::vector<CompilePipeline::Item> items;
  // Item 0 compiles for 300 ms, the others at once: in order, the consumer would wait for item 0 first.
  items.push_back({"slow", instant("slow", nullptr, 300000)});
  for (int i = 1; i < 6; ++i) items.push_back({"k" + std::to_string(i), instant("k" + std::to_string(i))});
  items.push_back({"k3", instant("k3")});  // the same key twice: compiled once, consumed twice
  std::vector<std::size_t> order;
  std::vector<std::string> logs(items.size());
  pipe.consume_as_ready(items, [&](std::size_t i, const CompileResult& r) {
    order.push_back(i);
    logs[i] = r.log;
  });
  REQUIRE(order.size() == items.size());
  CHECK(order.back() == 0);  // the slow one came last
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) CHECK(sorted[i] == i);
  for (std::size_t i = 0; i < items.size(); ++i) CHECK(logs[i] == items[i].key);
  CHECK(pipe.stats().compiled == 6);
  // A task that throws: the exception reaches the caller and the rest is cancelled.
  std::vector<CompilePipeline::Item> bad = {{"t1", instant("t1")},
                                            {"t2", []() -> CompileResult { throw Error("compile task failed"); }}};
  CHECK_THROWS_WITH(pipe.consume_as_ready(bad, [](std::size_t, const CompileResult&) {}),
                    Catch::Contains("compile task failed"));
}
