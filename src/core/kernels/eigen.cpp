// The Eigen kernel: the lesson's matrix form, A = softmax(QKᵀ·scale), out = A·V, as three calls.
// Not fused: it materialises the full (Tq, Tk) matrix, which is what the matrix form costs.
#include <cmath>
#include <limits>

#include "../attention.h"
#include "kernels.h"

namespace attn {

void attention_eigen(const AttentionProblem& p, float* output, float* weights) {
  using ConstMap = Eigen::Map<const Matrix>;
  const ConstMap query(p.query, p.Tq, p.d), key(p.key, p.Tk, p.d), value(p.value, p.Tk, p.dv);
  Matrix scores = (query * key.transpose()) * p.scale;  // (Tq, Tk)
  if (p.softcap > 0) scores = ((scores / p.softcap).array().tanh() * p.softcap).matrix();
  for (int i = 0; i < p.Tq; ++i)
    for (int j = 0; j < p.Tk; ++j)
      if (p.hidden(i, j)) scores(i, j) = -std::numeric_limits<float>::infinity();
  // Stable softmax per row: subtract the row max before exp (every row keeps a visible key: itself, key 0, or what the caller left uncut).
  const Eigen::VectorXf row_max = scores.rowwise().maxCoeff();
  scores = (scores.colwise() - row_max).array().exp().matrix();
  const Eigen::VectorXf row_sum = scores.rowwise().sum();
  scores = scores.array().colwise() / row_sum.array();
  Eigen::Map<Matrix>(output, p.Tq, p.dv).noalias() = scores * value;
  if (weights) Eigen::Map<Matrix>(weights, p.Tq, p.Tk) = scores;
}

}  // namespace attn
