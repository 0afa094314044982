#include <catch2/catch.hpp>

#include <cmath>

#include "tuner/core/sampling.hpp"

using namespace autotune;

TEST_CASE("median confidence interval from order statistics", "[cpu][sampling]") {
  CHECK(std::isinf(median_ci_width({})));
  CHECK(std::isinf(median_ci_width({1.0})));
  CHECK(std::isinf(median_ci_width({0.0, 0.0, 0.0})));
  // n <= 9: the whole range relative to the median.
  CHECK(median_ci_width({1.0, 1.01, 0.99, 1.0, 1.0, 1.02, 1.0}) == Approx(0.03));
  // n = 15: ranks 3 and 13 (1-based): the two extremes on each side do not count.
  std::vector<double> v{0.5, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.1, 3.0};
  CHECK(median_ci_width(v) == Approx(0.0));
  v[2] = 0.98;
  v[12] = 1.01;
  CHECK(median_ci_width(v) == Approx(0.03));
}

TEST_CASE("sampling stops at a stable median, the budget or the most samples", "[cpu][sampling]") {
  SamplingRule rule;  // 7..15, ci 2%, 2 s
  std::vector<double> steady(6, 0.05);
  CHECK_FALSE(rule.done(steady));  // fewer than 7
  steady.push_back(0.05);
  CHECK(rule.done(steady));  // 7 identical samples of 50 us: stable
  std::vector<double> noisy{0.05, 0.06, 0.05, 0.07, 0.05, 0.06, 0.05};
  CHECK_FALSE(rule.done(noisy));
  while (noisy.size() < 15) noisy.push_back(noisy.size() % 2 ? 0.05 : 0.08);
  CHECK(rule.done(noisy));  // never more than max_samples
  std::vector<double> slow{400, 700, 400, 700, 400};
  CHECK_FALSE(rule.done(slow));
  slow.push_back(700);
  slow.push_back(400);  // 3.7 s of samples, 7 of them
  CHECK(rule.done(slow));

  SamplingRule fixed;
  fixed.stable_ci = 0;
  fixed.max_seconds = 1e9;
  CHECK_FALSE(fixed.done(steady));  // no early stop: all 15
  SamplingRule few;
  few.max_samples = 3;
  CHECK(few.done({1.0, 2.0, 3.0}));  // min_samples is capped at max_samples
}

TEST_CASE("the rule is described honestly in the protocol", "[cpu][sampling]") {
  SamplingRule rule;
  CHECK(rule.describe() == "samples=7..15;stop=ci95<=2%|2s");
  rule.stable_ci = 0;
  CHECK(rule.describe() == "samples=7..15;stop=2s");
  rule.min_samples = 15;
  CHECK(rule.describe() == "samples=15");
  rule.min_samples = 9;
  rule.max_samples = 9;
  CHECK(rule.describe() == "samples=9");
}

TEST_CASE("racing stops a clearly slower configuration after its first samples, never a fast one", "[cpu][sampling]") {
  SamplingRule r;  // 7..15 samples, ci95 <= 2%
  r.race_above_ms = 1.25;
  CHECK_FALSE(r.lost_race({2.0, 2.1}));  // fewer than race_after samples: undecided
  CHECK(r.lost_race({2.0, 2.1, 1.9}));
  CHECK(r.done({2.0, 2.1, 1.9}));             // done before min_samples
  CHECK_FALSE(r.lost_race({2.0, 1.2, 2.1}));  // one sample within reach: the full protocol
  CHECK_FALSE(r.done({2.0, 1.2, 2.1}));
  CHECK_FALSE(r.lost_race({1.0, 1.01, 0.99, 1.0}));
  r.race_above_ms = 0;  // off
  CHECK_FALSE(r.lost_race({100.0, 100.0, 100.0}));
  CHECK_FALSE(r.done({100.0, 100.0, 100.0}));
  r.race_above_ms = 1.25;
  r.race_after = 5;
  CHECK_FALSE(r.lost_race({2.0, 2.0, 2.0}));
  CHECK(r.lost_race({2.0, 2.0, 2.0, 2.0, 2.0}));
}

TEST_CASE("racing's warm-up probe loses only far above the samples' bound, and only with racing on",
          "[cpu][sampling]") {
  SamplingRule r;
  r.race_above_ms = 1.25;
  CHECK_FALSE(r.lost_probe(10.0));  // no probe factor: no probe
  r.race_probe_factor = 2.0;        // the probe loses above 2.5 ms
  CHECK(r.lost_probe(2.6));
  CHECK_FALSE(r.lost_probe(2.4));  // slower than the samples' bound, but a single unflushed run: sampled
  CHECK_FALSE(r.lost_probe(1.0));
  r.race_above_ms = 0;  // racing off
  CHECK_FALSE(r.lost_probe(100.0));
}
