// The lesson's Break exercise: drop the 1/√d and watch softmax saturate and its gradient vanish.
// Not a training run: one forward and one backward pass through softmax on random data.
#pragma once
#include <cstdint>
#include <vector>

#include "matrix.h"

namespace attn {

constexpr int kMaxBreakD = 4096;
constexpr int kMaxBreakT = 1024;

struct SaturationStats {
  double score_std = 0;        // standard deviation of all T·T scores (n - 1 in the denominator)
  double frac_one_hot = 0;     // share of rows whose largest weight is above 0.99
  double mean_entropy = 0;     // mean over rows of -sum w log w, in nats (uniform over T: log T)
  double median_row_grad = 0;  // median over rows of |dL/dscores_row|, L = sum(weights ⊙ g):
                               // with respect to this side's own softmax input
  double min_row_grad = 0;     // the smallest of those norms
  // The same median with respect to the raw scores q·k: the scaled side's softmax input is
  // q·k/√d, so its gradient is also divided by √d there; the unscaled side's is its own.
  double median_row_grad_raw = 0;
  double q_grad_norm = 0;      // |dL/dq| over all of q (Frobenius): what training actually moves
};

struct BreakResult {
  int d = 0, T = 0;
  std::uint64_t seed = 0;
  SaturationStats scaled, unscaled;
  Matrix weights_scaled, weights_unscaled;               // (T, T), for heatmaps
  std::vector<float> row_max_scaled, row_max_unscaled;   // each row's largest weight (histograms)
};

// q, k: (T, d) and the downstream gradient g: (T, T), all drawn from N(0, 1) with `seed`.
// Throws std::invalid_argument when d or T is outside [1, kMaxBreakD] / [1, kMaxBreakT].
BreakResult run_break_experiment(int d, int T, std::uint64_t seed);

// How many times less gradient the typical unscaled row sends back than the typical scaled one:
// scaled median / unscaled median, each with respect to its own softmax input (`raw` false) or
// both with respect to q·k (`raw` true; smaller by exactly √d). < 0 when both medians are 0 (T = 1).
double break_gradient_ratio(const BreakResult& r, bool raw);

// One draw is a poor headline (the median row sits at the edge of saturation): the factor over
// seeds first_seed, first_seed + 1, ... (`seeds` of them) at the same d and T.
struct BreakRatioRange {
  int seeds = 0;
  std::uint64_t first_seed = 0;
  double min = 0, median = 0, max = 0;              // with respect to each side's softmax input
  double min_raw = 0, median_raw = 0, max_raw = 0;  // with respect to the raw q·k
};
constexpr int kBreakRangeSeeds = 8;
BreakRatioRange break_ratio_range(int d, int T, std::uint64_t first_seed, int seeds = kBreakRangeSeeds);

}  // namespace attn
