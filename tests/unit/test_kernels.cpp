// The fast paths (Eigen, SIMD) against the scalar reference on odd shapes, self and cross,
// causal and not. Tolerance: 1e-5 relative (max |fast - reference| / max |reference|).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

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

TEST_CASE("every SIMD flavour this processor runs: selectable by name, and agreeing on odd shapes") {
  const std::vector<std::string> flavours = simd_flavours();
  REQUIRE(!flavours.empty());
  MESSAGE("SIMD flavours here: ", flavours.size(), ", default ", std::string(simd_flavour()));
  const char* cap = std::getenv("ATTN_SIMD_ISA");
  const std::string default_flavour = simd_flavour();
  if (!cap) CHECK(default_flavour == flavours.front());  // the widest this processor has
  else if (std::string(cap) == "sse2") CHECK(default_flavour == "sse2");
  else if (std::string(cap) == "avx2") CHECK(default_flavour != "avx512f");
#if defined(__wasm_simd128__)
  CHECK(flavours == std::vector<std::string>{"wasm-simd128"});
#elif defined(__x86_64__) && !defined(ATTN_FORCE_SCALAR)
  CHECK(flavours.back() == "sse2");  // every x86-64 processor has it
#endif
  CHECK_FALSE(select_simd_flavour("mmx"));
  std::uint64_t seed = 5000;
  for (const std::string& flavour : flavours) {
    REQUIRE(select_simd_flavour(flavour));
    CHECK(std::string(simd_flavour()) == flavour);
    for (int T : {1, 3, 17, 65})
      for (int d : {1, 5, 17, 64})
        for (bool causal : {false, true}) check_against_reference(T, T + 2, d, (d % 7) + 1, causal, seed++);
  }
  REQUIRE(select_simd_flavour(""));
  CHECK(std::string(simd_flavour()) == default_flavour);
}

namespace {
constexpr double kUnitRoundoff = 1.0 / (1 << 24);  // float's u = 2^-24

// Every backend against the scalar reference with an error model instead of one tolerance. A
// float backend computes each score to within e = factor · (d + 6) · u · max_j Σ_c |q_c k_jc| (the
// worst case of a dot product in float, plus the scaling and the subtraction of the max); softmax
// of scores off by at most e moves each weight by a factor within e^(±2e); the sum over Tk keys
// adds (Tk + 8)·u relative. So |w - w_ref| <= w_ref·(e^(2e) - 1 + 4(Tk + 8)u) + 1e-6, and the output
// moves by the weights' error times |V|. Where e is tiny (everyday inputs) this is a tight bound;
// at huge entries or the coldest temperature e grows and near-ties may legitimately go either
// way: what must still hold is finite numbers, rows summing to 1, masked keys at exactly 0.
void check_in_domain(Backend b, const Matrix& q, const Matrix& k, const Matrix& v, const AttentionOptions& o,
                     const char* label) {
  const AttentionResult ref = attend_with(Backend::Scalar, q, k, v, o);
  const AttentionResult got = attend_with(b, q, k, v, o);
  const int Tq = static_cast<int>(q.rows()), Tk = static_cast<int>(k.rows()), d = static_cast<int>(q.cols());
  const double factor = score_factor(d, o);
  CAPTURE(label);
  CAPTURE(backend_name(b));
  CAPTURE(std::string(simd_flavour()));
  for (int i = 0; i < Tq; ++i) {
    double abs_dot_max = 0.0;
    for (int j = 0; j < Tk; ++j) abs_dot_max = std::max(abs_dot_max, static_cast<double>((q.row(i).cwiseAbs() * k.row(j).cwiseAbs().transpose())(0, 0)));
    const double e = factor * (d + 6) * kUnitRoundoff * abs_dot_max;
    const double relative = std::expm1(std::min(2.0 * e, 700.0)) + 4.0 * (Tk + 8) * kUnitRoundoff;
    double row_sum = 0.0;
    for (int j = 0; j < Tk; ++j) {
      const double w = got.weights(i, j), w_ref = ref.weights(i, j);
      REQUIRE(std::isfinite(w));
      if (o.causal && j > i) REQUIRE(w == 0.0);
      CHECK(std::fabs(w - w_ref) <= w_ref * relative + 1e-6);
      row_sum += w;
    }
    CHECK(row_sum == doctest::Approx(1.0).epsilon(4.0 * (Tk + 8) * kUnitRoundoff + 1e-6));
    for (int c = 0; c < v.cols(); ++c) {
      double bound = 1e-6 * std::max(1.0, static_cast<double>(v.col(c).cwiseAbs().maxCoeff()));
      for (int j = 0; j < Tk; ++j)
        bound += (ref.weights(i, j) * relative + 1e-6 + 2.0 * (Tk + 4) * kUnitRoundoff * ref.weights(i, j)) *
                 std::fabs(v(j, c));
      REQUIRE(std::isfinite(got.output(i, c)));
      CHECK(std::fabs(got.output(i, c) - ref.output(i, c)) <= bound);
    }
  }
}

// Entries uniform in [-magnitude, magnitude], with the first row exactly at ±magnitude.
Matrix domain_matrix(Rng& rng, int r, int c, float magnitude) {
  Matrix m(r, c);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) {
      const float u = static_cast<float>(rng.uniform() * 2.0 - 1.0);
      m(i, j) = i == 0 ? (u < 0 ? -magnitude : magnitude) : std::clamp(u * magnitude, -magnitude, magnitude);
    }
  return m;
}
}  // namespace

TEST_CASE("the whole numeric domain: every backend and flavour, temperature and entries at their limits") {
  const float magnitudes[] = {1e-6f, 1e-2f, 1.0f, 7.0f, 300.0f, kMaxAbsEntry};
  const float temperatures[] = {kMinTemperature, 0.3f, 1.0f, 4.0f, kMaxTemperature};
  struct Shape { int Tq, Tk, d, dv; };
  const Shape shapes[] = {{1, 1, 1, 1}, {3, 5, 1, 2}, {5, 17, 3, 7}, {17, 19, 33, 1}, {9, 66, 129, 5}};
  Rng rng(20261201);
  int cases = 0;
  for (const std::string& flavour : simd_flavours()) {
    REQUIRE(select_simd_flavour(flavour));
    for (const float magnitude : magnitudes)
      for (const float temperature : temperatures)
        for (const Shape& s : shapes) {
          const Matrix q = domain_matrix(rng, s.Tq, s.d, magnitude), k = domain_matrix(rng, s.Tk, s.d, magnitude),
                       v = domain_matrix(rng, s.Tk, s.dv, magnitude);
          AttentionOptions o;
          o.temperature = temperature;
          o.scale = (cases % 2) == 0;
          o.causal = (cases % 3) == 0 && s.Tq <= s.Tk;
          for (Backend b : {Backend::Eigen, Backend::Simd}) check_in_domain(b, q, k, v, o, "domain sweep");
          ++cases;
        }
  }
  REQUIRE(select_simd_flavour(""));
  MESSAGE("numeric domain cases: ", cases);
  CHECK(cases == 150 * static_cast<int>(simd_flavours().size()));
}

TEST_CASE("entries at ±kMaxAbsEntry and the coldest temperature: exact answers in every backend") {
  const float E = kMaxAbsEntry;
  // q·k = 3e12, 1e12 and -3e12 (÷√3 ÷0.05): the first key wins outright, weights exactly 1, 0, 0.
  const Matrix q = test::rows({{E, -E, E}});
  const Matrix k = test::rows({{E, -E, E}, {E, E, E}, {-E, E, -E}});
  const Matrix v = test::rows({{E, -1}, {0, 2}, {-E, 3}});
  // Two identical best keys: a tie, split exactly in half.
  const Matrix k_tie = test::rows({{E, -E, E}, {-E, E, -E}, {E, -E, E}});
  AttentionOptions cold;
  cold.temperature = kMinTemperature;
  for (const std::string& flavour : simd_flavours()) {
    REQUIRE(select_simd_flavour(flavour));
    for (Backend b : {Backend::Scalar, Backend::Eigen, Backend::Simd}) {
      CAPTURE(backend_name(b));
      CAPTURE(flavour);
      const AttentionResult r = attend_with(b, q, k, v, cold);
      CHECK(r.weights(0, 0) == doctest::Approx(1.0).epsilon(1e-6));
      CHECK(r.weights(0, 1) == 0.0f);
      CHECK(r.weights(0, 2) == 0.0f);
      CHECK(r.output(0, 0) == doctest::Approx(E).epsilon(1e-6));
      CHECK(r.output(0, 1) == doctest::Approx(-1.0).epsilon(1e-6));
      const AttentionResult tie = attend_with(b, q, k_tie, v, cold);
      CHECK(tie.weights(0, 0) == doctest::Approx(0.5).epsilon(1e-6));
      CHECK(tie.weights(0, 1) == 0.0f);
      CHECK(tie.weights(0, 2) == doctest::Approx(0.5).epsilon(1e-6));
      CHECK(tie.output(0, 0) == doctest::Approx(0.0).epsilon(1e-6).scale(E));  // (E - E) / 2
      CHECK(tie.output(0, 1) == doctest::Approx(1.0).epsilon(1e-6));           // (-1 + 3) / 2
    }
  }
  REQUIRE(select_simd_flavour(""));
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
