// The matrix products' dispatch, their shape check, the scalar reference and the Eigen version.
// Not the fast kernel: matmul_simd lives in matmul_simd.cpp and is checked against matmul_scalar.
#include "matmul.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace attn {

// Sizes and pointers only: the values are the caller's (a model loader checks its own files).
void check_matmul_problem(const MatmulProblem& p, const float* c) {
  if (p.M < 0 || p.K < 0 || p.N < 0)
    throw std::invalid_argument("matmul: negative size (M " + std::to_string(p.M) + ", K " + std::to_string(p.K) +
                                ", N " + std::to_string(p.N) + ")");
  if (p.layout != MatmulLayout::NN && p.layout != MatmulLayout::NT && p.layout != MatmulLayout::TN)
    throw std::invalid_argument("matmul: unknown layout");
  if (p.b_dtype != Dtype::F32 && p.b_dtype != Dtype::F16 && p.b_dtype != Dtype::BF16)
    throw std::invalid_argument("matmul: unknown dtype for b");
  const bool b_16bit = p.b_dtype != Dtype::F32;
  // 16-bit weights are the forward's (x·W, x·Wᵀ); a gradient's Aᵀ·B always has float b
  if (b_16bit && p.layout == MatmulLayout::TN)
    throw std::invalid_argument(std::string("matmul: TN needs float b, not ") + dtype_name(p.b_dtype));
  if (b_16bit && p.b)
    throw std::invalid_argument(std::string("matmul: b must be null when b_dtype is ") + dtype_name(p.b_dtype) + " (b16 holds it)");
  const bool has_product = p.M > 0 && p.N > 0 && p.K > 0;
  const bool b_missing = b_16bit ? !p.b16 : !p.b;
  if ((has_product && (!p.a || b_missing)) || (p.M > 0 && p.N > 0 && !c))
    throw std::invalid_argument("matmul: a null matrix pointer for a non-empty product");
}

namespace {

// Element (i, k) of a and (k, j) of b whatever the layout: the reference reads through these.
inline float a_at(const MatmulProblem& p, int i, int k) {
  return p.layout == MatmulLayout::TN ? p.a[static_cast<std::size_t>(k) * p.M + i] : p.a[static_cast<std::size_t>(i) * p.K + k];
}
// 16-bit b is widened one element at a time with the exact conversions of dtype.h.
inline float b_at(const MatmulProblem& p, int k, int j) {
  const std::size_t at = p.layout == MatmulLayout::NT ? static_cast<std::size_t>(j) * p.K + k : static_cast<std::size_t>(k) * p.N + j;
  return p.b_dtype == Dtype::F32 ? p.b[at] : widen16(p.b_dtype, p.b16[at]);
}

// Eigen with 16-bit b: b is widened one block at a time into this per-thread scratch (never the
// whole matrix: the LM head's b is 50 257 x 768), grown once to kEigenBlock floats.
constexpr std::size_t kEigenBlock = 64 * 1024;  // 256 KB: an L2-sized slice of b
std::vector<float>& eigen_scratch() {
  thread_local std::vector<float> scratch;
  if (scratch.size() < kEigenBlock) scratch.resize(kEigenBlock);
  return scratch;
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
// 16-bit b_kj is widened exactly (every half and bfloat16 is a float), so the only rounding is the
// final one to float.
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
  if (p.K > 0 && p.b_dtype != Dtype::F32) {
    // 16-bit b, NN or NT (check_matmul_problem refused TN). Shapes: a (M, K), c (M, N).
    //   NN, b (K, N): blocks of kb rows x nb columns of b, widened, then c[:, j0:j0+nb] += a[:, k0:k0+kb]·block
    //   NT, b (N, K): blocks of nb whole rows of b (nb x K, contiguous), c[:, j0:j0+nb] += a·blockᵀ
    float* block = eigen_scratch().data();
    const ConstMap a(p.a, p.M, p.K);
    if (p.layout == MatmulLayout::NT) {
      const int nb = static_cast<int>(std::max<std::size_t>(1, kEigenBlock / static_cast<std::size_t>(p.K)));
      for (int j0 = 0; j0 < p.N; j0 += nb) {
        const int cols = std::min(nb, p.N - j0);
        const std::size_t n = static_cast<std::size_t>(cols) * p.K;
        const std::uint16_t* src = p.b16 + static_cast<std::size_t>(j0) * p.K;
        for (std::size_t e = 0; e < n; ++e) block[e] = widen16(p.b_dtype, src[e]);
        out.middleCols(j0, cols).noalias() += a * ConstMap(block, cols, p.K).transpose();
      }
    } else {
      const int nb = std::min(p.N, 256);
      const int kb = static_cast<int>(std::max<std::size_t>(1, kEigenBlock / static_cast<std::size_t>(nb)));
      for (int j0 = 0; j0 < p.N; j0 += nb) {
        const int cols = std::min(nb, p.N - j0);
        for (int k0 = 0; k0 < p.K; k0 += kb) {
          const int rows = std::min(kb, p.K - k0);
          for (int k = 0; k < rows; ++k) {
            const std::uint16_t* src = p.b16 + static_cast<std::size_t>(k0 + k) * p.N + j0;
            float* dst = block + static_cast<std::size_t>(k) * cols;
            for (int j = 0; j < cols; ++j) dst[j] = widen16(p.b_dtype, src[j]);
          }
          out.middleCols(j0, cols).noalias() += a.middleCols(k0, rows) * ConstMap(block, rows, cols);
        }
      }
    }
  } else if (p.K > 0) {
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
