// The parts of broad_then_local on their own (search/broad_rounds.*, broad_warm.*, broad_climb.*): the covering
// rounds and their phases, the warm start's test and the order of a neighbourhood. The strategy as a whole:
// test_broad.cpp.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "search/base.hpp"
#include "search/broad_climb.hpp"
#include "search/broad_rounds.hpp"
#include "search/broad_warm.hpp"
#include "strategy_support.hpp"

using namespace autotune;
using namespace autotune::search;
using namespace autotune_test::strategies;

namespace {

/// A StrategyBase that proposes nothing of its own: a record to read through a StrategyView.
class Record final : public detail::StrategyBase {
 public:
  explicit Record(const ParameterSpace& space) : StrategyBase("record", space, 1) {}

 protected:
  std::vector<std::size_t> step(std::size_t) override { return {}; }
};

}  // namespace

TEST_CASE("covering rounds: the broad phase, exploration phases and what is taken", "[cpu][search]") {
  const ParameterSpace& space = bowl_space();
  detail::Rng rng(5), same(5);
  detail::CoveringRounds rounds(space, rng, 0.0);
  const detail::CoveringOrder cover = detail::covering_order(space, same);
  REQUIRE(cover.round_ends.size() >= 3);
  CHECK(rounds.round_ends() == cover.round_ends);
  CHECK(rounds.size() == space.size());
  CHECK(rounds.ahead(space.size(), space.size()) == cover.order);
  const std::size_t first = cover.round_ends.front();
  // broad 0: one round; after a warm start always one round; none when the budget only climbs.
  CHECK(rounds.broad_end(false, false) == first);
  CHECK(rounds.broad_end(false, true) == first);
  CHECK(rounds.broad_end(true, false) == 0);
  detail::Rng again(5);
  CHECK(detail::CoveringRounds(space, again, 1.0).broad_end(false, false) == space.size());
  CHECK(detail::CoveringRounds(space, again, 1.0).broad_end(false, true) != space.size());

  Record record(space);
  const detail::StrategyView view(record);
  CHECK(rounds.take(3, first, view) == std::vector<std::size_t>(cover.order.begin(), cover.order.begin() + 3));
  CHECK(rounds.position() == 3);
  record.observe({{cover.order[3], 1.0}});  // observed elsewhere: skipped, but read
  CHECK(rounds.take(2, first, view) == std::vector<std::size_t>{cover.order[4], cover.order[5]});
  CHECK(rounds.position() == 6);
  std::vector<std::size_t> peeked;
  rounds.peek(2, first, cover.order[6], view, peeked);
  CHECK(peeked == std::vector<std::size_t>{cover.order[7], cover.order[8]});
  CHECK(rounds.position() == 6);
  // An exploration phase from inside the first round: that round counts as its first.
  rounds.explore(1);
  CHECK(rounds.cover_end(false, false) == first);
  rounds.explore(2);
  CHECK(rounds.cover_end(false, false) == cover.round_ends[1]);
  CHECK(rounds.cover_end(true, false) == cover.round_ends[1]);
  CHECK(rounds.take(5, 4, view).empty());  // nothing before a position already passed
}

TEST_CASE("warm hypothesis: a few points first, more only once the source is trusted", "[cpu][search]") {
  const ParameterSpace space = make_space({make_param("X", range(8)), make_param("Y", range(8))}, {});
  const detail::WarmHypothesis warm(0.03, 2.0, 0.05);
  CHECK(warm.upfront(10, 0.0, 100) == 3);
  CHECK(warm.upfront(10, 2.0, 100) == 2);  // 1.5, rounded away from zero
  CHECK(warm.upfront(1, 0.0, 100) == 1);
  CHECK(warm.upfront(10, 0.0, 10) == 0);

  Record record(space);
  WarmStartHint hint;
  hint.indices = {0, 1, 2};
  for (std::size_t i = 0; i < space.size(); ++i) hint.source_values.push_back({i, static_cast<double>(i)});
  record.warm_start(hint);
  const detail::StrategyView view(record);
  detail::WarmHypothesis test(0.03, 2.0, 0.05);
  WarmTrust t;
  test.report(t, 0);
  CHECK(t.trust == 0);
  CHECK(t.reason.find("too few configurations measured at both") != std::string::npos);
  record.observe({{0, 1.0}, {10, 2.0}, {20, 3.0}, {30, 4.0}, {40, 5.0}});
  CHECK(test.trusted_points(view, 100).empty());  // 5 < kMinTrustOverlap
  CHECK_FALSE(test.decided());
  record.observe({{50, 6.0}});  // ranks agree with the source's: trust 1
  const std::vector<std::size_t> more = test.trusted_points(view, 100);
  CHECK(test.decided());
  CHECK(more == std::vector<std::size_t>{1, 2, 3, 4, 5});  // the warm points not measured, then by source value
  test.report(t, 1);
  CHECK(t.trust == 1.0);
  CHECK(t.overlap == 6);
  CHECK(t.reason ==
        "rank correlation 1.00 over 6 configurations measured at both (its best 1 measured first, 5 more "
        "of its best after that)");
}

TEST_CASE("neighbour order: next values up or down first, a random order left as it is", "[cpu][search]") {
  CHECK(detail::local_order("learned") == detail::LocalOrder::learned);
  CHECK(detail::local_order("near") == detail::LocalOrder::near);
  CHECK(detail::local_order("random") == detail::LocalOrder::random);
  const ParameterSpace space = make_space({make_param("X", range(6)), make_param("Y", range(5))}, {});
  Record record(space);
  const detail::StrategyView view(record);
  std::size_t base = detail::kNone;
  for (std::size_t i = 0; i < space.size(); ++i)
    if (space.value_at(i, 0) == 2 && space.value_at(i, 1) == 2) base = i;
  REQUIRE(base != detail::kNone);
  const std::vector<std::size_t> nb = space.neighbours(base);
  std::vector<std::size_t> as_is = nb;
  detail::NeighbourOrder(space, detail::LocalOrder::random).arrange(base, as_is, view);
  CHECK(as_is == nb);
  std::vector<std::size_t> near = nb;
  detail::NeighbourOrder(space, detail::LocalOrder::near).arrange(base, near, view);
  REQUIRE(near.size() == nb.size());
  auto step = [&](std::size_t c) { return std::abs(space.value_at(c, 0) - 2) + std::abs(space.value_at(c, 1) - 2); };
  for (std::size_t j = 0; j < 4; ++j) CHECK(step(near[j]) == 1);
  for (std::size_t j = 1; j < near.size(); ++j) CHECK(step(near[j - 1]) <= step(near[j]));
}
