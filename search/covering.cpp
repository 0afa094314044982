// The covering order: a stratified random permutation of the valid space (see CoveringOrder in base.hpp).
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "search/base.hpp"

namespace autotune::search::detail {

namespace {

/// Random candidates looked at for each pick. With 8 instead of 1, the first round of the 2436-config reduction
/// space takes 13.5 configs on average (13-16; 13 is the least possible: 6 lecture variants plus 7 more
/// BLOCKS_PER_SM values) instead of 14.8 (13-17), and 6.0 instead of 6.7 on the 90-config transpose space (6 at
/// least); seeds 1-200, tests/data/recorded_h200.db, measured on the shared development machine.
constexpr std::size_t kCandidates = 8;

/// The configs holding each (parameter, value) pair, pair p = offset[param] + value position, as one array
/// of segments in random order. Visited configs are moved to the front of their segment lazily, so the
/// live part of segment p is members[cursor[p], begin[p + 1]).
struct PairLists {
  std::vector<std::size_t> offset;  // first pair of each parameter
  std::vector<std::size_t> begin;   // segment starts, one more than there are pairs
  std::vector<std::size_t> cursor;
  std::vector<std::uint32_t> members;

  PairLists(const ParameterSpace& space, Rng& rng) {
    const auto& params = space.params();
    offset.push_back(0);
    for (const Param& p : params) offset.push_back(offset.back() + p.values.size());
    const std::size_t pairs = offset.back();
    begin.assign(pairs + 1, 0);
    for (std::size_t i = 0; i < space.size(); ++i)
      for (std::size_t j = 0; j < params.size(); ++j) ++begin[offset[j] + space.value_at(i, j) + 1];
    for (std::size_t p = 0; p < pairs; ++p) begin[p + 1] += begin[p];
    cursor.assign(begin.begin(), begin.end() - 1);
    members.resize(begin.back());
    for (std::size_t i = 0; i < space.size(); ++i)
      for (std::size_t j = 0; j < params.size(); ++j)
        members[cursor[offset[j] + space.value_at(i, j)]++] = static_cast<std::uint32_t>(i);
    for (std::size_t p = 0; p < pairs; ++p) {
      cursor[p] = begin[p];
      for (std::size_t k = begin[p + 1] - begin[p]; k > 1; --k)
        std::swap(members[begin[p] + k - 1], members[begin[p] + rng.below(k)]);
    }
  }

  std::size_t pairs() const { return cursor.size(); }
};

}  // namespace

CoveringOrder covering_order(const ParameterSpace& space, Rng& rng) {
  CoveringOrder out;
  const std::size_t n = space.size();
  if (n == 0) return out;
  if (n > UINT32_MAX) throw std::length_error("covering_order: more than 2^32 valid configs");
  const std::size_t dims = space.params().size();
  PairLists lists(space, rng);
  std::vector<std::uint8_t> visited(n, 0);
  std::vector<std::size_t> stamp(lists.pairs(), 0);  // round in which the pair was last covered
  std::vector<std::size_t> live;
  for (std::size_t p = 0; p < lists.pairs(); ++p)
    if (lists.begin[p + 1] > lists.begin[p]) live.push_back(p);
  if (live.empty()) {  // no parameters: a single config
    for (std::size_t i = 0; i < n; ++i) out.order.push_back(i);
    out.round_ends.push_back(n);
    return out;
  }
  out.order.reserve(n);

  auto pair_of = [&](std::size_t config, std::size_t j) { return lists.offset[j] + space.value_at(config, j); };
  auto uncovered = [&](std::size_t config, std::size_t round) {
    std::size_t count = 0;
    for (std::size_t j = 0; j < dims; ++j) count += stamp[pair_of(config, j)] != round ? 1 : 0;
    return count;
  };

  for (std::size_t round = 1; out.order.size() < n; ++round) {
    rng.shuffle(live);
    for (std::size_t p : live) {
      if (stamp[p] == round) continue;
      // Window [cur, cur + w) of unvisited candidates; visited members are swapped behind the cursor.
      std::size_t& cur = lists.cursor[p];
      const std::size_t end = lists.begin[p + 1];
      std::size_t w = 0;
      while (w < kCandidates && cur + w < end) {
        if (visited[lists.members[cur + w]]) {
          std::swap(lists.members[cur + w], lists.members[cur]);
          ++cur;
        } else {
          ++w;
        }
      }
      if (w == 0) continue;
      std::size_t pick = cur, pick_score = 0;
      for (std::size_t k = cur; k < cur + w; ++k) {
        const std::size_t score = uncovered(lists.members[k], round);
        if (score > pick_score) {
          pick = k;
          pick_score = score;
        }
      }
      std::swap(lists.members[pick], lists.members[cur]);
      const std::size_t config = lists.members[cur++];
      visited[config] = 1;
      out.order.push_back(config);
      for (std::size_t j = 0; j < dims; ++j) stamp[pair_of(config, j)] = round;
    }
    out.round_ends.push_back(out.order.size());
    std::size_t kept = 0;  // drop the pairs whose configs have all been visited
    for (std::size_t p : live) {
      std::size_t& cur = lists.cursor[p];
      while (cur < lists.begin[p + 1] && visited[lists.members[cur]]) ++cur;
      if (cur < lists.begin[p + 1]) live[kept++] = p;
    }
    live.resize(kept);
  }
  return out;
}

}  // namespace autotune::search::detail
