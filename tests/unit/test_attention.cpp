// Unit tests for the attention trace: the lesson's Derive numbers, the causal mask, cross-attention,
// scaling and temperature, the common mistakes and their symptoms, and input validation.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "../../src/core/attention.h"
#include "test_helpers.h"

using namespace attn;
using attn::test::rows;

namespace {
// The lesson's Derive exercise: 3 tokens, d = 2.
const Matrix kDeriveQK = rows({{1, 0}, {0, 1}, {1, 1}});
const Matrix kDeriveV = rows({{1, 2}, {3, 4}, {5, 6}});
}  // namespace

TEST_CASE("Derive: the lesson's weights and outputs, to its rounding") {
  const AttentionTrace t = attend(kDeriveQK, kDeriveQK, kDeriveV, {});
  CHECK(t.raw_scores == rows({{1, 0, 1}, {0, 1, 1}, {1, 1, 2}}));
  CHECK(t.scaled_scores(2, 2) == doctest::Approx(1.414).epsilon(1e-3));
  const float expected_w[3][3] = {{0.40f, 0.20f, 0.40f}, {0.20f, 0.40f, 0.40f}, {0.25f, 0.25f, 0.50f}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) CHECK(t.weights(i, j) == doctest::Approx(expected_w[i][j]).epsilon(0.01 / 0.2));
  // Rounded to 2 decimals exactly as the lesson prints them.
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) CHECK(std::round(t.weights(i, j) * 100) / 100 == doctest::Approx(expected_w[i][j]));
  const float expected_out[3][2] = {{3.0f, 4.0f}, {3.41f, 4.41f}, {3.51f, 4.51f}};
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 2; ++c) CHECK(std::round(t.output(i, c) * 100) / 100 == doctest::Approx(expected_out[i][c]));
}

TEST_CASE("causal mask: exactly 0 above the diagonal, rows sum to 1, -inf before softmax") {
  AttentionOptions o;
  o.causal = true;
  const AttentionTrace t = attend(kDeriveQK, kDeriveQK, kDeriveV, o);
  for (int i = 0; i < 3; ++i) {
    CHECK(t.weights.row(i).sum() == doctest::Approx(1.0f));
    for (int j = i + 1; j < 3; ++j) {
      CHECK(t.weights(i, j) == 0.0f);
      CHECK(std::isinf(t.masked_scores(i, j)));
    }
  }
  CHECK(t.weights(0, 0) == 1.0f);  // the first token can only see itself
  CHECK(t.output.row(0) == kDeriveV.row(0));
  const Symptoms s = diagnose(t);
  CHECK(s.future_weight == 0.0f);
  CHECK(s.max_row_sum_error < 1e-6f);
}

TEST_CASE("cross-attention: 2 queries over 4 keys/values of another width") {
  const Matrix q = rows({{1, 0, 0}, {0, 0, 1}});
  const Matrix k = rows({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}});
  const Matrix v = rows({{1}, {2}, {3}, {4}});
  const AttentionTrace t = attend(q, k, v, {});
  REQUIRE(t.weights.rows() == 2);
  REQUIRE(t.weights.cols() == 4);
  REQUIRE(t.output.cols() == 1);
  // row 0 scores: [1, 0, 0, 1] / sqrt(3)
  const double e = std::exp(1.0 / std::sqrt(3.0));
  CHECK(t.weights(0, 0) == doctest::Approx(e / (2 * e + 2)));
  CHECK(t.output(0, 0) == doctest::Approx((1 * e + 2 + 3 + 4 * e) / (2 * e + 2)));
}

TEST_CASE("scaling and temperature") {
  AttentionOptions unscaled;
  unscaled.scale = false;
  CHECK(attend(kDeriveQK, kDeriveQK, kDeriveV, unscaled).scaled_scores(2, 2) == doctest::Approx(2.0f));
  AttentionOptions hot;
  hot.temperature = 2.0f;
  CHECK(attend(kDeriveQK, kDeriveQK, kDeriveV, hot).scaled_scores(2, 2) == doctest::Approx(2.0f / std::sqrt(2.0f) / 2.0f));
  // High temperature flattens towards uniform, low temperature sharpens towards one-hot.
  // At the hottest allowed temperature (20) row 2's raw scores 1, 1, 2 become 0.0354, 0.0354,
  // 0.0707 (÷√2 ÷20): weights 0.32938, 0.32938, 0.34124, nearly uniform.
  hot.temperature = kMaxTemperature;
  CHECK(attend(kDeriveQK, kDeriveQK, kDeriveV, hot).weights(2, 0) == doctest::Approx(0.329382).epsilon(1e-5));
  CHECK(attend(kDeriveQK, kDeriveQK, kDeriveV, hot).weights(2, 2) == doctest::Approx(0.341236).epsilon(1e-5));
  // At the coldest (0.05) the gap is 1/√2/0.05 = 14.14: the others get e^-14.14 = 7.2135e-7 each.
  AttentionOptions cold;
  cold.temperature = kMinTemperature;
  CHECK(attend(kDeriveQK, kDeriveQK, kDeriveV, cold).weights(2, 2) == doctest::Approx(0.9999986).epsilon(1e-7));
  CHECK(attend(kDeriveQK, kDeriveQK, kDeriveV, cold).weights(2, 0) == doctest::Approx(7.2135e-7).epsilon(1e-3));
}

TEST_CASE("mistake: forgetting sqrt(d) makes rows near one-hot for large d") {
  Rng rng(7);
  const Matrix q = test::random_matrix(rng, 64, 512), k = test::random_matrix(rng, 64, 512),
               v = test::random_matrix(rng, 64, 8);
  AttentionOptions wrong;
  wrong.mistake = Mistake::ForgetScale;
  const Symptoms good = diagnose(attend(q, k, v, {})), bad = diagnose(attend(q, k, v, wrong));
  CHECK(good.frac_one_hot < 0.1f);
  CHECK(bad.frac_one_hot > 0.5f);
}

TEST_CASE("mistake: softmax over the wrong axis makes columns, not rows, sum to 1") {
  AttentionOptions wrong;
  wrong.mistake = Mistake::SoftmaxWrongAxis;
  const Symptoms s = diagnose(attend(kDeriveQK, rows({{1, 0}, {0, 1}, {2, 2}}), kDeriveV, wrong));
  CHECK(s.max_col_sum_error < 1e-6f);
  CHECK(s.max_row_sum_error > 0.1f);
  const Symptoms right = diagnose(attend(kDeriveQK, rows({{1, 0}, {0, 1}, {2, 2}}), kDeriveV, {}));
  CHECK(right.max_row_sum_error < 1e-6f);
  CHECK(right.max_col_sum_error > 0.1f);
}

TEST_CASE("mistake: mask after the softmax leaves rows summing below 1 and lets the future in") {
  AttentionOptions wrong;
  wrong.causal = true;
  wrong.mistake = Mistake::MaskAfterSoftmax;
  const AttentionTrace t = attend(kDeriveQK, kDeriveQK, kDeriveV, wrong);
  const Symptoms s = diagnose(t);
  CHECK(s.future_weight == 0.0f);  // the zeros are there...
  CHECK(t.weights(0, 0) == doctest::Approx(0.40f).epsilon(0.01));  // ...but row 0 was normalised over the future
  CHECK(s.max_row_sum_error > 0.5f);
  // Changing only a future key changes a past weight: the leak.
  const AttentionTrace changed = attend(kDeriveQK, rows({{1, 0}, {0, 1}, {5, 5}}), kDeriveV, wrong);
  CHECK(changed.weights(0, 0) != doctest::Approx(t.weights(0, 0)));
  AttentionOptions right = wrong;
  right.mistake = Mistake::None;
  CHECK(attend(kDeriveQK, rows({{1, 0}, {0, 1}, {5, 5}}), kDeriveV, right).weights(0, 0) == 1.0f);
}

TEST_CASE("mistake: masking with 0 instead of -inf gives future keys weight") {
  AttentionOptions wrong;
  wrong.causal = true;
  wrong.mistake = Mistake::MaskWithZero;
  const AttentionTrace t = attend(kDeriveQK, kDeriveQK, kDeriveV, wrong);
  CHECK(t.masked_scores(0, 1) == 0.0f);
  const Symptoms s = diagnose(t);
  CHECK(s.future_weight > 0.1f);
  CHECK(s.max_row_sum_error < 1e-6f);  // rows still sum to 1: the leak is silent
}

TEST_CASE("mistake: swapping keys and values matches on content and passes the keys on") {
  AttentionOptions wrong;
  wrong.mistake = Mistake::SwapKeysValues;
  const Matrix k = rows({{1, 0}, {0, 1}, {1, 1}}), v = rows({{9, 0}, {0, 9}, {0, 0}});
  const AttentionTrace t = attend(kDeriveQK, k, v, wrong);
  CHECK(t.raw_scores == kDeriveQK * v.transpose());
  const AttentionTrace right = attend(kDeriveQK, k, v, {});
  CHECK(t.weights(0, 0) > right.weights(0, 0));  // "9" in the value dominated the match
  CHECK(t.output.row(0).maxCoeff() <= 1.0f);     // and the output is a blend of keys
  CHECK_THROWS_AS(attend(kDeriveQK, k, rows({{1}, {2}, {3}}), wrong), std::invalid_argument);
}

TEST_CASE("mistake names round-trip") {
  for (Mistake m : {Mistake::None, Mistake::ForgetScale, Mistake::SoftmaxWrongAxis, Mistake::MaskAfterSoftmax,
                    Mistake::MaskWithZero, Mistake::SwapKeysValues}) {
    Mistake back = Mistake::None;
    REQUIRE(parse_mistake(mistake_name(m), &back));
    CHECK(back == m);
  }
  Mistake unused;
  CHECK_FALSE(parse_mistake("nope", &unused));
}

TEST_CASE("validation: clear errors, never NaN") {
  const float nan = std::nanf("");
  CHECK_THROWS_WITH_AS(attend(rows({{1, nan}}), kDeriveQK, kDeriveV, {}), "Q[0][1] is not a finite number",
                       std::invalid_argument);
  CHECK_THROWS_AS(attend(rows({{1, 2, 3}}), kDeriveQK, kDeriveV, {}), std::invalid_argument);     // width
  CHECK_THROWS_AS(attend(kDeriveQK, kDeriveQK, rows({{1, 2}}), {}), std::invalid_argument);       // rows
  CHECK_THROWS_AS(attend(Matrix(0, 2), kDeriveQK, kDeriveV, {}), std::invalid_argument);           // empty
  CHECK_THROWS_AS(attend(rows({{2e6f, 0}}), kDeriveQK, kDeriveV, {}), std::invalid_argument);      // too large
  AttentionOptions bad;
  bad.temperature = 0.0f;
  CHECK_THROWS_AS(attend(kDeriveQK, kDeriveQK, kDeriveV, bad), std::invalid_argument);
  bad.temperature = std::nanf("");
  CHECK_THROWS_AS(attend(kDeriveQK, kDeriveQK, kDeriveV, bad), std::invalid_argument);
  // The domain's edges: both limits accepted, just past them refused, with the range in the message.
  for (float t : {kMinTemperature, kMaxTemperature}) {
    bad.temperature = t;
    CHECK_NOTHROW(attend(kDeriveQK, kDeriveQK, kDeriveV, bad));
  }
  for (float t : {std::nextafter(kMinTemperature, 0.0f), std::nextafter(kMaxTemperature, 100.0f), 1e-40f}) {
    bad.temperature = t;
    CHECK_THROWS_WITH_AS(attend_with(Backend::Simd, kDeriveQK, kDeriveQK, kDeriveV, bad),
                         doctest::Contains("temperature must be a number from 0.05 to 20"), std::invalid_argument);
  }
  // Requested as a double (JSON, the URL): judged as the float it becomes, without an overflow.
  CHECK(temperature_in_domain(0.05));
  CHECK(temperature_in_domain(20.0));
  CHECK_FALSE(temperature_in_domain(0.0499));
  CHECK_FALSE(temperature_in_domain(20.001));
  CHECK_FALSE(temperature_in_domain(1e300));
  CHECK_FALSE(temperature_in_domain(-1.0));
  CHECK_FALSE(temperature_in_domain(std::nan("")));
  CHECK_NOTHROW(attend(rows({{kMaxAbsEntry, -kMaxAbsEntry}}), kDeriveQK, kDeriveV, {}));
  CHECK_THROWS_WITH_AS(attend(rows({{std::nextafter(kMaxAbsEntry, 2e6f), 0}}), kDeriveQK, kDeriveV, {}),
                       "Q[0][0] is too large (|value| must be at most 1e+06)", std::invalid_argument);
}
