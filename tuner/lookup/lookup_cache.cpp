// The cached, thread-safe Lookup class over the lookup levels (levels.hpp). Figures: docs/lookup.md.
#include <atomic>
#include <charconv>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>

#include "db/database.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/lookup/levels.hpp"
#include "tuner/lookup/lookup.hpp"

namespace autotune {

namespace {

void append_int(std::string& out, long long v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

}  // namespace

// ---- Lookup ---------------------------------------------------------------------------------------------

namespace {

/// Default warning sink: stderr, at most once per distinct message in the process.
void warn_stderr(const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(mu);
  if (!seen.insert(message).second) return;
  std::cerr << "autotune: warning: " << message << std::endl;
}

thread_local std::string t_key;  // scratch for cache keys: no allocation once it has grown

// A per-thread copy of the answers a thread has asked for, in front of the shared cache: a repeated lookup
// then touches no cache line that other threads write (the shared_mutex's counter, a shared_ptr's reference
// count), so concurrent threads do not slow each other down. Each copy has its own control block. Entries
// are keyed by the Lookup's id (never reused) and dropped when the Lookup's generation changes.
struct ThreadAnswers {
  std::uint64_t generation = 0;
  std::unordered_map<std::string, std::shared_ptr<const lookup::Answer>> answers;
};
thread_local std::unordered_map<std::uint64_t, ThreadAnswers> t_answers;
std::atomic<std::uint64_t> g_next_lookup_id{1};

}  // namespace

struct Lookup::Impl {
  std::string path;
  Options options;

  // Slow path: the database, specs and prepared rows (the Database is used under this mutex only).
  std::mutex mu;
  std::unique_ptr<db::Database> db;
  std::string error;
  bool warned = false;
  std::map<std::string, std::shared_ptr<const TuningSpec>> specs;         // by name
  std::map<std::string, std::shared_ptr<lookup::detail::Prepared>> prepared;      // by spec identity + workload

  // Fast path: answers by question (and each thread's copy, t_answers).
  mutable std::shared_mutex cache_mu;
  std::unordered_map<std::string, AnswerPtr> answers;
  const std::uint64_t id = g_next_lookup_id.fetch_add(1);
  std::atomic<std::uint64_t> generation{1};  // bumped whenever `answers` is cleared

  /// Clears the shared answers and invalidates every thread's copies.
  void clear_answers() {
    std::unique_lock<std::shared_mutex> lock(cache_mu);
    answers.clear();
    generation.fetch_add(1, std::memory_order_release);
  }

  void open() {
    db.reset();
    error.clear();
    try {
      db = db::Database::open(path, db::Database::Mode::read_only);
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (!error.empty()) warn("tuning database unavailable, lookups give spec defaults: " + error);
  }

  void warn(const std::string& message) {
    if (warned) return;
    warned = true;
    if (options.warn) options.warn(message);
    else warn_stderr(message);
  }

  AnswerPtr cached(const std::string& key) const {
    ThreadAnswers& mine = t_answers[id];
    const std::uint64_t gen = generation.load(std::memory_order_acquire);
    if (mine.generation != gen) {
      mine.answers.clear();
      mine.generation = gen;
    }
    auto own = mine.answers.find(key);
    if (own != mine.answers.end()) return own->second;
    AnswerPtr shared;
    {
      std::shared_lock<std::shared_mutex> lock(cache_mu);
      auto it = answers.find(key);
      if (it == answers.end()) return nullptr;
      shared = it->second;
    }
    auto copy = std::make_shared<const lookup::Answer>(*shared);
    mine.answers.emplace(key, copy);
    return copy;
  }

  std::shared_ptr<const TuningSpec> spec_named(const std::string& name) {
    auto it = specs.find(name);
    if (it != specs.end()) return it->second;
    auto s = std::make_shared<const TuningSpec>(specs::load_spec(name));
    specs.emplace(name, s);
    return s;
  }

  /// The answer to the question of `key`: the calling thread's copy of the cached one (one identity per
  /// thread), else computed under mu with the spec that spec_of() names (then cached, unless the database
  /// failed).
  template <class SpecOf>
  AnswerPtr answer(const std::string& key, SpecOf spec_of, const Workload& w, const DeviceKey& device,
                   const DeviceInfo* props, const ProblemKey& problem) {
    if (auto hit = cached(key)) return hit;
    std::lock_guard<std::mutex> lock(mu);
    AnswerPtr a = compute(key, spec_of(), w, device, props, problem);
    AnswerPtr mine = cached(key);
    return mine ? mine : a;
  }

  /// The prepared rows of (spec, w), read once per spec identity and workload; throws where a query fails.
  std::shared_ptr<lookup::detail::Prepared> prepared_for(const TuningSpec& spec, const Workload& w) {
    const std::string id = spec.name + '\x1f' + spec.source_hash() + '\x1f' + spec.spec_hash() + '\x1f' + w.key() +
                           (spec.deterministic ? "\x1f"
                                                 "deterministic"
                                               : "");
    auto it = prepared.find(id);
    if (it != prepared.end()) return it->second;
    auto prep = lookup::detail::prepare(*db, spec, w, options.objective);
    prepared.emplace(id, prep);
    return prep;
  }

  /// Computes (and caches unless the database failed) the answer; called with the cache key in `key`.
  AnswerPtr compute(const std::string& key, const TuningSpec& spec, const Workload& w, const DeviceKey& device,
                    const DeviceInfo* props, const ProblemKey& problem) {
    if (auto hit = cached(key)) return hit;  // another thread answered while this one waited for mu
    spec.check_workload(w);
    spec.check_problem(problem);
    std::shared_ptr<lookup::detail::Prepared> prep;
    std::string unavailable;
    bool cacheable = true;
    if (db) {
      try {
        prep = prepared_for(spec, w);
      } catch (const std::exception& e) {
        // A query failed (locked, damaged): this answer degrades, and is not cached so that a later
        // lookup tries again.
        unavailable = std::string("reading the tuning database failed: ") + e.what();
        warn(unavailable);
        cacheable = false;
      }
    } else {
      unavailable = "tuning database unavailable: " + error;
    }
    // Level borrowed reads the other workloads' rows (cached as this workload's); a failed read leaves that
    // workload out of this answer, which is then not cached.
    const lookup::detail::PreparedOf others = [&](const Workload& other) -> std::shared_ptr<lookup::detail::Prepared> {
      try {
        return prepared_for(spec, other);
      } catch (const std::exception& e) {
        warn(std::string("reading the tuning database failed: ") + e.what());
        cacheable = false;
        return nullptr;
      }
    };
    auto a = std::make_shared<const lookup::Answer>(lookup::detail::answer(
        prep.get(), lookup::detail::Question{spec, w, device, props, problem, &others}, unavailable));
    if (cacheable) {
      std::unique_lock<std::shared_mutex> lock(cache_mu);
      answers.emplace(key, a);
    }
    return a;
  }
};

namespace {

void append_question(std::string& k, const Workload& w, const ProblemKey& p) {
  k += '\x1f';
  k += w.dtype;
  k += '/';
  k += w.op;
  k += '\x1f';
  for (const auto& [name, v] : p.dims) {
    k += name;
    k += '=';
    append_int(k, v);
    k += ',';
  }
}

void append_device(std::string& k, const DeviceKey& d) {
  k += '\x1f';
  k += d.name;
  k += '\x1f';
  append_int(k, d.cc);
}

void append_device(std::string& k, const DeviceInfo& d) {
  k += '\x1f';
  append_normalised_name(k, d.name);
  k += '\x1f';
  append_int(k, d.cc);
  for (long long v : {static_cast<long long>(d.sm_count), static_cast<long long>(d.max_threads_per_block),
                      static_cast<long long>(d.max_shared_memory_per_block),
                      static_cast<long long>(d.max_shared_memory_per_block_optin),
                      static_cast<long long>(d.warp_size)}) {
    k += ':';
    append_int(k, v);
  }
}

}  // namespace

namespace {

/// Cache key of a question about a kernel by name (DeviceKey or DeviceInfo: the latter adds its properties).
/// Built in this thread's scratch string: no allocation once it has grown.
template <class Device>
const std::string& named_key(const std::string& kernel, const Device& device, const Workload& w, const ProblemKey& p) {
  std::string& k = t_key;
  k.assign("N");
  k += kernel;
  append_device(k, device);
  append_question(k, w, p);
  return k;
}

/// Cache key of a question about a spec object (identity: name, source hash, spec hash; and whether it asks for
/// deterministic configurations).
template <class Device>
std::string spec_key(const TuningSpec& spec, const Device& device, const Workload& w, const ProblemKey& p) {
  std::string k =
      (spec.deterministic ? "D" : "S") + spec.name + '\x1f' + spec.source_hash() + '\x1f' + spec.spec_hash();
  append_device(k, device);
  append_question(k, w, p);
  return k;
}

}  // namespace

Lookup::Lookup(std::string db_path) : Lookup(std::move(db_path), Options{}) {}

Lookup::Lookup(std::string db_path, Options options) : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(db_path);
  impl_->options = std::move(options);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->open();
}

Lookup::~Lookup() = default;

std::shared_ptr<Lookup> Lookup::shared(const std::string& db_path) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<Lookup>> registry;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = registry[db_path];
  if (auto existing = slot.lock()) return existing;
  auto fresh = std::make_shared<Lookup>(db_path);
  slot = fresh;
  return fresh;
}

Lookup::AnswerPtr Lookup::best(const std::string& kernel, const Workload& w, const DeviceKey& device,
                               const ProblemKey& problem) const {
  const std::string& k = named_key(kernel, device, w, problem);
  return impl_->answer(k, [&]() -> const TuningSpec& { return *impl_->spec_named(kernel); }, w, device, nullptr,
                       problem);
}

Lookup::AnswerPtr Lookup::best_on(const std::string& kernel, const Workload& w, const DeviceInfo& device,
                                  const ProblemKey& problem) const {
  const std::string& k = named_key(kernel, device, w, problem);
  return impl_->answer(k, [&]() -> const TuningSpec& { return *impl_->spec_named(kernel); }, w,
                       DeviceKey::of(device), &device, problem);
}

Lookup::AnswerPtr Lookup::best(const TuningSpec& spec, const Workload& w, const DeviceKey& device,
                               const ProblemKey& problem) const {
  const std::string k = spec_key(spec, device, w, problem);
  return impl_->answer(k, [&]() -> const TuningSpec& { return spec; }, w, device, nullptr, problem);
}

Lookup::AnswerPtr Lookup::best_on(const TuningSpec& spec, const Workload& w, const DeviceInfo& device,
                                  const ProblemKey& problem) const {
  const std::string k = spec_key(spec, device, w, problem);
  return impl_->answer(k, [&]() -> const TuningSpec& { return spec; }, w, DeviceKey::of(device), &device, problem);
}

void Lookup::add_spec(TuningSpec spec) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const std::string name = spec.name;
  impl_->specs[name] = std::make_shared<const TuningSpec>(std::move(spec));
  impl_->prepared.clear();  // a spec edited in memory keeps its spec_text: do not trust its identity
  impl_->clear_answers();
}

std::vector<DeviceInfo> Lookup::devices() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<DeviceInfo> out;
  if (!impl_->db) return out;
  try {
    for (const auto& d : impl_->db->devices()) out.push_back(d.info);
  } catch (const std::exception& e) {
    impl_->warn(std::string("reading the tuning database failed: ") + e.what());
  }
  return out;
}

bool Lookup::available() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->db != nullptr;
}

std::string Lookup::error() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->error;
}

const std::string& Lookup::path() const { return impl_->path; }

void Lookup::reload() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->clear_answers();
  impl_->prepared.clear();
  impl_->open();
}

}  // namespace autotune
