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

SaturationStats saturation(const Matrix& scores, const Matrix& grad_weights, Matrix* weights_out,
                           std::vector<float>* row_max_out) {
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
  std::sort(row_grad.begin(), row_grad.end());
  s.median_row_grad = T % 2 ? row_grad[T / 2] : 0.5 * (row_grad[T / 2 - 1] + row_grad[T / 2]);
  s.min_row_grad = row_grad.front();
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
  r.scaled = saturation(raw / std::sqrt(static_cast<float>(d)), g, &r.weights_scaled, &r.row_max_scaled);
  r.unscaled = saturation(raw, g, &r.weights_unscaled, &r.row_max_unscaled);
  return r;
}

}  // namespace attn
