// Lookup levels (exact -> nearest size -> same cc -> same major architecture -> spec default), the rules
// that keep stale rows out, and the cached, thread-safe Lookup class. Rules and figures: docs/lookup.md.
#include "tuner/lookup/lookup.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <unordered_map>

#include "db/database.hpp"
#include "db/ranking.hpp"
#include "db/sources.hpp"
#include "tuner/lookup/levels.hpp"
#include "tuner/core/error.hpp"
#include "tuner/specs/specs.hpp"

namespace autotune {

namespace lookup {

const char* to_string(Match m) {
  switch (m) {
    case Match::exact: return "exact";
    case Match::nearest_size: return "nearest_size";
    case Match::same_cc: return "same_cc";
    case Match::same_arch: return "same_arch";
    case Match::borrowed:
      return "borrowed";
    case Match::spec_default: return "spec_default";
  }
  return "unknown";
}

int level(Match m) { return static_cast<int>(m); }

namespace {

// ---- recorded rows, prepared once per (spec, workload) ---------------------------------------------------

using detail::Board;
using detail::Cell;
using detail::Prepared;
using detail::Question;
using detail::Row;

/// Variables of constraints other than the configuration's: device, workload and problem (make_bindings
/// without a config), computed once per (board, problem) rather than once per row.
Bindings base_bindings(const ProblemKey& p, const DeviceInfo& d, const Workload& w) {
  return make_bindings(Config(), p, d, w);
}

/// The variables of an expression: c's values, then base's. c and base must outlive the result.
VarLookup vars_of(const Config& c, const Bindings& base) {
  return [&c, &base](const std::string& n) -> std::optional<std::int64_t> {
    if (auto v = c.get(n)) return v;
    auto it = base.find(n);
    if (it == base.end()) return std::nullopt;
    return it->second;
  };
}

/// True if c assigns exactly the spec's parameters, each to one of its values, and every constraint holds
/// with base (base_bindings of the problem, device and workload). Never throws.
bool config_valid(const TuningSpec& spec, const Config& c, const Bindings& base) {
  if (c.values().size() != spec.params.size()) return false;
  for (const auto& param : spec.params) {
    const auto v = c.get(param.name);
    if (!v || param.index_of(*v) < 0) return false;
  }
  try {
    const VarLookup vars = vars_of(c, base);
    for (const auto& e : spec.constraints)
      if (e.eval(vars) == 0) return false;
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

/// True where the spec asks for deterministic configurations (TuningSpec::deterministic) and one of its
/// "nondeterministic" expressions holds for c with base, or cannot be evaluated there. Never throws.
bool left_out_as_nondeterministic(const TuningSpec& spec, const Config& c, const Bindings& base) {
  if (!spec.deterministic) return false;
  const VarLookup vars = vars_of(c, base);
  try {
    for (const auto& e : spec.nondeterministic)
      if (e.eval(vars) != 0) return true;
  } catch (const std::exception&) {
    return true;
  }
  return false;
}

bool config_valid(const TuningSpec& spec, const Config& c, const ProblemKey& p, const DeviceInfo& d,
                  const Workload& w) {
  return config_valid(spec, c, base_bindings(p, d, w));
}

bool same_dims(const ProblemKey& a, const ProblemKey& b) {
  if (a.dims.size() != b.dims.size()) return false;
  auto i = a.dims.begin();
  for (auto j = b.dims.begin(); j != b.dims.end(); ++i, ++j)
    if (i->first != j->first) return false;
  return true;
}

/// Sum over the dimensions of |log2 a_d - log2 b_d| (for one dimension: the log2 distance of the sizes).
double log_distance(const ProblemKey& a, const ProblemKey& b) {
  if (!same_dims(a, b)) return std::numeric_limits<double>::infinity();
  double d = 0;
  auto i = a.dims.begin();
  for (auto j = b.dims.begin(); j != b.dims.end(); ++i, ++j)
    d += std::fabs(std::log2(std::max<double>(1.0, static_cast<double>(i->second))) -
                   std::log2(std::max<double>(1.0, static_cast<double>(j->second))));
  return d;
}

/// Order of recorded problems by closeness to the question: log distance, then the distance of the total
/// element counts, then the larger problem (its timing is less dominated by launch latency), then the key; a
/// problem of the question's data (ProblemKey::data) before one of other data.
struct Closeness {
  bool other_data;
  double dist;
  double elem_dist;
  double elements;
  const std::string* key;
  bool operator<(const Closeness& o) const {
    if (other_data != o.other_data) return !other_data;
    if (dist != o.dist) return dist < o.dist;
    if (elem_dist != o.elem_dist) return elem_dist < o.elem_dist;
    if (elements != o.elements) return elements > o.elements;
    return *key < *o.key;
  }
};

Closeness closeness(const Cell& c, const ProblemKey& q) {
  const double e = c.problem.elements();
  return {c.problem.data != q.data, log_distance(c.problem, q),
          std::fabs(std::log2(std::max(1.0, e)) - std::log2(std::max(1.0, q.elements()))), e, &c.problem_key};
}

std::shared_ptr<Prepared> prepare_rows(const db::Database& db, const TuningSpec& spec, const Workload& w, Objective o) {
  auto prep = std::make_shared<Prepared>();
  prep->objective = o;
  prep->spec_hash = spec.spec_hash();
  const std::vector<std::string> sources = db::accepted_sources(db, spec);

  std::map<std::int64_t, std::size_t> board_of_id;
  for (const auto& d : db.devices()) {  // ordered by id: a later row of the same key refreshes the properties
    const DeviceKey key = DeviceKey::of(d.info);
    std::size_t b = prep->boards.size();
    for (std::size_t i = 0; i < prep->boards.size(); ++i)
      if (prep->boards[i].key == key) b = i;
    if (b == prep->boards.size()) prep->boards.push_back({key, d.info});
    else prep->boards[b].info = d.info;
    board_of_id[d.id] = b;
  }
  for (const auto& s : db.sessions(spec.name)) prep->session_spec_hash[s.id] = s.spec_hash;

  db::TrialFilter f;
  f.kernel = spec.name;
  f.workload = w.key();
  f.ok_only = true;
  f.by_time = true;
  std::map<std::pair<std::size_t, std::string>, Bindings> base_of;
  std::map<std::string, ProblemKey> problems;  // parsed and checked once per distinct key
  // The offline trials into prep->cells, then those measured online into prep->online_cells.
  for (const bool online : {false, true}) {
    f.online = online;
    std::vector<Cell>& cells = online ? prep->online_cells : prep->cells;
    std::map<std::pair<std::size_t, std::string>, std::size_t> cell_of;
    std::vector<std::set<std::string>> cell_configs;
    // Best first by the objective, unthrottled measurements before throttled ones.
    for (auto& t : db::rank_trials(db.trials(f), o, true)) {
      if (std::find(sources.begin(), sources.end(), t.source_hash) == sources.end()) {
        ++prep->stale_source;
        continue;
      }
      if (!(t.m.median_ns > 0) || !std::isfinite(t.m.median_ns)) continue;  // no time: not a candidate
      const double cost = objective_cost(o, t.m, t.gbps);
      if (!std::isfinite(cost)) {
        ++prep->unobserved;
        continue;
      }
      auto bit = board_of_id.find(t.device_id);
      if (bit == board_of_id.end()) continue;
      Row r;
      try {
        r.config = Config::from_json(t.config_json);
        auto pk = problems.find(t.problem);
        if (pk == problems.end()) {
          ProblemKey parsed = ProblemKey::parse(t.problem);
          spec.check_problem(parsed);
          pk = problems.emplace(t.problem, std::move(parsed)).first;
        }
        r.problem = pk->second;
      } catch (const Error&) {
        ++prep->stale_config;
        continue;
      }
      r.board = bit->second;
      auto bb = base_of.find({r.board, t.problem});
      if (bb == base_of.end())
        bb =
            base_of.emplace(std::make_pair(r.board, t.problem), base_bindings(r.problem, prep->boards[r.board].info, w))
                .first;
      if (!config_valid(spec, r.config, bb->second)) {
        ++prep->stale_config;
        continue;
      }
      if (left_out_as_nondeterministic(spec, r.config, bb->second)) {
        ++prep->nondeterministic;
        continue;
      }
      r.config_json = r.config.to_json();
      r.problem_key = r.problem.key();
      r.median_ns = t.m.median_ns;
      r.gbps = std::isfinite(t.gbps) ? t.gbps : 0;
      r.cost = cost;
      r.observed = t.m.observed;
      r.session_id = t.session_id;
      r.carried_from = t.carried_from;
      r.online = online;

      auto [it, fresh] = cell_of.emplace(std::make_pair(r.board, r.problem_key), cells.size());
      if (fresh) {
        cells.push_back({r.board, r.problem, r.problem_key, {}});
        cell_configs.emplace_back();
      }
      // Rows come best first; a configuration measured on two boards of the same key keeps its best.
      if (!cell_configs[it->second].insert(r.config_json).second) continue;
      cells[it->second].rows.push_back(prep->rows.size());
      prep->rows.push_back(std::move(r));
    }
  }
  // Final picks chose among equals by time: their tie sets reorder the cells for the time objective only.
  if (o == Objective::time) detail::prefer_ties(db, spec, w, sources, board_of_id, *prep);
  return prep;
}

// ---- answering ------------------------------------------------------------------------------------------


class Answerer {
 public:
  Answerer(const Prepared& prep, const Question& q) : prep_(prep), q_(q) {
    for (std::size_t b = 0; b < prep_.boards.size(); ++b)
      if (prep_.boards[b].key == q_.device) target_board_ = b;
    if (q_.props == nullptr && target_board_ != kNone) target_props_ = &prep_.boards[target_board_].info;
    else target_props_ = q_.props;
  }

  Answer run() {
    Answer a;
    a.objective = prep_.objective;
    a.stale_rows = prep_.stale_source + prep_.stale_config;
    std::vector<std::string> notes;
    if (a.stale_rows != 0) {
      std::string why;
      if (prep_.stale_source)
        why += std::to_string(prep_.stale_source) + " measured with another kernel source: `autotune revalidate " +
               q_.spec.name + "` re-measures their best and carries them forward where they still hold";
      if (prep_.stale_config)
        why += std::string(why.empty() ? "" : ", ") + std::to_string(prep_.stale_config) +
               " with a configuration no longer valid in the spec";
      notes.push_back(std::to_string(a.stale_rows) + " recorded rows were skipped (" + why + ")");
    }
    if (prep_.unobserved != 0)
      notes.push_back(std::to_string(prep_.unobserved) + " recorded rows lack the power or energy that objective " +
                      to_string(prep_.objective) + " needs (measured without NVML) and were not candidates");
    if (prep_.nondeterministic != 0)
      notes.push_back(std::to_string(prep_.nondeterministic) +
                      " recorded rows were not candidates: a deterministic configuration was asked for, and theirs "
                      "are not bit-reproducible run to run (" +
                      q_.spec.nondeterministic_text() + ")");
    bool found = false;
    if (target_board_ != kNone) {
      found = same_device(a);
      if (!found) notes.push_back("no configuration recorded on " + q_.device.str() + " is usable here");
    } else {
      notes.push_back("nothing recorded on " + q_.device.str());
    }
    if (!found) found = same_cc(a, notes);
    if (!found) found = same_arch(a, notes);
    if (!found) found = detail::borrow(q_, target_props_, a, notes);
    if (!found) {
      a.config = q_.spec.default_config();
      a.match = Match::spec_default;
      const DeviceInfo* props = target_props_;
      if (props != nullptr && !config_valid(q_.spec, a.config, q_.problem, *props, q_.w))
        notes.push_back("the spec default violates a constraint of the spec on this device/problem");
      if (left_out_as_nondeterministic(q_.spec, a.config,
                                       base_bindings(q_.problem, props != nullptr ? *props : DeviceInfo{}, q_.w)))
        notes.push_back("the spec default is not deterministic, which was asked for");
    } else {
      if (a.observed.throttled())
        notes.push_back("measured while the clocks were throttled (" +
                        throttle_reason_names(a.observed.throttle_reasons & kThrottleFlagged) +
                        "): no unthrottled measurement was usable");
      auto it = prep_.session_spec_hash.find(a.session_id);
      if (it != prep_.session_spec_hash.end() && !it->second.empty() && it->second != prep_.spec_hash)
        notes.push_back("measured under an earlier version of the spec (its configuration is still valid)");
      if (!a.carried_from.empty()) notes.push_back("carried forward: " + a.carried_from);
    }
    if (!online_note_.empty()) notes.push_back(online_note_);
    if (!fill_note_.empty()) notes.push_back(fill_note_);
    if (passed_over_ != 0)
      notes.push_back(std::to_string(passed_over_) +
                      " recorded configurations are not valid for this device/problem and were passed over");
    for (const auto& n : notes) a.note += (a.note.empty() ? "" : "; ") + n;
    return a;
  }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  /// Valid at the question's problem with the target's properties, or (unknown target) those of the board
  /// the row was measured on.
  bool valid_at_target(const Row& r) {
    const std::size_t board = target_props_ ? kNone : r.board;
    auto it = valid_memo_.find({board, r.config_json});
    if (it != valid_memo_.end()) return it->second;
    const DeviceInfo& props = target_props_ ? *target_props_ : prep_.boards[r.board].info;
    const bool ok = config_valid(q_.spec, r.config, q_.problem, props, q_.w);
    if (!ok) ++passed_over_;
    valid_memo_.emplace(std::make_pair(board, r.config_json), ok);
    return ok;
  }

  void fill(Answer& a, const Row& r, Match m) const {
    fill_from_row(a, prep_, r, m);
    if (r.tie >= 0 && (m == Match::exact || m == Match::nearest_size)) {
      const detail::Tie& t = prep_.ties[static_cast<std::size_t>(r.tie)];
      a.tie_set = {r.config};
      for (const Config& c : t.configs)
        if (!(c == r.config)) a.tie_set.push_back(c);
      a.tie_noise = t.noise;
      a.tie_session = t.session_id;
    }
  }

  /// Level 1 where no offline row of the cell is usable: the fastest valid row measured online by an application's
  /// launches on the target board at the question's problem (docs/lookup.md "Online tuning").
  bool online_exact(Answer& a) {
    for (const auto& cell : prep_.online_cells) {
      if (cell.board != target_board_ || cell.problem_key != q_.problem.key()) continue;
      for (std::size_t ri : cell.rows) {
        const Row& r = prep_.rows[ri];
        if (!valid_at_target(r)) continue;
        fill(a, r, Match::exact);
        a.online = true;
        online_note_ = "measured online by an application's own launches (no offline trial of this problem)";
        return true;
      }
    }
    return false;
  }

  /// Levels 1 and 2: the fastest valid row of the target board at the question's problem (offline trials, else
  /// those measured online), else at the closest recorded problem that has one.
  bool same_device(Answer& a) {
    std::vector<std::pair<Closeness, const Cell*>> order;
    for (const auto& c : prep_.cells)
      if (c.board == target_board_) order.push_back({closeness(c, q_.problem), &c});
    std::sort(order.begin(), order.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    // The exact problem first (distance 0 may also be a different key with equal dims, impossible: keys
    // are canonical), then by closeness.
    bool online_tried = false;
    for (const auto& [cl, cell] : order) {
      const bool exact = cell->problem_key == q_.problem.key();
      if (!exact && !online_tried) {
        online_tried = true;
        if (online_exact(a)) return true;
      }
      for (std::size_t ri : cell->rows) {
        const Row& r = prep_.rows[ri];
        if (!valid_at_target(r)) continue;
        const Cell* here = cell;  // a structured binding cannot be captured before C++20
        const Row& served =
            exact ? r : fill_rule(here->problem, "the fastest configuration", r, [&] { return ranked_rows(*here); });
        fill(a, served, exact ? Match::exact : Match::nearest_size);
        return true;
      }
    }
    return !online_tried && online_exact(a);
  }

  /// The blocks of r's configuration at problem p and whether they fill the SMs of the target (or of r's board).
  std::pair<std::int64_t, bool> blocks(const Row& r, const ProblemKey& p) const {
    const DeviceInfo& props = target_props_ ? *target_props_ : prep_.boards[r.board].info;
    const std::optional<std::int64_t> b = q_.spec.blocks_at(r.config, p, props, q_.w);
    return {b.value_or(0), b && *b >= props.sm_count};
  }

  /// The valid rows of `cell`, fastest first.
  std::vector<const Row*> ranked_rows(const Cell& cell) {
    std::vector<const Row*> out;
    for (std::size_t ri : cell.rows)
      if (valid_at_target(prep_.rows[ri])) out.push_back(&prep_.rows[ri]);
    return out;
  }

  /// Levels 1 and 2 at another size (docs/lookup.md, "Filling the SMs"): with the spec's "blocks", when the
  /// level's answer `first` filled the SMs at `p` (where it was measured) but does not at the question's problem,
  /// the best ranked row (`ranked()`: valid rows measured at p in the level's order) that does; `first` where none
  /// does or the spec has no "blocks".
  template <class Ranked>
  const Row& fill_rule(const ProblemKey& p, const std::string& level, const Row& first, Ranked ranked) {
    if (!q_.spec.blocks || !blocks(first, p).second) return first;
    const auto [few, fills_here] = blocks(first, q_.problem);
    if (fills_here) return first;
    for (const Row* r : ranked()) {
      const auto [b, fills] = blocks(*r, q_.problem);
      if (!fills) continue;
      const DeviceInfo& props = target_props_ ? *target_props_ : prep_.boards[r->board].info;
      fill_note_ = level + " at " + p.key() + " runs " + std::to_string(few) + " blocks here for " +
                   std::to_string(props.sm_count) + " SMs: served the best there that fills them (" +
                   std::to_string(b) + " blocks)";
      return *r;
    }
    return first;
  }

 public:
  /// For the compiled-in export (detail::fill_chain): the thresholds of the fill rule over `ranked` (valid rows
  /// measured at p, in the level's order; the question's problem is p): (the first, its smallest size that fills
  /// the SMs), then each later row whose smallest such size is below every earlier one. Empty where the rule
  /// never applies. A question of size n gets the first entry whose size is at most n, else the first row (for
  /// "blocks" that do not decrease with the size, as fill_rule()).
  std::vector<std::pair<std::int64_t, const Row*>> fill_chain(const std::vector<const Row*>& ranked,
                                                              const ProblemKey& p) {
    std::vector<std::pair<std::int64_t, const Row*>> chain;
    const std::string dim = q_.spec.blocks_dim();
    if (dim.empty()) return chain;
    auto smallest_filling = [&](const Row& r) -> std::optional<std::int64_t> {
      std::int64_t hi = p.at(dim);  // fills here
      ProblemKey at = p;
      if (!blocks(r, at).second) return std::nullopt;
      std::int64_t lo = 0;  // lo does not fill (size 0 or below)
      while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        at.dims[dim] = mid;
        (blocks(r, at).second ? hi : lo) = mid;
      }
      return hi;
    };
    for (const Row* r : ranked) {
      const std::optional<std::int64_t> t = smallest_filling(*r);
      if (chain.empty() && !t) return chain;  // the answer did not fill the SMs where it was measured
      if (t && (chain.empty() || *t < chain.back().first)) chain.push_back({*t, r});
      if (chain.back().first <= 1) break;
    }
    return chain;
  }

  std::vector<std::pair<std::int64_t, const Row*>> fill_chain(const Cell& cell) {
    return fill_chain(ranked_rows(cell), cell.problem);
  }

 private:
  /// Level 3: boards of the same cc (not the target): the cells at the closest recorded problem, group
  /// default over them (with one board there, simply its fastest valid configuration).
  bool same_cc(Answer& a, std::vector<std::string>& notes) {
    std::vector<std::pair<Closeness, const Cell*>> order;
    for (const auto& c : prep_.cells)
      if (c.board != target_board_ && prep_.boards[c.board].key.cc == q_.device.cc)
        order.push_back({closeness(c, q_.problem), &c});
    if (order.empty()) {
      notes.push_back("no other board of cc " + std::to_string(q_.device.cc / 10) + "." +
                      std::to_string(q_.device.cc % 10) + " recorded");
      return false;
    }
    // Cells of one problem have equal closeness, so they are adjacent after sorting, in prep's order.
    std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::size_t i = 0; i < order.size();) {
      std::vector<const Cell*> group;
      std::size_t j = i;
      for (; j < order.size() && order[j].second->problem_key == order[i].second->problem_key; ++j)
        group.push_back(order[j].second);
      if (group_default(group, Match::same_cc, a)) return true;
      i = j;
    }
    notes.push_back("no configuration recorded on other boards of cc " + std::to_string(q_.device.cc / 10) + "." +
                    std::to_string(q_.device.cc % 10) + " is usable here");
    return false;
  }

  /// Level 4: every cell of the boards with the same major architecture (not the target board).
  bool same_arch(Answer& a, std::vector<std::string>& notes) {
    std::vector<const Cell*> group;
    for (const auto& c : prep_.cells)
      if (c.board != target_board_ && prep_.boards[c.board].key.major() == q_.device.major()) group.push_back(&c);
    if (group.empty()) {
      notes.push_back("no board of architecture " + std::to_string(q_.device.major()) + ".x recorded");
      return false;
    }
    return group_default(group, Match::same_arch, a);
  }

 public:
  /// A configuration's standing in a group (group_default()).
  struct Score {
    double sum = 0;
    int count = 0;
    const Row* nearest = nullptr;  // measurement closest to the question (provenance)
    Closeness near_cl{false, 0, 0, 0, nullptr};
    std::set<std::size_t> boards;
  };

  /// Every configuration measured in `cells`, by canonical JSON: the sum over those cells of median / best(cell),
  /// their count, its boards and its measurement nearest to the question.
  std::map<std::string, Score> score_group(const std::vector<const Cell*>& cells) const {
    std::map<std::string, Score> scores;
    for (const Cell* cell : cells) {
      if (cell->rows.empty()) continue;
      const double best = prep_.rows[cell->rows.front()].cost;
      const Closeness cl = closeness(*cell, q_.problem);
      for (std::size_t ri : cell->rows) {
        const Row& r = prep_.rows[ri];
        Score& sc = scores[r.config_json];
        sc.sum += r.cost / best;
        ++sc.count;
        sc.boards.insert(r.board);
        if (sc.nearest == nullptr || cl < sc.near_cl) {
          sc.nearest = &r;
          sc.near_cl = cl;
        }
      }
    }
    return scores;
  }

  /// The scores valid at the target, best first: measured in the most cells, then the lowest mean, then the
  /// smaller canonical JSON (the map's order, which the stable sort keeps).
  std::vector<const Score*> rank(const std::map<std::string, Score>& scores) {
    std::vector<const Score*> out;
    for (const auto& [json, sc] : scores)
      if (valid_at_target(*sc.nearest)) out.push_back(&sc);
    std::stable_sort(out.begin(), out.end(), [](const Score* x, const Score* y) {
      if (x->count != y->count) return x->count > y->count;
      return x->sum / x->count < y->sum / y->count;
    });
    return out;
  }

  /// The measurement nearest to the question of each ranked score, in rank order.
  static std::vector<const Row*> nearest_rows(const std::vector<const Score*>& ranked) {
    std::vector<const Row*> rows;
    rows.reserve(ranked.size());
    for (const Score* sc : ranked) rows.push_back(sc->nearest);
    return rows;
  }

  /// Group default over cells (board, problem): for every configuration, the mean over the cells that
  /// measured it of median / best median of the cell. The answer is the configuration valid on the target
  /// that was measured in the most cells, and among those the lowest mean (ties: the smaller canonical JSON);
  /// at level same_cc (cells of one problem) with the fill rule of "Filling the SMs". With `chain`, also the fill
  /// rule's thresholds over the group's candidates in rank order (fill_chain(), for the compiled-in export), from
  /// the same scores.
  bool group_default(const std::vector<const Cell*>& cells, Match m, Answer& a,
                     std::vector<std::pair<std::int64_t, const Row*>>* chain = nullptr) {
    const std::map<std::string, Score> scores = score_group(cells);
    const std::vector<const Score*> ranked = rank(scores);
    if (ranked.empty()) return false;
    std::optional<std::vector<const Row*>> rows;  // the candidates' rows, made once if the chain or the rule needs them
    auto candidate_rows = [&]() -> const std::vector<const Row*>& {
      if (!rows) rows = nearest_rows(ranked);
      return *rows;
    };
    if (chain != nullptr) *chain = fill_chain(candidate_rows(), cells.front()->problem);
    const Score* pick = ranked.front();
    if (m == Match::same_cc) {
      const Row& served = fill_rule(cells.front()->problem, "the group default", *pick->nearest, candidate_rows);
      for (const Score* sc : ranked)
        if (sc->nearest == &served) pick = sc;
    }
    fill(a, *pick->nearest, m);
    std::string names;
    for (std::size_t b : pick->boards) names += (names.empty() ? "" : ", ") + prep_.boards[b].info.name;
    a.device = names;
    a.relative_time = pick->sum / pick->count;
    a.cells_covered = pick->count;
    a.cells_total = static_cast<int>(cells.size());
    return true;
  }

 private:
  const Prepared& prep_;
  const Question& q_;
  std::size_t target_board_ = kNone;
  const DeviceInfo* target_props_ = nullptr;
  std::map<std::pair<std::size_t, std::string>, bool> valid_memo_;
  std::size_t passed_over_ = 0;
  std::string fill_note_;
  std::string online_note_;
};

Answer answer_question(const Prepared* prep, const Question& q, const std::string& unavailable) {
  if (prep == nullptr) {
    Answer a;
    a.config = q.spec.default_config();
    a.match = Match::spec_default;
    a.note = unavailable;
    return a;
  }
  return Answerer(*prep, q).run();
}

}  // namespace

namespace detail {

bool valid_for(const TuningSpec& spec, const Config& c, const ProblemKey& p, const DeviceInfo& d, const Workload& w) {
  const Bindings base = base_bindings(p, d, w);
  return config_valid(spec, c, base) && !left_out_as_nondeterministic(spec, c, base);
}

bool closer(const Cell& a, const Cell& b, const ProblemKey& q) { return closeness(a, q) < closeness(b, q); }

void fill_from_row(Answer& a, const Prepared& prep, const Row& r, Match m) {
  a.config = r.config;
  a.match = m;
  a.device = prep.boards[r.board].info.name;
  a.device_cc = prep.boards[r.board].key.cc;
  a.problem = r.problem_key;
  a.session_id = r.session_id;
  a.median_ns = r.median_ns;
  a.gbps = r.gbps;
  a.observed = r.observed;
  a.carried_from = r.carried_from;
}

std::shared_ptr<Prepared> prepare(const db::Database& db, const TuningSpec& spec, const Workload& w, Objective o) {
  return prepare_rows(db, spec, w, o);
}

Answer answer(const Prepared* prep, const Question& q, const std::string& unavailable) {
  return answer_question(prep, q, unavailable);
}

namespace {

std::vector<std::pair<std::int64_t, Config>> chain_configs(
    const std::vector<std::pair<std::int64_t, const Row*>>& chain) {
  std::vector<std::pair<std::int64_t, Config>> out;
  out.reserve(chain.size());
  for (const auto& [size, row] : chain) out.emplace_back(size, row->config);
  return out;
}

}  // namespace

std::vector<std::pair<std::int64_t, Config>> fill_chain(const Prepared& prep, const Question& q, const Cell& cell) {
  return chain_configs(Answerer(prep, q).fill_chain(cell));
}

std::optional<GroupAnswer> group_default_and_chain(const Prepared& prep, const Question& q,
                                                   const std::vector<const Cell*>& cells) {
  GroupAnswer g;
  g.answer.objective = prep.objective;
  std::vector<std::pair<std::int64_t, const Row*>> chain;
  if (!Answerer(prep, q).group_default(cells, Match::same_cc, g.answer, &chain)) return std::nullopt;
  g.chain = chain_configs(chain);
  return g;
}

std::optional<Answer> group_default(const Prepared& prep, const Question& q, const std::vector<const Cell*>& cells,
                                    Match m) {
  Answer a;
  a.objective = prep.objective;
  if (!Answerer(prep, q).group_default(cells, m, a)) return std::nullopt;
  return a;
}

}  // namespace detail

Answer best(const db::Database& db, const TuningSpec& spec, const Workload& w, const DeviceInfo& device,
            const ProblemKey& problem, Objective o) {
  spec.check_workload(w);
  spec.check_problem(problem);
  auto prep = prepare_rows(db, spec, w, o);
  const DeviceKey key = DeviceKey::of(device);
  const detail::PreparedOf others = [&](const Workload& other) { return prepare_rows(db, spec, other, o); };
  return answer_question(prep.get(), Question{spec, w, key, &device, problem, &others}, "");
}

}  // namespace lookup

}  // namespace autotune
