// What the views show of a model family's own attention (rotary positions, grouped K/V heads, sliding
// windows, soft-capping, q/k norm, the K/V cache), computed once per input change from the forward
// pass and the chosen head's trace. Plain numbers a unit test reads; no ImGui, nothing drawn here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../core/attention.h"
#include "../core/transformer.h"

namespace attn {

// Query heads first_head … last_head (0-based) read K/V head kv_head.
struct HeadGroup {
  int kv_head = 0, first_head = 0, last_head = 0;
};
std::vector<HeadGroup> head_groups(const TransformerConfig& config);
// "Heads 1–4 share K/V head 1, heads 5–8 share K/V head 2." (1-based, as a learner counts; shortened
// with "…" past 4 groups), "Every head has its own keys and values." without sharing, "All 8 heads
// share one K/V head." with one.
std::string head_groups_text(const TransformerConfig& config);
// "local (window 4)" or "global" for a layer.
std::string layer_kind_text(const TransformerConfig& config, int layer);

// Why there are positions at all, for every model: what attention alone does with order.
constexpr const char* kWhyPositions =
    "Attention itself ignores order: without positions and without the causal mask, shuffle the tokens and each "
    "output moves with its token, unchanged, as if the text were a bag of words. The causal mask alone already "
    "breaks that symmetry (each token sees a different number of others), and models trained with the mask but no "
    "positions still come to know where their tokens stand in later layers (Haviv et al., 2022). So a head that "
    "reads the previous token shows that the model knows order, not how it was given.";

// How the chosen head's scores depend on where two tokens stand.
struct PositionsView {
  bool rope = false;       // q and k are rotated by their positions (else: learned table, or no positions)
  bool learned = false;    // a learned position table was added to X before the first layer
  int query_token = 0;     // position i of the selected token
  int key_token = 0;       // position j of the key shown with it (its largest weight before itself)
  int head_dim = 0;
  double theta = 0;        // the layer's RoPE base
  std::vector<double> inv_freq;  // (head_dim / 2): how fast each dimension pair turns per position
  Vector q_before, q_after;      // (head_dim): the head's q of token i before RoPE (after any q norm), after
  Vector k_before, k_after;      // its K/V head's k of token j, likewise
  float score_factor = 1;        // what q·k is multiplied by in this head (as its trace)
  // by_distance[d], d = 0 … T − 1: the score of the same two unrotated vectors rotated as if the
  // query sat d positions after the key, × score_factor. by_distance[i − j] is the head's real score.
  std::vector<float> by_distance;
};

// What the K/V cache holds for the loaded model at T tokens (2: a key and a value per K/V head).
struct KvCacheView {
  bool available = false;  // a loaded model (the hand-made one has no cache to speak of)
  int n_layer = 0, n_head = 0, n_kv_head = 0, head_dim = 0, T = 0;
  int bytes_per_number = 4;            // the width its weights are stored in (2 for F16 / BF16)
  std::int64_t per_token_layer = 0;    // 2 · n_kv_head · head_dim numbers
  std::int64_t per_token_layer_unshared = 0;  // 2 · n_head · head_dim (every head its own K and V)
  std::vector<int> tokens_held;        // per layer: min(T, window) for a sliding-window layer, else T
  std::int64_t numbers = 0;            // Σ layers per_token_layer · tokens_held
  std::int64_t numbers_unshared = 0;   // the same without sharing (same windows)
  std::int64_t numbers_no_window = 0;  // sharing, but every layer holding all T tokens
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(numbers) * static_cast<std::uint64_t>(bytes_per_number); }
  std::uint64_t bytes_unshared() const { return static_cast<std::uint64_t>(numbers_unshared) * static_cast<std::uint64_t>(bytes_per_number); }
  std::uint64_t bytes_no_window() const { return static_cast<std::uint64_t>(numbers_no_window) * static_cast<std::uint64_t>(bytes_per_number); }
};
KvCacheView kv_cache_view(const TransformerConfig& config, int T, int bytes_per_number);

// Gemma 2's cap on the chosen head's scores, for the selected token's row.
struct SoftcapView {
  bool on = false;
  float cap = 0;
  std::vector<float> scaled_row, capped_row;  // (T): before and after tanh(s / cap) · cap (masked keys too)
  float largest_scaled = 0, largest_capped = 0;  // largest |score| over the head's visible scores
  float largest_change = 0;                      // largest |scaled − capped| over them
};

// Qwen 3's and Gemma 3's norm over each head's q and k (before RoPE).
struct QkNormView {
  bool on = false;
  Matrix q_before, q_after;  // (T, head_dim): the chosen head's q = x·W_Q, then normed
  Matrix k_before, k_after;  // (T, head_dim): its K/V head's k
  std::vector<float> q_rms_before, q_rms_after, k_rms_before, k_rms_after;  // (T): each row's root mean square
};

struct FamilyViews {
  bool loaded = false;  // a loaded model (else the hand-made one: no family features)
  int layer = 0, head = 0, kv_head = 0;
  int window = 0;       // the chosen layer's window (0: full attention)
  int T = 0;
  PositionsView positions;
  KvCacheView cache;
  SoftcapView softcap;
  QkNormView qk_norm;
};

// The family views of layer `layer`, head `head` for the selected token `token`: `trace` is that head's
// AttentionTrace as the app computed it (its factor and cap), `detail` that layer of the model's pass.
FamilyViews family_views(const TransformerConfig& config, const LayerDetail& detail, const AttentionTrace& trace,
                         int layer, int head, int token, int bytes_per_number);

// The score of q and k (head_dim each, unrotated) when the query sits `query_position` and the key
// `key_position`, both rotated by `rope` at those positions, × factor (a direct computation).
float rotated_score(const Vector& q, const Vector& k, const RopeConfig& rope, int query_position, int key_position,
                    float factor);

}  // namespace attn
