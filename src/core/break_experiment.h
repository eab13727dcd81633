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
  double median_row_grad = 0;  // median over rows of |dL/dscores_row|, L = sum(weights ⊙ g)
  double min_row_grad = 0;     // the smallest of those norms
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

}  // namespace attn
