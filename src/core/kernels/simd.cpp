// The SIMD kernel: fused, tiled attention with an online softmax, for 128-bit wasm SIMD, SSE2 and
// natively AVX2 + FMA or AVX-512 (the widest the processor has, chosen at run time).
// Not the reference: it is checked against scalar.cpp on odd shapes (tests/unit/test_kernels.cpp).
//
// Shapes: query (Tq, d), key (Tk, d), value (Tk, dv) -> output (Tq, dv), weights (Tq, Tk) optional.
// Layout, made once per call in a reused per-thread workspace (no allocation in the hot loops):
//   queries, R rows at a time, interleaved (d, R) and pre-multiplied by scale·log2(e): scores come
//     out in base-2 units, and one pointer with constant offsets reaches all R rows;
//   keys in panels of G = NV·W keys, each (d, G); values in tiles of KB keys x G columns, a key
//     block's tiles one after the other: the inner loops stream memory with a fixed stride.
// Up to 8·R query rows share a pass over the keys, which they meet KB = 64 at a time (so a key
// block is read from cache once for all of them); each block of R rows, for each key block:
//   pass 1: scores for R queries x KB keys, an R x G register tile per step of d;
//   pass 2: online softmax per row: new running max m, alpha = 2^(m_old - m) for what was already
//           accumulated, p = 2^(s - m) in place (masked and padded keys give exactly 0), l += sum p;
//   pass 3: acc = alpha·acc + p · V_block, an R x G register tile per key.
// At the end output = acc / l. The full weights are written only when asked for (a final
// 2^(s - m) / l over the stored scores). Under a causal mask, key blocks that lie wholly above
// the diagonal of a block of queries are never visited: the masked half costs nothing.
//
// The kernel body (after the #else at the bottom) is compiled once per instruction set, each time
// in its own namespace: this file includes itself. ATTN_FORCE_SCALAR keeps the portable path; the
// environment variable ATTN_SIMD_ISA=avx2 or =sse2 caps a native x86-64 build (for tests).
// WebAssembly relaxed-SIMD FMA is not used: emcc 3.1.6's clang 14 emits the proposal's early
// opcodes (f32x4.relaxed_fma = 0xfd 0xaf), which current engines reject as invalid.
#ifndef ATTN_SIMD_KERNEL_BODY
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels.h"
#include "opaque.h"

#if !defined(ATTN_FORCE_SCALAR) && defined(__wasm_simd128__)
#define SIMD_WASM 1
#include <wasm_simd128.h>
#elif !defined(ATTN_FORCE_SCALAR) && (defined(__SSE2__) || defined(_M_X64))
#define SIMD_SSE 1
#include <emmintrin.h>
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define SIMD_AVX2 1  // more copies of the kernel, for AVX2 + FMA and AVX-512, chosen at run time
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics trip a false -Wmaybe-uninitialized (GCC bug 105593), seen where
// they are inlined; the warning points into the header, so it is silenced for the header's lines.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#endif
#endif

namespace attn {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kLog2e = 1.44269504088896341f;
constexpr int kKeyBlock = 64;  // keys per block: a multiple of every instruction set's G
constexpr int kBlocksPerPass = 8;  // blocks of R query rows that share a pass over the keys

int round_up(int n, int m) { return (n + m - 1) / m * m; }

#if defined(__GNUC__) || defined(__clang__)
#define ATTN_NOINLINE __attribute__((noinline))
#else
#define ATTN_NOINLINE
#endif

// 2^f for f in [-0.5, 0.5]: a degree-5 polynomial fitted for relative error (max ~2e-7 in float).
constexpr float kExp2C0 = 1.000000119e+00f, kExp2C1 = 6.931469440e-01f, kExp2C2 = 2.402211726e-01f,
                kExp2C3 = 5.550713092e-02f, kExp2C4 = 9.675638750e-03f, kExp2C5 = 1.327673555e-03f;
constexpr float kRoundMagic = 12582912.0f;  // 1.5·2^23: x + magic rounds x to an integer held in the low bits

// 2^x for x <= 0, scalar; 0 below -126 (and for -inf).
inline float exp2_scalar(float x) {
  if (!(x >= -126.0f)) return 0.0f;
  const float t = x + kRoundMagic, f = x - (t - kRoundMagic);
  float poly = ((((kExp2C5 * f + kExp2C4) * f + kExp2C3) * f + kExp2C2) * f + kExp2C1) * f + kExp2C0;
  std::uint32_t bits, n;
  std::memcpy(&bits, &poly, 4);
  std::memcpy(&n, &t, 4);
  bits += n << 23;
  std::memcpy(&poly, &bits, 4);
  return poly;
}

// One workspace per thread, grown when a call needs more: no allocation per call once warm. Shared
// by every instruction set's copy of the kernel. Past kKeepBytes it is released after the call
// (a rare huge problem should not hold its memory for good; its own O(T·d) copies dwarf a malloc).
struct Workspace {
  static constexpr std::size_t kKeepBytes = std::size_t{24} << 20;
  std::vector<float> key_panels;    // (Tk_pad / G) panels of (d, G)
  std::vector<float> value_tiles;   // (Tk_blocks, dv_pad / G) tiles of (kKeyBlock, G)
  std::vector<float> query_pack;    // kSuperBlock / R packs of (d, R), scaled
  std::vector<float> acc;           // (kSuperBlock, dv_pad): running weighted sums of values
  std::vector<float> stats;         // (kSuperBlock, 2): running max and sum per query row
  std::vector<float> scores;        // (R, kKeyBlock): one block's scores, then probabilities
  static float* grow(std::vector<float>& v, std::size_t n) {
    if (v.size() < n) v.resize(n);
    return v.data();
  }
  void trim() {
    std::size_t bytes = 0;
    for (auto* v : {&key_panels, &value_tiles, &query_pack, &acc, &stats, &scores}) bytes += v->capacity() * sizeof(float);
    if (bytes > kKeepBytes) *this = Workspace();
  }
};
Workspace& workspace() {
  thread_local Workspace ws;
  return ws;
}

// ---- instruction sets: the same small vocabulary, W lanes each ------------------------------
#if defined(SIMD_WASM)
struct IsaWasm {
  using V = v128_t;
  static constexpr int W = 4, R = 4, NV = 2;  // 8 accumulators: V8 keeps them all in registers
  static V load(const float* p) { return wasm_v128_load(p); }
  static void store(float* p, V a) { wasm_v128_store(p, a); }
  static V splat(float x) { return wasm_f32x4_splat(x); }
  static V load_splat(const float* p) { return wasm_v128_load32_splat(p); }
  static V add(V a, V b) { return wasm_f32x4_add(a, b); }
  static V sub(V a, V b) { return wasm_f32x4_sub(a, b); }
  static V mul(V a, V b) { return wasm_f32x4_mul(a, b); }
  static V madd(V a, V b, V c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), c); }  // a·b + c
  static V max(V a, V b) { return wasm_f32x4_pmax(a, b); }
  // a·2^n where n is the integer in the low bits of t = n + kRoundMagic (exponent add)
  static V scale_pow2(V a, V t) { return wasm_i32x4_add(a, wasm_i32x4_shl(t, 23)); }
  static V zero_below(V y, V x, float limit) { return wasm_v128_andnot(y, wasm_f32x4_lt(x, wasm_f32x4_splat(limit))); }
  // horizontal sum and max by shuffles: no branches (a data-dependent one mispredicts often)
  static float hsum(V a) {
    a = wasm_f32x4_add(a, wasm_i32x4_shuffle(a, a, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(wasm_f32x4_add(a, wasm_i32x4_shuffle(a, a, 1, 0, 3, 2)), 0);
  }
  static float hmax(V a) {
    a = wasm_f32x4_pmax(a, wasm_i32x4_shuffle(a, a, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(wasm_f32x4_pmax(a, wasm_i32x4_shuffle(a, a, 1, 0, 3, 2)), 0);
  }
};
#elif defined(SIMD_SSE)
struct IsaSse2 {
  using V = __m128;
  static constexpr int W = 4, R = 4, NV = 2;
  static V load(const float* p) { return _mm_loadu_ps(p); }
  static void store(float* p, V a) { _mm_storeu_ps(p, a); }
  static V splat(float x) { return _mm_set1_ps(x); }
  static V load_splat(const float* p) { return _mm_load1_ps(p); }
  static V add(V a, V b) { return _mm_add_ps(a, b); }
  static V sub(V a, V b) { return _mm_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm_mul_ps(a, b); }
  static V madd(V a, V b, V c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static V max(V a, V b) { return _mm_max_ps(a, b); }
  static V scale_pow2(V a, V t) {
    return _mm_castsi128_ps(_mm_add_epi32(_mm_castps_si128(a), _mm_slli_epi32(_mm_castps_si128(t), 23)));
  }
  static V zero_below(V y, V x, float limit) { return _mm_andnot_ps(_mm_cmplt_ps(x, _mm_set1_ps(limit)), y); }
  static float hsum(V a) {
    a = _mm_add_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_add_ss(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(2, 3, 0, 1))));
  }
  static float hmax(V a) {
    a = _mm_max_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_max_ss(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(2, 3, 0, 1))));
  }
};
#else  // portable: four floats, the same code shape, so the algorithm is tested everywhere
struct IsaPortable {
  struct V {
    float x[4];
  };
  static constexpr int W = 4, R = 4, NV = 2;
  static V load(const float* p) { V r; std::memcpy(r.x, p, sizeof r.x); return r; }
  static void store(float* p, V a) { std::memcpy(p, a.x, sizeof a.x); }
  static V splat(float x) { return V{{x, x, x, x}}; }
  static V load_splat(const float* p) { return splat(*p); }
#define ATTN_LANEWISE(name, expr) \
  static V name(V a, V b) { V r; for (int i = 0; i < 4; ++i) r.x[i] = (expr); return r; }
  ATTN_LANEWISE(add, a.x[i] + b.x[i])
  ATTN_LANEWISE(sub, a.x[i] - b.x[i])
  ATTN_LANEWISE(mul, a.x[i] * b.x[i])
  ATTN_LANEWISE(max, a.x[i] > b.x[i] ? a.x[i] : b.x[i])
#undef ATTN_LANEWISE
  static V madd(V a, V b, V c) { return add(mul(a, b), c); }
  static V scale_pow2(V a, V t) {
    V r;
    for (int i = 0; i < 4; ++i) {
      std::uint32_t ua, ut;
      std::memcpy(&ua, &a.x[i], 4);
      std::memcpy(&ut, &t.x[i], 4);
      ua += ut << 23;
      std::memcpy(&r.x[i], &ua, 4);
    }
    return r;
  }
  static V zero_below(V y, V x, float limit) { V r; for (int i = 0; i < 4; ++i) r.x[i] = x.x[i] < limit ? 0.0f : y.x[i]; return r; }
  static float hsum(V a) { return (a.x[0] + a.x[1]) + (a.x[2] + a.x[3]); }
  static float hmax(V a) { return std::max(std::max(a.x[0], a.x[1]), std::max(a.x[2], a.x[3])); }
};
#endif

}  // namespace
}  // namespace attn

// ---- the kernel, once per instruction set ---------------------------------------------------
#define ATTN_SIMD_KERNEL_BODY 1
#if defined(SIMD_WASM)
namespace attn { namespace { namespace kernel_wasm { using Isa = IsaWasm;
#include "simd.cpp"
} } }
#elif defined(SIMD_SSE)
namespace attn { namespace { namespace kernel_sse2 { using Isa = IsaSse2;
#include "simd.cpp"
} } }
#else
namespace attn { namespace { namespace kernel_portable { using Isa = IsaPortable;
#include "simd.cpp"
} } }
#endif

#if defined(SIMD_AVX2)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace attn { namespace {
struct IsaAvx2 {
  using V = __m256;
  static constexpr int W = 8, R = 6, NV = 2;  // 12 accumulators of 16 registers
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V a) { _mm256_storeu_ps(p, a); }
  static V splat(float x) { return _mm256_set1_ps(x); }
  static V load_splat(const float* p) { return _mm256_broadcast_ss(p); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V madd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V scale_pow2(V a, V t) {
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(a), _mm256_slli_epi32(_mm256_castps_si256(t), 23)));
  }
  static V zero_below(V y, V x, float limit) { return _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(limit), _CMP_LT_OQ), y); }
  static float hsum(V a) { return IsaSse2::hsum(_mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1))); }
  static float hmax(V a) { return IsaSse2::hmax(_mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1))); }
};
namespace kernel_avx2 { using Isa = IsaAvx2;
#include "simd.cpp"
}  // namespace kernel_avx2
} }  // namespace attn::(anonymous)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#endif
namespace attn { namespace {
struct IsaAvx512 {
  using V = __m512;
  static constexpr int W = 16, R = 8, NV = 2;  // 16 accumulators of 32 registers
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V a) { _mm512_storeu_ps(p, a); }
  static V splat(float x) { return _mm512_set1_ps(x); }
  static V load_splat(const float* p) { return _mm512_set1_ps(*p); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V madd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V scale_pow2(V a, V t) {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_slli_epi32(_mm512_castps_si512(t), 23)));
  }
  static V zero_below(V y, V x, float limit) {
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(limit), _CMP_NLT_UQ), y);
  }
  static float hsum(V a) { return _mm512_reduce_add_ps(a); }
  static float hmax(V a) { return _mm512_reduce_max_ps(a); }
};
namespace kernel_avx512 { using Isa = IsaAvx512;
#include "simd.cpp"
}  // namespace kernel_avx512
} }  // namespace attn::(anonymous)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // SIMD_AVX2

namespace attn {
namespace {

// The widest copy of the kernel this processor runs, chosen once (ATTN_SIMD_ISA=avx2|sse2 caps it),
// unless select_simd_flavour() picked one.
enum class Isa { Wasm, Sse2, Avx2, Avx512, Portable };
std::atomic<int> selected_isa{-1};  // an Isa, or -1 for the default
const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Wasm: return "wasm-simd128";
    case Isa::Sse2: return "sse2";
    case Isa::Avx2: return "avx2-fma";
    case Isa::Avx512: return "avx512f";
    case Isa::Portable: break;
  }
  return "scalar";
}
// What this build and processor can run, widest first.
std::vector<Isa> runnable_isas() {
#if defined(SIMD_WASM)
  return {Isa::Wasm};
#elif defined(SIMD_AVX2)
  std::vector<Isa> isas;
  if (__builtin_cpu_supports("avx512f")) isas.push_back(Isa::Avx512);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isas.push_back(Isa::Avx2);
  isas.push_back(Isa::Sse2);
  return isas;
#elif defined(SIMD_SSE)
  return {Isa::Sse2};
#else
  return {Isa::Portable};
#endif
}
Isa default_isa() {
#if defined(SIMD_WASM)
  return Isa::Wasm;
#elif defined(SIMD_AVX2)
  static const Isa isa = [] {
    const char* cap = std::getenv("ATTN_SIMD_ISA");
    const bool no_avx512 = cap && (std::strcmp(cap, "avx2") == 0 || std::strcmp(cap, "sse2") == 0);
    const bool no_avx2 = cap && std::strcmp(cap, "sse2") == 0;
    if (!no_avx512 && __builtin_cpu_supports("avx512f")) return Isa::Avx512;
    if (!no_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
    return Isa::Sse2;
  }();
  return isa;
#elif defined(SIMD_SSE)
  return Isa::Sse2;
#else
  return Isa::Portable;
#endif
}
Isa chosen_isa() {
  const int selected = selected_isa.load(std::memory_order_relaxed);
  return selected >= 0 ? static_cast<Isa>(selected) : default_isa();
}

}  // namespace

std::vector<std::string> simd_flavours() {
  std::vector<std::string> names;
  for (const Isa isa : runnable_isas()) names.push_back(isa_name(isa));
  return names;
}

bool select_simd_flavour(const std::string& name) {
  if (name.empty()) {
    selected_isa.store(-1);
    return true;
  }
  for (const Isa isa : runnable_isas())
    if (name == isa_name(isa)) {
      selected_isa.store(static_cast<int>(isa));
      return true;
    }
  return false;
}

void attention_simd(const AttentionProblem& p, float* output, float* weights) {
  // The blocked kernels skip key blocks by the causal mask alone; a window, a soft-cap (Mistral,
  // Gemma) or cut links take the Eigen matrix form, which applies them per score.
  if (p.window > 0 || p.softcap > 0 || p.cut) return attention_eigen(p, output, weights);
  Workspace& ws = workspace();
#if defined(SIMD_WASM)
  kernel_wasm::attention(p, output, weights, ws);
#elif defined(SIMD_SSE)
#if defined(SIMD_AVX2)
  if (chosen_isa() == Isa::Avx512) kernel_avx512::attention(p, output, weights, ws);
  else if (chosen_isa() == Isa::Avx2) kernel_avx2::attention(p, output, weights, ws);
  else
#endif
    kernel_sse2::attention(p, output, weights, ws);
#else
  kernel_portable::attention(p, output, weights, ws);
#endif
  ws.trim();
}

int attention_simd_row_block(const AttentionProblem& p) {
  if (p.window > 0 || p.softcap > 0 || p.cut) return 0;  // the Eigen form (see attention_simd)
#if defined(SIMD_WASM)
  return IsaWasm::R;
#elif defined(SIMD_SSE)
#if defined(SIMD_AVX2)
  if (chosen_isa() == Isa::Avx512) return IsaAvx512::R;
  if (chosen_isa() == Isa::Avx2) return IsaAvx2::R;
#endif
  return IsaSse2::R;
#else
  return IsaPortable::R;
#endif
}

const char* simd_flavour() { return isa_name(chosen_isa()); }

}  // namespace attn

#else  // ATTN_SIMD_KERNEL_BODY ------------------------------------------------------------------
// The kernel body, written against `Isa` (V, W lanes, R query rows, NV vectors per tile).
// Included by the top half of this file, once per instruction set.

constexpr int W = Isa::W, R = Isa::R, G = Isa::NV * Isa::W;  // G: keys (or value columns) per tile
constexpr int kSuperBlock = R * kBlocksPerPass;  // query rows that share a pass over the keys
using V = Isa::V;
static_assert(kKeyBlock % G == 0, "a key block holds whole tiles");

// 2^x for x <= 0 in base-2 units, two flavours. exp2_nonpositive: x below -126 (a masked key's
// -inf too) gives exactly 0. exp2_clamped: x is clamped to -126 first (2^-126 ~ 1e-38 instead of a
// smaller number or 0), two operations fewer; for blocks without masked or padded keys.
inline V exp2_polynomial(V x, V* t_out) {
  const V t = Isa::add(x, Isa::splat(kRoundMagic));  // round(x) in the low bits of t
  const V f = Isa::sub(x, Isa::sub(t, Isa::splat(kRoundMagic)));  // x - round(x), in [-0.5, 0.5]
  V poly = Isa::madd(Isa::splat(kExp2C5), f, Isa::splat(kExp2C4));
  poly = Isa::madd(poly, f, Isa::splat(kExp2C3));
  poly = Isa::madd(poly, f, Isa::splat(kExp2C2));
  poly = Isa::madd(poly, f, Isa::splat(kExp2C1));
  poly = Isa::madd(poly, f, Isa::splat(kExp2C0));
  *t_out = t;
  return poly;
}
inline V exp2_nonpositive(V x) {
  V t;
  const V poly = exp2_polynomial(x, &t);
  return Isa::zero_below(Isa::scale_pow2(poly, t), x, -126.0f);
}
inline V exp2_clamped(V x) {
  V t;
  const V poly = exp2_polynomial(Isa::max(x, Isa::splat(-126.0f)), &t);
  return Isa::scale_pow2(poly, t);
}

// The micro-kernels stay out of line (ATTN_NOINLINE): small functions with one simple loop each
// let the WebAssembly engine keep every accumulator in a register.

// pass 1: score[r][j] = q_r · k_j for RR query rows and the n_pad keys (n_pad % G == 0) of a key
// block, one R x G register tile at a time. query_pack is (d, RR); the block's key panels are
// (d, G) each, one after the other.
template <int RR>
ATTN_NOINLINE void score_block(const float* query_pack, int d, const float* panels, int n_pad, float* score) {
  for (int j = 0; j < n_pad; j += G) {
    V acc[RR][Isa::NV];
    for (int r = 0; r < RR; ++r)
      for (int v = 0; v < Isa::NV; ++v) acc[r][v] = Isa::splat(0.0f);
    const float* q = query_pack;
    for (int c = 0; c < d; ++c, q += RR, panels += G) {
      V kv[Isa::NV];
      for (int v = 0; v < Isa::NV; ++v) kv[v] = Isa::load(panels + v * W);
      for (int r = 0; r < RR; ++r) {
        const V qv = Isa::load_splat(q + r);
        for (int v = 0; v < Isa::NV; ++v) acc[r][v] = Isa::madd(qv, kv[v], acc[r][v]);
      }
    }
    for (int r = 0; r < RR; ++r)
      for (int v = 0; v < Isa::NV; ++v) Isa::store(score + r * kKeyBlock + j + v * W, acc[r][v]);
  }
}

// pass 3: acc[r] = alpha[r]·acc[r] + sum_j p[r][j] · value_j for RR rows and the n keys of a key
// block, one R x G register tile (G value columns) at a time. tiles: the block's value tiles,
// (kKeyBlock, G) each, one after the other; acc_rv is (RR, dv_pad).
template <int RR>
ATTN_NOINLINE void accumulate_block(const float* prob, int n, const float* tiles, int dv_pad, const float* alpha,
                                    float* acc_rv) {
  for (int h = 0; h < dv_pad; h += G, tiles += kKeyBlock * G) {
    V acc[RR][Isa::NV];
    for (int r = 0; r < RR; ++r) {
      const V a = Isa::splat(alpha[r]);
      for (int v = 0; v < Isa::NV; ++v) acc[r][v] = Isa::mul(Isa::load(acc_rv + r * dv_pad + h + v * W), a);
    }
    const float* val = tiles;
    const float* pj = prob;
    for (int j = 0; j < n; ++j, val += G, ++pj) {
      V vv[Isa::NV];
      for (int v = 0; v < Isa::NV; ++v) vv[v] = Isa::load(val + v * W);
      for (int r = 0; r < RR; ++r) {
        const V pv = Isa::load_splat(pj + r * kKeyBlock);
        for (int v = 0; v < Isa::NV; ++v) acc[r][v] = Isa::madd(pv, vv[v], acc[r][v]);
      }
    }
    for (int r = 0; r < RR; ++r)
      for (int v = 0; v < Isa::NV; ++v) Isa::store(acc_rv + r * dv_pad + h + v * W, acc[r][v]);
  }
}

// pass 2, one block: each row's s (n_pad scores, n_pad % W == 0; -inf where hidden or padded,
// from valid[r] on) becomes p = 2^(s - m) with the row's new running max m; alpha[r] = 2^(m_old - m)
// rescales what the row accumulated so far; the running max and sum are updated.
template <int RR>
ATTN_NOINLINE void softmax_block(float* score, int n_pad, const int* valid, float* row_max, float* row_sum,
                                 float* alpha) {
  for (int r = 0; r < RR; ++r) {
    float* s = score + r * kKeyBlock;
    if (valid[r] == 0) {  // nothing visible in this block: no change, and p = 0
      std::fill(s, s + n_pad, 0.0f);
      alpha[r] = 1.0f;
      continue;
    }
    V vmax = Isa::load(s);
    for (int j = W; j < n_pad; j += W) vmax = Isa::max(vmax, Isa::load(s + j));
    const float new_max = std::max(row_max[r], Isa::hmax(vmax));
    alpha[r] = new_max == row_max[r] ? 1.0f : exp2_scalar(row_max[r] - new_max);  // 0 on the first block
    row_max[r] = new_max;
    V vsum = Isa::splat(0.0f);
    const V vnew_max = Isa::splat(new_max);
    if (valid[r] < n_pad) {  // -inf entries must give exactly 0
      for (int j = 0; j < n_pad; j += W) {
        const V e = exp2_nonpositive(Isa::sub(Isa::load(s + j), vnew_max));
        Isa::store(s + j, e);
        vsum = Isa::add(vsum, e);
      }
    } else {
      for (int j = 0; j < n_pad; j += W) {
        const V e = exp2_clamped(Isa::sub(Isa::load(s + j), vnew_max));
        Isa::store(s + j, e);
        vsum = Isa::add(vsum, e);
      }
    }
    row_sum[r] = row_sum[r] * alpha[r] + Isa::hsum(vsum);
  }
}

struct Layout {
  int tk_pad, tk_blocks, dv_pad;
  std::size_t key_panel;  // floats per key panel
  float *key_panels, *value_tiles, *query_pack, *acc, *stats, *scores;
};

// Up to kSuperBlock query rows (`blocks` blocks of RR rows from i0) meet each key block in turn,
// so a key block's panels and tiles are read from L1/L2 once for all of them. Each block of RR
// rows keeps its own state: packed queries, running max, sum and weighted values.
template <int RR>
void query_rows(const AttentionProblem& p, int i0, int blocks, const Layout& L, float* output, float* weights) {
  const int d = p.d;
  const float qscale = p.scale * kLog2e;  // scores in base-2 units
  for (int b = 0; b < blocks; ++b) {
    float* pack = L.query_pack + static_cast<std::size_t>(b) * d * RR;  // (d, RR), interleaved
    for (int r = 0; r < RR; ++r) {
      const float* qr = p.query + static_cast<std::size_t>(i0 + b * RR + r) * d;
      for (int c = 0; c < d; ++c) pack[c * RR + r] = qr[c] * qscale;
    }
    std::fill(L.acc + static_cast<std::size_t>(b) * RR * L.dv_pad, L.acc + static_cast<std::size_t>(b + 1) * RR * L.dv_pad,
              0.0f);
    for (int r = 0; r < RR; ++r) L.stats[2 * (b * RR + r)] = kNegInf, L.stats[2 * (b * RR + r) + 1] = 0.0f;
  }
  float* score = L.scores;
  // under the causal mask, keys after a block's last query are hidden from every query in it
  // (row0 counts from the problem's first row: query first_query + row0 of the text)
  const auto key_end_of = [&](int row0) { return p.causal ? std::min(p.Tk, p.first_query + row0 + RR) : p.Tk; };
  const int key_end_all = key_end_of(i0 + (blocks - 1) * RR);
  for (int j0 = 0; j0 < key_end_all; j0 += kKeyBlock) {
    for (int b = 0; b < blocks; ++b) {
      const int row0 = i0 + b * RR, key_end = key_end_of(row0);
      if (j0 >= key_end) continue;  // the whole key block is in these queries' future
      const int n = std::min(kKeyBlock, key_end - j0), n_pad = round_up(n, G);
      float* acc_rv = L.acc + static_cast<std::size_t>(b) * RR * L.dv_pad;
      float row_max[RR], row_sum[RR], alpha[RR];
      int valid[RR];
      for (int r = 0; r < RR; ++r) row_max[r] = L.stats[2 * (b * RR + r)], row_sum[r] = L.stats[2 * (b * RR + r) + 1];
      opaque(&score_block<RR>)(L.query_pack + static_cast<std::size_t>(b) * d * RR, d,
                               L.key_panels + (j0 / G) * L.key_panel, n_pad, score);  // pass 1
      for (int r = 0; r < RR; ++r) {
        float* s = score + r * kKeyBlock;
        const int visible = (p.causal ? std::min(key_end, p.first_query + row0 + r + 1) : key_end) - j0;  // keys this row may see
        valid[r] = std::max(0, std::min(n, visible));
        for (int j = valid[r]; j < n_pad; ++j) s[j] = kNegInf;
        if (weights) std::memcpy(weights + static_cast<std::size_t>(row0 + r) * p.Tk + j0, s, sizeof(float) * n);
      }
      opaque(&softmax_block<RR>)(score, n_pad, valid, row_max, row_sum, alpha);  // pass 2
      opaque(&accumulate_block<RR>)(score, n, L.value_tiles + static_cast<std::size_t>(j0) * L.dv_pad, L.dv_pad, alpha,
                                    acc_rv);  // pass 3
      for (int r = 0; r < RR; ++r) L.stats[2 * (b * RR + r)] = row_max[r], L.stats[2 * (b * RR + r) + 1] = row_sum[r];
    }
  }
  for (int b = 0; b < blocks; ++b) {
    const int row0 = i0 + b * RR, key_end = key_end_of(row0);
    for (int r = 0; r < RR; ++r) {
      const float row_max = L.stats[2 * (b * RR + r)], row_sum = L.stats[2 * (b * RR + r) + 1];
      const float inv_sum = row_sum > 0.0f ? 1.0f / row_sum : 0.0f;
      const float* acc = L.acc + (static_cast<std::size_t>(b) * RR + r) * L.dv_pad;
      float* out = output + static_cast<std::size_t>(row0 + r) * p.dv;
      for (int c = 0; c < p.dv; ++c) out[c] = acc[c] * inv_sum;
      if (!weights) continue;
      float* w = weights + static_cast<std::size_t>(row0 + r) * p.Tk;
      const V vmax = Isa::splat(row_max), vinv = Isa::splat(inv_sum);
      int j = 0;
      for (; j + W <= key_end; j += W) Isa::store(w + j, Isa::mul(exp2_nonpositive(Isa::sub(Isa::load(w + j), vmax)), vinv));
      for (; j < key_end; ++j) w[j] = exp2_scalar(w[j] - row_max) * inv_sum;
      for (j = key_end; j < p.Tk; ++j) w[j] = 0.0f;
    }
  }
}

// The last Tq % R rows, with the same code specialised by count.
template <int RR>
void last_rows(const AttentionProblem& p, int i0, const Layout& L, float* output, float* weights) {
  if constexpr (RR > 0) {
    if (p.Tq - i0 == RR) return query_rows<RR>(p, i0, 1, L, output, weights);
    last_rows<RR - 1>(p, i0, L, output, weights);
  }
}

void attention(const AttentionProblem& p, float* output, float* weights, Workspace& ws) {
  Layout L;
  L.tk_pad = round_up(p.Tk, G);
  L.dv_pad = round_up(p.dv, G);
  L.key_panel = static_cast<std::size_t>(p.d) * G;
  L.tk_blocks = (p.Tk + kKeyBlock - 1) / kKeyBlock;
  L.key_panels = Workspace::grow(ws.key_panels, static_cast<std::size_t>(L.tk_pad / G) * L.key_panel);
  L.value_tiles = Workspace::grow(ws.value_tiles, static_cast<std::size_t>(L.tk_blocks) * kKeyBlock * L.dv_pad);
  L.query_pack = Workspace::grow(ws.query_pack, static_cast<std::size_t>(p.d) * kSuperBlock);
  L.acc = Workspace::grow(ws.acc, static_cast<std::size_t>(kSuperBlock) * L.dv_pad);
  L.stats = Workspace::grow(ws.stats, 2 * kSuperBlock);
  L.scores = Workspace::grow(ws.scores, static_cast<std::size_t>(R) * kKeyBlock);
  // key panels: panel g holds keys g·G .. g·G+G-1 as (d, G); keys past Tk are 0
  for (int g = 0; g < L.tk_pad / G; ++g) {
    float* panel = L.key_panels + g * L.key_panel;
    const int j_end = std::min(G, p.Tk - g * G);
    for (int c = 0; c < p.d; ++c) {
      const float* key = p.key + static_cast<std::size_t>(g) * G * p.d + c;
      float* row = panel + static_cast<std::size_t>(c) * G;
      for (int j = 0; j < j_end; ++j) row[j] = key[static_cast<std::size_t>(j) * p.d];
      for (int j = j_end; j < G; ++j) row[j] = 0.0f;
    }
  }
  // value tiles: tile (b, h) holds keys b·KB .. b·KB+KB-1, columns h·G .. h·G+G-1 as (KB, G); a key
  // block's tiles are contiguous (one sequential stream for the prefetcher); padding is 0
  const int groups = L.dv_pad / G;
  for (int j = 0; j < L.tk_blocks * kKeyBlock; ++j) {
    float* row = L.value_tiles + (static_cast<std::size_t>(j / kKeyBlock) * groups * kKeyBlock + j % kKeyBlock) * G;
    for (int h = 0; h < groups; ++h, row += kKeyBlock * G) {
      const int c_end = j < p.Tk ? std::min(G, p.dv - h * G) : 0;
      for (int c = 0; c < c_end; ++c) row[c] = p.value[static_cast<std::size_t>(j) * p.dv + h * G + c];
      for (int c = c_end; c < G; ++c) row[c] = 0.0f;
    }
  }
  int i0 = 0;
  for (; i0 + R <= p.Tq; i0 += kSuperBlock) {
    const int blocks = std::min(kSuperBlock, p.Tq - i0) / R;
    query_rows<R>(p, i0, blocks, L, output, weights);
    if (blocks * R < kSuperBlock) {
      i0 += blocks * R;
      break;
    }
  }
  last_rows<R - 1>(p, i0, L, output, weights);
}

#endif  // ATTN_SIMD_KERNEL_BODY
