// Softmax over one row of scores, its backward pass, and the entropy of a row of weights.
// Not a kernel: these are the readable scalar definitions every fast path is checked against.
#pragma once
#include <cstddef>

namespace attn {

// weights[j] = exp(scores[j] - max) / sum_k exp(scores[k] - max).
// Subtracting the row max changes nothing mathematically (it cancels in the ratio) but keeps
// exp() from overflowing. Entries equal to -infinity (masked) get weight exactly 0; a row that is
// entirely masked gets all-zero weights instead of 0/0 = NaN. Accumulates in double.
void softmax_row(const float* scores, float* weights, std::size_t n);

// Vector-Jacobian product of softmax for one row: given the weights w and the gradient g of the
// loss with respect to w, returns dL/dscores_i = w_i * (g_i - sum_j w_j g_j).
void softmax_backward_row(const float* weights, const float* grad_weights, float* grad_scores, std::size_t n);

// Entropy in nats, -sum w log w (0 log 0 taken as 0).
double row_entropy(const float* weights, std::size_t n);

}  // namespace attn
