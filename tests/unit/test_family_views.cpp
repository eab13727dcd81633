// The family views' numbers (src/state/family_views.h) against direct computations and hand counts:
// the RoPE distance curve, K/V head groups, the K/V cache in bytes, soft-capping and q/k norm.
#include <doctest/doctest.h>

#include <cmath>

#include "../../src/state/family_views.h"
#include "test_helpers.h"

namespace {

// A small Llama (vocabulary 29): the shared one of the unit tests.
attn::TransformerConfig small_llama(int layers, int heads, int kv_heads, int head_dim, int embd) {
  return attn::test::tiny_llama(layers, heads, kv_heads, head_dim, embd, 29);
}

std::vector<int> ids(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back((i * 5 + 2) % 29);
  return v;
}

}  // namespace

TEST_CASE("family views: the score of two rotated vectors depends on their distance only") {
  attn::TransformerConfig c = small_llama(2, 4, 2, 8, 16);
  c.layers[1].rope.theta = 100.0;  // a fast-turning layer, so the curve moves within 9 tokens
  const attn::Transformer m = attn::random_transformer(c, 3, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.5);
  const attn::ModelTrace t = attn::transformer_forward(m, ids(9));
  for (int layer = 0; layer < 2; ++layer)
    for (int head : {0, 3}) {
      const attn::AttentionTrace trace = attn::head_trace(c, attn::layer_detail(m, t, layer), head, attn::model_attention_options(c, layer));
      const attn::FamilyViews f = attn::family_views(c, attn::layer_detail(m, t, layer), trace, layer, head, 7, 4);
      const attn::PositionsView& p = f.positions;
      REQUIRE(p.rope);
      CHECK(f.kv_head == head / 2);
      CHECK(p.query_token == 7);
      CHECK(p.key_token < 7);
      REQUIRE(p.by_distance.size() == 9);
      // the curve at the pair's own distance is the head's real score for that pair
      CHECK(p.by_distance[static_cast<std::size_t>(7 - p.key_token)] ==
            doctest::Approx(trace.scaled_scores(7, p.key_token)).epsilon(1e-4));
      // rotated at absolute positions (5 + d, 5) or (d, 0): the same score, the curve's
      for (int d = 0; d < 9; ++d) {
        const float at5 = attn::rotated_score(p.q_before, p.k_before, c.layers[static_cast<std::size_t>(layer)].rope,
                                              5 + d, 5, p.score_factor);
        CHECK(p.by_distance[static_cast<std::size_t>(d)] == doctest::Approx(at5).epsilon(1e-4));
      }
      // d = 0: no rotation left at all, the plain dot product
      CHECK(p.by_distance[0] == doctest::Approx(p.q_before.dot(p.k_before) * p.score_factor).epsilon(1e-5));
      // the vectors the view shows after the rotation are the ones the scores used; a rotation keeps lengths
      CHECK(p.q_after.norm() == doctest::Approx(p.q_before.norm()).epsilon(1e-5));
      CHECK(p.k_after.norm() == doctest::Approx(p.k_before.norm()).epsilon(1e-5));
      CHECK(p.inv_freq.size() == 4);
      CHECK(p.inv_freq[0] == doctest::Approx(1.0));
    }
  // the curve is not flat: distance matters in the fast layer
  const attn::AttentionTrace trace = attn::head_trace(c, attn::layer_detail(m, t, 1), 0, attn::model_attention_options(c, 1));
  const attn::PositionsView p = attn::family_views(c, attn::layer_detail(m, t, 1), trace, 1, 0, 7, 4).positions;
  CHECK(std::fabs(p.by_distance[0] - p.by_distance[4]) > 1e-3f);
}

TEST_CASE("family views: GPT-2's learned positions have no distance curve") {
  const attn::TransformerConfig c = attn::gpt2_config(1, 2, 8, 16, 29);
  const attn::Transformer m = attn::random_transformer(c, 1);
  const attn::ModelTrace t = attn::transformer_forward(m, ids(5));
  const attn::AttentionTrace trace = attn::head_trace(c, attn::layer_detail(m, t, 0), 1, attn::model_attention_options(c, 0));
  const attn::FamilyViews f = attn::family_views(c, attn::layer_detail(m, t, 0), trace, 0, 1, 4, 4);
  CHECK(f.positions.learned);
  CHECK_FALSE(f.positions.rope);
  CHECK(f.positions.by_distance.empty());
  CHECK_FALSE(f.softcap.on);
  CHECK_FALSE(f.qk_norm.on);
  CHECK(attn::head_groups_text(c) == "Every head has its own keys and values (no sharing).");
}

TEST_CASE("family views: query heads grouped by the K/V head they read") {
  attn::TransformerConfig c = small_llama(1, 8, 2, 4, 16);
  const std::vector<attn::HeadGroup> g = attn::head_groups(c);
  REQUIRE(g.size() == 2);
  CHECK(g[0].first_head == 0);
  CHECK(g[0].last_head == 3);
  CHECK(g[1].kv_head == 1);
  CHECK(g[1].first_head == 4);
  CHECK(g[1].last_head == 7);
  CHECK(attn::head_groups_text(c) == "Heads 1–4 share K/V head 1, heads 5–8 share K/V head 2.");
  c.n_kv_head = 1;
  CHECK(attn::head_groups_text(c) == "All 8 heads share one K/V head.");
  c.n_head = 32, c.n_kv_head = 8;  // Llama 3 8B: 8 groups, shortened
  CHECK(attn::head_groups_text(c) ==
        "Heads 1–4 share K/V head 1, heads 5–8 share K/V head 2, …, heads 29–32 share K/V head 8.");
}

TEST_CASE("family views: the K/V cache, counted by hand") {
  // Llama 3 8B's shape: 32 layers, 32 query heads, 8 K/V heads of 128, 16-bit, T = 1000.
  attn::TransformerConfig llama = small_llama(32, 32, 8, 128, 4096);
  attn::KvCacheView v = attn::kv_cache_view(llama, 1000, 2);
  CHECK(v.per_token_layer == 2 * 8 * 128);             // 2048 numbers
  CHECK(v.per_token_layer_unshared == 2 * 32 * 128);   // 8192
  CHECK(v.numbers == 2048ll * 1000 * 32);              // 65 536 000
  CHECK(v.bytes() == 131072000ull);                    // 131 MB
  CHECK(v.bytes_unshared() == 524288000ull);           // 4× as many without sharing
  CHECK(v.bytes_no_window() == v.bytes());
  // Gemma 3-like: 6 layers, 5 local of window 4 : 1 global, 4 heads, 1 K/V head of 8, float, T = 10.
  attn::TransformerConfig gemma = small_llama(6, 4, 1, 8, 32);
  for (int l = 0; l < 6; ++l) gemma.layers[static_cast<std::size_t>(l)].window = l == 5 ? 0 : 4;
  v = attn::kv_cache_view(gemma, 10, 4);
  CHECK(v.tokens_held == std::vector<int>{4, 4, 4, 4, 4, 10});
  CHECK(v.per_token_layer == 16);
  CHECK(v.numbers == 16 * (5 * 4 + 10));               // 480 numbers
  CHECK(v.bytes() == 1920u);
  CHECK(v.bytes_unshared() == 4u * 64 * 30);           // 7680
  CHECK(v.bytes_no_window() == 4u * 16 * 60);          // 3840
  // a text shorter than the window: the window holds it all
  v = attn::kv_cache_view(gemma, 3, 4);
  CHECK(v.tokens_held == std::vector<int>{3, 3, 3, 3, 3, 3});
  CHECK(attn::layer_kind_text(gemma, 0) == "local (window 4)");
  CHECK(attn::layer_kind_text(gemma, 5) == "global");
}

TEST_CASE("family views: soft-capping and q/k norm of the chosen head") {
  attn::TransformerConfig c = small_llama(1, 2, 1, 4, 8);
  c.attn_softcap = 0.5f;
  c.qk_norm = true;
  c.norm_plus_one = true;  // Gemma's (1 + w): with w = 0 the normed rows have RMS 1
  const attn::Transformer m = attn::random_transformer(c, 5, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.8);
  const attn::ModelTrace t = attn::transformer_forward(m, ids(6));
  const attn::AttentionTrace trace = attn::head_trace(c, attn::layer_detail(m, t, 0), 1, attn::model_attention_options(c, 0));
  const attn::FamilyViews f = attn::family_views(c, attn::layer_detail(m, t, 0), trace, 0, 1, 5, 4);
  REQUIRE(f.softcap.on);
  CHECK(f.softcap.cap == 0.5f);
  REQUIRE(f.softcap.scaled_row.size() == 6);
  for (int j = 0; j < 6; ++j)
    CHECK(f.softcap.capped_row[static_cast<std::size_t>(j)] ==
          doctest::Approx(std::tanh(f.softcap.scaled_row[static_cast<std::size_t>(j)] / 0.5) * 0.5).epsilon(1e-5));
  CHECK(f.softcap.largest_capped <= 0.5f);
  CHECK(f.softcap.largest_change == doctest::Approx(f.softcap.largest_scaled - f.softcap.largest_capped).epsilon(1e-4));
  REQUIRE(f.qk_norm.on);
  CHECK(f.qk_norm.q_before.rows() == 6);
  CHECK(f.qk_norm.q_before.cols() == 4);
  for (int i = 0; i < 6; ++i) {
    CHECK(f.qk_norm.q_rms_after[static_cast<std::size_t>(i)] == doctest::Approx(1.0).epsilon(1e-3));
    CHECK(f.qk_norm.k_rms_after[static_cast<std::size_t>(i)] == doctest::Approx(1.0).epsilon(1e-3));
    // the norm only rescales each row: the direction is kept
    const float cosine = f.qk_norm.q_before.row(i).normalized().dot(f.qk_norm.q_after.row(i).normalized());
    CHECK(cosine == doctest::Approx(1.0).epsilon(1e-4));
  }
  // the positions view starts from the normed q (q/k norm comes before RoPE)
  CHECK((f.positions.q_before - f.qk_norm.q_after.row(5)).cwiseAbs().maxCoeff() < 1e-6f);
}
