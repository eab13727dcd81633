// The GPT-2 forward: numbers worked out by hand on tiny models, the fast path against the scalar
// reference, the head trace against the stored weights, and refused inputs.
// (The forward against PyTorch on random models: tests/cli/model.test.mjs.)
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "../../src/core/gpt2.h"

namespace {
attn::Gpt2Config tiny(int layers, int heads, int embd, int vocab = 11, int positions = 16) {
  attn::Gpt2Config c;
  c.n_layer = layers, c.n_head = heads, c.n_embd = embd, c.n_positions = positions, c.vocab_size = vocab;
  return c;
}
}  // namespace

TEST_CASE("gpt2: with zero projections every query spreads its weight evenly over the past") {
  // All of c_attn is zero, so every score is 0: causal softmax gives 1/(t+1) to keys 0…t and
  // exactly 0 to the future, in every layer and head.
  attn::Gpt2Model m(tiny(2, 2, 4));
  for (auto& b : m.blocks) b.ln_1_g.setOnes(), b.ln_2_g.setOnes();
  m.ln_f_g.setOnes();
  const attn::ModelTrace t = attn::gpt2_forward(m, {1, 2, 3, 4});
  REQUIRE(t.layers.size() == 2);
  for (const auto& layer : t.layers) {
    REQUIRE(layer.weights.size() == 2);
    for (const attn::Matrix& w : layer.weights)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) CHECK(w(i, j) == (j <= i ? doctest::Approx(1.0 / (i + 1)) : doctest::Approx(0.0)));
  }
  // Zero embeddings, zero weights: every logit is 0 (ln_f of a zero row is its bias, 0), so every
  // next token is equally likely: 1/11.
  for (int t_ = 0; t_ < 4; ++t_) CHECK(t.probs(t_, 5) == doctest::Approx(1.0 / 11));
}

TEST_CASE("gpt2: one layer, one head, worked by hand") {
  // C = 2, ln_1 gains 1, biases 0: LayerNorm of (a, b) with a ≠ b is (±1, ∓1) (up to ε).
  // Token 0 = (1, 0) → x̂ = (1, −1); token 1 = (0, 1) → x̂ = (−1, 1).
  // W_Q = W_K = [[1, 0], [0, 0]] (only the first feature), W_V = identity.
  // q·k for tokens (0, 1) at query 1: q1 = (−1, 0), k0 = (1, 0), k1 = (−1, 0) → scores −1, 1,
  // scaled by 1/√2: w = softmax(−0.7071, 0.7071) = (0.1957, 0.8043).
  attn::Gpt2Model m(tiny(1, 1, 2, 2, 4));
  m.wte << 1, 0, 0, 1;
  attn::Gpt2Block& b = m.blocks[0];
  b.ln_1_g.setOnes(), b.ln_2_g.setOnes();
  b.c_attn_w.setZero();
  b.c_attn_w(0, 0) = 1;  // W_Q
  b.c_attn_w(0, 2) = 1;  // W_K
  b.c_attn_w(0, 4) = 1, b.c_attn_w(1, 5) = 1;  // W_V
  m.ln_f_g.setOnes();
  const attn::ModelTrace t = attn::gpt2_forward(m, {0, 1});
  const attn::Matrix& w = t.layers[0].weights[0];
  CHECK(w(0, 0) == doctest::Approx(1.0));
  CHECK(w(0, 1) == 0.0f);
  CHECK(w(1, 0) == doctest::Approx(0.1957).epsilon(1e-3));
  CHECK(w(1, 1) == doctest::Approx(0.8043).epsilon(1e-3));
  CHECK(t.layers[0].x(0, 0) == doctest::Approx(1.0).epsilon(1e-4));
  CHECK(t.layers[0].x(1, 0) == doctest::Approx(-1.0).epsilon(1e-4));
  // The output row 1 = 0.1957·(1, −1) + 0.8043·(−1, 1) = (−0.6086, 0.6086).
  CHECK(t.layers[0].head_outputs(1, 0) == doctest::Approx(-0.6086).epsilon(1e-3));

  // scale_attn_weights false (Hugging Face's switch): the same scores −1, 1 undivided:
  // w = softmax(−1, 1) = (1/(1 + e²), e²/(1 + e²)) = (0.1192, 0.8808).
  m.config.scale_attn_weights = false;
  const attn::ModelTrace raw = attn::gpt2_forward(m, {0, 1});
  CHECK(raw.layers[0].weights[0](1, 0) == doctest::Approx(0.1192).epsilon(1e-3));
  CHECK(raw.layers[0].weights[0](1, 1) == doctest::Approx(0.8808).epsilon(1e-3));
}

TEST_CASE("gpt2: the fast path agrees with the scalar reference; head traces match; rows sum to 1") {
  for (const auto& cfg : {tiny(1, 1, 8), tiny(2, 3, 12, 37, 20), tiny(3, 4, 16, 50, 33)}) {
    const attn::Gpt2Model m = attn::random_gpt2(cfg, 7);
    std::vector<int> ids;
    for (int i = 0; i < cfg.n_positions - 3; ++i) ids.push_back((i * 7 + 3) % cfg.vocab_size);
    const attn::ModelTrace fast = attn::gpt2_forward(m, ids, attn::Backend::Simd);
    const attn::ModelTrace ref = attn::gpt2_forward(m, ids, attn::Backend::Scalar);
    CHECK((fast.probs - ref.probs).cwiseAbs().maxCoeff() < 1e-5f);
    for (int l = 0; l < cfg.n_layer; ++l)
      for (int h = 0; h < cfg.n_head; ++h) {
        const attn::Matrix& w = fast.layers[l].weights[h];
        CHECK((w - ref.layers[l].weights[h]).cwiseAbs().maxCoeff() < 1e-5f);
        attn::AttentionOptions o;
        o.causal = true;
        const attn::AttentionTrace trace = attn::gpt2_head_trace(fast, l, h, cfg.head_dim(), o);
        CHECK((trace.weights - w).cwiseAbs().maxCoeff() < 1e-5f);
        for (Eigen::Index i = 0; i < w.rows(); ++i) {
          CHECK(w.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
          for (Eigen::Index j = i + 1; j < w.cols(); ++j) CHECK(w(i, j) == 0.0f);
        }
      }
    for (Eigen::Index t = 0; t < fast.probs.rows(); ++t) CHECK(fast.probs.row(t).sum() == doctest::Approx(1.0).epsilon(1e-4));
  }
}

TEST_CASE("gpt2: top next tokens in order, ties by id") {
  attn::ModelTrace t;
  t.probs = attn::Matrix(1, 5);
  t.probs << 0.1f, 0.3f, 0.1f, 0.4f, 0.1f;
  const auto top = attn::top_next_tokens(t, 0, 3);
  REQUIRE(top.size() == 3);
  CHECK(top[0].id == 3);
  CHECK(top[1].id == 1);
  CHECK(top[2].id == 0);  // three-way tie at 0.1: the lowest id
  CHECK(attn::top_next_tokens(t, 1, 3).empty());
}

TEST_CASE("gpt2: refused configs and inputs name the problem") {
  attn::Gpt2Config c = tiny(1, 3, 8);
  CHECK_THROWS_WITH_AS(attn::validate_config(c, "config.json"),
                       doctest::Contains("config.json: n_embd (8) is not divisible by n_head (3)"), std::invalid_argument);
  c = tiny(0, 1, 8);
  CHECK_THROWS_WITH_AS(attn::validate_config(c, "config.json"), doctest::Contains("n_layer is 0"), std::invalid_argument);
  const attn::Gpt2Model m = attn::random_gpt2(tiny(1, 1, 4, 10, 4), 1);
  CHECK_THROWS_WITH_AS(attn::gpt2_forward(m, {}), doctest::Contains("no tokens"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(attn::gpt2_forward(m, {1, 2, 3, 4, 5}), doctest::Contains("at most 4"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(attn::gpt2_forward(m, {10}), doctest::Contains("outside the vocabulary"), std::invalid_argument);
  CHECK(m.parameter_count() == 10 * 4 + 4 * 4 + 2 * 4 + (4 * 4 + 4 * 12 + 12 + 16 + 4 + 4 * 16 + 16 + 64 + 4));
}
