// Small helpers shared by the unit tests: matrices from literals, random matrices, error metrics.
// Not a test framework: doctest is.
#pragma once
#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "../../src/core/matrix.h"
#include "../../src/core/random.h"

namespace attn::test {

inline Matrix rows(std::initializer_list<std::initializer_list<float>> values) {
  Matrix m(static_cast<Eigen::Index>(values.size()), static_cast<Eigen::Index>(values.begin()->size()));
  Eigen::Index i = 0;
  for (const auto& row : values) {
    Eigen::Index j = 0;
    for (float v : row) m(i, j++) = v;
    ++i;
  }
  return m;
}

inline Matrix random_matrix(Rng& rng, int r, int c, float spread = 1.0f) {
  Matrix m(r, c);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) m(i, j) = static_cast<float>(rng.normal()) * spread;
  return m;
}

// max |a - b| / max(max |reference|, 1e-30): the "relative" error used for every fast path.
inline double relative_error(const Matrix& got, const Matrix& reference) {
  const double scale = std::max(static_cast<double>(reference.cwiseAbs().maxCoeff()), 1e-30);
  return static_cast<double>((got - reference).cwiseAbs().maxCoeff()) / scale;
}

}  // namespace attn::test
