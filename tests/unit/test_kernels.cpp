// The fast paths (Eigen, SIMD) against the scalar reference on odd shapes, self and cross,
// causal and not. Tolerance: 1e-5 relative (max |fast - reference| / max |reference|).
#include <doctest/doctest.h>

#include <cstdio>

#include "../../src/core/attention.h"
#include "test_helpers.h"

using namespace attn;

namespace {
constexpr double kTolerance = 1e-5;
const int kSizes[] = {1, 3, 5, 17, 64, 65};

void check_against_reference(int Tq, int Tk, int d, int dv, bool causal, std::uint64_t seed) {
  Rng rng(seed);
  const Matrix q = test::random_matrix(rng, Tq, d), k = test::random_matrix(rng, Tk, d),
               v = test::random_matrix(rng, Tk, dv);
  AttentionOptions o;
  o.causal = causal;
  const AttentionResult reference = attend_with(Backend::Scalar, q, k, v, o);
  for (Backend b : {Backend::Eigen, Backend::Simd}) {
    const AttentionResult fast = attend_with(b, q, k, v, o);
    const double weight_error = test::relative_error(fast.weights, reference.weights);
    const double output_error = test::relative_error(fast.output, reference.output);
    CAPTURE(Tq);
    CAPTURE(Tk);
    CAPTURE(d);
    CAPTURE(dv);
    CAPTURE(causal);
    INFO(backend_name(b), ": weights rel err ", weight_error, ", output rel err ", output_error);
    CHECK(weight_error <= kTolerance);
    CHECK(output_error <= kTolerance);
    if (causal)
      for (int i = 0; i < Tq; ++i)
        for (int j = i + 1; j < Tk; ++j) REQUIRE(fast.weights(i, j) == 0.0f);
    // The output-only path (no weights written) gives the same output.
    const AttentionResult output_only = attend_with(b, q, k, v, o, false);
    CHECK(test::relative_error(output_only.output, fast.output) <= kTolerance);
  }
}
}  // namespace

TEST_CASE("backends agree with the scalar reference: self-attention, odd sizes") {
  std::uint64_t seed = 1;
  for (int T : kSizes)
    for (int d : kSizes)
      for (bool causal : {false, true}) check_against_reference(T, T, d, d, causal, seed++);
}

TEST_CASE("backends agree with the scalar reference: cross shapes (Tq != Tk, dv != d)") {
  std::uint64_t seed = 100;
  for (int Tq : {1, 3, 17, 65})
    for (int Tk : {1, 5, 64, 130})
      for (bool causal : {false, true}) check_against_reference(Tq, Tk, 17, 5, causal, seed++);
  check_against_reference(300, 257, 64, 33, true, 999);
}

TEST_CASE("reference rows sum to 1 and the SIMD flavour is reported") {
  Rng rng(3);
  const Matrix q = test::random_matrix(rng, 17, 5), k = test::random_matrix(rng, 17, 5), v = test::random_matrix(rng, 17, 5);
  const AttentionResult r = attend_with(Backend::Scalar, q, k, v, {});
  for (int i = 0; i < 17; ++i) CHECK(r.weights.row(i).sum() == doctest::Approx(1.0f).epsilon(1e-6));
  MESSAGE("SIMD flavour: ", std::string(simd_flavour()));
  CHECK(std::string(simd_flavour()).size() > 0);
}

TEST_CASE("large score differences: SIMD exp stays exact at the extremes") {
  // Scores far apart (|score| ~ 1e3): weights are exactly 0 or 1 in every backend, never NaN.
  const Matrix q = test::rows({{30, 0}, {0, 30}});
  const Matrix k = test::rows({{30, 0}, {0, 30}, {-30, -30}});
  const Matrix v = test::rows({{1, 0}, {0, 1}, {5, 5}});
  for (Backend b : {Backend::Scalar, Backend::Eigen, Backend::Simd}) {
    const AttentionResult r = attend_with(b, q, k, v, {});
    CHECK(r.weights(0, 0) == doctest::Approx(1.0f));
    CHECK(r.weights(0, 2) == 0.0f);
    CHECK(std::isfinite(r.output.sum()));
  }
}

TEST_CASE("backend names round-trip") {
  for (Backend b : {Backend::Scalar, Backend::Eigen, Backend::Simd}) {
    Backend back = Backend::Scalar;
    REQUIRE(parse_backend(backend_name(b), &back));
    CHECK(back == b);
  }
  Backend unused;
  CHECK_FALSE(parse_backend("gpu", &unused));
}
