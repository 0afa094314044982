// The spec default chosen from recordings (pick_default.hpp).
#include "tuner/lookup/pick_default.hpp"

#include <limits>
#include <map>

#include "tuner/lookup/levels.hpp"

namespace autotune::lookup {

namespace {

struct Standing {
  Config config;
  double worst = std::numeric_limits<double>::infinity();
  std::string worst_cell;
  double sum = 0;
  std::size_t count = 0;
  bool valid = true;
};

}  // namespace

std::optional<DefaultPick> pick_default(const std::vector<const db::Database*>& dbs, const TuningSpec& spec,
                                        Objective o) {
  std::map<std::string, Standing> by_config;  // canonical JSON -> standing
  std::size_t cells = 0;
  std::vector<std::pair<DeviceInfo, ProblemKey>> places;  // every recorded (board, problem): validity is checked there
  for (const db::Database* db : dbs) {
    for (const Workload& w : spec.workloads) {
      const std::shared_ptr<detail::Prepared> prep = detail::prepare(*db, spec, w, o);
      for (const detail::Cell& cell : prep->cells) {
        if (cell.rows.empty()) continue;
        ++cells;
        places.emplace_back(prep->boards[cell.board].info, cell.problem);
        const double best = prep->rows[cell.rows.front()].cost;
        const std::string where = prep->boards[cell.board].info.name + " " + w.key() + " " + cell.problem_key;
        for (std::size_t ri : cell.rows) {
          const detail::Row& r = prep->rows[ri];
          Standing& s = by_config[r.config_json];
          if (s.count == 0) s.config = r.config;
          const double ratio = best / r.cost;
          if (ratio < s.worst) {
            s.worst = ratio;
            s.worst_cell = where;
          }
          s.sum += ratio;
          ++s.count;
        }
      }
    }
  }
  if (cells == 0) return std::nullopt;
  DefaultPick pick;
  pick.cells = cells;
  const Standing* chosen = nullptr;
  const std::string default_json = spec.default_config().to_json();
  for (auto& [json, s] : by_config) {
    if (s.count != cells) continue;  // a configuration measured in one cell only: 1.0 there, unknown elsewhere
    for (const auto& [info, problem] : places)
      for (const Workload& w : spec.workloads)
        if (s.valid && !detail::valid_for(spec, s.config, problem, info, w)) s.valid = false;
    if (!s.valid) continue;
    ++pick.candidates;
    if (json == default_json) pick.default_worst_ratio = s.worst;
    // The map's order makes the first of equal standings the smaller canonical JSON.
    if (chosen == nullptr || s.worst > chosen->worst || (s.worst == chosen->worst && s.sum > chosen->sum)) chosen = &s;
  }
  if (chosen == nullptr) return std::nullopt;
  pick.config = chosen->config;
  pick.worst_ratio = chosen->worst;
  pick.worst_cell = chosen->worst_cell;
  pick.mean_ratio = chosen->sum / static_cast<double>(chosen->count);
  return pick;
}

}  // namespace autotune::lookup
