// The matrix products' dispatch, their shape check, the scalar reference and the Eigen version.
// Not the fast kernel: matmul_simd lives in matmul_simd.cpp and is checked against matmul_scalar.
#include "matmul.h"

#include <stdexcept>
#include <string>

#include <Eigen/Core>

namespace attn {

// Sizes and pointers only: the values are the caller's (a model loader checks its own files).
void check_matmul_problem(const MatmulProblem& p, const float* c) {
  if (p.M < 0 || p.K < 0 || p.N < 0)
    throw std::invalid_argument("matmul: negative size (M " + std::to_string(p.M) + ", K " + std::to_string(p.K) +
                                ", N " + std::to_string(p.N) + ")");
  if (p.layout != MatmulLayout::NN && p.layout != MatmulLayout::NT && p.layout != MatmulLayout::TN)
    throw std::invalid_argument("matmul: unknown layout");
  const bool has_product = p.M > 0 && p.N > 0 && p.K > 0;
  if ((has_product && (!p.a || !p.b)) || (p.M > 0 && p.N > 0 && !c))
    throw std::invalid_argument("matmul: a null matrix pointer for a non-empty product");
}

namespace {

// Element (i, k) of a and (k, j) of b whatever the layout: the reference reads through these.
inline float a_at(const MatmulProblem& p, int i, int k) {
  return p.layout == MatmulLayout::TN ? p.a[static_cast<std::size_t>(k) * p.M + i] : p.a[static_cast<std::size_t>(i) * p.K + k];
}
inline float b_at(const MatmulProblem& p, int k, int j) {
  return p.layout == MatmulLayout::NT ? p.b[static_cast<std::size_t>(j) * p.K + k] : p.b[static_cast<std::size_t>(k) * p.N + j];
}

}  // namespace

void matmul(Backend backend, const MatmulProblem& problem, float* c) {
  switch (backend) {
    case Backend::Scalar: matmul_scalar(problem, c); return;
    case Backend::Eigen: matmul_eigen(problem, c); return;
    case Backend::Simd: matmul_simd(problem, c); return;
  }
  throw std::invalid_argument("matmul: unknown backend");
}

// c_ij = [c_ij +] bias_j + sum_k a_ik · b_kj, summed in double: the truth the others are checked against.
void matmul_scalar(const MatmulProblem& p, float* c) {
  check_matmul_problem(p, c);
  for (int i = 0; i < p.M; ++i) {
    float* c_j = c + static_cast<std::size_t>(i) * p.N;
    for (int j = 0; j < p.N; ++j) {
      double sum = p.accumulate ? c_j[j] : 0.0;
      if (p.bias) sum += p.bias[j];
      double dot = 0.0;
      for (int k = 0; k < p.K; ++k) dot += static_cast<double>(a_at(p, i, k)) * b_at(p, k, j);
      c_j[j] = static_cast<float>(sum + dot);
    }
  }
}

void matmul_eigen(const MatmulProblem& p, float* c) {
  check_matmul_problem(p, c);
  if (p.M == 0 || p.N == 0) return;
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ConstMap = Eigen::Map<const RowMajor>;
  Eigen::Map<RowMajor> out(c, p.M, p.N);
  if (!p.accumulate) out.setZero();
  if (p.K > 0) {
    // the maps' shapes are the stored ones; the transposes are views, not copies
    switch (p.layout) {
      case MatmulLayout::NN: out.noalias() += ConstMap(p.a, p.M, p.K) * ConstMap(p.b, p.K, p.N); break;
      case MatmulLayout::NT: out.noalias() += ConstMap(p.a, p.M, p.K) * ConstMap(p.b, p.N, p.K).transpose(); break;
      case MatmulLayout::TN: out.noalias() += ConstMap(p.a, p.K, p.M).transpose() * ConstMap(p.b, p.K, p.N); break;
    }
  }
  if (p.bias) out.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(p.bias, p.N);
}

}  // namespace attn
