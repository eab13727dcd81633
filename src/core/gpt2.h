// Decoder transformers of the GPT-2 architecture: the parameters in named tensors, the forward pass
// that keeps what every view needs (each layer's normalised input, each head's Q, K, V and weights)
// and the next-token probabilities. Not a loader: src/api/model_files.h turns files into this.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attention.h"
#include "kernels/kernels.h"
#include "matrix.h"

namespace attn {

// The shape of a model (Hugging Face's config.json names in the comments).
struct Gpt2Config {
  int n_layer = 0;      // blocks
  int n_head = 0;       // heads per block; n_embd % n_head == 0
  int n_embd = 0;       // C: width of the residual stream
  int n_positions = 0;  // longest sequence (rows of the position embedding)
  int vocab_size = 0;   // rows of the token embedding
  float layer_norm_epsilon = 1e-5f;
  bool scale_attn_weights = true;  // scores · 1/√head_dim (GPT-2's rule); false: raw q·k (the √d experiment)
  int head_dim() const { return n_head > 0 ? n_embd / n_head : 0; }
  bool operator==(const Gpt2Config& o) const;
};

// Documented limits on a model's shape (past them: refused when the config is read).
constexpr int kMaxModelLayers = 96;
constexpr int kMaxModelHeads = 128;
constexpr int kMaxModelWidth = 8192;
constexpr int kMaxModelPositions = 8192;
constexpr int kMaxVocab = 1 << 20;
// Longest text a model reads in the app, the CLI and modelTrace (also bounded by n_positions).
constexpr int kMaxModelTokens = 1024;

// Throws std::invalid_argument("<what>: ...") when a config is outside the limits or inconsistent
// (n_embd not divisible by n_head, ...).
void validate_config(const Gpt2Config& config, const std::string& what);

// One block: x += attn(ln_1(x)); x += mlp(ln_2(x)). Weights are stored input-major (x · W), the
// Conv1D layout of GPT-2's checkpoints, so c_attn_w is (C, 3C) with Q, K, V side by side.
struct Gpt2Block {
  Vector ln_1_g, ln_1_b;      // (C)
  Matrix c_attn_w;            // (C, 3C): [W_Q | W_K | W_V], head h owns columns h·hd … (h+1)·hd − 1 of each
  Vector c_attn_b;            // (3C)
  Matrix attn_c_proj_w;       // (C, C)
  Vector attn_c_proj_b;       // (C)
  Vector ln_2_g, ln_2_b;      // (C)
  Matrix c_fc_w;              // (C, 4C)
  Vector c_fc_b;              // (4C)
  Matrix mlp_c_proj_w;        // (4C, C)
  Vector mlp_c_proj_b;        // (C)
};

struct Gpt2Model {
  Gpt2Config config;
  Matrix wte;                 // (vocab, C) token embedding; also the LM head unless lm_head is set
  Matrix wpe;                 // (n_positions, C) learned position embedding
  std::vector<Gpt2Block> blocks;
  Vector ln_f_g, ln_f_b;      // (C)
  Matrix lm_head;             // (vocab, C) when the checkpoint has its own, untied; empty: tied to wte

  // Allocates every tensor for `config` (zeros), so a loader can write into them in place.
  explicit Gpt2Model(const Gpt2Config& config);
  Gpt2Model() = default;
  std::int64_t parameter_count() const;  // as Hugging Face counts them (a tied head once)
};

// A model with N(0, 0.02) weights, unit LayerNorm gains and zero biases (GPT-2's initialisation),
// deterministic for a seed: for tests and benchmarks.
Gpt2Model random_gpt2(const Gpt2Config& config, std::uint64_t seed);

// What a model computed for a sequence of T tokens: every layer and head. The hand-made worked
// example fills the same structs as a 1-layer, 1-head model without probabilities.
// What one layer computed.
struct LayerTrace {
  Matrix x;                     // (T, C) ln_1 output: the X the layer's heads project
  Matrix query, key, value;     // (T, C) each: head h is columns h·hd … (h+1)·hd − 1
  std::vector<Matrix> weights;  // per head (T, T), causal: exactly 0 above the diagonal
  Matrix head_outputs;          // (T, C): every head's weights · V, side by side, before c_proj
};

struct ModelTrace {
  std::vector<int> token_ids;
  std::vector<LayerTrace> layers;
  Matrix probs;                 // (T, vocab): softmax of the logits at every position (empty: none)
};

// The k most likely next tokens after position `position` (ties: the lower id first).
struct NextToken {
  int id = 0;
  float p = 0;
};
std::vector<NextToken> top_next_tokens(const ModelTrace& trace, int position, int k);

// The whole forward pass. Attention runs through attention_forward(backend, ...) per head with the
// causal mask and 1/√hd; the matrix products through the matmul kernels. Throws
// std::invalid_argument for no tokens, too many (> n_positions or kMaxModelTokens) or an id
// outside the vocabulary.
ModelTrace gpt2_forward(const Gpt2Model& model, const std::vector<int>& token_ids, Backend backend = Backend::Simd);

// One head of one layer as the lesson's full trace (raw, scaled, masked scores, weights, output),
// recomputed by the scalar reference attend() from that head's Q, K, V. `options.causal` is
// what GPT-2 does (on); the views may switch mistakes, the scale or the temperature on top.
AttentionTrace gpt2_head_trace(const ModelTrace& trace, int layer, int head, int head_dim,
                               const AttentionOptions& options);

// Head h's slices of the layer's W_Q, W_K, W_V: (C, hd) each.
Matrix gpt2_head_w(const Gpt2Block& block, int head, int head_dim, int which /* 0 Q, 1 K, 2 V */);

}  // namespace attn
