// The family-neutral forward: numbers worked out by hand on tiny models (GPT-2's layout, rotary
// positions, RMSNorm with (1 + w), windows, caps, shared K/V heads), the fast path against the
// scalar reference on every kind of block, 16-bit weights against float, and refused inputs.
// (Against PyTorch on random models of every family: tests/cli/model.test.mjs, families.test.mjs.)
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "../../src/core/transformer.h"
#include "test_helpers.h"

namespace {

attn::TransformerConfig tiny_gpt2(int layers, int heads, int embd, int vocab = 11, int positions = 16) {
  return attn::gpt2_config(layers, heads, embd, positions, vocab);
}

using attn::test::tiny_llama;

void set(attn::Weights& w, int r, int c, float v) { w.f32[static_cast<std::size_t>(r) * w.cols + c] = v; }

std::vector<int> some_ids(int n, int vocab) {
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 7 + 3) % vocab);
  return ids;
}

float max_diff(const attn::Matrix& a, const attn::Matrix& b) { return (a - b).cwiseAbs().maxCoeff(); }

// Layer l of a forward in full (recomputed from the residual stream the trace keeps).
attn::LayerDetail detail(const attn::Transformer& m, const attn::ModelTrace& t, int l,
                         attn::Backend backend = attn::Backend::Simd) {
  return attn::layer_detail(m, t, l, backend);
}

// Every head's weights and every kept next-token probability of two traces (of models ma, mb).
float trace_diff(const attn::Transformer& ma, const attn::ModelTrace& a, const attn::Transformer& mb,
                 const attn::ModelTrace& b) {
  float worst = 0;
  for (int l = 0; l < static_cast<int>(a.layers.size()); ++l) {
    const attn::LayerDetail da = detail(ma, a, l), db = detail(mb, b, l);
    for (std::size_t h = 0; h < da.weights.size(); ++h) worst = std::max(worst, max_diff(da.weights[h], db.weights[h]));
  }
  for (std::size_t t = 0; t < a.next.size(); ++t)
    for (std::size_t k = 0; k < std::min<std::size_t>(5, a.next[t].size()); ++k) {
      CHECK(a.next[t][k].id == b.next[t][k].id);
      worst = std::max(worst, std::fabs(a.next[t][k].p - b.next[t][k].p));
    }
  return worst;
}

}  // namespace

TEST_CASE("transformer: with zero projections every query spreads its weight evenly over the past") {
  // All of W_Q, W_K is zero, so every score is 0: causal softmax gives 1/(t+1) to keys 0…t and
  // exactly 0 to the future, in every layer and head.
  attn::Transformer m(tiny_gpt2(2, 2, 4), attn::Dtype::F32, attn::WeightLayout::InOut);
  for (auto& b : m.blocks) b.attn_norm_w.setOnes(), b.mlp_norm_w.setOnes();
  m.final_norm_w.setOnes();
  const attn::ModelTrace t = attn::transformer_forward(m, {1, 2, 3, 4});
  REQUIRE(t.layers.size() == 2);
  for (int l = 0; l < 2; ++l) {
    const attn::LayerDetail layer = detail(m, t, l);
    REQUIRE(layer.weights.size() == 2);
    for (const attn::Matrix& w : layer.weights)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) CHECK(w(i, j) == (j <= i ? doctest::Approx(1.0 / (i + 1)) : doctest::Approx(0.0)));
  }
  // Zero embeddings, zero weights: every logit is 0, so every next token is equally likely: 1/11,
  // and the ties come in id order.
  for (int p = 0; p < 4; ++p) {
    REQUIRE(t.next[static_cast<std::size_t>(p)].size() == 11);
    CHECK(t.next[static_cast<std::size_t>(p)][5].p == doctest::Approx(1.0 / 11));
    CHECK(t.next[static_cast<std::size_t>(p)][5].id == 5);
  }
  CHECK(attn::top_next_tokens(t, 0, 3).size() == 3);
  CHECK(attn::top_next_tokens(t, 4, 3).empty());
}

TEST_CASE("transformer: GPT-2's layout, one layer, one head, worked by hand") {
  // C = 2, LayerNorm gains 1, biases 0: LayerNorm of (a, b) with a ≠ b is (±1, ∓1) (up to ε).
  // Token 0 = (1, 0) → x̂ = (1, −1); token 1 = (0, 1) → x̂ = (−1, 1).
  // W_Q = W_K = [[1, 0], [0, 0]] (only the first feature), W_V = identity.
  // q·k for tokens (0, 1) at query 1: q1 = (−1, 0), k0 = (1, 0), k1 = (−1, 0) → scores −1, 1,
  // scaled by 1/√2: w = softmax(−0.7071, 0.7071) = (0.1957, 0.8043).
  attn::Transformer m(tiny_gpt2(1, 1, 2, 2, 4), attn::Dtype::F32, attn::WeightLayout::InOut);
  set(m.embed, 0, 0, 1), set(m.embed, 1, 1, 1);
  attn::TransformerBlock& b = m.blocks[0];
  b.attn_norm_w.setOnes(), b.mlp_norm_w.setOnes();
  set(b.qkv, 0, 0, 1);                          // W_Q
  set(b.qkv, 0, 2, 1);                          // W_K
  set(b.qkv, 0, 4, 1), set(b.qkv, 1, 5, 1);     // W_V
  m.final_norm_w.setOnes();
  const attn::ModelTrace t = attn::transformer_forward(m, {0, 1});
  const attn::LayerDetail d = detail(m, t, 0);
  const attn::Matrix& w = d.weights[0];
  CHECK(w(0, 0) == doctest::Approx(1.0));
  CHECK(w(0, 1) == 0.0f);
  CHECK(w(1, 0) == doctest::Approx(0.1957).epsilon(1e-3));
  CHECK(w(1, 1) == doctest::Approx(0.8043).epsilon(1e-3));
  CHECK(d.x(0, 0) == doctest::Approx(1.0).epsilon(1e-4));
  CHECK(d.x(1, 0) == doctest::Approx(-1.0).epsilon(1e-4));
  // The output row 1 = 0.1957·(1, −1) + 0.8043·(−1, 1) = (−0.6086, 0.6086).
  CHECK(d.head_outputs(1, 0) == doctest::Approx(-0.6086).epsilon(1e-3));
  // Learned positions: nothing is kept from before a rotation.
  CHECK(d.query_projected.size() == 0);
  // The head's weights as the views read them: W_Q's column is (1, 0).
  const attn::Matrix wq = attn::head_weights(m.config, b, 0, attn::Projection::Query);
  CHECK(wq(0, 0) == 1.0f);
  CHECK(wq(1, 0) == 0.0f);

  // A score scale of 1 (scale_attn_weights false): the same scores −1, 1 undivided:
  // w = softmax(−1, 1) = (1/(1 + e²), e²/(1 + e²)) = (0.1192, 0.8808).
  m.config.score_scale = 1.0f;
  const attn::ModelTrace raw = attn::transformer_forward(m, {0, 1});
  CHECK(detail(m, raw, 0).weights[0](1, 0) == doctest::Approx(0.1192).epsilon(1e-3));
  CHECK(detail(m, raw, 0).weights[0](1, 1) == doctest::Approx(0.8808).epsilon(1e-3));
}

TEST_CASE("transformer: RoPE turns dimension i with i + d/2 by position · inv_freq[i]") {
  // head_dim 4, theta 100: inv_freq = (1, 1/10); pairs (0, 2) and (1, 3).
  attn::RopeConfig rope;
  rope.theta = 100;
  const std::vector<double> inv = attn::rope_inv_freq(rope, 4);
  REQUIRE(inv.size() == 2);
  CHECK(inv[0] == doctest::Approx(1.0));
  CHECK(inv[1] == doctest::Approx(0.1));
  // One head, x = (1, 1, 0, 0) at positions 0, 1, 2: dims (0, 2) turn by t, dims (1, 3) by t / 10.
  attn::Matrix x(3, 4);
  for (int t = 0; t < 3; ++t) x.row(t) << 1, 1, 0, 0;
  attn::apply_rope(x, 1, 4, rope);
  for (int t = 0; t < 3; ++t) {
    CHECK(x(t, 0) == doctest::Approx(std::cos(t)));
    CHECK(x(t, 2) == doctest::Approx(std::sin(t)));
    CHECK(x(t, 1) == doctest::Approx(std::cos(t / 10.0)));
    CHECK(x(t, 3) == doctest::Approx(std::sin(t / 10.0)));
  }
  // A rotated q·k depends on the distance only: the same q and k two apart score the same at
  // positions (5, 3) and (9, 7), and differently one apart.
  attn::Rng rng(3);
  const attn::Matrix q = attn::test::random_matrix(rng, 1, 8), k = attn::test::random_matrix(rng, 1, 8);
  const auto score = [&](int i, int j) {
    attn::Matrix qi = q, kj = k;
    attn::apply_rope(qi, 1, 8, attn::RopeConfig{}, i);
    attn::apply_rope(kj, 1, 8, attn::RopeConfig{}, j);
    return qi.row(0).dot(kj.row(0));
  };
  CHECK(score(5, 3) == doctest::Approx(score(9, 7)).epsilon(1e-5));
  CHECK(score(5, 4) != doctest::Approx(score(5, 3)).epsilon(1e-3));
}

TEST_CASE("transformer: rope scaling rewrites the frequencies as Hugging Face's rope utils do") {
  // head_dim 8, theta 10 000: inv_freq = (1, 0.1, 0.01, 0.001); wavelengths 2π/f = 6.28, 62.8, 628, 6283.
  attn::RopeConfig r;
  r.scaling = attn::RopeScaling::Linear, r.factor = 4;
  std::vector<double> f = attn::rope_inv_freq(r, 8);
  CHECK(f[1] == doctest::Approx(0.025));
  CHECK(f[3] == doctest::Approx(0.00025));
  // llama3, context 100, low 1, high 4, factor 8: under 100/4 = 25 kept, over 100/1 = 100 ÷ 8, and
  // 62.8 blended: smooth = (100/62.83 − 1)/3 = 0.19718, f = 0.80282 · 0.1/8 + 0.19718 · 0.1 = 0.029754.
  r.scaling = attn::RopeScaling::Llama3, r.factor = 8, r.original_max_positions = 100;
  r.low_freq_factor = 1, r.high_freq_factor = 4;
  f = attn::rope_inv_freq(r, 8);
  CHECK(f[0] == doctest::Approx(1.0));
  CHECK(f[1] == doctest::Approx(0.029754).epsilon(1e-4));
  CHECK(f[2] == doctest::Approx(0.00125));
  CHECK(f[3] == doctest::Approx(0.000125));
  // yarn, context 64, factor 4, beta 32 / 1: correction dims hd·ln(64/(2π·β))/(2 ln 10⁴) =
  // 8·ln(0.3183)/18.42 = −0.497 → floor −1 → 0, and 8·ln(10.186)/18.42 = 1.008 → ceil 2; the ramp
  // (i − 0)/2 keeps dim 0 whole, half-interpolates dim 1 and fully interpolates dims 2 and 3.
  r = attn::RopeConfig{};
  r.scaling = attn::RopeScaling::Yarn, r.factor = 4, r.original_max_positions = 64;
  f = attn::rope_inv_freq(r, 8);
  CHECK(f[0] == doctest::Approx(1.0));
  CHECK(f[1] == doctest::Approx(0.1 * 0.5 + 0.025 * 0.5));
  CHECK(f[2] == doctest::Approx(0.0025));
  CHECK(f[3] == doctest::Approx(0.00025));
}

TEST_CASE("transformer: Gemma's RMSNorm multiplies by (1 + w) after the √d embedding scale") {
  // One token embedded as (3, 4), scaled by 2: (6, 8); RMS = √((36 + 64)/2) = 7.0711 → (0.8485,
  // 1.1314); w = (1, 0) → (1.6971, 1.1314).
  attn::TransformerConfig c = tiny_llama(1, 1, 1, 2, 2, 3);
  c.norm_plus_one = true, c.embed_scale = 2.0f, c.sandwich_norms = true;
  attn::Transformer m(c, attn::Dtype::F32, attn::WeightLayout::OutIn);
  set(m.embed, 1, 0, 3), set(m.embed, 1, 1, 4);
  m.blocks[0].attn_norm_w << 1, 0;
  const attn::LayerDetail d = detail(m, attn::transformer_forward(m, {1}), 0);
  CHECK(d.x(0, 0) == doctest::Approx(1.6971).epsilon(1e-4));
  CHECK(d.x(0, 1) == doctest::Approx(1.1314).epsilon(1e-4));
}

TEST_CASE("transformer: a sliding window hides keys w or more back; a soft-cap bounds the scores") {
  attn::TransformerConfig c = tiny_llama(2, 2, 1, 4, 8);
  c.layers[0].window = 2;
  c.attn_softcap = 0.5f;
  const attn::Transformer m = attn::random_transformer(c, 5, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.5);
  const attn::ModelTrace t = attn::transformer_forward(m, some_ids(7, c.vocab_size));
  const attn::LayerDetail d0 = detail(m, t, 0), d1 = detail(m, t, 1);
  for (int h = 0; h < 2; ++h) {
    const attn::Matrix& local = d0.weights[static_cast<std::size_t>(h)];
    const attn::Matrix& global = d1.weights[static_cast<std::size_t>(h)];
    for (int i = 0; i < 7; ++i) {
      CHECK(local.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
      for (int j = 0; j < 7; ++j) {
        if (j > i || i - j >= 2) CHECK(local(i, j) == 0.0f);
        if (j <= i) CHECK(global(i, j) > 0.0f);  // the full layer sees the whole past
      }
    }
    // The views' trace of the head: the model's scale, cap and window reproduce its weights.
    const attn::AttentionTrace head = attn::head_trace(c, d0, h, attn::model_attention_options(c, 0));
    CHECK(max_diff(head.weights, local) < 1e-5f);
    CHECK(head.capped_scores.cwiseAbs().maxCoeff() <= 0.5f);  // tanh reaches ±1 in float far out
    CHECK(head.options.window == 2);
  }
}

TEST_CASE("transformer: query heads in a group share one key/value head") {
  // 4 query heads, 2 K/V heads: heads 0, 1 read K/V head 0; heads 2, 3 read K/V head 1.
  attn::TransformerConfig c = tiny_llama(1, 4, 2, 4, 8);
  CHECK(c.kv_group() == 2);
  CHECK(c.kv_head_of(1) == 0);
  CHECK(c.kv_head_of(2) == 1);
  const attn::Transformer m = attn::random_transformer(c, 9, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.4);
  const attn::ModelTrace t = attn::transformer_forward(m, some_ids(6, c.vocab_size));
  const attn::LayerDetail l = detail(m, t, 0);
  CHECK(l.query.cols() == 16);
  CHECK(l.key.cols() == 8);
  CHECK(l.value.cols() == 8);
  for (int h = 0; h < 4; ++h) {
    attn::AttentionOptions o = attn::model_attention_options(c, 0);
    const attn::AttentionTrace by_hand =
        attn::attend(l.query.middleCols(h * 4, 4), l.key.middleCols(c.kv_head_of(h) * 4, 4),
                     l.value.middleCols(c.kv_head_of(h) * 4, 4), o);
    CHECK(max_diff(by_hand.weights, l.weights[static_cast<std::size_t>(h)]) < 1e-5f);
  }
  // The views' W_K of heads 0 and 1 is the same slice (K/V head 0), of head 2 another.
  const attn::TransformerBlock& b = m.blocks[0];
  CHECK(attn::head_weights(c, b, 0, attn::Projection::Key) == attn::head_weights(c, b, 1, attn::Projection::Key));
  CHECK(attn::head_weights(c, b, 0, attn::Projection::Key) != attn::head_weights(c, b, 2, attn::Projection::Key));
  // Kept before the rotation: q and k as X·W gave them.
  CHECK(l.query_projected.cols() == 16);
  CHECK(l.query_projected != l.query);
}

TEST_CASE("transformer: the fast path agrees with the scalar reference on every kind of block") {
  std::vector<attn::TransformerConfig> configs = {tiny_gpt2(1, 1, 8), tiny_gpt2(2, 3, 12, 37, 20)};
  attn::TransformerConfig llama = tiny_llama(2, 4, 2, 6, 12);  // head_dim ≠ d_model / heads
  configs.push_back(llama);
  attn::TransformerConfig gemma = tiny_llama(3, 2, 1, 8, 10, 29);
  gemma.norm_plus_one = gemma.sandwich_norms = gemma.qk_norm = true;
  gemma.embed_scale = std::sqrt(10.0f), gemma.score_scale = 1.0f / std::sqrt(12.0f);
  gemma.activation = attn::Activation::GeluTanh, gemma.attn_softcap = 2.0f, gemma.final_softcap = 3.0f;
  gemma.layers[0].window = 3, gemma.layers[1].window = 3;
  gemma.layers[0].rope.theta = gemma.layers[1].rope.theta = 100;
  gemma.layers[2].rope.scaling = attn::RopeScaling::Linear, gemma.layers[2].rope.factor = 2;
  configs.push_back(gemma);
  attn::TransformerConfig qwen = tiny_llama(1, 3, 3, 4, 12);
  qwen.qkv_bias = true, qwen.layers[0].rope.scaling = attn::RopeScaling::Yarn;
  qwen.layers[0].rope.factor = 4, qwen.layers[0].rope.original_max_positions = 8, qwen.layers[0].rope.attention_factor = 1.1;
  configs.push_back(qwen);
  for (const attn::TransformerConfig& c : configs) {
    CAPTURE(c.family);
    const attn::WeightLayout layout = c.family == "gpt2" ? attn::WeightLayout::InOut : attn::WeightLayout::OutIn;
    attn::Transformer m = attn::random_transformer(c, 7, attn::Dtype::F32, layout, 0.3);
    for (auto& b : m.blocks) b.qkv_b.setConstant(0.1f);
    const std::vector<int> ids = some_ids(15, c.vocab_size);
    attn::ForwardOptions fast, slow;
    slow.backend = attn::Backend::Scalar;
    const attn::ModelTrace a = attn::transformer_forward(m, ids, fast), r = attn::transformer_forward(m, ids, slow);
    CHECK(trace_diff(m, a, m, r) < 1e-5f);
    for (int l = 0; l < static_cast<int>(a.layers.size()); ++l)
      for (const attn::Matrix& w : detail(m, a, l).weights)
        for (Eigen::Index i = 0; i < w.rows(); ++i) {
          CHECK(w.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
          for (Eigen::Index j = i + 1; j < w.cols(); ++j) CHECK(w(i, j) == 0.0f);
        }
    // Predictions only from position 10 on: the same numbers there, none before.
    attn::ForwardOptions late;
    late.predict_from = 10;
    const attn::ModelTrace p = attn::transformer_forward(m, ids, late);
    CHECK(p.next[9].empty());
    CHECK(p.next[10].front().id == a.next[10].front().id);
    CHECK(p.next[14].front().p == doctest::Approx(a.next[14].front().p).epsilon(1e-6));
  }
}

TEST_CASE("transformer: 16-bit weights give what the same values as floats give") {
  for (attn::Dtype dtype : {attn::Dtype::BF16, attn::Dtype::F16}) {
    attn::TransformerConfig c = tiny_llama(2, 2, 1, 4, 8, 31);
    c.qk_norm = true;
    const attn::Transformer half = attn::random_transformer(c, 4, dtype, attn::WeightLayout::OutIn, 0.3);
    // The float model holds exactly the 16-bit values, widened.
    attn::Transformer wide(c, attn::Dtype::F32, attn::WeightLayout::OutIn);
    const auto widen = [](const attn::Weights& from, attn::Weights& to) {
      for (std::size_t i = 0; i < from.u16.size(); ++i) to.f32[i] = attn::widen16(from.dtype, from.u16[i]);
    };
    widen(half.embed, wide.embed);
    for (std::size_t l = 0; l < half.blocks.size(); ++l) {
      const attn::TransformerBlock& h = half.blocks[l];
      attn::TransformerBlock& w = wide.blocks[l];
      widen(h.qkv, w.qkv), widen(h.o, w.o), widen(h.up, w.up), widen(h.down, w.down);
      w.attn_norm_w = h.attn_norm_w, w.mlp_norm_w = h.mlp_norm_w, w.q_norm_w = h.q_norm_w, w.k_norm_w = h.k_norm_w;
    }
    wide.final_norm_w = half.final_norm_w;
    CHECK(half.weight_bytes() < wide.weight_bytes() * 0.6);
    CHECK(half.weight_bytes() == attn::transformer_weight_bytes(c, dtype));
    CHECK(wide.weight_bytes() == attn::transformer_weight_bytes(c, attn::Dtype::F32));
    const std::vector<int> ids = some_ids(9, c.vocab_size);
    CHECK(trace_diff(half, attn::transformer_forward(half, ids), wide, attn::transformer_forward(wide, ids)) < 1e-5f);
  }
}

TEST_CASE("transformer: refused configs and inputs name the problem") {
  attn::TransformerConfig c = tiny_llama(1, 3, 2, 4, 8);
  CHECK_THROWS_WITH_AS(attn::validate_config(c, "config.json"),
                       doctest::Contains("config.json: 3 query heads cannot share 2 key/value heads evenly"),
                       std::invalid_argument);
  c = tiny_llama(1, 2, 2, 3, 8);
  CHECK_THROWS_WITH_AS(attn::validate_config(c, "config.json"), doctest::Contains("even head width"), std::invalid_argument);
  c = tiny_gpt2(0, 1, 8);
  CHECK_THROWS_WITH_AS(attn::validate_config(c, "config.json"), doctest::Contains("the number of layers is 0"),
                       std::invalid_argument);
  c = tiny_llama(1, 2, 1, 4, 8);
  c.layers[0].rope.scaling = attn::RopeScaling::Llama3, c.layers[0].rope.factor = 8;
  CHECK_THROWS_WITH_AS(attn::validate_config(c, "config.json"), doctest::Contains("original_max_position_embeddings"),
                       std::invalid_argument);
  const attn::Transformer m = attn::random_transformer(tiny_gpt2(1, 1, 4, 10, 4), 1);
  CHECK_THROWS_WITH_AS(attn::transformer_forward(m, {}), doctest::Contains("no tokens"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(attn::transformer_forward(m, {1, 2, 3, 4, 5}), doctest::Contains("at most 4"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(attn::transformer_forward(m, {10}), doctest::Contains("outside the vocabulary"), std::invalid_argument);
  // GPT-2's count: wte, wpe, ln_1, c_attn, c_proj, ln_2, c_fc, mlp c_proj, ln_f.
  CHECK(m.parameter_count() == 10 * 4 + 4 * 4 + 2 * 4 + (4 * 4 + 4 * 12 + 12 + 16 + 4 + 4 * 16 + 16 + 64 + 4));
  // A RoPE model has no position table: its text is bounded by the trace limit only.
  const attn::Transformer r = attn::random_transformer(tiny_llama(1, 1, 1, 2, 2, 5), 1, attn::Dtype::F32,
                                                       attn::WeightLayout::OutIn);
  CHECK(detail(r, attn::transformer_forward(r, some_ids(40, 5)), 0).weights[0].rows() == 40);
}

TEST_CASE("transformer: the trace keeps each head's summary and thumbnail; a layer's detail is the forward's own") {
  attn::TransformerConfig c = tiny_llama(2, 4, 2, 4, 8, 23);
  c.qk_norm = true;
  c.layers[1].window = 5;
  const attn::Transformer m = attn::random_transformer(c, 11, attn::Dtype::BF16, attn::WeightLayout::OutIn, 0.6);
  for (int T : {9, 100}) {
    CAPTURE(T);
    const attn::ModelTrace t = attn::transformer_forward(m, some_ids(T, c.vocab_size));
    for (int l = 0; l < 2; ++l) {
      const attn::LayerTrace& kept = t.layers[static_cast<std::size_t>(l)];
      REQUIRE(kept.summaries.size() == 4);
      REQUIRE(kept.thumbnails.size() == 4);
      const attn::LayerDetail d = detail(m, t, l);
      CHECK(d.x.rows() == T);
      // recomputed twice, and with another backend's rounding in reach: the very same numbers
      CHECK(detail(m, t, l).weights[3] == d.weights[3]);
      CHECK(d.query_normed.cols() == 16);
      CHECK(d.key_projected.cols() == 8);
      for (int h = 0; h < 4; ++h) {
        const attn::Matrix& w = d.weights[static_cast<std::size_t>(h)];
        const attn::Matrix& thumb = kept.thumbnails[static_cast<std::size_t>(h)];
        CHECK(thumb.rows() == std::min(T, attn::kThumbnailSide));
        CHECK(thumb.cols() == std::min(T, attn::kThumbnailSide));
        if (T <= attn::kThumbnailSide) CHECK(thumb == w);
        // a block shows its largest weight: the first row of a causal head is one-hot on key 0
        CHECK(thumb(0, 0) == doctest::Approx(1.0f));
        CHECK(thumb.maxCoeff() == doctest::Approx(w.maxCoeff()));
        const attn::HeadSummary s = attn::summarize_head(w, true);
        CHECK(kept.summaries[static_cast<std::size_t>(h)].pattern == s.pattern);
        CHECK(kept.summaries[static_cast<std::size_t>(h)].previous == s.previous);
      }
    }
  }
  // 2 × 2 blocks of a 4 × 4 matrix, pooled by hand
  attn::Matrix w(4, 4);
  w << 1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 0.1f, 0.2f, 0.7f, 0, 0.25f, 0.25f, 0.25f, 0.25f;
  const attn::Matrix p = attn::max_pooled(w, 2);
  CHECK(p(0, 0) == 1.0f);
  CHECK(p(0, 1) == 0.0f);
  CHECK(p(1, 0) == 0.25f);
  CHECK(p(1, 1) == 0.7f);
  CHECK_THROWS_AS(attn::layer_detail(m, attn::transformer_forward(m, {1, 2}), 2), std::invalid_argument);
}

TEST_CASE("transformer: around the heads, the stream in, the attention's and the MLP's updates make the next layer's stream") {
  for (const bool gpt2 : {true, false}) {
    CAPTURE(gpt2);
    attn::TransformerConfig c = gpt2 ? tiny_gpt2(3, 2, 8) : tiny_llama(3, 4, 2, 4, 8, 23);
    if (!gpt2) c.sandwich_norms = true;  // Gemma's: each update normed before it is added
    const attn::Transformer m = attn::random_transformer(c, 5, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.5);
    const attn::ModelTrace t = attn::transformer_forward(m, some_ids(7, c.vocab_size));
    for (int l = 0; l + 1 < c.n_layer; ++l) {
      const attn::LayerDetail d = detail(m, t, l), after = detail(m, t, l + 1);
      CHECK(d.stream_in == t.streams[static_cast<std::size_t>(l)]);
      for (int row = 0; row < 7; ++row) {
        // one row's updates, computed alone, make that row of the next layer's stream (the forward ran
        // all rows at once: the kernels' blocks may round the last bit differently)
        const attn::StreamUpdates u = attn::stream_updates(c, m.blocks[static_cast<std::size_t>(l)], d, row);
        const attn::Matrix next = (d.stream_in.row(row) + u.attention) + u.mlp;  // the forward's order
        CHECK(max_diff(next, after.stream_in.row(row)) < 1e-5f);
        CHECK(u.mlp.norm() > 0);
      }
      // each head's part: its output times its rows of W_O; with b_O they make the attention's output
      for (int row : {0, 6}) {
        const attn::StreamUpdates u = attn::stream_updates(c, m.blocks[static_cast<std::size_t>(l)], d, row);
        const attn::Matrix parts = attn::head_contributions(c, m.blocks[static_cast<std::size_t>(l)], d, row);
        REQUIRE(parts.rows() == c.n_head);
        REQUIRE(parts.cols() == c.d_model);
        attn::Matrix joined = parts.colwise().sum();
        const attn::Vector& o_b = m.blocks[static_cast<std::size_t>(l)].o_b;
        if (o_b.size() != 0) joined += o_b;
        if (!c.sandwich_norms) CHECK(max_diff(joined, u.attention) < 1e-5f);
        else CHECK(max_diff(joined, u.attention) > 1e-4f);  // normed after: not their plain sum
      }
    }
  }
  const attn::TransformerConfig c = tiny_gpt2(1, 2, 8);
  const attn::Transformer m = attn::random_transformer(c, 5, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.5);
  const attn::LayerDetail d = detail(m, attn::transformer_forward(m, some_ids(3, c.vocab_size)), 0);
  CHECK_THROWS_AS(attn::head_contributions(c, m.blocks[0], d, 3), std::invalid_argument);
  CHECK_THROWS_AS(attn::stream_updates(c, m.blocks[0], d, 3), std::invalid_argument);
}

TEST_CASE("transformer: a trace short of memory keeps every few layers' stream, and a layer's detail is still the forward's own") {
  attn::TransformerConfig c = tiny_llama(7, 2, 1, 4, 8, 19);
  c.layers[3].window = 3;
  const attn::Transformer m = attn::random_transformer(c, 3, attn::Dtype::BF16, attn::WeightLayout::OutIn, 0.5);
  const std::vector<int> ids = some_ids(12, c.vocab_size);
  const attn::ModelTrace all = attn::transformer_forward(m, ids);
  CHECK(all.stream_every == 1);
  CHECK(all.streams.size() == 7);
  const std::int64_t one_layer = 12 * 8 * 4;  // T · C floats
  for (std::int64_t budget : {3 * one_layer, one_layer, std::int64_t{1}}) {
    CAPTURE(budget);
    attn::ForwardOptions o;
    o.stream_bytes = budget;
    const attn::ModelTrace few = attn::transformer_forward(m, ids, o);
    const int every = budget == 3 * one_layer ? 3 : 7;  // ⌈7 / 3⌉; one layer's budget: the first stream only
    CHECK(few.stream_every == every);
    CHECK(few.streams.size() == static_cast<std::size_t>((7 + every - 1) / every));
    for (int l = 0; l < 7; ++l) {
      CAPTURE(l);
      const attn::LayerDetail a = detail(m, all, l), b = detail(m, few, l);
      CHECK(a.x == b.x);
      CHECK(a.query == b.query);
      for (std::size_t h = 0; h < a.weights.size(); ++h) CHECK(a.weights[h] == b.weights[h]);
      CHECK(a.head_outputs == b.head_outputs);
    }
    for (std::size_t t = 0; t < ids.size(); ++t) CHECK(few.next[t].front().p == all.next[t].front().p);
  }
}

TEST_CASE("transformer: the LM head over slices of a large vocabulary gives the whole softmax's top k") {
  // 6 000 tokens at T = 200: slices of 5 242 tokens (2²⁰ logits / 200 rows), so two, with a cap on
  // the logits. The block's outputs are zero, so the final stream is the embedding and the whole
  // softmax can be worked out here, in double, from the weights.
  attn::TransformerConfig c = tiny_llama(1, 2, 1, 4, 8, 6000);
  c.final_softcap = 4.0f;
  attn::Transformer m = attn::random_transformer(c, 21, attn::Dtype::F16, attn::WeightLayout::OutIn, 0.8);
  std::fill(m.blocks[0].o.u16.begin(), m.blocks[0].o.u16.end(), 0);
  std::fill(m.blocks[0].down.u16.begin(), m.blocks[0].down.u16.end(), 0);
  const auto e = [&](int token, int i) { return attn::half_to_float(m.embed.u16[static_cast<std::size_t>(token) * 8 + i]); };
  // token 5 999 (in the second slice) the best guess after position 0's token, 18 a copy of 17 (a tie)
  const std::vector<int> ids = some_ids(200, c.vocab_size);
  for (int i = 0; i < 8; ++i) {
    m.embed.u16[static_cast<std::size_t>(5999) * 8 + i] = attn::float_to_half(3.0f * e(ids[0], i));
    m.embed.u16[static_cast<std::size_t>(18) * 8 + i] = m.embed.u16[static_cast<std::size_t>(17) * 8 + i];
  }
  attn::ForwardOptions o;
  o.top_k = 50;
  const attn::ModelTrace t = attn::transformer_forward(m, ids, o);
  attn::ForwardOptions scalar = o;
  scalar.backend = attn::Backend::Scalar;
  CHECK(trace_diff(m, t, m, attn::transformer_forward(m, ids, scalar)) < 1e-5f);
  for (int pos : {0, 77, 199}) {
    CAPTURE(pos);
    double ms = 0;
    for (int i = 0; i < 8; ++i) ms += static_cast<double>(e(ids[pos], i)) * e(ids[pos], i) / 8;
    std::vector<double> logit(6000);
    for (int v = 0; v < 6000; ++v) {
      double dot = 0;
      for (int i = 0; i < 8; ++i) dot += e(ids[pos], i) / std::sqrt(ms + c.norm_eps) * m.final_norm_w[i] * e(v, i);
      logit[v] = std::tanh(dot / 4.0) * 4.0;
    }
    const double top = *std::max_element(logit.begin(), logit.end());
    double sum = 0;
    for (double l : logit) sum += std::exp(l - top);
    std::vector<int> order(6000);
    for (int v = 0; v < 6000; ++v) order[v] = v;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logit[a] > logit[b]; });
    const std::vector<attn::NextToken>& next = t.next[static_cast<std::size_t>(pos)];
    REQUIRE(next.size() == 50);
    for (int k = 0; k < 50; ++k) {
      CAPTURE(k);
      CHECK(next[k].id == order[k]);
      CHECK(next[k].p == doctest::Approx(std::exp(logit[order[k]] - top) / sum).epsilon(1e-4));
    }
    if (pos == 0) CHECK(next[0].id == 5999);
  }
  // one row's head, as the page runs it (no head in the forward): the forward's numbers, to float
  // rounding (one row is one slice of the vocabulary, 200 rows two)
  attn::ForwardOptions none = o;
  none.predict_from = 200;
  const attn::ModelTrace heads_only = attn::transformer_forward(m, ids, none);
  CHECK(heads_only.next[199].empty());
  for (int pos : {0, 77, 199}) {
    const std::vector<attn::NextToken> one = attn::next_tokens_at(m, heads_only, pos, 50);
    REQUIRE(one.size() == 50);
    for (int k = 0; k < 50; ++k) {
      CHECK(one[k].id == t.next[static_cast<std::size_t>(pos)][k].id);
      CHECK(one[k].p == doctest::Approx(t.next[static_cast<std::size_t>(pos)][k].p).epsilon(1e-6));
    }
  }
  CHECK(attn::next_tokens_at(m, heads_only, 200, 5).empty());
  // the tie: wherever 17 and 18 are both kept, 17 comes first
  for (const std::vector<attn::NextToken>& next : t.next)
    for (std::size_t k = 0; k + 1 < next.size(); ++k)
      if (next[k + 1].id == 17) CHECK(next[k].id != 18);
}
