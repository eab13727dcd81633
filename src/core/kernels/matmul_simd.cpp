// The SIMD matrix product: a cache- and register-blocked GEMM for 128-bit wasm SIMD, SSE2 and
// natively AVX2 + FMA or AVX-512 (the widest the processor has, chosen at run time).
// Not the reference: matmul_scalar (matmul.cpp) is; tests/unit/test_matmul.cpp checks this against it.
//
// Shapes (row-major): a (M, K) [TN: stored (K, M)], b (K, N) [NT: stored (N, K)] -> c (M, N).
// Loop order (BLIS's, one thread):
//   for each block of KC steps along k:
//     for each block of MC rows of c: pack those rows of a into panels of (kc, MR), MR rows interleaved
//       for each block of NC columns of c: pack b's block as strips of (kc, NR), one after the other
//         (each row of b is read across the whole block: whole cache lines, whatever b's stride)
//         for each strip, for each panel of MR rows: the micro-kernel: an MR x NR tile of c in
//           registers for kc steps of (MR splats of a) x (NV vectors of b), then written out once.
// Packing turns every layout into the same panels (NT's strips and NN's rows of a are transposed
// 4 x 4 at a time), so one micro-kernel serves NN, NT and TN and all its loads are sequential.
// Panels past the edge of a or b are zero-padded. 16-bit b (F16, BF16) is widened to float while
// its block is packed, W elements at a time (F16C natively, integer shifts and one multiply in
// WebAssembly and SSE2): the micro-kernel and the accumulation stay float, no widened copy of the
// whole b is ever made, and each element is widened once per row block of a (once for M <= MC). The first k block writes c = [c +] bias + a·b;
// later blocks add to c. The packing buffers are per thread and grown once: no allocation per call
// once warm. The file includes itself once per instruction set, like simd.cpp: ATTN_FORCE_SCALAR
// keeps the portable path, ATTN_SIMD_ISA=avx2|sse2 caps a native x86-64 build. WebAssembly has no
// FMA in emcc 3.1.6: a multiply, then an add.
#ifndef ATTN_MATMUL_KERNEL_BODY
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "matmul.h"
#include "opaque.h"

#if !defined(ATTN_FORCE_SCALAR) && defined(__wasm_simd128__)
#define MATMUL_WASM 1
#include <wasm_simd128.h>
#elif !defined(ATTN_FORCE_SCALAR) && (defined(__SSE2__) || defined(_M_X64))
#define MATMUL_SSE 1
#include <cpuid.h>
#include <emmintrin.h>
#include <xmmintrin.h>
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define MATMUL_AVX 1  // more copies of the kernel, for AVX2 + FMA and AVX-512, chosen at run time
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593, in the AVX-512 header
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#endif
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MATMUL_NOINLINE __attribute__((noinline))
#else
#define MATMUL_NOINLINE
#endif

namespace attn {
namespace {

// Packing buffers, one set per thread, shared by every instruction set's copy: a few hundred KB.
struct MatmulWorkspace {
  std::vector<float> a_panels;  // (MC / MR) panels of (kc, MR)
  std::vector<float> b_block;   // NC / NR strips of (kc, NR), one after the other
  std::vector<float> row_sums;  // gemv: one row of c's running sums over a k block (N values)
  static float* grow(std::vector<float>& v, std::size_t n) {
    if (v.size() < n) v.resize(n);
    return v.data();
  }
};
MatmulWorkspace& matmul_workspace() {
  thread_local MatmulWorkspace ws;
  return ws;
}

// ---- instruction sets: W lanes, an MR x (NV·W) register tile, 4 x 4 transposes for packing ------
#if defined(MATMUL_WASM)
struct MmWasm {
  using V = v128_t;
  static constexpr int W = 4, MR = 4, NV = 2, KC = 768;  // 8 accumulators: V8 keeps them in registers; KC: GPT-2 small's C in one k block
  static V load(const float* p) { return wasm_v128_load(p); }
  static void store(float* p, V a) { wasm_v128_store(p, a); }
  static V zero() { return wasm_f32x4_splat(0.0f); }
  static V load_splat(const float* p) { return wasm_v128_load32_splat(p); }
  static V add(V a, V b) { return wasm_f32x4_add(a, b); }
  static V madd(V a, V b, V c) { return wasm_f32x4_add(c, wasm_f32x4_mul(a, b)); }  // c + a·b
  // 4 halves or bfloat16s, each in the top 16 bits of a 32-bit lane (w = h << 16), as 4 floats.
  // A bfloat16 shifted up IS its float. A half (Maratyszcza's FP16 trick, exact for every input):
  // normals and inf/NaN move their exponent up by 224 with an add and come back down by 2^-112
  // with a multiply (exact: a power of two, no float subnormal involved); zero and subnormals
  // (exponent 0) are m · 2^-24, made as (0.5 + m · 2^-24) - 0.5 exactly.
  static V half_high_to_float(V w) {
    const V sign = wasm_v128_and(w, wasm_i32x4_splat(static_cast<int>(0x80000000u)));
    const V two_w = wasm_i32x4_add(w, w);
    const V normal = wasm_f32x4_mul(wasm_i32x4_add(wasm_u32x4_shr(two_w, 4), wasm_i32x4_splat(0x70000000)),
                                    wasm_f32x4_splat(0x1.0p-112f));
    const V subnormal = wasm_f32x4_sub(wasm_v128_or(wasm_u32x4_shr(two_w, 17), wasm_i32x4_splat(0x3f000000)),
                                       wasm_f32x4_splat(0.5f));
    const V is_subnormal = wasm_u32x4_lt(two_w, wasm_i32x4_splat(1 << 27));
    return wasm_v128_or(sign, wasm_v128_bitselect(subnormal, normal, is_subnormal));
  }
  // A lane of 8 halves (or of their exponent tests, or-ed) that is not normal: zero, subnormal,
  // inf or NaN. Adding 1 to the exponent wraps 31 to 0 and takes 0 to 1, so a normal half has
  // (h + 0x400) & 0x7c00 >= 0x800.
  static V not_normal_f16(V h) {
    const V e = wasm_v128_and(wasm_i16x8_add(h, wasm_i16x8_splat(0x400)), wasm_i16x8_splat(0x7c00));
    return wasm_u16x8_lt(e, wasm_i16x8_splat(0x800));
  }
  // The common case, a normal half (exponent 1 .. 30): its float is sign | (exponent + 112) << 23 |
  // mantissa << 13, made for 8 halves still in 16-bit lanes as each float's two halves: the top
  // sign | (exponent + 112) << 7 | mantissa >> 3 (the arithmetic shift copies the sign into bits
  // 12-15, the mask keeps bit 15 only), the bottom (mantissa & 7) << 13. Interleaving bottom with
  // top (instead of zero with h) then gives the floats: 4 operations per 8 halves.
  static V normal_half_top16(V h) {
    return wasm_i16x8_add(wasm_v128_and(wasm_i16x8_shr(h, 3), wasm_i16x8_splat(static_cast<short>(0x8fff))), wasm_i16x8_splat(0x3800));
  }
  static V normal_half_bottom16(V h) { return wasm_i16x8_shl(h, 13); }
  static V widen_f16(const std::uint16_t* p) { return half_high_to_float(wasm_i32x4_shl(wasm_u32x4_load16x4(p), 16)); }
  static V widen_bf16(const std::uint16_t* p) { return wasm_i32x4_shl(wasm_u32x4_load16x4(p), 16); }
  // 2W = 8 values from one load: each half interleaved with a zero below it is w = h << 16 (the
  // interleaves are written as the plain unpack patterns, which V8 turns into one instruction each).
  static void widen2_f16(const std::uint16_t* p, V& lo, V& hi) {
    const V h = wasm_v128_load(p);
    if (!wasm_v128_any_true(not_normal_f16(h))) {
      const V top = normal_half_top16(h), bottom = normal_half_bottom16(h);
      lo = wasm_i16x8_shuffle(bottom, top, 0, 8, 1, 9, 2, 10, 3, 11);
      hi = wasm_i16x8_shuffle(bottom, top, 4, 12, 5, 13, 6, 14, 7, 15);
      return;
    }
    const V zero = wasm_i16x8_splat(0);
    lo = half_high_to_float(wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11));
    hi = half_high_to_float(wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15));
  }
  static void widen2_bf16(const std::uint16_t* p, V& lo, V& hi) {
    const V h = wasm_v128_load(p), zero = wasm_i16x8_splat(0);
    lo = wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11);
    hi = wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15);
  }
  // 4 x 4 16-bit values, transposed and widened: rows 0 and 1 interleaved in 16 bits give
  // v01 = [r0c0 r1c0 r0c1 r1c1 r0c2 r1c2 r0c3 r1c3] (rows 2 and 3: v23), and interleaving that
  // with zeros is both the first transpose stage and the widening (w = h << 16), so the float
  // transpose gains only the conversion of a half.
  static void load4x4_16(const std::uint16_t* src, std::size_t ld, V& v01, V& v23) {
    const V r0 = wasm_v128_load64_zero(src), r1 = wasm_v128_load64_zero(src + ld);
    const V r2 = wasm_v128_load64_zero(src + 2 * ld), r3 = wasm_v128_load64_zero(src + 3 * ld);
    v01 = wasm_i16x8_shuffle(r0, r1, 0, 8, 1, 9, 2, 10, 3, 11);
    v23 = wasm_i16x8_shuffle(r2, r3, 0, 8, 1, 9, 2, 10, 3, 11);
  }
  // t0 = [r0c0 r1c0 r0c1 r1c1], t1 = [r0c2 r1c2 r0c3 r1c3] as w = h << 16 (the same for rows 2-3)
  static void zip_rows_16(V v01, V& t0, V& t1) { zip_halves_16(wasm_i16x8_splat(0), v01, t0, t1); }
  // the same interleave with bottom halves below the top ones (a float's two 16-bit halves)
  static void zip_halves_16(V bottom, V top, V& t0, V& t1) {
    t0 = wasm_i16x8_shuffle(bottom, top, 0, 8, 1, 9, 2, 10, 3, 11);
    t1 = wasm_i16x8_shuffle(bottom, top, 4, 12, 5, 13, 6, 14, 7, 15);
  }
  static void transpose4_f16(const std::uint16_t* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    V v01, v23, t0, t1, t2, t3;
    load4x4_16(src, ld, v01, v23);
    if (!wasm_v128_any_true(wasm_v128_or(not_normal_f16(v01), not_normal_f16(v23)))) {
      zip_halves_16(normal_half_bottom16(v01), normal_half_top16(v01), t0, t1);
      zip_halves_16(normal_half_bottom16(v23), normal_half_top16(v23), t2, t3);
    } else {
      zip_rows_16(v01, t0, t1);
      zip_rows_16(v23, t2, t3);
      t0 = half_high_to_float(t0), t1 = half_high_to_float(t1), t2 = half_high_to_float(t2), t3 = half_high_to_float(t3);
    }
    transpose4_stage2(t0, t1, t2, t3, dst, ld_dst);
  }
  static void transpose4_bf16(const std::uint16_t* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    V v01, v23, t0, t1, t2, t3;
    load4x4_16(src, ld, v01, v23);
    zip_rows_16(v01, t0, t1);
    zip_rows_16(v23, t2, t3);
    transpose4_stage2(t0, t1, t2, t3, dst, ld_dst);
  }
  // t0 = [r0c0 r1c0 r0c1 r1c1], t1 = [r0c2 r1c2 r0c3 r1c3], t2 and t3 the same for rows 2-3
  // -> columns c0 .. c3 at dst, dst + ld_dst, ...
  static void transpose4_stage2(V t0, V t1, V t2, V t3, float* dst, std::size_t ld_dst) {
    wasm_v128_store(dst, wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5));
    wasm_v128_store(dst + ld_dst, wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7));
    wasm_v128_store(dst + 2 * ld_dst, wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5));
    wasm_v128_store(dst + 3 * ld_dst, wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7));
  }
  // dst[c·ld_dst + r] = src[r·ld + c] for r, c < 4
  static void transpose4(const float* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    transpose4_regs(wasm_v128_load(src), wasm_v128_load(src + ld), wasm_v128_load(src + 2 * ld), wasm_v128_load(src + 3 * ld),
                    dst, ld_dst);
  }
  // rows v0 .. v3 -> columns at dst, dst + ld_dst, ...
  static void transpose4_regs(V v0, V v1, V v2, V v3, float* dst, std::size_t ld_dst) {
    const V t0 = wasm_i32x4_shuffle(v0, v1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(v0, v1, 2, 6, 3, 7);
    const V t2 = wasm_i32x4_shuffle(v2, v3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(v2, v3, 2, 6, 3, 7);
    wasm_v128_store(dst, wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5));
    wasm_v128_store(dst + ld_dst, wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7));
    wasm_v128_store(dst + 2 * ld_dst, wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5));
    wasm_v128_store(dst + 3 * ld_dst, wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7));
  }
};
#elif defined(MATMUL_SSE)
struct MmSse2 {
  using V = __m128;
  static constexpr int W = 4, MR = 4, NV = 2, KC = 256;
  static V load(const float* p) { return _mm_loadu_ps(p); }
  static void store(float* p, V a) { _mm_storeu_ps(p, a); }
  static V zero() { return _mm_setzero_ps(); }
  static V load_splat(const float* p) { return _mm_load1_ps(p); }
  static V add(V a, V b) { return _mm_add_ps(a, b); }
  static V madd(V a, V b, V c) { return _mm_add_ps(c, _mm_mul_ps(a, b)); }
  // 4 16-bit values into the top halves of 32-bit lanes (w = h << 16): one interleave with zero
  static __m128i load4_high(const std::uint16_t* p) {
    return _mm_unpacklo_epi16(_mm_setzero_si128(), _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  // The same exact half -> float as MmWasm's (see there); SSE2 has no unsigned compare, so the
  // subnormal test is made on two_w >> 1, which fits a signed lane.
  static V half_high_to_float(__m128i w) {
    const __m128i sign = _mm_and_si128(w, _mm_set1_epi32(static_cast<int>(0x80000000u)));
    const __m128i two_w = _mm_add_epi32(w, w);
    const __m128 normal = _mm_mul_ps(_mm_castsi128_ps(_mm_add_epi32(_mm_srli_epi32(two_w, 4), _mm_set1_epi32(0x70000000))),
                                     _mm_set1_ps(0x1.0p-112f));
    const __m128 subnormal = _mm_sub_ps(_mm_castsi128_ps(_mm_or_si128(_mm_srli_epi32(two_w, 17), _mm_set1_epi32(0x3f000000))),
                                        _mm_set1_ps(0.5f));
    const __m128 is_subnormal = _mm_castsi128_ps(_mm_cmplt_epi32(_mm_srli_epi32(two_w, 1), _mm_set1_epi32(1 << 26)));
    const __m128 magnitude = _mm_or_ps(_mm_and_ps(is_subnormal, subnormal), _mm_andnot_ps(is_subnormal, normal));
    return _mm_or_ps(_mm_castsi128_ps(sign), magnitude);
  }
  static V widen_f16(const std::uint16_t* p) { return half_high_to_float(load4_high(p)); }
  static V widen_bf16(const std::uint16_t* p) { return _mm_castsi128_ps(load4_high(p)); }
  static void widen2_f16(const std::uint16_t* p, V& lo, V& hi) { lo = widen_f16(p), hi = widen_f16(p + W); }
  static void widen2_bf16(const std::uint16_t* p, V& lo, V& hi) { lo = widen_bf16(p), hi = widen_bf16(p + W); }
  static void transpose4_f16(const std::uint16_t* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    transpose4_regs(widen_f16(src), widen_f16(src + ld), widen_f16(src + 2 * ld), widen_f16(src + 3 * ld), dst, ld_dst);
  }
  static void transpose4_bf16(const std::uint16_t* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    transpose4_regs(widen_bf16(src), widen_bf16(src + ld), widen_bf16(src + 2 * ld), widen_bf16(src + 3 * ld), dst, ld_dst);
  }
  static void transpose4(const float* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    transpose4_regs(_mm_loadu_ps(src), _mm_loadu_ps(src + ld), _mm_loadu_ps(src + 2 * ld), _mm_loadu_ps(src + 3 * ld), dst, ld_dst);
  }
  static void transpose4_regs(__m128 r0, __m128 r1, __m128 r2, __m128 r3, float* dst, std::size_t ld_dst) {
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(dst, r0);
    _mm_storeu_ps(dst + ld_dst, r1);
    _mm_storeu_ps(dst + 2 * ld_dst, r2);
    _mm_storeu_ps(dst + 3 * ld_dst, r3);
  }
};
#else  // portable: four floats, the same code shape, so the blocking is tested everywhere
struct MmPortable {
  struct V {
    float x[4];
  };
  static constexpr int W = 4, MR = 4, NV = 2, KC = 256;
  static V load(const float* p) { V r; std::memcpy(r.x, p, sizeof r.x); return r; }
  static void store(float* p, V a) { std::memcpy(p, a.x, sizeof a.x); }
  static V zero() { return V{{0.0f, 0.0f, 0.0f, 0.0f}}; }
  static V load_splat(const float* p) { return V{{*p, *p, *p, *p}}; }
  static V add(V a, V b) { V r; for (int i = 0; i < 4; ++i) r.x[i] = a.x[i] + b.x[i]; return r; }
  static V madd(V a, V b, V c) { V r; for (int i = 0; i < 4; ++i) r.x[i] = c.x[i] + a.x[i] * b.x[i]; return r; }
  static V widen_f16(const std::uint16_t* p) { V r; for (int i = 0; i < 4; ++i) r.x[i] = half_to_float(p[i]); return r; }
  static V widen_bf16(const std::uint16_t* p) { V r; for (int i = 0; i < 4; ++i) r.x[i] = bf16_to_float(p[i]); return r; }
  static void widen2_f16(const std::uint16_t* p, V& lo, V& hi) { lo = widen_f16(p), hi = widen_f16(p + W); }
  static void widen2_bf16(const std::uint16_t* p, V& lo, V& hi) { lo = widen_bf16(p), hi = widen_bf16(p + W); }
  static void transpose4(const float* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) dst[c * ld_dst + r] = src[r * ld + c];
  }
  static void transpose4_f16(const std::uint16_t* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) dst[c * ld_dst + r] = half_to_float(src[r * ld + c]);
  }
  static void transpose4_bf16(const std::uint16_t* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) dst[c * ld_dst + r] = bf16_to_float(src[r * ld + c]);
  }
};
#endif

}  // namespace
}  // namespace attn

// ---- the kernel, once per instruction set ---------------------------------------------------
#define ATTN_MATMUL_KERNEL_BODY 1
#if defined(MATMUL_WASM)
namespace attn { namespace { namespace matmul_wasm { using Isa = MmWasm;
#include "matmul_simd.cpp"
} } }
#elif defined(MATMUL_SSE)
namespace attn { namespace { namespace matmul_sse2 { using Isa = MmSse2;
#include "matmul_simd.cpp"
} } }
#else
namespace attn { namespace { namespace matmul_portable { using Isa = MmPortable;
#include "matmul_simd.cpp"
} } }
#endif

#if defined(MATMUL_AVX)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
namespace attn { namespace {
struct MmAvx2 {
  using V = __m256;
  static constexpr int W = 8, MR = 6, NV = 2, KC = 256;  // 12 accumulators of 16 registers
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V a) { _mm256_storeu_ps(p, a); }
  static V zero() { return _mm256_setzero_ps(); }
  static V load_splat(const float* p) { return _mm256_broadcast_ss(p); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V madd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  // F16C widens 8 halves in one instruction, exactly (subnormals included)
  static V widen_f16(const std::uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static V widen_bf16(const std::uint16_t* p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
  }
  static void widen2_f16(const std::uint16_t* p, V& lo, V& hi) { lo = widen_f16(p), hi = widen_f16(p + W); }
  static void widen2_bf16(const std::uint16_t* p, V& lo, V& hi) { lo = widen_bf16(p), hi = widen_bf16(p + W); }
  static __m128 widen4_f16(const std::uint16_t* p) { return _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }
  static void transpose4(const float* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    MmSse2::transpose4(src, ld, dst, ld_dst);
  }
  static void transpose4_f16(const std::uint16_t* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    MmSse2::transpose4_regs(widen4_f16(src), widen4_f16(src + ld), widen4_f16(src + 2 * ld), widen4_f16(src + 3 * ld), dst, ld_dst);
  }
  static void transpose4_bf16(const std::uint16_t* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    MmSse2::transpose4_bf16(src, ld, dst, ld_dst);
  }
};
namespace matmul_avx2 { using Isa = MmAvx2;
#include "matmul_simd.cpp"
}  // namespace matmul_avx2
} }  // namespace attn::(anonymous)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma,f16c")
#endif
namespace attn { namespace {
struct MmAvx512 {
  using V = __m512;
  static constexpr int W = 16, MR = 12, NV = 2, KC = 192;  // 24 accumulators of 32 registers
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V a) { _mm512_storeu_ps(p, a); }
  static V zero() { return _mm512_setzero_ps(); }
  static V load_splat(const float* p) { return _mm512_set1_ps(*p); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V madd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V widen_f16(const std::uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static V widen_bf16(const std::uint16_t* p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
  }
  static void widen2_f16(const std::uint16_t* p, V& lo, V& hi) { lo = widen_f16(p), hi = widen_f16(p + W); }
  static void widen2_bf16(const std::uint16_t* p, V& lo, V& hi) { lo = widen_bf16(p), hi = widen_bf16(p + W); }
  static void transpose4(const float* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    MmSse2::transpose4(src, ld, dst, ld_dst);
  }
  static void transpose4_f16(const std::uint16_t* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    MmAvx2::transpose4_f16(src, ld, dst, ld_dst);
  }
  static void transpose4_bf16(const std::uint16_t* src, std::size_t ld, float* dst, std::size_t ld_dst) {
    MmSse2::transpose4_bf16(src, ld, dst, ld_dst);
  }
};
namespace matmul_avx512 { using Isa = MmAvx512;
#include "matmul_simd.cpp"
}  // namespace matmul_avx512
} }  // namespace attn::(anonymous)
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // MATMUL_AVX

namespace attn {
namespace {

enum class MmIsa { Wasm, Sse2, Avx2, Avx512, Portable };

// The widest copy this processor runs; ATTN_SIMD_ISA=avx2|sse2 caps it (read per call, for tests).
MmIsa matmul_isa() {
#if defined(MATMUL_WASM)
  return MmIsa::Wasm;
#elif defined(MATMUL_AVX)
  // F16C (every AVX2 processor has it) widens the 16-bit weights in these copies. Asked of CPUID
  // (leaf 1, ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c".
  static const bool has_f16c = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
  }();
  static const bool has_avx512 = __builtin_cpu_supports("avx512f") && has_f16c;
  static const bool has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c;
  const char* cap = std::getenv("ATTN_SIMD_ISA");
  const bool no_avx512 = cap && (std::strcmp(cap, "avx2") == 0 || std::strcmp(cap, "sse2") == 0);
  const bool no_avx2 = cap && std::strcmp(cap, "sse2") == 0;
  if (has_avx512 && !no_avx512) return MmIsa::Avx512;
  if (has_avx2 && !no_avx2) return MmIsa::Avx2;
  return MmIsa::Sse2;
#elif defined(MATMUL_SSE)
  return MmIsa::Sse2;
#else
  return MmIsa::Portable;
#endif
}

}  // namespace

void matmul_simd(const MatmulProblem& p, float* c) {
  check_matmul_problem(p, c);
  MatmulWorkspace& ws = matmul_workspace();
#if defined(MATMUL_WASM)
  matmul_wasm::gemm(p, c, ws);
#elif defined(MATMUL_SSE)
#if defined(MATMUL_AVX)
  const MmIsa isa = matmul_isa();
  if (isa == MmIsa::Avx512) matmul_avx512::gemm(p, c, ws);
  else if (isa == MmIsa::Avx2) matmul_avx2::gemm(p, c, ws);
  else
#endif
    matmul_sse2::gemm(p, c, ws);
#else
  matmul_portable::gemm(p, c, ws);
#endif
}

const char* matmul_simd_flavour() {
  switch (matmul_isa()) {
    case MmIsa::Wasm: return "wasm-simd128";
    case MmIsa::Sse2: return "sse2";
    case MmIsa::Avx2: return "avx2-fma";
    case MmIsa::Avx512: return "avx512f";
    case MmIsa::Portable: break;
  }
  return "scalar";
}

}  // namespace attn

#else  // ATTN_MATMUL_KERNEL_BODY ----------------------------------------------------------------
// The kernel body, written against `Isa` (V, W lanes, MR rows, NV vectors per row of the tile, KC).
// Included by the top half of this file, once per instruction set.

constexpr int W = Isa::W, MR = Isa::MR, NV = Isa::NV, NR = NV * W, KC = Isa::KC;
// NT reads b's rows along k: longer k blocks make longer sequential runs of each row (the LM head:
// 1.3x faster natively with 768 than with 192), and a strip of (768, NR) is still read from L2 at ease.
constexpr int KC_NT = KC > 768 ? KC : 768;
constexpr int MC = MR * (264 / MR);  // rows of a packed at once (T = 256 in one block): MC·KC floats in L2
constexpr int NC = 4 * NR;  // columns of b packed at once: 2+ whole cache lines of each row, a block of (kc, NC) in L2 (T = 16 in wasm: 15-25% faster than 16 · NR)
using V = Isa::V;
static_assert(NV % 2 == 0, "b's strips are packed 2W values at a time");

// Where packed elements come from: floats as stored, or 16-bit weights widened on the way in.
// T: the stored element; load: W of them as a vector; one: a single one as a float (the edges);
// load2: 2W of them (one 128-bit load of halves in WebAssembly); transpose4: Isa::transpose4 reading T.
struct FromF32 {
  using T = float;
  static V load(const float* p) { return Isa::load(p); }
  static void load2(const float* p, V& lo, V& hi) { lo = Isa::load(p), hi = Isa::load(p + W); }
  static float one(const float* p) { return *p; }
  static void transpose4(const float* s, std::size_t ld, float* d, std::size_t ld_d) { Isa::transpose4(s, ld, d, ld_d); }
};
struct FromF16 {
  using T = std::uint16_t;
  static V load(const T* p) { return Isa::widen_f16(p); }
  static void load2(const T* p, V& lo, V& hi) { Isa::widen2_f16(p, lo, hi); }
  static float one(const T* p) { return half_to_float(*p); }
  static void transpose4(const T* s, std::size_t ld, float* d, std::size_t ld_d) { Isa::transpose4_f16(s, ld, d, ld_d); }
};
struct FromBF16 {
  using T = std::uint16_t;
  static V load(const T* p) { return Isa::widen_bf16(p); }
  static void load2(const T* p, V& lo, V& hi) { Isa::widen2_bf16(p, lo, hi); }
  static float one(const T* p) { return bf16_to_float(*p); }
  static void transpose4(const T* s, std::size_t ld, float* d, std::size_t ld_d) { Isa::transpose4_bf16(s, ld, d, ld_d); }
};

// dst[k·width + c] = src[k·ld + c] for c < cols, 0 for cols <= c < width; k < kc (a plain pack).
// Vector copies where a row is whole: emcc's memcpy is a call and a byte loop in WebAssembly.
template <class From>
void pack_rows(const typename From::T* src, std::size_t ld, int kc, int cols, int width, float* dst) {
  if (cols == width && width % W == 0) {
    for (int k = 0; k < kc; ++k, src += ld, dst += width)
      for (int c = 0; c < width; c += W) Isa::store(dst + c, From::load(src + c));
    return;
  }
  for (int k = 0; k < kc; ++k, src += ld, dst += width) {
    for (int c = 0; c < cols; ++c) dst[c] = From::one(src + c);
    for (int c = cols; c < width; ++c) dst[c] = 0.0f;
  }
}

// dst[k·width + r] = src[r·ld + k] for r < rows, 0 for rows <= r < width; k < kc (a transposing pack).
template <class From>
void pack_transposed(const typename From::T* src, std::size_t ld, int rows, int kc, int width, float* dst) {
  int r = 0;
  for (; r + 4 <= rows; r += 4) {
    const typename From::T* s = src + r * ld;
    int k = 0;
    for (; k + 4 <= kc; k += 4) From::transpose4(s + k, ld, dst + static_cast<std::size_t>(k) * width + r, width);
    for (; k < kc; ++k)
      for (int i = 0; i < 4; ++i) dst[static_cast<std::size_t>(k) * width + r + i] = From::one(s + i * ld + k);
  }
  for (; r < rows; ++r)
    for (int k = 0; k < kc; ++k) dst[static_cast<std::size_t>(k) * width + r] = From::one(src + r * ld + k);
  for (; r < width; ++r)
    for (int k = 0; k < kc; ++k) dst[static_cast<std::size_t>(k) * width + r] = 0.0f;
}

// b's columns jc .. jc+nc, steps pc .. pc+kc, as strips of (kc, NR) one after the other; NN and TN
// read each row of b once across all the strips (its whole cache lines), NT transposes per strip.
// b: p.b, or p.b16 when From widens.
template <class From>
void pack_b_block(const MatmulProblem& p, const typename From::T* b, int pc, int kc, int jc, int nc, float* block) {
  const std::size_t strip = static_cast<std::size_t>(kc) * NR;
  if (p.layout == MatmulLayout::NT) {
    for (int js = 0; js < nc; js += NR)
      pack_transposed<From>(b + static_cast<std::size_t>(jc + js) * p.K + pc, p.K, std::min(NR, nc - js), kc, NR,
                            block + static_cast<std::size_t>(js / NR) * strip);
    return;
  }
  const int whole = nc / NR * NR;
  const typename From::T* row = b + static_cast<std::size_t>(pc) * p.N + jc;
  for (int k = 0; k < kc; ++k, row += p.N) {
    float* dst = block + static_cast<std::size_t>(k) * NR;
    for (int js = 0; js < whole; js += NR, dst += strip)
      for (int c = 0; c < NR; c += 2 * W) {
        V lo, hi;
        From::load2(row + js + c, lo, hi);
        Isa::store(dst + c, lo);
        Isa::store(dst + c + W, hi);
      }
  }
  if (whole < nc) pack_rows<From>(row - static_cast<std::size_t>(kc) * p.N + whole, p.N, kc, nc - whole, NR,
                                  block + static_cast<std::size_t>(whole / NR) * strip);
}

void pack_b_any(const MatmulProblem& p, int pc, int kc, int jc, int nc, float* block) {
  switch (p.b_dtype) {
    case Dtype::F32: pack_b_block<FromF32>(p, p.b, pc, kc, jc, nc, block); return;
    case Dtype::F16: pack_b_block<FromF16>(p, p.b16, pc, kc, jc, nc, block); return;
    case Dtype::BF16: pack_b_block<FromBF16>(p, p.b16, pc, kc, jc, nc, block); return;
  }
}

// The micro-kernel: c[r][0..NR) (=|+=) bias + sum_k a_pack[k·MR + r] · b_pack[k·NR + 0..NR) for
// r < RR (RR <= MR: the last rows of c use the same packed panel, stride MR). bias: NR values or
// nullptr; load_c: add to c instead of overwriting it.
template <int RR>
MATMUL_NOINLINE void tile_kernel(int kc, const float* a_pack, const float* b_pack, float* c, std::size_t ldc,
                                 const float* bias, int load_c) {
  V acc[RR][NV];
  for (int r = 0; r < RR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = Isa::zero();
  for (int k = 0; k < kc; ++k, a_pack += MR, b_pack += NR) {
    V bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = Isa::load(b_pack + v * W);
    for (int r = 0; r < RR; ++r) {
      const V av = Isa::load_splat(a_pack + r);
      for (int v = 0; v < NV; ++v) acc[r][v] = Isa::madd(av, bv[v], acc[r][v]);
    }
  }
  if (bias)
    for (int v = 0; v < NV; ++v) {
      const V bb = Isa::load(bias + v * W);
      for (int r = 0; r < RR; ++r) acc[r][v] = Isa::add(acc[r][v], bb);
    }
  for (int r = 0; r < RR; ++r)
    for (int v = 0; v < NV; ++v) {
      float* cp = c + r * ldc + v * W;
      Isa::store(cp, load_c ? Isa::add(acc[r][v], Isa::load(cp)) : acc[r][v]);
    }
}

using TileFn = void (*)(int, const float*, const float*, float*, std::size_t, const float*, int);
template <std::size_t... I>
constexpr std::array<TileFn, MR + 1> make_tiles(std::index_sequence<I...>) {
  return {{nullptr, &tile_kernel<static_cast<int>(I) + 1>...}};
}
constexpr std::array<TileFn, MR + 1> kTiles = make_tiles(std::make_index_sequence<MR>{});

// One row of a (M = 1) times b stored along its rows (NN, TN): c's whole strips of NR columns are
// summed straight from b's rows, without packing b (a token appended reads each weight once, not
// copies it first), b read row after row (its memory in order: a strip at a time down the rows would
// touch a new page every few steps), into a row of running sums, in tile_kernel<1>'s order per column:
// the same multiply-adds over k in the same k blocks, the bias, then c's own value. So the row's
// numbers are bit for bit those of any M that holds it. The columns past the last whole strip go
// through a packed strip and the tile, as gemm does.
template <class From>
void gemv(const MatmulProblem& p, const typename From::T* b, float* c, MatmulWorkspace& ws) {
  const int N = p.N, K = p.K, whole = N / NR * NR;
  float* a_panel = MatmulWorkspace::grow(ws.a_panels, static_cast<std::size_t>(KC) * MR);
  float* strip = MatmulWorkspace::grow(ws.b_block, static_cast<std::size_t>(KC) * NR);
  float* sums = MatmulWorkspace::grow(ws.row_sums, static_cast<std::size_t>(whole));
  alignas(64) float bias_strip[NR];
  alignas(64) float edge[MR * NR] = {};
  for (int pc = 0; pc < K; pc += KC) {
    const int kc = std::min(KC, K - pc);
    const bool first = pc == 0;
    const bool load_c = !first || p.accumulate;
    for (int j = 0; j < whole; j += W) Isa::store(sums + j, Isa::zero());
    const typename From::T* rows = b + static_cast<std::size_t>(pc) * N;
    int k = 0;
    for (; k + 2 <= kc; k += 2) {  // two rows a pass: half the trips of the sums through memory
      const V a0 = Isa::load_splat(p.a + pc + k), a1 = Isa::load_splat(p.a + pc + k + 1);
      const typename From::T *r0 = rows + static_cast<std::size_t>(k) * N, *r1 = r0 + N;
      for (int j = 0; j < whole; j += 2 * W) {
        V lo0, hi0, lo1, hi1;
        From::load2(r0 + j, lo0, hi0);
        From::load2(r1 + j, lo1, hi1);
        Isa::store(sums + j, Isa::madd(a1, lo1, Isa::madd(a0, lo0, Isa::load(sums + j))));
        Isa::store(sums + j + W, Isa::madd(a1, hi1, Isa::madd(a0, hi0, Isa::load(sums + j + W))));
      }
    }
    for (; k < kc; ++k) {
      const V av = Isa::load_splat(p.a + pc + k);
      const typename From::T* row = rows + static_cast<std::size_t>(k) * N;
      for (int j = 0; j < whole; j += 2 * W) {
        V lo, hi;
        From::load2(row + j, lo, hi);
        Isa::store(sums + j, Isa::madd(av, lo, Isa::load(sums + j)));
        Isa::store(sums + j + W, Isa::madd(av, hi, Isa::load(sums + j + W)));
      }
    }
    for (int j = 0; j < whole; j += W) {
      V v = Isa::load(sums + j);
      if (first && p.bias) v = Isa::add(v, Isa::load(p.bias + j));
      Isa::store(c + j, load_c ? Isa::add(v, Isa::load(c + j)) : v);
    }
    if (whole == N) continue;
    const int cols = N - whole;
    pack_transposed<FromF32>(p.a + pc, K, 1, kc, MR, a_panel);
    pack_rows<From>(b + static_cast<std::size_t>(pc) * N + whole, static_cast<std::size_t>(N), kc, cols, NR, strip);
    const float* bias = nullptr;
    if (first && p.bias) {
      for (int j = 0; j < NR; ++j) bias_strip[j] = j < cols ? p.bias[whole + j] : 0.0f;
      bias = bias_strip;
    }
    if (load_c)
      for (int j = 0; j < cols; ++j) edge[j] = c[whole + j];
    opaque(kTiles[1])(kc, a_panel, strip, edge, NR, bias, load_c ? 1 : 0);
    for (int j = 0; j < cols; ++j) c[whole + j] = edge[j];
  }
}

void gemm(const MatmulProblem& p, float* c, MatmulWorkspace& ws) {
  const int M = p.M, N = p.N, K = p.K;
  if (M == 0 || N == 0) return;
  if (K == 0) {  // no product: c = [c +] bias
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        float& cij = c[static_cast<std::size_t>(i) * N + j];
        cij = (p.accumulate ? cij : 0.0f) + (p.bias ? p.bias[j] : 0.0f);
      }
    return;
  }
  if (M == 1 && p.layout != MatmulLayout::NT) {
    switch (p.b_dtype) {
      case Dtype::F32: return gemv<FromF32>(p, p.b, c, ws);
      case Dtype::F16: return gemv<FromF16>(p, p.b16, c, ws);
      case Dtype::BF16: return gemv<FromBF16>(p, p.b16, c, ws);
    }
  }
  const int kc_max = p.layout == MatmulLayout::NT ? KC_NT : KC;
  float* a_panels = MatmulWorkspace::grow(ws.a_panels, static_cast<std::size_t>(MC) * kc_max);
  float* b_block = MatmulWorkspace::grow(ws.b_block, static_cast<std::size_t>(kc_max) * NC);
  alignas(64) float bias_strip[NR];
  alignas(64) float edge[MR * NR] = {};  // a tile that overhangs c's last columns is computed here
  for (int pc = 0; pc < K; pc += kc_max) {
    const int kc = std::min(kc_max, K - pc);
    const bool first = pc == 0;
    const int load_c = (!first || p.accumulate) ? 1 : 0;
    for (int ic = 0; ic < M; ic += MC) {
      const int mc = std::min(MC, M - ic);
      // pack a's rows ic .. ic+mc, steps pc .. pc+kc: panel ir is (kc, MR)
      for (int ir = 0; ir < mc; ir += MR) {
        const int rows = std::min(MR, mc - ir);
        float* panel = a_panels + static_cast<std::size_t>(ir) * kc;
        if (p.layout == MatmulLayout::TN)
          pack_rows<FromF32>(p.a + static_cast<std::size_t>(pc) * M + ic + ir, M, kc, rows, MR, panel);
        else
          pack_transposed<FromF32>(p.a + static_cast<std::size_t>(ic + ir) * K + pc, K, rows, kc, MR, panel);
      }
      for (int jc = 0; jc < N; jc += NC) {
        const int nc = std::min(NC, N - jc);
        pack_b_any(p, pc, kc, jc, nc, b_block);
        for (int js = 0; js < nc; js += NR) {
          const int jr = jc + js, cols = std::min(NR, nc - js);
          const float* b_strip = b_block + static_cast<std::size_t>(js / NR) * kc * NR;
          const float* bias = nullptr;
          if (first && p.bias) {
            for (int j = 0; j < NR; ++j) bias_strip[j] = j < cols ? p.bias[jr + j] : 0.0f;
            bias = bias_strip;
          }
          for (int ir = 0; ir < mc; ir += MR) {
            const int rows = std::min(MR, mc - ir);
            const TileFn tile = opaque(kTiles[rows]);
            const float* panel = a_panels + static_cast<std::size_t>(ir) * kc;
            float* c_tile = c + static_cast<std::size_t>(ic + ir) * N + jr;
            if (cols == NR) {
              tile(kc, panel, b_strip, c_tile, static_cast<std::size_t>(N), bias, load_c);
              continue;
            }
            if (load_c)
              for (int r = 0; r < rows; ++r)
                for (int j = 0; j < cols; ++j) edge[r * NR + j] = c_tile[static_cast<std::size_t>(r) * N + j];
            tile(kc, panel, b_strip, edge, NR, bias, load_c);
            for (int r = 0; r < rows; ++r)
              for (int j = 0; j < cols; ++j) c_tile[static_cast<std::size_t>(r) * N + j] = edge[r * NR + j];
          }
        }
      }
    }
  }
}

#endif  // ATTN_MATMUL_KERNEL_BODY
