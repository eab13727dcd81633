// Dense matrix products for the model forward and the trainer: C = A·B, A·Bᵀ, Aᵀ·B (+ bias), behind
// one interface with a scalar reference (the truth) and fast versions. Not attention (kernels.h).
#pragma once
#include <cstdint>

#include "../dtype.h"
#include "kernels.h"

namespace attn {

// All row-major and contiguous. Shapes: a (M, K); b (K, N) for NN, (N, K) for NT, and for TN a is
// (K, M) and b (K, N); c (M, N). bias (N) or nullptr. accumulate: c += product instead of c =.
enum class MatmulLayout { NN, NT, TN };
struct MatmulProblem {
  MatmulLayout layout = MatmulLayout::NN;
  const float* a = nullptr;
  const float* b = nullptr;
  const float* bias = nullptr;
  // A model's weights as the file gave them: b_dtype F16 or BF16 means b is null and b16 holds b's
  // elements in that format (same shape and layout), widened inside the product with float
  // accumulation. NN and NT only (the forward's x·W and x·Wᵀ); TN needs float b.
  const std::uint16_t* b16 = nullptr;
  Dtype b_dtype = Dtype::F32;
  int M = 0, K = 0, N = 0;
  bool accumulate = false;
};

void matmul(Backend backend, const MatmulProblem& problem, float* c);
void matmul_scalar(const MatmulProblem& problem, float* c);  // double accumulation: the reference
void matmul_eigen(const MatmulProblem& problem, float* c);
void matmul_simd(const MatmulProblem& problem, float* c);

// Which instruction set matmul_simd runs now: "wasm-simd128", "sse2", "avx2-fma", "avx512f" or
// "scalar". Natively on x86-64 the environment variable ATTN_SIMD_ISA=avx2|sse2 caps it (read per call).
const char* matmul_simd_flavour();
// Throws std::invalid_argument for negative sizes, an unknown layout or a null pointer where data
// is needed; every backend calls it first.
void check_matmul_problem(const MatmulProblem& problem, const float* c);

}  // namespace attn
