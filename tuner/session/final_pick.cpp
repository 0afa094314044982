#include "tuner/session/final_pick.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "tuner/core/error.hpp"
#include "tuner/core/stats.hpp"

namespace autotune::session {

namespace {

// The normal quantile of a two-sided 95% interval: the order statistics of the median's interval.
constexpr double kZ95 = 1.96;

/// Half the width of a ~95% distribution-free interval of the median of `sorted` (order statistics at
/// (n -+ z sqrt(n)) / 2), relative to nothing: in the values' unit.
double median_halfwidth(const std::vector<double>& sorted) {
  const double n = static_cast<double>(sorted.size());
  if (sorted.size() < 2) return 0;
  const double d = kZ95 * std::sqrt(n);
  const auto last = static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::clamp(std::floor((n - d) / 2), 0.0, last));
  const auto hi = static_cast<std::size_t>(std::clamp(std::ceil((n + d) / 2) - 1, 0.0, last));
  return (sorted[hi] - sorted[lo]) / 2;
}

}  // namespace

std::size_t Pick::tie_size() const {
  std::size_t n = 0;
  for (const PickEntry& e : entries) n += e.in_tie_set ? 1 : 0;
  return n;
}

std::vector<std::size_t> candidates(const std::vector<Leader>& ranked, std::size_t k) {
  std::vector<std::size_t> out;
  if (ranked.empty() || k == 0) return out;
  const Leader& best = ranked.front();
  out.push_back(0);
  for (std::size_t i = 1; i < ranked.size() && out.size() < k; ++i) {
    const double noise = std::max({kNoiseFloor, best.spread, ranked[i].spread});
    if (ranked[i].median_ns <= best.median_ns * (1 + noise)) out.push_back(i);
  }
  return out;
}

Pick pick(const std::vector<std::vector<double>>& samples) {
  std::vector<std::size_t> used;
  std::size_t rounds = 0;
  for (std::size_t c = 0; c < samples.size(); ++c) {
    if (samples[c].empty()) continue;
    rounds = used.empty() ? samples[c].size() : std::min(rounds, samples[c].size());
    used.push_back(c);
  }
  if (used.empty()) throw std::invalid_argument("final pick: no candidate has an interleaved sample");
  Pick p;
  p.rounds = rounds;
  // Each sample over its round's median across the candidates: a round that ran slow for all is divided out.
  std::vector<double> round_median(rounds);
  for (std::size_t r = 0; r < rounds; ++r) {
    std::vector<double> v;
    v.reserve(used.size());
    for (std::size_t c : used) v.push_back(samples[c][r]);
    round_median[r] = stats::median(std::move(v));
  }
  double best_score = 0;
  for (std::size_t c : used) {
    std::vector<double> rel(rounds);
    for (std::size_t r = 0; r < rounds; ++r) rel[r] = round_median[r] > 0 ? samples[c][r] / round_median[r] : 1;
    const double score = stats::median(std::move(rel));
    if (c == used.front() || score < best_score) {
      best_score = score;
      p.winner = c;
    }
  }
  const std::vector<double>& w = samples[p.winner];
  for (std::size_t c : used) {
    PickEntry e;
    e.index = c;
    e.samples_ns.assign(samples[c].begin(), samples[c].begin() + static_cast<std::ptrdiff_t>(rounds));
    e.median_ns = stats::median(e.samples_ns);
    std::vector<double> ratio(rounds);
    for (std::size_t r = 0; r < rounds; ++r) ratio[r] = w[r] > 0 ? samples[c][r] / w[r] : 1;
    std::sort(ratio.begin(), ratio.end());
    e.ratio = stats::median_sorted(ratio);
    e.ratio_halfwidth = median_halfwidth(ratio);
    const double threshold = std::max(kNoiseFloor, e.ratio_halfwidth);
    e.in_tie_set = c == p.winner || e.ratio - 1 <= threshold;
    if (c != p.winner) p.noise = std::max(p.noise, threshold);
    p.entries.push_back(std::move(e));
  }
  std::stable_sort(p.entries.begin(), p.entries.end(), [&](const PickEntry& a, const PickEntry& b) {
    if ((a.index == p.winner) != (b.index == p.winner)) return a.index == p.winner;
    return a.ratio < b.ratio;
  });
  return p;
}

FinalPickOutcome run_final_pick(Backend& backend, db::Database& db, std::int64_t session_id,
                                const std::vector<db::TrialRow>& ranked, const FinalPickOptions& opt) {
  FinalPickOutcome out;
  const auto t0 = std::chrono::steady_clock::now();
  if (opt.k <= 1) {
    out.note = "off (--final-k " + std::to_string(opt.k) + ")";
    return out;
  }
  std::vector<Leader> leaders;
  leaders.reserve(ranked.size());
  for (const db::TrialRow& t : ranked) leaders.push_back({t.m.median_ns, t.m.spread});
  const std::vector<std::size_t> chosen = candidates(leaders, opt.k);
  if (chosen.size() < 2) {
    out.note = chosen.empty() ? "no verified configuration" : "no other configuration within noise of the best";
    out.candidates = chosen.size();
    return out;
  }
  std::vector<Config> configs;
  configs.reserve(chosen.size());
  for (std::size_t i : chosen) configs.push_back(Config::from_json(ranked[i].config_json));
  const std::optional<std::vector<std::vector<double>>> samples =
      backend.time_interleaved(configs, std::max(1, opt.rounds), opt.max_seconds);
  out.candidates = chosen.size();
  if (!samples) {
    out.note = "skipped: the " + backend.kind() + " backend cannot re-time configurations";
    return out;
  }
  if (samples->size() != configs.size())
    throw Error("backend returned interleaved samples of a wrong number of configurations");
  bool any = false;
  for (const auto& s : *samples) any = any || !s.empty();
  if (!any) {
    out.note = "skipped: no candidate could be re-timed";
    return out;
  }
  const Pick p = pick(*samples);
  out.ran = true;
  out.rounds = p.rounds;
  out.noise = p.noise;
  out.tie = p.tie_size();
  const db::TrialRow& winner = ranked[chosen[p.winner]];
  out.winner_json = winner.config_json;
  out.winner_median_ns = p.entries.front().median_ns;
  out.changed_leader = p.winner != 0;
  for (std::size_t rank = 0; rank < p.entries.size(); ++rank) {
    const PickEntry& e = p.entries[rank];
    const db::TrialRow& t = ranked[chosen[e.index]];
    db::FinalPickRow row;
    row.session_id = session_id;
    row.device_id = t.device_id;
    row.kernel = t.kernel;
    row.source_hash = t.source_hash;
    row.workload = t.workload;
    row.problem = t.problem;
    row.config_json = t.config_json;
    row.config_hash = t.config_hash;
    row.rank = static_cast<int>(rank);
    row.median_ns = e.median_ns;
    row.ratio = e.ratio;
    row.in_tie_set = e.in_tie_set;
    row.noise = p.noise;
    row.samples_ns = e.samples_ns;
    out.rows.push_back(std::move(row));
  }
  db.insert_final_pick(out.rows);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace autotune::session
