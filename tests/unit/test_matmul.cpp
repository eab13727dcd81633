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

constexpr double kMatmulTolerance = 1e-5;
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
    CHECK(worst <= kMatmulTolerance);
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

// ---- 16-bit weights (F16, BF16): b widened inside the product ----------------------------------
// Tolerance: the same 1e-5 · sum_k |a_ik·b_kj| (+ |bias_j| + |c_ij before|) as float b. Widening is
// exact, so the reference and a fast path see the same b values and differ only in how they
// accumulate (double against float in its own order).

namespace {

const char* dtype_label(Dtype d) { return dtype_name(d); }

std::uint16_t narrow16(Dtype d, float x) { return d == Dtype::BF16 ? float_to_bf16(x) : float_to_half(x); }

// One shape with 16-bit b: the reference once, then Eigen and SIMD against it; the SIMD result
// must also be bit for bit the SIMD result on the widened floats (the same packed block, the same
// micro-kernel).
void check_shape16(Dtype dtype, MatmulLayout layout, int M, int K, int N, bool with_bias, bool accumulate, std::uint64_t seed) {
  Rng rng(seed);
  const std::vector<float> a_mk = random_values(rng, static_cast<std::size_t>(M) * K);
  std::vector<float> b_kn = random_values(rng, static_cast<std::size_t>(K) * N);
  const std::vector<float> bias = random_values(rng, static_cast<std::size_t>(N));
  const std::vector<float> c_before = random_values(rng, static_cast<std::size_t>(M) * N);
  for (float& x : b_kn) x = widen16(dtype, narrow16(dtype, x));  // the values b16 will hold
  const Operands ops = store_as(layout, a_mk, b_kn, M, K, N);
  std::vector<std::uint16_t> b16(ops.b.size());
  for (std::size_t e = 0; e < b16.size(); ++e) b16[e] = narrow16(dtype, ops.b[e]);
  MatmulProblem p;
  p.layout = layout;
  p.a = ops.a.data(), p.b16 = b16.data(), p.b_dtype = dtype, p.bias = with_bias ? bias.data() : nullptr;
  p.M = M, p.K = K, p.N = N;
  p.accumulate = accumulate;
  MatmulProblem p32 = p;  // the same product with b already widened
  p32.b = ops.b.data(), p32.b16 = nullptr, p32.b_dtype = Dtype::F32;
  const std::size_t mn = static_cast<std::size_t>(M) * N;
  std::vector<float> reference = c_before, reference32 = c_before;
  matmul_scalar(p, reference.data());
  matmul_scalar(p32, reference32.data());
  REQUIRE(reference == reference32);  // the reference widens exactly
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
    double worst = 0.0;
    for (std::size_t e = 0; e < mn; ++e) {
      const double err = std::fabs(static_cast<double>(c[e]) - reference[e]);
      worst = std::max(worst, scale[e] > 0 ? err / scale[e] : (err > 0 ? 1.0 : 0.0));
    }
    INFO(std::string(backend_name(backend)), " (", std::string(matmul_simd_flavour()), ") ", std::string(dtype_label(dtype)), " ",
         std::string(layout_name(layout)), " M ", M, " K ", K, " N ", N, " bias ", with_bias, " accumulate ", accumulate,
         ": worst error / scale ", worst);
    CHECK(worst <= kMatmulTolerance);
    for (std::size_t e = mn; e < c.size(); ++e) REQUIRE(c[e] == kGuard);
    if (backend == Backend::Simd) {
      std::vector<float> c32 = c_before;
      matmul(backend, p32, c32.data());
      c.resize(mn);
      CHECK(c == c32);
    }
  }
}

const int kOdd16[] = {1, 3, 5, 17, 33, 100};

// y = widen(b) exactly: a = 1 (K = 1) over all 65 536 bit patterns of b, inf and NaN included.
void check_every_pattern_k1(Dtype dtype, MatmulLayout layout, Backend backend) {
  const int N = 65536;
  std::vector<std::uint16_t> b16(N);
  for (int j = 0; j < N; ++j) b16[j] = static_cast<std::uint16_t>(j);
  const float one = 1.0f;
  MatmulProblem p;
  p.layout = layout, p.a = &one, p.b16 = b16.data(), p.b_dtype = dtype, p.M = 1, p.K = 1, p.N = N;
  std::vector<float> c(N, kGuard);
  matmul(backend, p, c.data());
  int wrong = 0, first_wrong = -1;
  for (int j = 0; j < N; ++j) {
    const float want = widen16(dtype, b16[j]);
    const bool ok = std::isnan(want) ? std::isnan(c[j]) : c[j] == want;
    if (!ok && wrong++ == 0) first_wrong = j;
  }
  INFO(std::string(backend_name(backend)), " (", std::string(matmul_simd_flavour()), ") ", std::string(dtype_label(dtype)), " ",
       std::string(layout_name(layout)), ": first wrong pattern ", first_wrong);
  CHECK(wrong == 0);
}

// The transposing pack (NT, 4 x 4 blocks) on every finite pattern: a = I (4 x 4), b (16 384, 4)
// holds the patterns in order, so c_ij = widen(b_ji) (the other terms are 0 · finite = 0).
void check_every_finite_pattern_nt(Dtype dtype, Backend backend) {
  const int N = 16384, K = 4;
  const std::uint16_t exponent_mask = dtype == Dtype::BF16 ? 0x7f80 : 0x7c00;
  std::vector<std::uint16_t> b16(static_cast<std::size_t>(N) * K);
  for (std::size_t e = 0; e < b16.size(); ++e) {
    const auto bits = static_cast<std::uint16_t>(e);
    b16[e] = (bits & exponent_mask) == exponent_mask ? 0 : bits;  // inf and NaN: in the K = 1 test
  }
  const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  MatmulProblem p;
  p.layout = MatmulLayout::NT, p.a = identity, p.b16 = b16.data(), p.b_dtype = dtype, p.M = 4, p.K = K, p.N = N;
  std::vector<float> c(static_cast<std::size_t>(4) * N, kGuard);
  matmul(backend, p, c.data());
  int wrong = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < N; ++j) wrong += c[static_cast<std::size_t>(i) * N + j] != widen16(dtype, b16[static_cast<std::size_t>(j) * K + i]);
  INFO(std::string(backend_name(backend)), " (", std::string(matmul_simd_flavour()), ") ", std::string(dtype_label(dtype)), " NT");
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("matmul 16-bit: a product worked by hand, F16 and BF16, NN and NT, in every backend") {
  // a = [1 2 3; 4 5 6], b = [0.5 -1; 2 0.25; -3 1.5] (every entry exact in both formats):
  // a·b = [0.5+4-9  -1+0.5+4.5; 2+10-18  -4+1.25+9] = [-4.5 4; -6 6.25]
  const float a[] = {1, 2, 3, 4, 5, 6}, bias[] = {0.5f, -0.25f};
  // the bits written out: half 0.5 = 0x3800, -1 = 0xbc00, 2 = 0x4000, 0.25 = 0x3400, -3 = 0xc200, 1.5 = 0x3e00
  const std::uint16_t f16_nn[] = {0x3800, 0xbc00, 0x4000, 0x3400, 0xc200, 0x3e00};
  const std::uint16_t f16_nt[] = {0x3800, 0x4000, 0xc200, 0xbc00, 0x3400, 0x3e00};
  // bfloat16 0.5 = 0x3f00, -1 = 0xbf80, 2 = 0x4000, 0.25 = 0x3e80, -3 = 0xc040, 1.5 = 0x3fc0
  const std::uint16_t bf16_nn[] = {0x3f00, 0xbf80, 0x4000, 0x3e80, 0xc040, 0x3fc0};
  const std::uint16_t bf16_nt[] = {0x3f00, 0x4000, 0xc040, 0xbf80, 0x3e80, 0x3fc0};
  for (Backend backend : {Backend::Scalar, Backend::Eigen, Backend::Simd})
    for (Dtype dtype : {Dtype::F16, Dtype::BF16})
      for (MatmulLayout layout : {MatmulLayout::NN, MatmulLayout::NT}) {
        INFO(std::string(backend_name(backend)), " ", std::string(dtype_label(dtype)), " ", std::string(layout_name(layout)));
        MatmulProblem p;
        p.layout = layout, p.a = a, p.b_dtype = dtype;
        p.b16 = dtype == Dtype::F16 ? (layout == MatmulLayout::NN ? f16_nn : f16_nt) : (layout == MatmulLayout::NN ? bf16_nn : bf16_nt);
        p.M = 2, p.K = 3, p.N = 2;
        float c[4] = {-7, -7, -7, -7};
        matmul(backend, p, c);
        CHECK(c[0] == -4.5f);
        CHECK(c[1] == 4.0f);
        CHECK(c[2] == -6.0f);
        CHECK(c[3] == 6.25f);
        p.bias = bias, p.accumulate = true;
        matmul(backend, p, c);  // c += bias + a·b
        CHECK(c[0] == -8.5f);
        CHECK(c[1] == 7.75f);
        CHECK(c[2] == -11.5f);
        CHECK(c[3] == 12.25f);
      }
}

TEST_CASE("matmul 16-bit: values that rounded into the format are widened exactly") {
  // 1/3 as a half is 0x3555 = 0.333251953125 (11 significant bits), as a bfloat16 0x3eab =
  // 0.333984375 (8 bits); 1 + 2^-10 is 0x3c01; the smallest half subnormal 0x0001 is 2^-24; the
  // largest half 0x7bff is 65504; 0x83ff is the largest negative subnormal, -1023 · 2^-24; the
  // smallest bfloat16 0x0001 is 2^-133 (a float subnormal). Times a = 3 each product is still exact
  // in float: -3069 · 2^-24 = -0x1.7fap-13, 3 · 2^-133 = 0x1.8p-132.
  const float three = 3.0f;
  const std::uint16_t f16[] = {0x3555, 0x3c01, 0x0001, 0x7bff, 0x83ff};
  const float f16_times3[] = {0.999755859375f, 3.0029296875f, 1.78813934326171875e-7f, 196512.0f, -0x1.7fap-13f};
  const std::uint16_t bf16[] = {0x3eab, 0xc2f7, 0x0001};
  const float bf16_times3[] = {1.001953125f, -370.5f, 0x1.8p-132f};
  for (Backend backend : {Backend::Scalar, Backend::Eigen, Backend::Simd})
    for (MatmulLayout layout : {MatmulLayout::NN, MatmulLayout::NT}) {
      INFO(std::string(backend_name(backend)), " ", std::string(layout_name(layout)));
      MatmulProblem p;
      p.layout = layout, p.a = &three, p.M = 1, p.K = 1;
      float c[5];
      p.b_dtype = Dtype::F16, p.b16 = f16, p.N = 5;
      matmul(backend, p, c);
      for (int j = 0; j < 5; ++j) CHECK(c[j] == f16_times3[j]);
      p.b_dtype = Dtype::BF16, p.b16 = bf16, p.N = 3;
      matmul(backend, p, c);
      for (int j = 0; j < 3; ++j) CHECK(c[j] == bf16_times3[j]);
    }
}

TEST_CASE("matmul 16-bit: every bit pattern is widened exactly by every backend and instruction set") {
  for (const char* isa : {static_cast<const char*>(nullptr), "avx2", "sse2"}) {
    IsaCap cap(isa);
    for (Dtype dtype : {Dtype::F16, Dtype::BF16}) {
      for (Backend backend : {Backend::Scalar, Backend::Eigen, Backend::Simd}) {
        if (isa && backend != Backend::Simd) continue;
        for (MatmulLayout layout : {MatmulLayout::NN, MatmulLayout::NT}) check_every_pattern_k1(dtype, layout, backend);
        check_every_finite_pattern_nt(dtype, backend);
      }
    }
  }
}

TEST_CASE("matmul 16-bit: every backend agrees with the scalar reference on odd shapes") {
  for (const char* isa : {static_cast<const char*>(nullptr), "avx2", "sse2"}) {
    IsaCap cap(isa);
    MESSAGE("SIMD matmul instruction set: ", std::string(matmul_simd_flavour()));
    std::uint64_t seed = 100;
    for (Dtype dtype : {Dtype::F16, Dtype::BF16})
      for (MatmulLayout layout : {MatmulLayout::NN, MatmulLayout::NT}) {
        for (int M : kOdd16)
          for (int K : kOdd16)
            for (int N : kOdd16) {
              const bool with_bias = seed % 2 == 0, accumulate = seed % 3 == 0;
              check_shape16(dtype, layout, M, K, N, with_bias, accumulate, seed++);
            }
        // past one row block (MC ~256), one column block and one k block (KC 192-768)
        check_shape16(dtype, layout, 300, 33, 65, true, false, seed++);
        check_shape16(dtype, layout, 17, 769, 130, true, true, seed++);
        check_shape16(dtype, layout, 5, 1537, 33, false, false, seed++);
      }
  }
}

TEST_CASE("matmul 16-bit: SmolLM2's and GPT-2's shapes (T = 5) against the reference") {
  check_shape16(Dtype::BF16, MatmulLayout::NT, 5, 576, 192, false, false, 8001);  // SmolLM2 k_proj
  check_shape16(Dtype::BF16, MatmulLayout::NT, 5, 1536, 576, false, true, 8002);  // down_proj into the residual
  check_shape16(Dtype::F16, MatmulLayout::NN, 5, 768, 2304, true, false, 8003);   // GPT-2 c_attn
  check_shape16(Dtype::F16, MatmulLayout::NT, 5, 768, 1031, false, false, 8004);  // a slice of the LM head
}

TEST_CASE("matmul 16-bit: TN, null and doubled pointers are refused") {
  float x[4] = {};
  const std::uint16_t w[4] = {};
  for (Backend backend : {Backend::Scalar, Backend::Eigen, Backend::Simd})
    for (Dtype dtype : {Dtype::F16, Dtype::BF16}) {
      INFO(std::string(backend_name(backend)), " ", std::string(dtype_label(dtype)));
      MatmulProblem p;
      p.a = x, p.b16 = w, p.b_dtype = dtype, p.M = 2, p.K = 2, p.N = 2;
      CHECK_NOTHROW(matmul(backend, p, x));
      p.layout = MatmulLayout::TN;  // refused whatever the sizes: a gradient never has 16-bit b
      CHECK_THROWS_AS(matmul(backend, p, x), std::invalid_argument);
      p.M = 0;
      CHECK_THROWS_AS(matmul(backend, p, x), std::invalid_argument);
      p.layout = MatmulLayout::NT, p.M = 2, p.b16 = nullptr;  // no weights
      CHECK_THROWS_AS(matmul(backend, p, x), std::invalid_argument);
      p.b = x;  // float b with a 16-bit dtype: which one is meant?
      CHECK_THROWS_AS(matmul(backend, p, x), std::invalid_argument);
      p.b16 = w;
      CHECK_THROWS_AS(matmul(backend, p, x), std::invalid_argument);
      p.b = nullptr, p.a = nullptr;
      CHECK_THROWS_AS(matmul(backend, p, x), std::invalid_argument);
      p.a = x;
      CHECK_THROWS_AS(matmul(backend, p, nullptr), std::invalid_argument);
      p.b_dtype = static_cast<Dtype>(7);
      CHECK_THROWS_AS(matmul(backend, p, x), std::invalid_argument);
    }
}

// A token appended runs its products on one row (M = 1), which the SIMD backend sums straight from b's
// rows (NN, TN) instead of packing b: that row must be bit for bit the same row of a product of many
// rows (the incremental forward's promise), in every dtype, past one k block, on whole and part strips.
TEST_CASE("matmul: one row alone is bit for bit that row of a product of many (SIMD, NN and TN, every dtype)") {
  Rng rng(41);
  const int M = 7;
  for (Dtype dtype : {Dtype::F32, Dtype::F16, Dtype::BF16})
    for (MatmulLayout layout : {MatmulLayout::NN, MatmulLayout::TN}) {
      if (dtype != Dtype::F32 && layout == MatmulLayout::TN) continue;  // 16-bit b: NN and NT only
      for (int K : {1, 5, 1700})
        for (int N : {3, 16, 37, 130})
          for (int variant = 0; variant < 3; ++variant) {  // plain, bias, bias + accumulate
            INFO(dtype_name(dtype) << " " << layout_name(layout) << " K " << K << " N " << N << " variant " << variant);
            const std::vector<float> a_mk = random_values(rng, static_cast<std::size_t>(M) * K);
            std::vector<float> b_kn = random_values(rng, static_cast<std::size_t>(K) * N);
            if (dtype != Dtype::F32) for (float& x : b_kn) x = widen16(dtype, narrow16(dtype, x));
            const std::vector<float> bias = random_values(rng, static_cast<std::size_t>(N));
            const std::vector<float> c_before = random_values(rng, static_cast<std::size_t>(M) * N);
            const Operands ops = store_as(layout, a_mk, b_kn, M, K, N);
            std::vector<std::uint16_t> b16(ops.b.size());
            for (std::size_t e = 0; e < b16.size(); ++e) b16[e] = dtype == Dtype::F32 ? 0 : narrow16(dtype, ops.b[e]);
            MatmulProblem many;
            many.layout = layout, many.a = ops.a.data(), many.M = M, many.K = K, many.N = N;
            if (dtype == Dtype::F32) many.b = ops.b.data();
            else many.b16 = b16.data(), many.b_dtype = dtype;
            many.bias = variant > 0 ? bias.data() : nullptr;
            many.accumulate = variant == 2;
            std::vector<float> all = c_before;
            matmul(Backend::Simd, many, all.data());
            for (int i : {0, 3, M - 1}) {
              // row i alone: a's row i (TN: its column i, as one row stored (K, 1))
              std::vector<float> a_row(a_mk.begin() + static_cast<std::ptrdiff_t>(i) * K, a_mk.begin() + static_cast<std::ptrdiff_t>(i + 1) * K);
              MatmulProblem one = many;
              one.a = a_row.data(), one.M = 1;
              std::vector<float> row(c_before.begin() + static_cast<std::ptrdiff_t>(i) * N, c_before.begin() + static_cast<std::ptrdiff_t>(i + 1) * N);
              row.push_back(kGuard);
              matmul(Backend::Simd, one, row.data());
              INFO("row " << i);
              CHECK(row.back() == kGuard);
              bool same = true;
              for (int j = 0; j < N; ++j) same = same && row[static_cast<std::size_t>(j)] == all[static_cast<std::size_t>(i) * N + j];
              CHECK(same);
            }
          }
    }
}
