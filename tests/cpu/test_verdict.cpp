// tuner/explore/verdict.cpp: the 2 x SMs statements and the rule derived from the data, on hand-made
// points and on the real H200 recording (tests/data/recorded_h200.db: every BLOCK_SIZE x BLOCKS_PER_SM point
// the constraint allows, for variants 6 and 7).
#include <catch2/catch.hpp>

#include <stdexcept>

#include "db/database.hpp"
#include "tests/test_support.hpp"
#include "tuner/explore/verdict.hpp"

using namespace autotune;
using namespace autotune::explore;

namespace {

VerdictPoint pt(Value bs, Value g, double gbps) {
  VerdictPoint p;
  p.block_size = bs;
  p.blocks_per_sm = g;
  p.threads_per_sm = static_cast<double>(bs * g);
  p.ok = gbps > 0;
  p.gbps = gbps;
  if (!p.ok) p.state = "wrong_result";
  return p;
}

/// The recorded H200 points of variant `variant` with the other parameters as given, threads = bs x g.
std::vector<VerdictPoint> recorded(Value variant, Value items, Value vec, Value final_) {
  auto rec = db::Database::open(autotune_test::data_dir() + "/recorded_h200.db", db::Database::Mode::read_only);
  db::TrialFilter f;
  f.kernel = "reduction";
  f.workload = "float32/sum";
  f.problem = "n=67108864";
  std::vector<VerdictPoint> out;
  for (const auto& t : rec->trials(f)) {
    Config c = Config::from_json(t.config_json);
    if (c.at("VARIANT") != variant || c.at("ITEMS_PER_THREAD") != items || c.at("VEC") != vec ||
        c.at("FINAL") != final_ || c.at("KAHAN") != 0)
      continue;
    VerdictPoint p = pt(c.at("BLOCK_SIZE"), c.at("BLOCKS_PER_SM"), t.m.ok() ? t.gbps : 0);
    out.push_back(p);
  }
  return out;
}

const BlockVerdict& block(const Verdict& v, Value bs) {
  for (const auto& b : v.blocks)
    if (b.block_size == bs) return b;
  FAIL("no block verdict for " << bs);
  throw 0;
}

}  // namespace

TEST_CASE("verdict: a threads-per-SM threshold is found and worded", "[cpu][verdict]") {
  // Peak once bs x g >= 1024, whatever the block size.
  std::vector<VerdictPoint> pts;
  for (Value bs : {128, 256, 512})
    for (Value g : {1, 2, 4, 8}) {
      Value threads = bs * g;
      pts.push_back(pt(bs, g, threads >= 1024 ? 1000.0 - g : 400.0 + threads / 4.0));
    }
  Verdict v = make_verdict(pts, 0.03, 2048);
  CHECK(v.measured == 12);
  CHECK(v.best_gbps == Approx(998));
  CHECK(v.best_block_size == 512);
  CHECK(v.best_blocks_per_sm == 2);
  CHECK(v.rule.kind == Rule::Kind::threads_per_sm);
  CHECK(v.rule.threshold == 1024);
  CHECK(v.rule.below == 512);
  CHECK(v.rule.fits);
  CHECK(v.rule.exceptions.empty());
  CHECK_THAT(v.rule.text, Catch::Contains("blocks_per_sm x block_size >= 1024 threads per SM") &&
                              Catch::Contains("50% of the 2048") && Catch::Contains("fits all 12"));
  // 2 x SMs: 512 threads reach the peak there, 128 and 256 do not.
  CHECK(block(v, 512).two_x_measured);
  CHECK(block(v, 512).two_x_ratio == Approx(1.0));
  CHECK_THAT(block(v, 512).text, Catch::Contains("2 x SMs is the best grid"));
  CHECK_THAT(block(v, 128).text, Catch::StartsWith("at 128 threads: 2 x SMs reaches") && Catch::Contains("8 x SMs"));
  CHECK_THAT(v.two_x_summary, Catch::Contains("1 of 3 block sizes (512)") && Catch::Contains("from 512 threads per block up"));
  CHECK(v.lines.size() == 1 + 3 + 1 + 1);
}

TEST_CASE("verdict: other rule kinds, exceptions, and no rule", "[cpu][verdict]") {
  SECTION("grid rule independent of the block size") {
    std::vector<VerdictPoint> pts;
    for (Value bs : {64, 256})
      for (Value g : {1, 2, 4, 8}) pts.push_back(pt(bs, g, g >= 4 ? 100 : 50));
    Verdict v = make_verdict(pts, 0.03);
    CHECK(v.rule.kind == Rule::Kind::blocks_per_sm);
    CHECK(v.rule.threshold == 4);
    CHECK_THAT(v.rule.text, Catch::Contains("the grid is at least 4 x SMs"));
    CHECK_THAT(v.two_x_summary, Catch::Contains("does not hold at any block size"));
  }
  SECTION("everything at the peak") {
    std::vector<VerdictPoint> pts = {pt(64, 1, 100), pt(64, 2, 99), pt(128, 1, 98.5), pt(128, 2, 100)};
    Verdict v = make_verdict(pts, 0.03);
    CHECK(v.rule.kind == Rule::Kind::all_at_peak);
    CHECK_THAT(v.rule.text, Catch::Contains("does not matter"));
    CHECK_THAT(v.two_x_summary, Catch::Contains("holds for every block size"));
    CHECK_THAT(block(v, 128).text, Catch::Contains("2 x SMs is the best grid"));
  }
  SECTION("one exception is tolerated and listed") {
    std::vector<VerdictPoint> pts;
    for (Value bs : {64, 128, 256, 512})
      for (Value g : {1, 2, 4}) pts.push_back(pt(bs, g, bs * g >= 512 ? 100 : 60));
    pts[2].gbps = 80;  // 64 x 4 = 256 threads: below anyway, so no exception
    pts.back().gbps = 90;  // 512 x 4 off the peak: an exception to ">= 512"
    Verdict v = make_verdict(pts, 0.03);
    CHECK(v.rule.kind == Rule::Kind::threads_per_sm);
    CHECK(v.rule.threshold == 512);
    CHECK(v.rule.fits);
    REQUIRE(v.rule.exceptions.size() == 1);
    CHECK(v.rule.exceptions.front() == "512 x 4");
    CHECK_THAT(v.rule.text, Catch::Contains("exceptions: 512 x 4"));
  }
  SECTION("no simple rule fits alternating data") {
    std::vector<VerdictPoint> pts;
    int k = 0;
    for (Value bs : {64, 128, 256, 512})
      for (Value g : {1, 2, 4, 8}) pts.push_back(pt(bs, g, (k++ % 2) ? 100 : 50));
    Verdict v = make_verdict(pts, 0.03);
    CHECK_FALSE(v.rule.fits);
    CHECK_THAT(v.rule.text, Catch::StartsWith("no simple rule fits"));
  }
  SECTION("2 x SMs excluded, failed or absent is said, not guessed") {
    std::vector<VerdictPoint> pts = {pt(64, 1, 50), pt(64, 4, 100), pt(128, 1, 70), pt(128, 2, 0), pt(256, 1, 90)};
    VerdictPoint excluded = pt(256, 2, 0);
    excluded.state = "excluded by constraint `X`";
    pts.push_back(excluded);
    Verdict v = make_verdict(pts, 0.03);
    CHECK(block(v, 64).two_x_state == "not in the sweep");
    CHECK_THAT(block(v, 128).text, Catch::Contains("not measured (wrong_result)"));
    CHECK_THAT(block(v, 256).text, Catch::Contains("excluded by constraint `X`"));
    CHECK_THAT(v.two_x_summary, Catch::Contains("could not be judged"));
  }
  SECTION("too little data") {
    Verdict v = make_verdict({pt(64, 1, 10), pt(64, 2, 20)}, 0.03);
    CHECK(v.rule.kind == Rule::Kind::none);
    CHECK_THAT(v.rule.text, Catch::Contains("too few points"));
    Verdict none = make_verdict({pt(64, 1, 0)}, 0.03);
    CHECK(none.measured == 0);
    CHECK_THAT(none.lines.front(), Catch::Contains("no point was measured"));
  }
  CHECK_THROWS_AS(make_verdict({}, 1.5), std::invalid_argument);
}

TEST_CASE("verdict on the recorded H200 reduction: 2 x SMs and the threads-per-SM rule", "[cpu][verdict]") {
  // The best recorded configuration's other parameters: variant 6, 8 items of 2 elements, atomics.
  std::vector<VerdictPoint> pts = recorded(6, 8, 2, 1);
  REQUIRE(pts.size() == 27);  // every point BLOCKS_PER_SM * BLOCK_SIZE <= 2048 allows
  Verdict v = make_verdict(pts, 0.03, 2048);
  CHECK(v.measured == 27);
  CHECK(v.best_block_size == 512);
  CHECK(v.best_blocks_per_sm == 4);
  CHECK(v.best_gbps == Approx(3693.8).epsilon(1e-4));
  // 2 x SMs: far from the best grid with small blocks, within 3% only from 512 threads up.
  CHECK(block(v, 64).two_x_ratio == Approx(0.524).margin(0.001));
  CHECK(block(v, 64).best_blocks_per_sm == 16);
  CHECK(block(v, 128).two_x_ratio == Approx(0.784).margin(0.001));
  CHECK(block(v, 256).two_x_ratio == Approx(0.968).margin(0.001));
  CHECK(block(v, 512).two_x_ratio == Approx(0.993).margin(0.001));
  CHECK(block(v, 1024).best_blocks_per_sm == 2);
  CHECK_THAT(block(v, 256).text, Catch::Contains("2 x SMs reaches 96.8% of the best grid (8 x SMs, 3669.6 GB/s)"));
  CHECK_THAT(v.two_x_summary, Catch::Contains("2 of 5 block sizes (512, 1024)"));
  // The data's rule: peak once 768 threads per SM are resident (512 is not enough at any block size).
  CHECK(v.rule.kind == Rule::Kind::threads_per_sm);
  CHECK(v.rule.threshold == 768);
  CHECK(v.rule.below == 512);
  CHECK(v.rule.agree == 27);
  CHECK(v.rule.exceptions.empty());

  // Fewer bytes in flight per thread need more threads per SM: variant 7 with one element per thread
  // reaches its (lower) peak only with the full 2048 threads.
  std::vector<VerdictPoint> scalar = recorded(7, 1, 1, 1);
  REQUIRE(scalar.size() == 27);
  Verdict vs = make_verdict(scalar, 0.03, 2048);
  CHECK(vs.rule.kind == Rule::Kind::threads_per_sm);
  CHECK(vs.rule.threshold == 2048);
  CHECK(vs.rule.exceptions.empty());
  CHECK(block(vs, 256).two_x_ratio < 0.35);
  CHECK(vs.best_gbps < 0.65 * v.best_gbps);
}
