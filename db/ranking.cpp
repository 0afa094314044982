#include "db/ranking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace autotune::db {

bool ranks_before(const TrialRow& a, const TrialRow& b, Objective o, bool unthrottled_first) {
  auto key = [&](const TrialRow& t) {
    const double median = std::isfinite(t.m.median_ns) ? t.m.median_ns : std::numeric_limits<double>::infinity();
    return std::make_tuple(!t.m.ok(), unthrottled_first && t.m.observed.throttled(), objective_cost(o, t.m, t.gbps),
                           median, t.id);
  };
  return key(a) < key(b);
}

std::vector<TrialRow> rank_trials(std::vector<TrialRow> rows, Objective o, bool unthrottled_first) {
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const TrialRow& a, const TrialRow& b) { return ranks_before(a, b, o, unthrottled_first); });
  return rows;
}

}  // namespace autotune::db
