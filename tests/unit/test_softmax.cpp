// Unit tests for softmax, its backward pass and entropy.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "../../src/core/softmax.h"

using namespace attn;

TEST_CASE("softmax: hand-computed row, sums to 1") {
  const float scores[3] = {0.0f, std::log(2.0f), std::log(5.0f)};  // exp: 1, 2, 5 -> /8
  float w[3];
  softmax_row(scores, w, 3);
  CHECK(w[0] == doctest::Approx(1.0 / 8).epsilon(1e-6));
  CHECK(w[1] == doctest::Approx(2.0 / 8).epsilon(1e-6));
  CHECK(w[2] == doctest::Approx(5.0 / 8).epsilon(1e-6));
}

TEST_CASE("softmax: huge scores do not overflow (row max subtracted)") {
  const float scores[2] = {1000.0f, 1000.0f + std::log(3.0f)};
  float w[2];
  softmax_row(scores, w, 2);
  CHECK(w[0] == doctest::Approx(0.25).epsilon(1e-5));
  CHECK(w[1] == doctest::Approx(0.75).epsilon(1e-5));
}

TEST_CASE("softmax: -inf gets exactly 0; an all-masked row gives zeros, not NaN") {
  const float inf = std::numeric_limits<float>::infinity();
  const float partly[3] = {1.0f, -inf, 1.0f};
  float w[3];
  softmax_row(partly, w, 3);
  CHECK(w[1] == 0.0f);
  CHECK(w[0] == doctest::Approx(0.5));
  const float all_masked[3] = {-inf, -inf, -inf};
  softmax_row(all_masked, w, 3);
  for (float v : w) CHECK(v == 0.0f);
}

TEST_CASE("softmax backward matches finite differences") {
  const std::vector<float> scores = {0.3f, -1.2f, 2.0f, 0.7f, -0.1f};
  const std::vector<float> g = {0.5f, -1.0f, 0.25f, 2.0f, -0.75f};  // dL/dweights, L = sum w * g
  const std::size_t n = scores.size();
  std::vector<float> w(n), grad(n);
  softmax_row(scores.data(), w.data(), n);
  softmax_backward_row(w.data(), g.data(), grad.data(), n);
  auto loss = [&](const std::vector<float>& s) {
    std::vector<float> ws(n);
    softmax_row(s.data(), ws.data(), n);
    double l = 0;
    for (std::size_t i = 0; i < n; ++i) l += static_cast<double>(ws[i]) * g[i];
    return l;
  };
  const float h = 1e-3f;
  for (std::size_t i = 0; i < n; ++i) {
    auto plus = scores, minus = scores;
    plus[i] += h;
    minus[i] -= h;
    const double numeric = (loss(plus) - loss(minus)) / (2.0 * h);
    CHECK(grad[i] == doctest::Approx(numeric).epsilon(2e-3).scale(1.0));
  }
}

TEST_CASE("entropy: uniform over T is log T, one-hot is 0") {
  const float uniform[4] = {0.25f, 0.25f, 0.25f, 0.25f};
  const float one_hot[4] = {0.0f, 1.0f, 0.0f, 0.0f};
  CHECK(row_entropy(uniform, 4) == doctest::Approx(std::log(4.0)));
  CHECK(row_entropy(one_hot, 4) == 0.0);
}
