// The lookup's use of final picks (docs/lookup.md, "Ties"): among the configurations a final pick found within
// noise of each other, the one that also leads at the neighbouring sizes is served.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "db/database.hpp"
#include "tuner/lookup/levels.hpp"

namespace autotune::lookup::detail {

namespace {

/// A cell's latest final pick: its candidates in rank order and which are in the tie set.
struct CellPick {
  std::int64_t session_id = 0;
  double noise = 0;
  std::vector<std::string> configs;  // canonical JSON, rank order
  std::vector<bool> tied;
};

/// The leader and the tie set of a neighbouring cell, before any preference: its pick's tie set where it has one
/// that holds, else its fastest row alone.
struct Standing {
  std::string leader;
  std::set<std::string> tied;
};

/// Whether `pick` still speaks for `cell`: its fastest row is one of the pick's candidates.
bool holds(const CellPick& pick, const Cell& cell, const Prepared& prep) {
  if (cell.rows.empty()) return false;
  const std::string& fastest = prep.rows[cell.rows.front()].config_json;
  return std::find(pick.configs.begin(), pick.configs.end(), fastest) != pick.configs.end();
}

double log_size(const ProblemKey& p) { return std::log2(std::max(1.0, p.elements())); }

}  // namespace

void prefer_ties(const db::Database& db, const TuningSpec& spec, const Workload& w,
                 const std::vector<std::string>& sources, const std::map<std::int64_t, std::size_t>& board_of_id,
                 Prepared& prep) {
  std::map<std::pair<std::size_t, std::string>, CellPick> picks;  // (board, problem key) -> latest pick
  for (const db::FinalPickRow& r : db.final_picks(spec.name, w.key())) {
    auto b = board_of_id.find(r.device_id);
    if (b == board_of_id.end() || std::find(sources.begin(), sources.end(), r.source_hash) == sources.end()) continue;
    CellPick& p = picks[{b->second, r.problem}];
    if (r.session_id != p.session_id) p = CellPick{r.session_id, r.noise, {}, {}};  // rows come by session, rank
    std::string canonical;
    try {
      canonical = Config::from_json(r.config_json).to_json();
    } catch (const std::exception&) {
      continue;  // not a configuration of this build's format: left out
    }
    p.configs.push_back(canonical);
    p.tied.push_back(r.in_tie_set);
  }
  if (picks.empty()) return;

  std::vector<const CellPick*> pick_of(prep.cells.size(), nullptr);
  std::vector<Standing> standing(prep.cells.size());
  for (std::size_t c = 0; c < prep.cells.size(); ++c) {
    const Cell& cell = prep.cells[c];
    if (cell.rows.empty()) continue;
    standing[c].leader = prep.rows[cell.rows.front()].config_json;
    auto it = picks.find({cell.board, cell.problem_key});
    if (it == picks.end() || !holds(it->second, cell, prep)) {
      standing[c].tied.insert(standing[c].leader);
      continue;
    }
    pick_of[c] = &it->second;
    for (std::size_t i = 0; i < it->second.configs.size(); ++i)
      if (it->second.tied[i]) standing[c].tied.insert(it->second.configs[i]);
    standing[c].leader = it->second.configs.front();
  }

  for (std::size_t c = 0; c < prep.cells.size(); ++c) {
    if (pick_of[c] == nullptr) continue;
    Cell& cell = prep.cells[c];
    // The nearest recorded problems of the same board and dimensions below and above this one.
    const double here = log_size(cell.problem);
    std::size_t below = c, above = c;
    double below_d = std::numeric_limits<double>::infinity(), above_d = below_d;
    for (std::size_t o = 0; o < prep.cells.size(); ++o) {
      const Cell& other = prep.cells[o];
      if (o == c || other.board != cell.board || other.rows.empty() || other.problem.data != cell.problem.data)
        continue;
      if (other.problem.dims.size() != cell.problem.dims.size()) continue;
      const double d = log_size(other.problem) - here;
      if (d < 0 && -d < below_d) below_d = -d, below = o;
      if (d > 0 && d < above_d) above_d = d, above = o;
    }
    const CellPick& pick = *pick_of[c];
    std::size_t preferred = 0;
    int best_points = -1;
    for (std::size_t i = 0; i < pick.configs.size(); ++i) {
      if (!pick.tied[i]) continue;
      int points = 0;
      for (std::size_t n : {below, above}) {
        if (n == c) continue;
        if (standing[n].leader == pick.configs[i])
          points += 2;
        else if (standing[n].tied.count(pick.configs[i]))
          points += 1;
      }
      if (points > best_points) best_points = points, preferred = i;  // equal points: the better rank stays
    }
    // Order: the preferred member, the other tie members by rank, then the cell's rows as they were.
    std::vector<std::string> order = {pick.configs[preferred]};
    for (std::size_t i = 0; i < pick.configs.size(); ++i)
      if (pick.tied[i] && i != preferred) order.push_back(pick.configs[i]);
    Tie tie;
    tie.noise = pick.noise;
    tie.session_id = pick.session_id;
    std::vector<std::size_t> front, rest;
    for (const std::string& json : order)
      for (std::size_t ri : cell.rows)
        if (prep.rows[ri].config_json == json) {
          front.push_back(ri);
          tie.configs.push_back(prep.rows[ri].config);
        }
    if (front.empty()) continue;
    for (std::size_t ri : cell.rows)
      if (std::find(front.begin(), front.end(), ri) == front.end()) rest.push_back(ri);
    const int index = static_cast<int>(prep.ties.size());
    for (std::size_t ri : front) prep.rows[ri].tie = index;
    front.insert(front.end(), rest.begin(), rest.end());
    cell.rows = std::move(front);
    prep.ties.push_back(std::move(tie));
  }
}

}  // namespace autotune::lookup::detail
