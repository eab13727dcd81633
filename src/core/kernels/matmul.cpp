// PLACEHOLDER until the matmul kernels land (replaced wholesale by their implementation).
#include "matmul.h"
namespace attn {
void matmul_scalar(const MatmulProblem& p, float* c) {
  for (int i = 0; i < p.M; ++i)
    for (int j = 0; j < p.N; ++j) {
      double s = p.bias ? p.bias[j] : 0.0;
      for (int k = 0; k < p.K; ++k) {
        const float a = p.layout == MatmulLayout::TN ? p.a[(size_t)k * p.M + i] : p.a[(size_t)i * p.K + k];
        const float b = p.layout == MatmulLayout::NT ? p.b[(size_t)j * p.K + k] : p.b[(size_t)k * p.N + j];
        s += (double)a * b;
      }
      c[(size_t)i * p.N + j] = p.accumulate ? c[(size_t)i * p.N + j] + (float)s : (float)s;
    }
}
void matmul_eigen(const MatmulProblem& p, float* c) { matmul_scalar(p, c); }
void matmul_simd(const MatmulProblem& p, float* c) { matmul_scalar(p, c); }
void matmul(Backend, const MatmulProblem& p, float* c) { matmul_scalar(p, c); }
}
