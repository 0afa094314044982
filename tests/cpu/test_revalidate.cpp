// Trials of an older kernel source (tuner/session/revalidate.*, db/sources.*): a text with the same code keeps its
// trials; another code needs `revalidate`, which re-measures each cell's best on the backend and carries the cell
// forward only where the new measurements agree with the record. On the synthetic backend.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include "db/sources.hpp"
#include "tests/cpu/synthetic_session.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/session/revalidate.hpp"
#include "tuner/session/session.hpp"

using namespace autotune;
using autotune_test::SessionFixture;

namespace {

/// A fixture whose kernel was brute-forced with source text "v1".
struct Recorded : SessionFixture {
  sim::SyntheticBackend be;
  Recorded() {
    spec.source_text = "extern \"C\" __global__ void k() { /* v1 */ }";
    session::run(spec, be, *db, w, p, {});
  }
  TuningSpec changed_code() const {
    TuningSpec s = spec;
    s.source_text = "extern \"C\" __global__ void k() { int changed = 1; }";
    return s;
  }
  lookup::Answer best(const TuningSpec& s) const { return lookup::best(*db, s, w, be.device(), p); }
};

/// Revalidates the changed code of a fresh Recorded fixture on a backend of the same (fake) board whose time for a
/// configuration is `time_ns`.
session::RevalidateOutcome revalidate_changed(const std::function<double(const Config&)>& time_ns) {
  Recorded r;
  sim::SyntheticBackend backend(sim::SyntheticBackend::fake_device(), time_ns);
  return session::revalidate(r.changed_code(), backend, *r.db, {});
}

}  // namespace

TEST_CASE("a source text with the same code keeps its trials", "[cpu][revalidate]") {
  Recorded r;
  TuningSpec commented = r.spec;
  commented.source_text = "// a comment\n" + r.spec.source_text + "\n";
  CHECK(commented.source_hash() != r.spec.source_hash());
  CHECK(commented.code_identity() == r.spec.code_identity());
  CHECK(r.best(commented).match == lookup::Match::exact);
  // A session of the new text measures nothing again.
  const session::Result again = session::run(commented, r.be, *r.db, r.w, r.p, {});
  CHECK(again.evaluated == 0);
  CHECK(again.reused == r.valid());
  const session::RevalidateOutcome o = session::revalidate(commented, r.be, *r.db, {});
  CHECK(o.cells.empty());
  CHECK(o.current_cells == 1);
}

TEST_CASE("revalidate carries a cell forward when today's kernel measures like the record", "[cpu][revalidate]") {
  Recorded r;
  const TuningSpec v2 = r.changed_code();
  REQUIRE(v2.code_identity() != r.spec.code_identity());
  CHECK(r.best(v2).match == lookup::Match::spec_default);  // older code: not served
  CHECK(r.best(v2).note.find("autotune revalidate synthetic_kernel") != std::string::npos);

  session::RevalidateRequest q;
  q.top = 5;
  const session::RevalidateOutcome o = session::revalidate(v2, r.be, *r.db, q);
  REQUIRE(o.cells.size() == 1);
  const session::CellRevalidation& c = o.cells.front();
  CHECK(c.old_source == r.spec.source_hash());
  CHECK(c.configs.size() == 5);
  CHECK(c.carried);
  CHECK(c.shift == Approx(1.0));
  CHECK(c.rows_carried == r.valid() - 5);  // the 5 re-measured are fresh rows of today's source
  CHECK(c.verdict.find("carried forward: 5 of 5") == 0);
  const lookup::Answer a = r.best(v2);
  CHECK(a.match == lookup::Match::exact);
  // Every configuration is served under today's source now; the carried rows say where they came from.
  db::TrialFilter mine;
  mine.kernel = v2.name;
  mine.source_hash = v2.source_hash();
  std::size_t carried = 0, fresh = 0;
  for (const db::TrialRow& t : r.db->trials(mine)) {
    if (t.carried_from.empty()) {
      ++fresh;
    } else {
      ++carried;
      CHECK(t.carried_from.find("revalidated from source " + r.spec.source_hash()) == 0);
    }
  }
  CHECK(fresh == 5);
  CHECK(carried == r.valid() - 5);
  // Done once: a second run finds nothing to do.
  const session::RevalidateOutcome again = session::revalidate(v2, r.be, *r.db, q);
  CHECK(again.cells.empty());
  CHECK(again.current_cells == 1);
}

TEST_CASE("revalidate does not carry a cell whose ranking or level changed", "[cpu][revalidate]") {
  SECTION("the ranking changed: the recorded best is now the slowest") {
    const session::RevalidateOutcome o =
        revalidate_changed([](const Config& c) { return 1e9 / sim::SyntheticBackend::default_time_ns(c); });
    REQUIRE(o.cells.size() == 1);
    CHECK_FALSE(o.cells.front().carried);
    CHECK(o.cells.front().rows_carried == 0);
    CHECK(o.cells.front().verdict.find("re-tune with `autotune tune synthetic_kernel --problem n=1048576`") !=
          std::string::npos);
  }
  SECTION("a small common shift is the board's, a large one is not") {
    const session::RevalidateOutcome o =
        revalidate_changed([](const Config& c) { return 0.95 * sim::SyntheticBackend::default_time_ns(c); });
    REQUIRE(o.cells.size() == 1);
    CHECK(o.cells.front().carried);
    CHECK(o.cells.front().shift == Approx(0.95));
    const session::RevalidateOutcome o2 =
        revalidate_changed([](const Config& c) { return 1.3 * sim::SyntheticBackend::default_time_ns(c); });
    REQUIRE(o2.cells.size() == 1);
    CHECK_FALSE(o2.cells.front().carried);
    CHECK(o2.cells.front().verdict.find("every configuration moved by 30.0%") != std::string::npos);
  }
}

TEST_CASE("revalidate refuses what it cannot do", "[cpu][revalidate]") {
  Recorded r;
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  d.name = "Another GPU";
  sim::SyntheticBackend other_board(d);
  CHECK_THROWS_WITH(session::revalidate(r.changed_code(), other_board, *r.db, {}),
                    Catch::Contains("nothing of synthetic_kernel is recorded on Another GPU"));
}
