// The matrix products: a hand-worked example, then every layout x backend (and every SIMD
// instruction set this machine has) against the scalar reference on odd shapes. Not a benchmark.
// Tolerance per element: |fast - reference| <= 1e-5 · (sum_k |a_ik·b_kj| + |bias_j| + |c_ij before|).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/core/kernels/matmul.h"
#include "../../src/core/random.h"

using namespace attn;

namespace {

constexpr double kTolerance = 1e-5;
constexpr float kGuard = 12345.0f;  // written past the end of c: a kernel must never touch it

const char* layout_name(MatmulLayout l) { return l == MatmulLayout::NN ? "NN" : l == MatmulLayout::NT ? "NT" : "TN"; }

std::vector<float> random_values(Rng& rng, std::size_t n) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.normal());
  return v;
}

// Stores the logical (M, K) a and (K, N) b the way the layout says.
struct Operands {
  std::vector<float> a, b;
};
Operands store_as(MatmulLayout layout, const std::vector<float>& a_mk, const std::vector<float>& b_kn, int M, int K, int N) {
  Operands o{a_mk, b_kn};
  if (layout == MatmulLayout::TN)
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k) o.a[static_cast<std::size_t>(k) * M + i] = a_mk[static_cast<std::size_t>(i) * K + k];
  if (layout == MatmulLayout::NT)
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < N; ++j) o.b[static_cast<std::size_t>(j) * K + k] = b_kn[static_cast<std::size_t>(k) * N + j];
  return o;
}

// One shape: the reference once, then each fast backend (Eigen, SIMD in the current instruction set).
void check_shape(MatmulLayout layout, int M, int K, int N, bool with_bias, bool accumulate, std::uint64_t seed) {
  Rng rng(seed);
  const std::vector<float> a_mk = random_values(rng, static_cast<std::size_t>(M) * K);
  const std::vector<float> b_kn = random_values(rng, static_cast<std::size_t>(K) * N);
  const std::vector<float> bias = random_values(rng, static_cast<std::size_t>(N));
  const std::vector<float> c_before = random_values(rng, static_cast<std::size_t>(M) * N);
  const Operands ops = store_as(layout, a_mk, b_kn, M, K, N);
  MatmulProblem p;
  p.layout = layout;
  p.a = ops.a.data(), p.b = ops.b.data(), p.bias = with_bias ? bias.data() : nullptr;
  p.M = M, p.K = K, p.N = N;
  p.accumulate = accumulate;
  const std::size_t mn = static_cast<std::size_t>(M) * N;
  std::vector<float> reference = c_before;
  matmul_scalar(p, reference.data());
  // the scale each element's error is measured against
  std::vector<double> scale(mn);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = (with_bias ? std::fabs(bias[j]) : 0.0) + (accumulate ? std::fabs(c_before[static_cast<std::size_t>(i) * N + j]) : 0.0);
      for (int k = 0; k < K; ++k)
        s += std::fabs(static_cast<double>(a_mk[static_cast<std::size_t>(i) * K + k]) * b_kn[static_cast<std::size_t>(k) * N + j]);
      scale[static_cast<std::size_t>(i) * N + j] = s;
    }
  for (Backend backend : {Backend::Eigen, Backend::Simd}) {
    std::vector<float> c = c_before;
    c.resize(mn + 7, kGuard);
    matmul(backend, p, c.data());
    double worst = 0.0;  // the largest error / scale
    for (std::size_t e = 0; e < mn; ++e) {
      const double err = std::fabs(static_cast<double>(c[e]) - reference[e]);
      worst = std::max(worst, scale[e] > 0 ? err / scale[e] : (err > 0 ? 1.0 : 0.0));
    }
    INFO(std::string(backend_name(backend)), " (", std::string(matmul_simd_flavour()), ") ", std::string(layout_name(layout)), " M ", M, " K ", K, " N ", N,
         " bias ", with_bias, " accumulate ", accumulate, ": worst error / scale ", worst);
    CHECK(worst <= kTolerance);
    for (std::size_t e = mn; e < c.size(); ++e) REQUIRE(c[e] == kGuard);
  }
}

const int kOdd[] = {1, 3, 5, 17, 64, 65};

void odd_shapes_all_layouts() {
  std::uint64_t seed = 1;
  for (MatmulLayout layout : {MatmulLayout::NN, MatmulLayout::NT, MatmulLayout::TN}) {
    for (int M : kOdd)
      for (int K : kOdd)
        for (int N : kOdd) {
          const bool with_bias = seed % 2 == 0, accumulate = seed % 3 == 0;
          check_shape(layout, M, K, N, with_bias, accumulate, seed++);
        }
    // 300 in each place, and shapes past one k block (KC 192-256) and one row block (MC ~256)
    check_shape(layout, 300, 17, 65, true, false, seed++);
    check_shape(layout, 5, 300, 64, false, true, seed++);
    check_shape(layout, 65, 64, 300, true, true, seed++);
    check_shape(layout, 300, 300, 300, true, false, seed++);
    check_shape(layout, 17, 769, 130, true, true, seed++);
  }
}

// Sets ATTN_SIMD_ISA for the duration of a scope (natively on x86-64 it caps the SIMD kernel).
struct IsaCap {
  explicit IsaCap(const char* isa) {
    if (isa) setenv("ATTN_SIMD_ISA", isa, 1);
    else unsetenv("ATTN_SIMD_ISA");
  }
  ~IsaCap() { unsetenv("ATTN_SIMD_ISA"); }
};

}  // namespace

TEST_CASE("matmul: a product worked by hand, in every layout, with bias and accumulate") {
  // a = [1 2; 3 4], b = [5 6; 7 8]: a·b = [19 22; 43 50]
  const float a[] = {1, 2, 3, 4}, a_t[] = {1, 3, 2, 4}, b[] = {5, 6, 7, 8}, b_t[] = {5, 7, 6, 8}, bias[] = {1, -1};
  for (Backend backend : {Backend::Scalar, Backend::Eigen, Backend::Simd})
    for (MatmulLayout layout : {MatmulLayout::NN, MatmulLayout::NT, MatmulLayout::TN}) {
      INFO(std::string(backend_name(backend)), " ", std::string(layout_name(layout)));
      MatmulProblem p;
      p.layout = layout;
      p.a = layout == MatmulLayout::TN ? a_t : a;
      p.b = layout == MatmulLayout::NT ? b_t : b;
      p.M = p.K = p.N = 2;
      float c[4] = {-7, -7, -7, -7};
      matmul(backend, p, c);
      CHECK(c[0] == 19.0f);
      CHECK(c[1] == 22.0f);
      CHECK(c[2] == 43.0f);
      CHECK(c[3] == 50.0f);
      p.bias = bias;
      matmul(backend, p, c);  // c = bias + a·b
      CHECK(c[0] == 20.0f);
      CHECK(c[1] == 21.0f);
      CHECK(c[2] == 44.0f);
      CHECK(c[3] == 49.0f);
      p.accumulate = true;
      matmul(backend, p, c);  // c += bias + a·b
      CHECK(c[0] == 40.0f);
      CHECK(c[1] == 42.0f);
      CHECK(c[2] == 88.0f);
      CHECK(c[3] == 98.0f);
    }
}

TEST_CASE("matmul: every layout and backend agrees with the scalar reference on odd shapes") {
  for (const char* isa : {static_cast<const char*>(nullptr), "avx2", "sse2"}) {
    IsaCap cap(isa);
    MESSAGE("SIMD matmul instruction set: ", std::string(matmul_simd_flavour()));
    odd_shapes_all_layouts();
  }
}

TEST_CASE("matmul: GPT-2 small's shapes (T = 17) against the reference") {
  for (const char* isa : {static_cast<const char*>(nullptr), "avx2", "sse2"}) {
    IsaCap cap(isa);
    check_shape(MatmulLayout::NN, 17, 768, 2304, true, false, 7001);   // attention's c_attn
    check_shape(MatmulLayout::NN, 17, 3072, 768, true, true, 7002);    // the MLP's c_proj into the residual
    check_shape(MatmulLayout::NT, 17, 768, 1031, false, false, 7003);  // a slice of the tied LM head
    check_shape(MatmulLayout::TN, 768, 17, 300, false, true, 7004);    // a weight gradient's shape
  }
}

TEST_CASE("matmul: the ATTN_SIMD_ISA cap is honoured where it applies") {
  const std::string widest = matmul_simd_flavour();
  {
    IsaCap cap("sse2");
    if (widest == "avx2-fma" || widest == "avx512f") CHECK(std::string(matmul_simd_flavour()) == "sse2");
    else CHECK(std::string(matmul_simd_flavour()) == widest);  // wasm, sse2 or scalar: nothing to cap
  }
  {
    IsaCap cap("avx2");
    if (widest == "avx512f") CHECK(std::string(matmul_simd_flavour()) == "avx2-fma");
  }
  CHECK(std::string(matmul_simd_flavour()) == widest);
}

TEST_CASE("matmul: exact zeros where the product is zero, and no product at K = 0") {
  const int M = 9, K = 70, N = 37;
  Rng rng(42);
  std::vector<float> a = random_values(rng, static_cast<std::size_t>(M) * K), b = random_values(rng, static_cast<std::size_t>(K) * N);
  std::vector<float> bias = random_values(rng, N);
  for (int k = 0; k < K; ++k) a[static_cast<std::size_t>(4) * K + k] = 0.0f;  // row 4 of a is zero
  for (Backend backend : {Backend::Scalar, Backend::Eigen, Backend::Simd}) {
    INFO(std::string(backend_name(backend)));
    MatmulProblem p;
    p.a = a.data(), p.b = b.data(), p.M = M, p.K = K, p.N = N;
    std::vector<float> c(static_cast<std::size_t>(M) * N, 5.0f);
    matmul(backend, p, c.data());
    for (int j = 0; j < N; ++j) REQUIRE(c[static_cast<std::size_t>(4) * N + j] == 0.0f);
    p.bias = bias.data();
    matmul(backend, p, c.data());
    for (int j = 0; j < N; ++j) REQUIRE(c[static_cast<std::size_t>(4) * N + j] == bias[j]);
    // K = 0: c = bias, or c + bias when accumulating; nothing read from a or b
    MatmulProblem empty;
    empty.M = 2, empty.K = 0, empty.N = 3, empty.bias = bias.data();
    float c0[6] = {1, 2, 3, 4, 5, 6};
    matmul(backend, empty, c0);
    for (int e = 0; e < 6; ++e) CHECK(c0[e] == bias[e % 3]);
    empty.accumulate = true;
    matmul(backend, empty, c0);
    for (int e = 0; e < 6; ++e) CHECK(c0[e] == 2 * bias[e % 3]);
    empty.bias = nullptr, empty.accumulate = false;
    matmul(backend, empty, c0);
    for (float x : c0) CHECK(x == 0.0f);
  }
}

TEST_CASE("matmul: bad sizes and null pointers are refused, not read") {
  float x[4] = {};
  for (Backend backend : {Backend::Scalar, Backend::Eigen, Backend::Simd}) {
    INFO(std::string(backend_name(backend)));
    MatmulProblem p;
    p.a = x, p.b = x, p.M = -1, p.K = 2, p.N = 2;
    CHECK_THROWS_AS(matmul(backend, p, x), std::invalid_argument);
    p.M = 2, p.b = nullptr;
    CHECK_THROWS_AS(matmul(backend, p, x), std::invalid_argument);
    p.b = x;
    CHECK_THROWS_AS(matmul(backend, p, nullptr), std::invalid_argument);
    p.M = 0;  // an empty product reads and writes nothing
    CHECK_NOTHROW(matmul(backend, p, nullptr));
  }
}
