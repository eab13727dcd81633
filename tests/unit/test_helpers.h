// Small helpers shared by the unit tests: matrices from literals, random matrices, error metrics, a
// small Llama-style configuration.
// Not a test framework: doctest is.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "../../src/core/matrix.h"
#include "../../src/core/random.h"
#include "../../src/core/transformer.h"

namespace attn::test {

inline Matrix rows(std::initializer_list<std::initializer_list<float>> values) {
  Matrix m(static_cast<Eigen::Index>(values.size()), static_cast<Eigen::Index>(values.begin()->size()));
  Eigen::Index i = 0;
  for (const auto& row : values) {
    Eigen::Index j = 0;
    for (float v : row) m(i, j++) = v;
    ++i;
  }
  return m;
}

inline Matrix random_matrix(Rng& rng, int r, int c, float spread = 1.0f) {
  Matrix m(r, c);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) m(i, j) = static_cast<float>(rng.normal()) * spread;
  return m;
}

// max |a - b| / max(max |reference|, 1e-30): the "relative" error used for every fast path.
inline double relative_error(const Matrix& got, const Matrix& reference) {
  const double scale = std::max(static_cast<double>(reference.cwiseAbs().maxCoeff()), 1e-30);
  return static_cast<double>((got - reference).cwiseAbs().maxCoeff()) / scale;
}

// A Llama-style block of the given make-up (RMSNorm, RoPE, SwiGLU with d_ff = 3 · d_model, no biases).
inline TransformerConfig tiny_llama(int layers, int heads, int kv_heads, int head_dim, int embd, int vocab = 23) {
  TransformerConfig c;
  c.family = "llama";
  c.n_layer = layers, c.n_head = heads, c.n_kv_head = kv_heads, c.head_dim = head_dim, c.d_model = embd;
  c.d_ff = 3 * embd, c.vocab_size = vocab;
  c.norm = NormKind::RmsNorm, c.norm_eps = 1e-6f;
  c.positions = PositionKind::Rope;
  c.layers.assign(static_cast<std::size_t>(layers), LayerSpec{});
  c.score_scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  c.gated_mlp = true, c.activation = Activation::Silu;
  return c;
}

// Post-norm BERT blocks: C 8, 2 heads of 4, d_ff 12, 2 layers, 16 positions, 2 token types; the masked-LM
// head where `head`.
inline TransformerConfig tiny_bert(bool head = true) {
  TransformerConfig c;
  c.family = "bert";
  c.n_layer = 2, c.n_head = c.n_kv_head = 2, c.head_dim = 4, c.d_model = 8, c.d_ff = 12, c.vocab_size = 16;
  c.n_positions = 16, c.n_token_types = 2;
  c.norm = NormKind::LayerNorm, c.norm_eps = 1e-12f;
  c.layers.assign(2, LayerSpec{});
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.score_scale = 0.5f;
  c.activation = Activation::GeluErf;
  c.causal = false, c.post_norm = true, c.embed_norm = true;
  c.has_lm_head = c.head_transform = c.head_bias = head;
  return c;
}

// tiny_bert's WordPiece vocabulary (vocab.txt): [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4, then 11 words.
inline constexpr const char* kBankVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\nsat\non\nmat\nbank\nriver\nmoney\ni\nput\nmy\n";

// A UTF-32 literal as the code points the normalizers take.
using Codes = std::vector<std::uint32_t>;
inline Codes code_points(const std::u32string& s) { return Codes(s.begin(), s.end()); }

}  // namespace attn::test
