#include "tuner/online/search.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "tuner/core/error.hpp"
#include "tuner/core/stats.hpp"
#include "tuner/core/text.hpp"

namespace autotune::online {

namespace {
// Proposals of configurations already judged answered in one to_prepare() call, at most: a strategy that only
// repeats itself has nothing more to propose.
constexpr std::size_t kMaxRepeats = 1000;
}  // namespace

const char* to_string(Stage s) {
  switch (s) {
    case Stage::preparing:
      return "preparing";
    case Stage::ready:
      return "ready";
    case Stage::verifying:
      return "verifying";
    case Stage::sampling:
      return "sampling";
    case Stage::done:
      return "done";
    case Stage::failed:
      return "failed";
  }
  return "unknown";
}

double Entry::median_ms() const {
  return samples_ms.empty() ? std::numeric_limits<double>::infinity() : stats::median(samples_ms);
}

Search::Search(const ParameterSpace& space, std::size_t reference, std::unique_ptr<search::Strategy> strategy, Budget b)
    : space_(space), reference_(reference), strategy_(std::move(strategy)), budget_(b) {
  if (reference >= space_.size()) throw UsageError("online search: the reference configuration is not in the space");
  if (!strategy_) throw UsageError("online search: no strategy");
  budget_.samples = std::max<std::size_t>(budget_.samples, 1);
  budget_.ahead = std::max<std::size_t>(budget_.ahead, 1);
  budget_.verifying = std::max<std::size_t>(budget_.verifying, 1);
  Entry r;
  r.index = reference;
  r.stage = Stage::sampling;
  r.reference = true;
  entries_.push_back(r);
  owed_.push_back(0);
  if (budget_.launches == 0) settle("no online budget");
}

Entry* Search::find(std::size_t index) {
  for (Entry& e : entries_)
    if (e.index == index) return &e;
  return nullptr;
}

const Entry* Search::entry(std::size_t index) const {
  for (const Entry& e : entries_)
    if (e.index == index) return &e;
  return nullptr;
}

Entry& Search::at(std::size_t index) {
  Entry* e = find(index);
  if (e == nullptr) throw UsageError("online search: configuration " + std::to_string(index) + " was never proposed");
  return *e;
}

void Search::tell(std::size_t index) {
  const auto i = static_cast<std::size_t>(find(index) - entries_.data());
  if (owed_[i] == 0 || settled_) return;
  const Entry& e = entries_[i];
  search::Observation o;
  o.index = index;
  o.value = e.stage == Stage::failed ? std::numeric_limits<double>::infinity() : e.median_ms();
  strategy_->observe(std::vector<search::Observation>(owed_[i], o));
  owed_[i] = 0;
}

bool Search::judged(const Entry& e) const {
  return e.stage == Stage::done || e.stage == Stage::failed || (e.reference && e.samples_ms.size() >= budget_.samples);
}

std::vector<std::size_t> Search::to_prepare() {
  std::vector<std::size_t> out;
  std::size_t repeats = 0;
  // A strategy proposes its next batch once it has the results of the last (as in a tuning session).
  while (out.empty() && !settled_ && !exhausted_ &&
         std::all_of(owed_.begin(), owed_.end(), [](std::size_t n) { return n == 0; })) {
    const std::vector<std::size_t> p = strategy_->propose(budget_.ahead);
    if (p.empty()) {
      exhausted_ = true;
      break;
    }
    for (const std::size_t idx : p) {
      if (idx >= space_.size()) continue;
      if (Entry* e = find(idx)) {
        ++owed_[static_cast<std::size_t>(e - entries_.data())];
        if (judged(*e)) tell(idx);  // answered from what is known
        continue;
      }
      Entry e;
      e.index = idx;
      entries_.push_back(e);
      owed_.push_back(1);
      out.push_back(idx);
    }
    repeats += p.size();
    if (out.empty() && repeats >= kMaxRepeats) exhausted_ = true;
  }
  return out;
}

void Search::prepared(std::size_t index) {
  Entry& e = at(index);
  if (e.stage == Stage::preparing) e.stage = Stage::ready;
}

void Search::failed(std::size_t index, TrialStatus status, const std::string& message) {
  Entry& e = at(index);
  if (e.reference) throw UsageError("online search: the reference configuration cannot be excluded");
  e.stage = Stage::failed;
  e.status = status;
  e.message = message;
  tell(index);
}

bool Search::work_left() const {
  return std::any_of(entries_.begin(), entries_.end(), [this](const Entry& e) {
    if (e.reference) return false;
    return e.stage == Stage::preparing || e.stage == Stage::ready || e.stage == Stage::verifying ||
           (e.stage == Stage::sampling && e.samples_ms.size() < budget_.samples);
  });
}

void Search::settle(std::string reason) {
  settled_ = true;
  reason_ = std::move(reason);
}

std::size_t Search::best() const {
  std::size_t best = reference_;
  double best_ms = std::numeric_limits<double>::infinity();
  for (const Entry& e : entries_) {
    if (!e.timed()) continue;
    const double m = e.median_ms();
    if (m < best_ms) {
      best_ms = m;
      best = e.index;
    }
  }
  return best;
}

Step Search::next(double now_s, bool can_verify) {
  if (!start_s_) start_s_ = now_s;
  Step s;
  if (!settled_) {
    if (used_ >= budget_.launches)
      settle("budget of " + std::to_string(budget_.launches) + " launches spent");
    else if (budget_.seconds > 0 && now_s - *start_s_ >= budget_.seconds)
      settle("time budget of " + fmt("%g", budget_.seconds) + " s spent");
    else if (exhausted_ && !work_left())
      settle("the strategy has nothing more to propose");
  }
  Entry& ref = entries_.front();
  if (settled_) {
    s.run = best();
    return s;
  }
  // A verified candidate runs as the application's launch until it has its samples.
  for (Entry& e : entries_) {
    if (e.reference || e.stage != Stage::sampling || e.issued >= budget_.samples) continue;
    ++e.issued;
    ++used_;
    s.run = e.index;
    s.sample = true;
    s.searching = true;
    return s;
  }
  // A prepared one is verified against the reference's outputs of this launch.
  const auto verifying = static_cast<std::size_t>(
      std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.stage == Stage::verifying; }));
  if (can_verify && verifying < budget_.verifying) {
    for (Entry& e : entries_) {
      if (e.stage != Stage::ready) continue;
      e.stage = Stage::verifying;
      ++used_;
      ++ref.issued;
      s.run = ref.index;
      s.sample = true;
      s.verify = e.index;
      s.searching = true;
      return s;
    }
  }
  // Nothing to try in this launch: the best so far, and the reference until it has its samples.
  if (ref.issued < budget_.samples) {
    ++ref.issued;
    s.run = ref.index;
    s.sample = true;
    return s;
  }
  s.run = best();
  return s;
}

void Search::verified(std::size_t index, bool ok, const std::string& message) {
  Entry& e = at(index);
  if (e.stage != Stage::verifying) return;  // failed meanwhile
  if (!ok) {
    failed(index, TrialStatus::wrong_result, message);
    return;
  }
  e.stage = Stage::sampling;
}

void Search::sampled(std::size_t index, double ms) {
  Entry& e = at(index);
  if (e.stage == Stage::failed) return;
  e.samples_ms.push_back(ms);
  if (e.reference) {
    if (e.samples_ms.size() == budget_.samples) tell(index);
    return;
  }
  if (e.stage == Stage::sampling && e.samples_ms.size() >= budget_.samples) {
    e.stage = Stage::done;
    tell(index);
  }
}

}  // namespace autotune::online
