// The Break experiment (see break_experiment.h). Not fast: T is at most a few hundred here.
#include "break_experiment.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "random.h"
#include "softmax.h"

namespace attn {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// scores = raw · input_scale (the softmax input), k: (T, d) for the gradient into q.
SaturationStats saturation(const Matrix& raw, float input_scale, const Matrix& k, const Matrix& grad_weights,
                           Matrix* weights_out, std::vector<float>* row_max_out) {
  const Matrix scores = raw * input_scale;
  const int T = static_cast<int>(scores.rows()), n = static_cast<int>(scores.cols());
  SaturationStats s;
  const double mean = scores.cast<double>().mean();
  s.score_std = std::sqrt((scores.cast<double>().array() - mean).square().sum() / std::max(1, T * n - 1));
  Matrix weights(T, n), grad_scores(T, n);
  std::vector<double> row_grad(T);
  row_max_out->resize(T);
  for (int i = 0; i < T; ++i) {
    softmax_row(scores.row(i).data(), weights.row(i).data(), n);
    softmax_backward_row(weights.row(i).data(), grad_weights.row(i).data(), grad_scores.row(i).data(), n);
    const float largest = weights.row(i).maxCoeff();
    (*row_max_out)[i] = largest;
    if (largest > 0.99f) s.frac_one_hot += 1.0;
    s.mean_entropy += row_entropy(weights.row(i).data(), n);
    row_grad[i] = grad_scores.row(i).cast<double>().norm();
  }
  s.frac_one_hot /= T;
  s.mean_entropy /= T;
  s.median_row_grad = median_of(row_grad);
  s.min_row_grad = *std::min_element(row_grad.begin(), row_grad.end());
  // Back one more step: scores = raw · input_scale, so dL/draw = dL/dscores · input_scale, and
  // raw = q·kᵀ, so dL/dq = dL/draw · k.
  s.median_row_grad_raw = s.median_row_grad * input_scale;
  s.q_grad_norm = (grad_scores.cast<double>() * static_cast<double>(input_scale) * k.cast<double>()).norm();
  *weights_out = std::move(weights);
  return s;
}

}  // namespace

BreakResult run_break_experiment(int d, int T, std::uint64_t seed) {
  if (d < 1 || d > kMaxBreakD) throw std::invalid_argument("d must be between 1 and " + std::to_string(kMaxBreakD));
  if (T < 1 || T > kMaxBreakT) throw std::invalid_argument("T must be between 1 and " + std::to_string(kMaxBreakT));
  Rng rng(seed);
  const Matrix q = normal_matrix(rng, T, d), k = normal_matrix(rng, T, d), g = normal_matrix(rng, T, T);
  const Matrix raw = q * k.transpose();
  BreakResult r;
  r.d = d;
  r.T = T;
  r.seed = seed;
  r.scaled = saturation(raw, 1.0f / std::sqrt(static_cast<float>(d)), k, g, &r.weights_scaled, &r.row_max_scaled);
  r.unscaled = saturation(raw, 1.0f, k, g, &r.weights_unscaled, &r.row_max_unscaled);
  return r;
}

double break_gradient_ratio(const BreakResult& r, bool raw) {
  const double scaled = raw ? r.scaled.median_row_grad_raw : r.scaled.median_row_grad;
  const double unscaled = raw ? r.unscaled.median_row_grad_raw : r.unscaled.median_row_grad;
  if (unscaled > 0) return scaled / unscaled;
  return scaled > 0 ? HUGE_VAL : -1.0;
}

BreakRatioRange break_ratio_range(int d, int T, std::uint64_t first_seed, int seeds) {
  if (seeds < 1) throw std::invalid_argument("the seed range needs at least one seed");
  std::vector<double> own, raw;
  for (int s = 0; s < seeds; ++s) {
    const BreakResult r = run_break_experiment(d, T, first_seed + static_cast<std::uint64_t>(s));
    own.push_back(break_gradient_ratio(r, false));
    raw.push_back(break_gradient_ratio(r, true));
  }
  BreakRatioRange range;
  range.seeds = seeds;
  range.first_seed = first_seed;
  range.min = *std::min_element(own.begin(), own.end());
  range.max = *std::max_element(own.begin(), own.end());
  range.median = median_of(own);
  range.min_raw = *std::min_element(raw.begin(), raw.end());
  range.max_raw = *std::max_element(raw.begin(), raw.end());
  range.median_raw = median_of(raw);
  return range;
}

}  // namespace attn
