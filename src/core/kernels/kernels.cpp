// Dispatch from a Backend value to its kernel, and the backends' names.
// Not a kernel itself.
#include "kernels.h"

namespace attn {

void attention_forward(Backend backend, const AttentionProblem& problem, float* output, float* weights) {
  switch (backend) {
    case Backend::Scalar: attention_scalar(problem, output, weights); return;
    case Backend::Eigen: attention_eigen(problem, output, weights); return;
    case Backend::Simd: attention_simd(problem, output, weights); return;
  }
}

int attention_row_block(Backend backend, const AttentionProblem& problem) {
  switch (backend) {
    case Backend::Scalar: return 1;
    case Backend::Eigen: return 0;
    case Backend::Simd: return attention_simd_row_block(problem);
  }
  return 0;
}

const char* backend_name(Backend backend) {
  switch (backend) {
    case Backend::Scalar: return "scalar";
    case Backend::Eigen: return "eigen";
    case Backend::Simd: return "simd";
  }
  return "?";
}

bool parse_backend(const std::string& name, Backend* backend) {
  for (Backend b : {Backend::Scalar, Backend::Eigen, Backend::Simd})
    if (name == backend_name(b)) {
      *backend = b;
      return true;
    }
  return false;
}

}  // namespace attn
