#include "tuner/sim/replay.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <set>

#include "db/sources.hpp"
#include "tuner/core/error.hpp"

namespace autotune::sim {

ReplayBackend::ReplayBackend(const db::Database& from, std::string kernel, const std::string& device_name,
                             double delay_ms)
    : delay_ms_(delay_ms), from_(from), kernel_(std::move(kernel)) {
  db::TrialFilter f;
  f.kernel = kernel_;
  device_ = db::recorded_board(from_, device_name, f);
}

void ReplayBackend::prepare(const Workload& w, const ProblemKey& p, std::uint64_t) {
  db::TrialFilter f;
  f.kernel = kernel_;
  f.device_id = device_.id;
  f.workload = w.key();
  f.problem = p.key();
  recorded_.clear();
  for (const auto& t : from_.trials(f)) recorded_[t.config_hash] = t.m;
  what_ = kernel_ + " " + case_key(w, p) + " on " + device_.info.name;
  if (recorded_.empty()) {
    db::TrialFilter any;
    any.kernel = kernel_;
    any.device_id = device_.id;
    std::set<std::string> present;
    for (const auto& t : from_.trials(any)) present.insert(t.workload + " " + t.problem);
    std::string list;
    for (const auto& x : present) list += (list.empty() ? "" : ", ") + x;
    throw UsageError("no recorded trials of " + what_ + " in " + from_.path() + " (recorded: " + list + ")");
  }
}

std::vector<std::pair<std::string, std::size_t>> ReplayBackend::recorded_protocols(const Workload& w,
                                                                                   const ProblemKey& p) const {
  db::TrialFilter f;
  f.kernel = kernel_;
  f.device_id = device_.id;
  f.workload = w.key();
  f.problem = p.key();
  std::map<std::string, std::size_t> count;
  for (const auto& t : from_.trials(f))
    if (!t.m.protocol.empty()) ++count[t.m.protocol];
  std::vector<std::pair<std::string, std::size_t>> out(count.begin(), count.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::vector<Config> ReplayBackend::recorded_configs(const Workload& w, const ProblemKey& p) const {
  db::TrialFilter f;
  f.kernel = kernel_;
  f.device_id = device_.id;
  f.workload = w.key();
  f.problem = p.key();
  std::vector<Config> out;
  std::set<std::string> seen;
  for (const auto& t : from_.trials(f))
    if (seen.insert(t.config_hash).second) out.push_back(Config::from_json(t.config_json));
  return out;
}

std::optional<std::vector<Config>> ReplayBackend::space_limit(const Workload& w, const ProblemKey& p) const {
  if (!limit_space_) return std::nullopt;
  return recorded_configs(w, p);
}

std::string ReplayBackend::protocol_line(const Workload& w, const ProblemKey& p) const {
  std::string line;
  for (const auto& [protocol, n] : recorded_protocols(w, p))
    line += (line.empty() ? "" : "; ") + protocol + " (" + std::to_string(n) + (n == 1 ? " trial)" : " trials)");
  return line.empty() ? "" : "recorded with: " + line;
}

std::vector<Measurement> ReplayBackend::evaluate(const std::vector<Config>& configs) {
  std::vector<Measurement> out;
  out.reserve(configs.size());
  for (const Config& c : configs) {
    auto it = recorded_.find(c.hash());
    if (it == recorded_.end())
      throw UsageError("simulation: configuration " + c.to_json() + " of " + what_ + " has no recorded trial");
    if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay_ms_));
    Measurement m = it->second;
    m.compile_ms = 0;
    m.protocol = "replay:" + m.protocol;
    out.push_back(m);
  }
  return out;
}

}  // namespace autotune::sim
