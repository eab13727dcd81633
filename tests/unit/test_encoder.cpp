// The encoder pieces of the one core (post-LayerNorm blocks, the embeddings' norm, token types, a
// position offset, every query seeing every key, the padding mask, the masked-LM head) against a
// forward written out here by hand in double loops, a LayerNorm and a GELU worked out on paper, and
// the interventions and refusals an encoder brings. (Against PyTorch on random BERT, DistilBERT and
// RoBERTa files: tests/cli/encoders.test.mjs.)
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/api/model_families.h"
#include "../../src/core/attribution.h"
#include "../../src/core/random.h"
#include "../../src/core/transformer.h"

namespace {

using attn::Matrix;
using attn::Vector;

// A small encoder: C 4, 2 heads of 2, d_ff 6, 9 tokens, 8 positions from row 2, 3 token types.
attn::TransformerConfig tiny_encoder() {
  attn::TransformerConfig c;
  c.family = "bert";
  c.n_layer = 2, c.n_head = c.n_kv_head = 2, c.head_dim = 2, c.d_model = 4, c.d_ff = 6, c.vocab_size = 9;
  c.n_positions = 8, c.position_offset = 2, c.n_token_types = 3;
  c.norm = attn::NormKind::LayerNorm, c.norm_eps = 1e-6f;
  c.layers.assign(2, attn::LayerSpec{});
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.score_scale = 1.0f / std::sqrt(2.0f);
  c.activation = attn::Activation::GeluErf;
  c.causal = false, c.post_norm = true, c.embed_norm = true;
  c.has_lm_head = c.head_transform = c.head_bias = true;
  return c;
}

// Every matrix N(0, 0.5), every norm weight 1 + N(0, 0.1), every bias N(0, 0.1): nothing left at 0 or 1.
attn::Transformer random_encoder(std::uint64_t seed) {
  attn::Transformer m = attn::random_transformer(tiny_encoder(), seed, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.5);
  attn::Rng rng(seed + 100);
  const auto jitter = [&](Vector& v, float base) {
    for (Eigen::Index i = 0; i < v.size(); ++i) v[i] = base + 0.1f * static_cast<float>(rng.normal());
  };
  jitter(m.embed_norm_w, 1), jitter(m.embed_norm_b, 0), jitter(m.head_dense_b, 0), jitter(m.head_norm_w, 1);
  jitter(m.head_norm_b, 0), jitter(m.lm_head_b, 0);
  for (attn::TransformerBlock& b : m.blocks) {
    jitter(b.attn_norm_w, 1), jitter(b.attn_norm_b, 0), jitter(b.mlp_norm_w, 1), jitter(b.mlp_norm_b, 0);
    jitter(b.qkv_b, 0), jitter(b.o_b, 0), jitter(b.up_b, 0), jitter(b.down_b, 0);
  }
  return m;
}

// [SECTION] the forward by hand, in double ----------------------------------------------------

using Rows = std::vector<std::vector<double>>;

Rows layer_norm(const Rows& x, const Vector& w, const Vector& b, double eps) {
  Rows y = x;
  for (auto& row : y) {
    double mean = 0, var = 0;
    for (double v : row) mean += v;
    mean /= static_cast<double>(row.size());
    for (double v : row) var += (v - mean) * (v - mean);
    var /= static_cast<double>(row.size());
    for (std::size_t i = 0; i < row.size(); ++i) row[i] = (row[i] - mean) / std::sqrt(var + eps) * w[i] + b[i];
  }
  return y;
}

// y = x · Wᵀ + b for a (out, in) matrix (nn.Linear)
Rows linear(const Rows& x, const attn::Weights& w, const Vector& b) {
  Rows y(x.size(), std::vector<double>(static_cast<std::size_t>(w.rows), 0.0));
  for (std::size_t t = 0; t < x.size(); ++t)
    for (int o = 0; o < w.rows; ++o) {
      double s = b.size() ? b[o] : 0.0;
      for (int i = 0; i < w.cols; ++i) s += x[t][static_cast<std::size_t>(i)] * w.at(o, i);
      y[t][static_cast<std::size_t>(o)] = s;
    }
  return y;
}

double gelu(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }

struct ByHand {
  std::vector<Rows> weights;  // per layer and head (flattened l * H + h): (T, T)
  Rows probs;                 // (T, V) the masked-LM head's
};

// The BERT forward as its modeling file reads: embeddings (word + type + position from the offset),
// LayerNorm; per layer x = LN(x + attn(x)), x = LN(x + down(gelu(up(x)))); head LN(gelu(dense(x))) ·
// Eᵀ + bias. The last `padding` keys get −∞ before every softmax.
ByHand by_hand(const attn::Transformer& m, const std::vector<int>& ids, const std::vector<int>& types, int padding) {
  const attn::TransformerConfig& c = m.config;
  const int T = static_cast<int>(ids.size()), C = c.d_model, H = c.n_head, hd = c.head_dim;
  Rows x(static_cast<std::size_t>(T), std::vector<double>(static_cast<std::size_t>(C)));
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < C; ++i)
      x[t][i] = m.embed.at(ids[t], i) + m.token_type_table.at(types.empty() ? 0 : types[t], i) +
                m.position_table.at(t + c.position_offset, i);
  x = layer_norm(x, m.embed_norm_w, m.embed_norm_b, c.norm_eps);
  ByHand out;
  for (const attn::TransformerBlock& b : m.blocks) {
    const Rows qkv = linear(x, b.qkv, b.qkv_b);
    Rows joined(static_cast<std::size_t>(T), std::vector<double>(static_cast<std::size_t>(C), 0.0));
    for (int h = 0; h < H; ++h) {
      Rows w(static_cast<std::size_t>(T), std::vector<double>(static_cast<std::size_t>(T), 0.0));
      for (int i = 0; i < T; ++i) {
        double max = -1e300, sum = 0;
        std::vector<double> s(static_cast<std::size_t>(T));
        for (int j = 0; j < T; ++j) {
          double dot = 0;
          for (int d = 0; d < hd; ++d) dot += qkv[i][h * hd + d] * qkv[j][C + h * hd + d];
          s[j] = j >= T - padding ? -INFINITY : dot / std::sqrt(static_cast<double>(hd));
          max = std::max(max, s[j]);
        }
        for (int j = 0; j < T; ++j) sum += (w[i][j] = std::exp(s[j] - max));
        for (int j = 0; j < T; ++j) w[i][j] /= sum;
        for (int d = 0; d < hd; ++d)
          for (int j = 0; j < T; ++j) joined[i][h * hd + d] += w[i][j] * qkv[j][2 * C + h * hd + d];
      }
      out.weights.push_back(w);
    }
    Rows attended = linear(joined, b.o, b.o_b);
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < C; ++i) attended[t][i] += x[t][i];
    x = layer_norm(attended, b.attn_norm_w, b.attn_norm_b, c.norm_eps);
    Rows hidden = linear(x, b.up, b.up_b);
    for (auto& row : hidden)
      for (double& v : row) v = gelu(v);
    Rows mlp = linear(hidden, b.down, b.down_b);
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < C; ++i) mlp[t][i] += x[t][i];
    x = layer_norm(mlp, b.mlp_norm_w, b.mlp_norm_b, c.norm_eps);
  }
  Rows h = linear(x, m.head_dense, m.head_dense_b);
  for (auto& row : h)
    for (double& v : row) v = gelu(v);
  h = layer_norm(h, m.head_norm_w, m.head_norm_b, c.norm_eps);
  const Rows logits = linear(h, m.embed, m.lm_head_b);
  for (const auto& row : logits) {
    double max = -1e300, sum = 0;
    for (double v : row) max = std::max(max, v);
    std::vector<double> p;
    for (double v : row) sum += std::exp(v - max), p.push_back(std::exp(v - max));
    for (double& v : p) v /= sum;
    out.probs.push_back(p);
  }
  return out;
}

double worst_against(const attn::Transformer& m, const attn::ModelTrace& trace, const ByHand& want, int rows) {
  double worst = 0;
  for (int l = 0; l < m.config.n_layer; ++l) {
    const attn::LayerDetail d = attn::layer_detail(m, trace, l);
    for (int h = 0; h < m.config.n_head; ++h)
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < rows; ++j)
          worst = std::max(worst, std::abs(d.weights[h](i, j) - want.weights[l * m.config.n_head + h][i][j]));
  }
  for (int t = 0; t < rows; ++t)
    for (const attn::NextToken& n : trace.next[t]) worst = std::max(worst, std::abs(n.p - want.probs[t][n.id]));
  return worst;
}

}  // namespace

TEST_CASE("encoder: a LayerNorm and the exact GELU worked out on paper") {
  // the masked-LM head's transform on one row: dense = identity with bias (1, −1), so [0, 0] → [1, −1];
  // GELU(1) = 0.841345, GELU(−1) = −0.158655 (Φ(1) = 0.841345); LayerNorm: mean 0.341345, both
  // deviations ±0.5, variance 0.25, so [1, −1] · w + b.
  CHECK(gelu(1.0) == doctest::Approx(0.8413447).epsilon(1e-6));
  CHECK(gelu(-1.0) == doctest::Approx(-0.1586553).epsilon(1e-6));
  const Rows normed = layer_norm({{gelu(1.0), gelu(-1.0)}}, Vector::Constant(2, 2.0f), Vector::Constant(2, 0.5f), 0);
  CHECK(normed[0][0] == doctest::Approx(2.5));
  CHECK(normed[0][1] == doctest::Approx(-1.5));
}

TEST_CASE("encoder: post-norm blocks, the embeddings' norm, token types, a position offset and the masked-LM head") {
  const attn::Transformer m = random_encoder(5);
  const std::vector<int> ids = {2, 7, 1, 8, 4, 0}, types = {0, 0, 1, 2, 1, 0};
  attn::ForwardOptions o;
  o.top_k = 9;
  o.token_types = types;
  const attn::ModelTrace trace = attn::transformer_forward(m, ids, o);
  const ByHand want = by_hand(m, ids, types, 0);
  CHECK(worst_against(m, trace, want, 6) < 2e-6);
  // every query sees every key: weight right of the diagonal
  CHECK(attn::layer_detail(m, trace, 0).weights[0](0, 5) > 0);
  // the types matter: type 0 everywhere is another run
  o.token_types.clear();
  const attn::ModelTrace plain = attn::transformer_forward(m, ids, o);
  CHECK(worst_against(m, plain, by_hand(m, ids, {}, 0), 6) < 2e-6);
  CHECK(std::abs(plain.next[3][0].p - trace.next[3][0].p) > 1e-6);
  // next_tokens_at and logits_at read the masked-LM head (its bias included)
  const std::vector<attn::NextToken> again = attn::next_tokens_at(m, trace, 3, 4);
  for (int k = 0; k < 4; ++k) CHECK(again[k].p == doctest::Approx(trace.next[3][k].p).epsilon(1e-5));
  const Vector logits = attn::logits_at(m, trace, 3);
  double sum = 0;
  for (Eigen::Index v = 0; v < logits.size(); ++v) sum += std::exp(logits[v] - logits.maxCoeff());
  CHECK(std::exp(logits[again[0].id] - logits.maxCoeff()) / sum == doctest::Approx(again[0].p).epsilon(1e-5));
  // the stream updates add up to the next layer's stream, post-norm too
  const attn::LayerDetail d0 = attn::layer_detail(m, trace, 0), d1 = attn::layer_detail(m, trace, 1);
  const attn::StreamUpdates u = attn::stream_updates(m.config, m.blocks[0], d0, 2);
  CHECK((Vector(d0.stream_in.row(2)) + u.attention + u.mlp - Vector(d1.stream_in.row(2))).cwiseAbs().maxCoeff() < 1e-5);
  // refusals: types the model has no row for, a text past the table from its offset
  o.token_types = {0, 0, 3, 0, 0, 0};
  CHECK_THROWS_AS(attn::transformer_forward(m, ids, o), std::invalid_argument);
  o.token_types.clear();
  CHECK_THROWS_WITH_AS(attn::transformer_forward(m, std::vector<int>(7, 1), o), "text: 7 tokens; this model reads at most 6",
                       std::invalid_argument);
}

TEST_CASE("encoder: padding keys are hidden from every query; the real tokens' numbers do not move") {
  const attn::Transformer m = random_encoder(6);
  const std::vector<int> ids = {3, 1, 4, 1};
  std::vector<int> padded = ids;
  padded.push_back(0), padded.push_back(0);
  attn::ForwardOptions o;
  o.top_k = 9;
  const attn::ModelTrace alone = attn::transformer_forward(m, ids, o);
  o.padding = 2;
  const attn::ModelTrace with_padding = attn::transformer_forward(m, padded, o);
  CHECK(with_padding.padding == 2);
  CHECK(worst_against(m, with_padding, by_hand(m, padded, {}, 2), 4) < 2e-6);
  for (int l = 0; l < 2; ++l) {
    const attn::LayerDetail a = attn::layer_detail(m, alone, l), b = attn::layer_detail(m, with_padding, l);
    for (int h = 0; h < 2; ++h) {
      CHECK((b.weights[h].topLeftCorner(4, 4) - a.weights[h]).cwiseAbs().maxCoeff() < 1e-6);
      CHECK(b.weights[h].rightCols(2).cwiseAbs().maxCoeff() == 0.0f);  // exactly 0, for every query
    }
  }
  for (int t = 0; t < 4; ++t) CHECK(std::abs(with_padding.next[t][0].p - alone.next[t][0].p) < 1e-6);
  // a mean ablation averages the real tokens only, so padding leaves it as it was too
  attn::Intervention edit;
  edit.ablate = {{1, 0}};
  edit.ablate_kind = attn::AblateKind::Mean;
  edit.cuts = {{0, 1, 3, 0}};
  o.intervention = &edit;
  const attn::ModelTrace ablated_padded = attn::transformer_forward(m, padded, o);
  o.padding = 0;
  const attn::ModelTrace ablated_alone = attn::transformer_forward(m, ids, o);
  for (int t = 0; t < 4; ++t) CHECK(std::abs(ablated_padded.next[t][0].p - ablated_alone.next[t][0].p) < 1e-6);
  CHECK(std::abs(ablated_alone.next[2][0].p - alone.next[2][0].p) > 1e-6);  // it changed something
  // rerun_forward from the padded run keeps its padding: the same numbers
  const attn::ModelTrace rerun = attn::rerun_forward(m, with_padding, edit);
  CHECK(rerun.padding == 2);
  for (int t = 0; t < 6; ++t) CHECK(rerun.next[t][0].p == doctest::Approx(ablated_padded.next[t][0].p).epsilon(1e-6));
  // a cut of a padding key is refused (it is hidden already); padding that leaves no token too
  attn::Intervention cut_padding;
  cut_padding.cuts = {{0, 0, 1, 5}};
  CHECK_THROWS_AS(attn::validate_intervention(m.config, 6, cut_padding, 2), std::invalid_argument);
  o.intervention = nullptr;
  o.padding = 6;
  CHECK_THROWS_AS(attn::transformer_forward(m, padded, o), std::invalid_argument);
}

TEST_CASE("encoder: attribution refuses with its reason; without a masked-LM head no predictions") {
  const attn::Transformer m = random_encoder(7);
  const attn::ModelTrace trace = attn::transformer_forward(m, {1, 2, 3});
  try {
    attn::attribute_logit(m, trace, 1, 4);
    FAIL("attribute_logit accepted an encoder");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("post-norm") != std::string::npos);
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
  attn::TransformerConfig headless = tiny_encoder();
  headless.has_lm_head = headless.head_transform = headless.head_bias = false;
  const attn::Transformer h = attn::random_transformer(headless, 3, attn::Dtype::F32, attn::WeightLayout::OutIn, 0.5);
  CHECK(h.head_dense.empty());
  CHECK(h.lm_head_b.size() == 0);
  const attn::ModelTrace t = attn::transformer_forward(h, {1, 2, 3});
  for (const auto& next : t.next) CHECK(next.empty());
  CHECK(attn::next_tokens_at(h, t, 1, 3).empty());
  CHECK_THROWS_AS(attn::logits_at(h, t, 1), std::invalid_argument);
  // the parameter count: the head's dense, norm and bias counted, the tied decoder not
  CHECK(m.parameter_count() - h.parameter_count() == 4 * 4 + 4 + 4 + 4 + 9);
  // the bytes the loader plans with are the bytes the model takes, with and without the head
  CHECK(attn::transformer_weight_bytes(m.config, attn::Dtype::F32) == m.weight_bytes());
  CHECK(attn::transformer_weight_bytes(h.config, attn::Dtype::F32) == h.weight_bytes());
  CHECK(m.weight_bytes() - h.weight_bytes() == 4 * (4 * 4 + 4 + 4 + 4 + 9));
}

TEST_CASE("encoder configs: bert, distilbert, roberta read; refusals name the field") {
  const std::string bert = R"({"model_type": "bert", "hidden_size": 36, "num_hidden_layers": 2, "num_attention_heads": 3,
    "intermediate_size": 52, "vocab_size": 100, "max_position_embeddings": 40, "type_vocab_size": 2})";
  const attn::TransformerConfig c = attn::parse_model_config(bert).config;
  CHECK(!c.causal);
  CHECK(c.post_norm);
  CHECK(c.embed_norm);
  CHECK(c.n_token_types == 2);
  CHECK(c.position_offset == 0);
  CHECK(c.norm_eps == 1e-12f);
  CHECK(c.activation == attn::Activation::GeluErf);
  CHECK(c.head_dim == 12);
  const attn::TransformerConfig r = attn::parse_model_config(R"({"model_type": "roberta", "hidden_size": 36,
    "num_hidden_layers": 2, "num_attention_heads": 3, "intermediate_size": 52, "vocab_size": 100,
    "max_position_embeddings": 42, "type_vocab_size": 1, "pad_token_id": 1, "layer_norm_eps": 1e-5})").config;
  CHECK(r.position_offset == 2);
  CHECK(r.norm_eps == 1e-5f);
  const attn::TransformerConfig d = attn::parse_model_config(R"({"model_type": "distilbert", "dim": 30, "n_layers": 2,
    "n_heads": 5, "hidden_dim": 44, "vocab_size": 100, "sinusoidal_pos_embds": true})").config;
  CHECK(d.n_token_types == 0);
  CHECK(d.n_positions == 512);
  CHECK(d.head_dim == 6);
  const auto refusal = [](const std::string& text) {
    try {
      attn::parse_model_config(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  std::string zero_types = bert;
  zero_types.replace(zero_types.find("\"type_vocab_size\": 2"), 20, "\"type_vocab_size\": 0");
  CHECK(refusal(zero_types).rfind("config.json: type_vocab_size is 0", 0) == 0);
  std::string relu = bert;
  relu.insert(1, "\"hidden_act\": \"relu\", ");
  CHECK(refusal(relu).rfind("config.json: hidden_act \"relu\" is not supported", 0) == 0);
  CHECK(refusal(R"({"model_type": "modernbert"})").find("both sides") != std::string::npos);
  // the names: one table per family, the head beside the base model
  CHECK(attn::head_tensor("bert") == "cls.predictions.decoder.weight");
  CHECK(attn::family_alias("bert", "cls.predictions.decoder.bias") == "cls.predictions.bias");
  CHECK(attn::family_alias("bert", "embeddings.LayerNorm.gamma") == "embeddings.LayerNorm.weight");
  CHECK(attn::family_head_part("roberta", "lm_head.dense.weight"));
  CHECK(!attn::family_head_part("roberta", "encoder.layer.0.output.dense.weight"));
  CHECK(attn::family_ignores_tensor("bert", "bert.pooler.dense.weight"));
}
