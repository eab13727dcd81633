// Scalar softmax, softmax backward and entropy (see softmax.h).
// Not vectorised on purpose: this is the reference.
#include "softmax.h"

#include <cmath>
#include <limits>

namespace attn {

void softmax_row(const float* scores, float* weights, std::size_t n) {
  double row_max = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < n; ++j) row_max = std::fmax(row_max, static_cast<double>(scores[j]));
  if (std::isinf(row_max) && row_max < 0) {  // every key masked: nothing to attend to
    for (std::size_t j = 0; j < n; ++j) weights[j] = 0.0f;
    return;
  }
  double sum = 0.0;
  for (std::size_t j = 0; j < n; ++j) sum += std::exp(static_cast<double>(scores[j]) - row_max);
  for (std::size_t j = 0; j < n; ++j)
    weights[j] = static_cast<float>(std::exp(static_cast<double>(scores[j]) - row_max) / sum);
}

void softmax_backward_row(const float* weights, const float* grad_weights, float* grad_scores, std::size_t n) {
  double weighted_grad = 0.0;  // sum_j w_j g_j
  for (std::size_t j = 0; j < n; ++j) weighted_grad += static_cast<double>(weights[j]) * grad_weights[j];
  for (std::size_t i = 0; i < n; ++i)
    grad_scores[i] = static_cast<float>(weights[i] * (grad_weights[i] - weighted_grad));
}

double row_entropy(const float* weights, std::size_t n) {
  double h = 0.0;
  for (std::size_t j = 0; j < n; ++j)
    if (weights[j] > 0.0f) h -= static_cast<double>(weights[j]) * std::log(static_cast<double>(weights[j]));
  return h;
}

}  // namespace attn
