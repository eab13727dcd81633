// The 128-bit SIMD kernel: fused, tiled attention with an online softmax.
// Not the reference: it is checked against scalar.cpp on odd shapes (tests/test_kernels.cpp).
//
// Shapes: query (Tq, d), key (Tk, d), value (Tk, dv) -> output (Tq, dv), weights (Tq, Tk) optional.
// A block of up to 4 queries meets the keys 64 at a time. For each key block:
//   pass 1: scores for 4 queries x 64 keys from a transposed, padded copy of the keys;
//   pass 2: online softmax: new running max m, rescale what was accumulated by exp(m_old - m),
//           p = exp(s - m) (masked and padded keys give exactly 0), running sum l += sum p;
//   pass 3: acc += p · V_block, 4 queries x 8 value columns in registers.
// At the end output = acc / l. The full weights are written only when asked for (a final
// exp(s - m) / l over the stored scores). Under a causal mask, key blocks that lie wholly above
// the diagonal of the query block are never visited: the masked half costs nothing.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels.h"

// -- The SIMD flavour is chosen here, once. ATTN_FORCE_SCALAR keeps the portable path. --------
#if !defined(ATTN_FORCE_SCALAR) && defined(__wasm_simd128__)
#define SIMD_WASM 1
#include <wasm_simd128.h>
#elif !defined(ATTN_FORCE_SCALAR) && (defined(__SSE2__) || defined(_M_X64))
#define SIMD_SSE 1
#include <emmintrin.h>
#endif

namespace attn {

namespace {

#if defined(SIMD_WASM)
using v4 = v128_t;
inline v4 v_load(const float* p) { return wasm_v128_load(p); }
inline void v_store(float* p, v4 a) { wasm_v128_store(p, a); }
inline v4 v_splat(float x) { return wasm_f32x4_splat(x); }
inline v4 v_add(v4 a, v4 b) { return wasm_f32x4_add(a, b); }
inline v4 v_sub(v4 a, v4 b) { return wasm_f32x4_sub(a, b); }
inline v4 v_mul(v4 a, v4 b) { return wasm_f32x4_mul(a, b); }
inline v4 v_max(v4 a, v4 b) { return wasm_f32x4_pmax(a, b); }
inline v4 v_min(v4 a, v4 b) { return wasm_f32x4_pmin(a, b); }
inline v4 v_round(v4 a) { return wasm_f32x4_nearest(a); }
inline v4 v_pow2i(v4 n) {  // 2^n for whole n in [-126, 127]
  return wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127)), 23);
}
inline v4 v_zero_below(v4 y, v4 x, float limit) { return wasm_v128_andnot(y, wasm_f32x4_lt(x, wasm_f32x4_splat(limit))); }
inline float v_hsum(v4 a) {
  return wasm_f32x4_extract_lane(a, 0) + wasm_f32x4_extract_lane(a, 1) + wasm_f32x4_extract_lane(a, 2) +
         wasm_f32x4_extract_lane(a, 3);
}
inline float v_hmax(v4 a) {
  return std::max(std::max(wasm_f32x4_extract_lane(a, 0), wasm_f32x4_extract_lane(a, 1)),
                  std::max(wasm_f32x4_extract_lane(a, 2), wasm_f32x4_extract_lane(a, 3)));
}
#elif defined(SIMD_SSE)
using v4 = __m128;
inline v4 v_load(const float* p) { return _mm_loadu_ps(p); }
inline void v_store(float* p, v4 a) { _mm_storeu_ps(p, a); }
inline v4 v_splat(float x) { return _mm_set1_ps(x); }
inline v4 v_add(v4 a, v4 b) { return _mm_add_ps(a, b); }
inline v4 v_sub(v4 a, v4 b) { return _mm_sub_ps(a, b); }
inline v4 v_mul(v4 a, v4 b) { return _mm_mul_ps(a, b); }
inline v4 v_max(v4 a, v4 b) { return _mm_max_ps(a, b); }
inline v4 v_min(v4 a, v4 b) { return _mm_min_ps(a, b); }
inline v4 v_round(v4 a) { return _mm_cvtepi32_ps(_mm_cvtps_epi32(a)); }  // round to nearest
inline v4 v_pow2i(v4 n) {
  return _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(_mm_cvttps_epi32(n), _mm_set1_epi32(127)), 23));
}
inline v4 v_zero_below(v4 y, v4 x, float limit) { return _mm_andnot_ps(_mm_cmplt_ps(x, _mm_set1_ps(limit)), y); }
inline float v_hsum(v4 a) {
  alignas(16) float t[4];
  _mm_store_ps(t, a);
  return (t[0] + t[1]) + (t[2] + t[3]);
}
inline float v_hmax(v4 a) {
  alignas(16) float t[4];
  _mm_store_ps(t, a);
  return std::max(std::max(t[0], t[1]), std::max(t[2], t[3]));
}
#else  // portable: four floats, same code shape, so the algorithm is tested everywhere
struct v4 {
  float x[4];
};
inline v4 v_load(const float* p) { v4 r; std::memcpy(r.x, p, sizeof r.x); return r; }
inline void v_store(float* p, v4 a) { std::memcpy(p, a.x, sizeof a.x); }
inline v4 v_splat(float x) { return v4{{x, x, x, x}}; }
#define ATTN_LANEWISE(name, expr) \
  inline v4 name(v4 a, v4 b) { v4 r; for (int i = 0; i < 4; ++i) r.x[i] = (expr); return r; }
ATTN_LANEWISE(v_add, a.x[i] + b.x[i])
ATTN_LANEWISE(v_sub, a.x[i] - b.x[i])
ATTN_LANEWISE(v_mul, a.x[i] * b.x[i])
ATTN_LANEWISE(v_max, a.x[i] > b.x[i] ? a.x[i] : b.x[i])
ATTN_LANEWISE(v_min, a.x[i] < b.x[i] ? a.x[i] : b.x[i])
#undef ATTN_LANEWISE
inline v4 v_round(v4 a) { v4 r; for (int i = 0; i < 4; ++i) r.x[i] = std::nearbyint(a.x[i]); return r; }
inline v4 v_pow2i(v4 n) { v4 r; for (int i = 0; i < 4; ++i) r.x[i] = std::ldexp(1.0f, static_cast<int>(n.x[i])); return r; }
inline v4 v_zero_below(v4 y, v4 x, float limit) { v4 r; for (int i = 0; i < 4; ++i) r.x[i] = x.x[i] < limit ? 0.0f : y.x[i]; return r; }
inline float v_hsum(v4 a) { return (a.x[0] + a.x[1]) + (a.x[2] + a.x[3]); }
inline float v_hmax(v4 a) { return std::max(std::max(a.x[0], a.x[1]), std::max(a.x[2], a.x[3])); }
#endif

// exp(x) for x <= 0 (after the max is subtracted), Cephes' expf polynomial: relative error ~1e-7.
// x below -87 (including -inf for a masked key) gives exactly 0.
inline v4 v_exp(v4 x) {
  const v4 clamped = v_max(v_min(x, v_splat(88.0f)), v_splat(-87.0f));
  const v4 n = v_round(v_mul(clamped, v_splat(1.44269504088896341f)));  // x / ln 2
  // r = x - n ln 2, with ln 2 split in two so the subtraction stays exact
  v4 r = v_sub(clamped, v_mul(n, v_splat(0.693359375f)));
  r = v_sub(r, v_mul(n, v_splat(-2.12194440e-4f)));
  v4 poly = v_splat(1.9875691500e-4f);
  poly = v_add(v_mul(poly, r), v_splat(1.3981999507e-3f));
  poly = v_add(v_mul(poly, r), v_splat(8.3334519073e-3f));
  poly = v_add(v_mul(poly, r), v_splat(4.1665795894e-2f));
  poly = v_add(v_mul(poly, r), v_splat(1.6666665459e-1f));
  poly = v_add(v_mul(poly, r), v_splat(5.0000001201e-1f));
  poly = v_add(v_add(v_mul(v_mul(poly, r), r), r), v_splat(1.0f));
  return v_zero_below(v_mul(poly, v_pow2i(n)), x, -87.0f);
}

constexpr int kQueryBlock = 4;
constexpr int kKeyBlock = 64;  // a multiple of 8 (two vectors per score micro-tile)
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int round_up(int n, int m) { return (n + m - 1) / m * m; }

// pass 1: score_rk[r][j] = scale * q_r · k_(j0+j) for R queries and n_pad keys (n_pad % 8 == 0).
// key_t is the transposed key copy (d, ld_key_t): one load gives 4 keys' c-th feature.
template <int R>
void score_tile(const float* query_rd, int d, const float* key_t, int ld_key_t, int j0, int n_pad, float scale,
                float* score_rk) {
  const v4 vscale = v_splat(scale);
  for (int j = 0; j < n_pad; j += 8) {
    v4 acc[R][2];
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = v_splat(0.0f);
    const float* kt = key_t + j0 + j;
    for (int c = 0; c < d; ++c, kt += ld_key_t) {
      const v4 k0 = v_load(kt), k1 = v_load(kt + 4);
      for (int r = 0; r < R; ++r) {
        const v4 q = v_splat(query_rd[r * d + c]);
        acc[r][0] = v_add(acc[r][0], v_mul(q, k0));
        acc[r][1] = v_add(acc[r][1], v_mul(q, k1));
      }
    }
    for (int r = 0; r < R; ++r) {
      v_store(score_rk + r * kKeyBlock + j, v_mul(acc[r][0], vscale));
      v_store(score_rk + r * kKeyBlock + j + 4, v_mul(acc[r][1], vscale));
    }
  }
}

// pass 3: acc_rv[r] += sum_j p_rk[r][j] * value_padded[j0 + j] for n keys, 8 value columns at a time.
template <int R>
void accumulate_values(const float* p_rk, int n, const float* value_pad, int dv_pad, int j0, float* acc_rv) {
  for (int c = 0; c < dv_pad; c += 8) {
    v4 acc[R][2];
    for (int r = 0; r < R; ++r) {
      acc[r][0] = v_load(acc_rv + r * dv_pad + c);
      acc[r][1] = v_load(acc_rv + r * dv_pad + c + 4);
    }
    const float* v = value_pad + static_cast<std::size_t>(j0) * dv_pad + c;
    for (int j = 0; j < n; ++j, v += dv_pad) {
      const v4 v0 = v_load(v), v1 = v_load(v + 4);
      for (int r = 0; r < R; ++r) {
        const v4 p = v_splat(p_rk[r * kKeyBlock + j]);
        acc[r][0] = v_add(acc[r][0], v_mul(p, v0));
        acc[r][1] = v_add(acc[r][1], v_mul(p, v1));
      }
    }
    for (int r = 0; r < R; ++r) {
      v_store(acc_rv + r * dv_pad + c, acc[r][0]);
      v_store(acc_rv + r * dv_pad + c + 4, acc[r][1]);
    }
  }
}

struct Workspace {
  std::vector<float> key_t;      // (d, Tk_pad): keys transposed, zero-padded
  std::vector<float> value_pad;  // (Tk_pad, dv_pad): values, zero-padded columns
  std::vector<float> acc;        // (kQueryBlock, dv_pad): running weighted sums of values
};

template <int R>
void query_block(const AttentionProblem& p, int i0, Workspace& ws, int ld_key_t, int dv_pad, float* output,
                 float* weights) {
  alignas(16) float score_rk[R * kKeyBlock];
  float* acc_rv = ws.acc.data();
  float row_max[R], row_sum[R];
  for (int r = 0; r < R; ++r) {
    row_max[r] = kNegInf;
    row_sum[r] = 0.0f;
  }
  std::fill(acc_rv, acc_rv + R * dv_pad, 0.0f);
  // keys after the block's last query are hidden from every query in it under the causal mask
  const int key_end = p.causal ? std::min(p.Tk, i0 + R) : p.Tk;
  const float* query_rd = p.query + static_cast<std::size_t>(i0) * p.d;
  for (int j0 = 0; j0 < key_end; j0 += kKeyBlock) {
    const int n = std::min(kKeyBlock, key_end - j0), n_pad = round_up(n, 8);
    score_tile<R>(query_rd, p.d, ws.key_t.data(), ld_key_t, j0, n_pad, p.scale, score_rk);
    for (int r = 0; r < R; ++r) {
      float* s = score_rk + r * kKeyBlock;
      const int visible = (p.causal ? std::min(key_end, i0 + r + 1) : key_end) - j0;  // keys this row may see
      const int valid = std::max(0, std::min(n, visible));
      for (int j = valid; j < n_pad; ++j) s[j] = kNegInf;
      if (weights) std::memcpy(weights + static_cast<std::size_t>(i0 + r) * p.Tk + j0, s, sizeof(float) * n);
      if (valid == 0) continue;
      // pass 2: online softmax update for this row
      v4 vmax = v_splat(kNegInf);
      for (int j = 0; j < n_pad; j += 4) vmax = v_max(vmax, v_load(s + j));
      const float new_max = std::max(row_max[r], v_hmax(vmax));
      const float rescale = std::exp(row_max[r] - new_max);  // exp(-inf) = 0 on the first block
      row_max[r] = new_max;
      v4 vsum = v_splat(0.0f);
      const v4 vnew_max = v_splat(new_max);
      for (int j = 0; j < n_pad; j += 4) {
        const v4 e = v_exp(v_sub(v_load(s + j), vnew_max));
        v_store(s + j, e);
        vsum = v_add(vsum, e);
      }
      row_sum[r] = row_sum[r] * rescale + v_hsum(vsum);
      if (rescale != 1.0f) {
        const v4 vrescale = v_splat(rescale);
        float* acc = acc_rv + r * dv_pad;
        for (int c = 0; c < dv_pad; c += 4) v_store(acc + c, v_mul(v_load(acc + c), vrescale));
      }
    }
    accumulate_values<R>(score_rk, n, ws.value_pad.data(), dv_pad, j0, acc_rv);
  }
  for (int r = 0; r < R; ++r) {
    const float inv_sum = row_sum[r] > 0.0f ? 1.0f / row_sum[r] : 0.0f;
    float* out = output + static_cast<std::size_t>(i0 + r) * p.dv;
    for (int c = 0; c < p.dv; ++c) out[c] = acc_rv[r * dv_pad + c] * inv_sum;
    if (!weights) continue;
    float* w = weights + static_cast<std::size_t>(i0 + r) * p.Tk;
    const v4 vmax = v_splat(row_max[r]), vinv = v_splat(inv_sum);
    int j = 0;
    for (; j + 4 <= key_end; j += 4) v_store(w + j, v_mul(v_exp(v_sub(v_load(w + j), vmax)), vinv));
    for (; j < key_end; ++j) w[j] = w[j] == kNegInf ? 0.0f : std::exp(w[j] - row_max[r]) * inv_sum;
    for (j = key_end; j < p.Tk; ++j) w[j] = 0.0f;
  }
}

}  // namespace

void attention_simd(const AttentionProblem& p, float* output, float* weights) {
  const int tk_pad = round_up(p.Tk, 8), dv_pad = round_up(p.dv, 8);
  Workspace ws;
  ws.key_t.assign(static_cast<std::size_t>(p.d) * tk_pad, 0.0f);
  for (int j = 0; j < p.Tk; ++j)
    for (int c = 0; c < p.d; ++c) ws.key_t[static_cast<std::size_t>(c) * tk_pad + j] = p.key[static_cast<std::size_t>(j) * p.d + c];
  ws.value_pad.assign(static_cast<std::size_t>(tk_pad) * dv_pad, 0.0f);
  for (int j = 0; j < p.Tk; ++j)
    std::memcpy(&ws.value_pad[static_cast<std::size_t>(j) * dv_pad], p.value + static_cast<std::size_t>(j) * p.dv,
                sizeof(float) * p.dv);
  ws.acc.resize(static_cast<std::size_t>(kQueryBlock) * dv_pad);
  int i0 = 0;
  for (; i0 + kQueryBlock <= p.Tq; i0 += kQueryBlock) query_block<kQueryBlock>(p, i0, ws, tk_pad, dv_pad, output, weights);
  switch (p.Tq - i0) {  // the tail rows, with the same code specialised by count
    case 3: query_block<3>(p, i0, ws, tk_pad, dv_pad, output, weights); break;
    case 2: query_block<2>(p, i0, ws, tk_pad, dv_pad, output, weights); break;
    case 1: query_block<1>(p, i0, ws, tk_pad, dv_pad, output, weights); break;
    default: break;
  }
}

const char* simd_flavour() {
#if defined(SIMD_WASM)
  return "wasm-simd128";
#elif defined(SIMD_SSE)
  return "sse2";
#else
  return "scalar";
#endif
}

}  // namespace attn
