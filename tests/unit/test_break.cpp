// The Break experiment at the lesson's d = 512, T = 64: the numbers fall in the lesson's regime.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "../../src/core/break_experiment.h"

using namespace attn;

TEST_CASE("Break at d=512, T=64: scaling keeps rows soft, no scaling saturates them") {
  for (std::uint64_t seed : {0ull, 1ull, 42ull}) {
    const BreakResult r = run_break_experiment(512, 64, seed);
    CAPTURE(seed);
    // Scaled: scores ~N(0, 1), no one-hot row, entropy near the lesson's 3.7 (log 64 = 4.16).
    CHECK(r.scaled.score_std == doctest::Approx(1.0).epsilon(0.1));
    CHECK(r.scaled.frac_one_hot == 0.0);
    CHECK(r.scaled.mean_entropy == doctest::Approx(3.7).epsilon(0.05));
    // Unscaled: std ~ sqrt(512) = 22.6, most rows one-hot, entropy < 0.5, gradients 10x+ smaller.
    CHECK(r.unscaled.score_std == doctest::Approx(std::sqrt(512.0)).epsilon(0.1));
    CHECK(r.unscaled.frac_one_hot > 0.5);
    CHECK(r.unscaled.mean_entropy < 0.5);
    CHECK(r.scaled.median_row_grad >= 10.0 * r.unscaled.median_row_grad);
    CHECK(r.unscaled.min_row_grad < 1e-6);
    CHECK(r.unscaled.min_row_grad <= r.unscaled.median_row_grad);
    REQUIRE(r.row_max_unscaled.size() == 64);
    REQUIRE(r.weights_scaled.rows() == 64);
  }
}

TEST_CASE("Break: the same seed gives the same numbers; another seed others") {
  const BreakResult a = run_break_experiment(64, 16, 5), b = run_break_experiment(64, 16, 5),
                    c = run_break_experiment(64, 16, 6);
  CHECK(a.unscaled.mean_entropy == b.unscaled.mean_entropy);
  CHECK(a.unscaled.mean_entropy != c.unscaled.mean_entropy);
}

TEST_CASE("Break: at small d the scale still matters, by exactly √d; bad sizes are refused") {
  // d = 4: unscaled scores are exactly 2 (= √4) times the scaled ones, so their spread doubles
  // (1.4054 -> 2.8108 for seed 0) and the rows sharpen (entropy 1.645 -> 1.339 nats, of ln 8 = 2.079).
  const BreakResult r = run_break_experiment(4, 8, 0);
  CHECK(r.unscaled.score_std == doctest::Approx(2.0 * r.scaled.score_std).epsilon(1e-6));
  CHECK(r.scaled.score_std == doctest::Approx(1.40540).epsilon(1e-4));
  CHECK(r.scaled.mean_entropy == doctest::Approx(1.64538).epsilon(1e-4));
  CHECK(r.unscaled.mean_entropy == doctest::Approx(1.33887).epsilon(1e-4));
  CHECK(r.scaled.frac_one_hot == 0.0);
  CHECK(r.unscaled.frac_one_hot == 0.0);  // at d = 4 not yet one-hot: that takes a larger d
  // d = 1 is the degenerate case: √1 = 1, scaled and unscaled are the same numbers.
  const BreakResult one = run_break_experiment(1, 8, 0);
  CHECK(one.scaled.score_std == one.unscaled.score_std);
  CHECK_THROWS_AS(run_break_experiment(0, 8, 0), std::invalid_argument);
  CHECK_THROWS_AS(run_break_experiment(8, kMaxBreakT + 1, 0), std::invalid_argument);
}

TEST_CASE("Break: two gradient ratios, which is which, and the caveat about q") {
  // Seed 0, d = 512, T = 64: the typical unscaled row sends back ~244x less gradient to its own
  // softmax input, but only ~11x less to the raw q·k (the scaled side's is divided by √512 there).
  const BreakResult r = run_break_experiment(512, 64, 0);
  const double own = break_gradient_ratio(r, false), raw = break_gradient_ratio(r, true);
  CHECK(own == doctest::Approx(r.scaled.median_row_grad / r.unscaled.median_row_grad));
  CHECK(raw == doctest::Approx(own / std::sqrt(512.0)).epsilon(1e-5));
  CHECK(own == doctest::Approx(243.6).epsilon(0.01));
  CHECK(raw == doctest::Approx(10.77).epsilon(0.01));
  CHECK(r.unscaled.median_row_grad_raw == r.unscaled.median_row_grad);
  CHECK(r.scaled.median_row_grad_raw == doctest::Approx(r.scaled.median_row_grad / std::sqrt(512.0)).epsilon(1e-6));
  // The lesson's caveat: the total gradient into q is not smaller without ÷√d (here ~20x larger):
  // the few unsaturated rows dominate.
  for (std::uint64_t seed : {0ull, 1ull, 42ull}) {
    CAPTURE(seed);
    const BreakResult s = run_break_experiment(512, 64, seed);
    CHECK(s.unscaled.q_grad_norm > 5.0 * s.scaled.q_grad_norm);
  }
  // T = 1: one weight, always 1, no gradient on either side: no ratio.
  CHECK(break_gradient_ratio(run_break_experiment(8, 1, 0), false) < 0);
}

TEST_CASE("Break: the factor over seeds 0-7 is a range, and seed 0 is its largest draw") {
  const BreakRatioRange range = break_ratio_range(512, 64, 0);
  CHECK(range.seeds == kBreakRangeSeeds);
  double lo = HUGE_VAL, hi = 0;
  for (int s = 0; s < kBreakRangeSeeds; ++s) {
    const double own = break_gradient_ratio(run_break_experiment(512, 64, static_cast<std::uint64_t>(s)), false);
    lo = std::min(lo, own);
    hi = std::max(hi, own);
  }
  CHECK(range.min == lo);
  CHECK(range.max == hi);
  CHECK(range.min <= range.median);
  CHECK(range.median <= range.max);
  // Seeds 0-7: about 21x to 244x with respect to each side's softmax input, 0.9x to 11x to q·k.
  CHECK(range.min == doctest::Approx(20.68).epsilon(0.01));
  CHECK(range.max == doctest::Approx(243.6).epsilon(0.01));
  CHECK(range.min_raw == doctest::Approx(range.min / std::sqrt(512.0)).epsilon(1e-5));
  CHECK(range.max_raw == doctest::Approx(range.max / std::sqrt(512.0)).epsilon(1e-5));
  CHECK_THROWS_AS(break_ratio_range(512, 64, 0, 0), std::invalid_argument);
}
