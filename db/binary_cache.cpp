#include "db/binary_cache.hpp"

#include <iostream>
#include <vector>

namespace autotune::db {

DbBinaryCache::DbBinaryCache(Database& db, Writes writes) : db_(db) {
  if (writes == Writes::in_background) writer_ = std::thread([this] { run(); });
}

DbBinaryCache::~DbBinaryCache() {
  if (!writer_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  writer_.join();  // the writer empties the queue before it ends
  std::lock_guard<std::mutex> lock(mu_);
  if (failure_) {
    try {
      std::rethrow_exception(failure_);
    } catch (const std::exception& e) {
      std::cerr << "warning: compiled kernels not kept in the binary cache " << db_.path() << ": " << e.what() << "\n";
    }
  }
}

void DbBinaryCache::throw_failure_locked() {
  if (!failure_) return;
  std::exception_ptr f = failure_;
  failure_ = nullptr;  // said once
  std::rethrow_exception(f);
}

std::optional<CompileResult> DbBinaryCache::queued_locked(const std::string& key) const {
  auto it = pending_.find(key);
  if (it == pending_.end()) return std::nullopt;
  CompileResult r = it->second.result;
  r.cached = true;
  return r;
}

std::optional<CompileResult> DbBinaryCache::get(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    throw_failure_locked();
    if (std::optional<CompileResult> r = queued_locked(key)) return r;
  }
  std::optional<BinaryRow> b;
  {
    std::lock_guard<std::mutex> lock(db_mu_);
    b = db_.binary(key);
  }
  if (!b) {
    // Written meanwhile? The writer takes a key off the queue only after its transaction committed.
    std::lock_guard<std::mutex> lock(mu_);
    return queued_locked(key);
  }
  CompileResult r;
  r.ok = b->ok;
  r.log = b->log;
  r.cubin = b->image;
  r.cached = true;
  return r;
}

void DbBinaryCache::put(const std::string& key, const CompileResult& r) {
  if (!writer_.joinable()) {
    std::lock_guard<std::mutex> lock(db_mu_);
    db_.put_binary({key, r.ok, r.log, r.cubin});
    std::lock_guard<std::mutex> count(mu_);
    ++stored_;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    throw_failure_locked();
    if (pending_.insert_or_assign(key, Pending{r, ++puts_}).second) order_.push_back(key);
  }
  work_cv_.notify_one();
}

void DbBinaryCache::flush() {
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return (order_.empty() && writing_ == 0) || failure_; });
  throw_failure_locked();
}

std::size_t DbBinaryCache::stored() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stored_;
}

void DbBinaryCache::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || !order_.empty(); });
    if (order_.empty()) return;  // stopping, nothing left
    // Everything queued so far, in one transaction; the entries stay in pending_ (get() answers from there)
    // until they are committed.
    std::vector<std::pair<std::string, Pending>> round;
    for (const std::string& key : order_) round.emplace_back(key, pending_.at(key));
    writing_ = round.size();
    lock.unlock();
    std::exception_ptr failed;
    try {
      std::lock_guard<std::mutex> db_lock(db_mu_);
      db_.transaction([&] {
        for (const auto& [key, p] : round) db_.put_binary({key, p.result.ok, p.result.log, p.result.cubin});
      });
    } catch (...) {
      failed = std::current_exception();
    }
    lock.lock();
    // The round was the front of order_ (put() appends only keys not queued yet). A key put again meanwhile (a
    // newer result) stays queued, at the front; the rest leave the queue.
    std::deque<std::string> still;
    for (const auto& [key, p] : round) {
      auto it = pending_.find(key);
      if (it == pending_.end()) continue;
      if (it->second.put == p.put)
        pending_.erase(it);
      else
        still.push_back(key);
    }
    order_.erase(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(round.size()));
    order_.insert(order_.begin(), still.begin(), still.end());
    writing_ = 0;
    if (failed) {
      failure_ = failed;
    } else {
      stored_ += round.size();
    }
    done_cv_.notify_all();
  }
}

}  // namespace autotune::db
