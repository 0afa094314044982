#include "tuner/cuda/trial_observer.hpp"

#include <utility>

#include "tuner/cuda/counter_observer.hpp"
#include "tuner/cuda/observer.hpp"

namespace autotune::cuda::detail {
namespace {

/// One kind of observer: whether a request asks for it, and how it opens (nullptr and *why where it cannot).
struct ObserverKind {
  const char* name;
  bool (*wanted)(const TimeRequest& q);
  std::unique_ptr<TrialObserver> (*open)(const ObserverSite& site, const TimeRequest& q, std::string* why);
};

/// Every observer, in the order they act after the timed samples: NVML's energy window, then the counters' replay.
const ObserverKind kObservers[] = {
    {"nvml", [](const TimeRequest& q) { return q.observe; }, open_nvml_observer},
    {"counters", [](const TimeRequest& q) { return !q.metrics.empty(); }, open_counter_observer},
};
constexpr std::size_t kKinds = sizeof(kObservers) / sizeof(kObservers[0]);

}  // namespace

void add_method(Observation& o, const std::string& method) {
  if (method.empty()) return;
  o.method += (o.method.empty() ? "" : " + ") + method;
}

struct ObserverSet::Slot {
  std::unique_ptr<TrialObserver> observer;
  bool tried = false;
  std::string note;  // why it did not open
};

ObserverSet::ObserverSet(ObserverSite site) : site_(std::move(site)) {
  for (std::size_t i = 0; i < kKinds; ++i) slots_.push_back(std::make_unique<Slot>());
}

ObserverSet::~ObserverSet() = default;

std::vector<TrialObserver*> ObserverSet::for_request(const TimeRequest& q) {
  std::vector<TrialObserver*> out;
  for (std::size_t i = 0; i < kKinds; ++i) {
    if (!kObservers[i].wanted(q)) continue;
    Slot& s = *slots_[i];
    if (s.observer != nullptr && !s.observer->serves(q)) {
      s.observer.reset();
      s.tried = false;
    }
    if (!s.tried) {
      s.tried = true;
      s.note.clear();
      s.observer = kObservers[i].open(site_, q, &s.note);
    }
    if (s.observer != nullptr) out.push_back(s.observer.get());
  }
  return out;
}

std::string ObserverSet::notes(const TimeRequest& q) const {
  std::string out;
  for (std::size_t i = 0; i < kKinds; ++i) {
    if (!kObservers[i].wanted(q)) continue;
    const Slot& s = *slots_[i];
    const std::string note = s.observer != nullptr ? s.observer->note() : s.note;
    if (!note.empty()) out += (out.empty() ? "" : "; ") + std::string(kObservers[i].name) + ": " + note;
  }
  return out;
}

void ObserverSet::close() noexcept {
  for (auto& s : slots_) {
    s->observer.reset();
    s->tried = false;
  }
}

}  // namespace autotune::cuda::detail
