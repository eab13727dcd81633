// The one matrix type of the project: float, row-major (row i = token i), as the lesson writes it.
// Not a maths library: Eigen does the work; this header only fixes storage order and names.
#pragma once
#include <Eigen/Core>

namespace attn {

// Row-major so that a row is one token's vector and data() can be handed to kernels,
// shaders and JSON as rows without a transpose.
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace attn
