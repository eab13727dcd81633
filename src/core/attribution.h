// Asking a model why: what each part adds to one logit, what a head's weights carry once its values
// are counted, how attention composes across layers, and sweeps that switch off or patch one head
// (or one stream row) at a time. Pure maths over the forward of transformer.h; no family, no UI.
#pragma once
#include <functional>
#include <vector>

#include "transformer.h"

namespace attn {

// Direct logit attribution at one position: the final stream is a sum (the embedding, then per
// layer each head's output through its rows of W_O, the attention's b_O and the MLP's update), and
// with the final norm's scale frozen from this run (its 1/rms, and its mean for LayerNorm) the logit
// is linear in that sum, so each part's logit adds up to the run's logit up to the norm's bias
// (`offset`). With sandwich norms (Gemma) each post-attention norm's scale is frozen from the run too
// and the heads' parts are exact for this run only. The logit is the one before a final soft-cap.
// `against` ≥ 0: every number is for the logit of target minus that of against.
struct LogitAttribution {
  int position = 0, target = 0, against = -1;
  double logit = 0;       // the run's own (from its final normed row)
  double offset = 0;      // the final norm's bias through the unembedding (0 for RMSNorm)
  double embeddings = 0;  // the stream entering layer 0: token embedding (· scale) + learned position
  Matrix heads;           // (L, H)
  Vector biases;          // (L) each attention's b_O
  Vector mlps;            // (L) each MLP's update (read off the streams: the next layer's minus this one's and the attention's update)
  bool post_norms_frozen = false;
  double sum() const;     // offset + embeddings + heads + biases + mlps
};
// Throws std::invalid_argument for a position or token outside the model, a run whose stream at
// `position` was patched (its parts before the patch are not in the sum), or a model whose logit is not
// such a sum (post-norm blocks or a masked-LM head's transform: an encoder's; or no LM head), with one
// line saying why.
LogitAttribution attribute_logit(const Transformer& model, const ModelTrace& trace, int position, int target,
                                 int against = -1, Backend backend = Backend::Simd);
// The same for the text a cache holds (cache.trace), each layer's row read from what the cache keeps
// (cached_layer_rows) instead of every layer computed again: milliseconds where the other takes a
// forward's time. The numbers: the trace's own to float rounding.
LogitAttribution attribute_logit(const Transformer& model, const ForwardCache& cache, int position, int target,
                                 int against = -1, Backend backend = Backend::Simd);
// Whether a model's logit is a sum of parts that attribute_logit can read (an LM head, pre-norm
// blocks, a linear head); "" when it is, else the one line saying why not (what attribute_logit throws).
std::string why_no_attribution(const TransformerConfig& config);

// Weights are not influence (Kobayashi et al., 2020): what key j sends to query i through head h is
// α_ij · v_j W_O^h, so its size is α_ij · ‖v_j W_O^h‖ — a large weight on a value the head's W_O
// shrinks moves little. `value_norms` (T): ‖v_j W_O^h‖; `weighted` (T, T): α_ij · value_norms[j].
struct ValueWeighted {
  Matrix weighted;
  Vector value_norms;
};
ValueWeighted value_weighted(const TransformerConfig& config, const TransformerBlock& block, const LayerDetail& detail,
                             int head, Backend backend = Backend::Simd);

// Around the chosen head at the selected token: what the layer does with the heads' outputs. Lengths
// (Euclidean norms) of the residual stream entering the layer, of what the attention adds (W_O over
// the joined heads, + b_O, normed where the model has sandwich norms), of what the MLP adds and of
// the stream leaving; and each head's part of the attention's output (its output × its rows of W_O).
struct AroundHeadView {
  bool loaded = false;
  int head = 0, token = 0;
  float stream_in = 0, attention_update = 0, mlp_update = 0, stream_out = 0;
  std::vector<float> head_parts;  // ‖part_h‖ for each head
  // part_h · u / ‖u‖², u the heads' parts summed with b_O: how much of the update's length along its
  // own direction head h brings (they and b_O's add up to 1; negative: it pushes the other way).
  // Not defined past a post-attention norm (sandwich norms): `shares_add_up` is false there.
  std::vector<float> head_shares;
  bool shares_add_up = true;
};
AroundHeadView around_head(const TransformerConfig& config, const TransformerBlock& block, const LayerDetail& detail,
                           int head, int token);

// Attention rollout (Abnar and Zuidema, 2020): each layer's weights averaged over its heads, the
// residual counted as half of what a token keeps (0.5·A + 0.5·I, rows renormalised), multiplied
// through the layers: result[l] (T, T) says how much of token j reaches token i's stream after layer
// l, if mixing were all a layer did (it ignores W_O, the values' sizes and the MLPs).
Matrix head_mean_weights(const LayerDetail& detail);
std::vector<Matrix> attention_rollout(const std::vector<Matrix>& layer_mean_weights);

// log p(token) after `position` in this run (the whole vocabulary's softmax, after any final cap).
double token_log_prob(const Transformer& model, const ModelTrace& trace, int position, int token,
                      Backend backend = Backend::Simd);
// How much of the A/B difference a patched run restores: (patched − b) / (a − b); NaN ("no difference
// to restore") when |a − b| < kMinRestorable.
constexpr double kMinRestorable = 0.01;
double restored_fraction(double patched, double a, double b);

// Two runs of one model on twin texts (as many tokens, e.g. one word swapped) asked at one position
// about one layer's heads: each text's likeliest next token; each head's direct share (attribute_logit)
// of logit(target) − logit(against) in A and in B; and, where the reruns are few enough to run between
// frames (kAskReruns layer runs at most), what each text answers with that head switched off (zeroed).
struct AskedHead {
  float share_a = 0, share_b = 0;     // direct share of logit(target) − logit(against)
  int answer_a = -1, answer_b = -1;   // the likeliest next token with the head zeroed (-1: not computed)
  float delta_a = 0, delta_b = 0;     // Δ log p of the text's own answer with the head zeroed
};
struct TwinAsk {
  bool shown = false;
  int position = 0, layer = 0;
  int answer_a = -1, answer_b = -1;   // the likeliest next token in A and in B
  float p_a = 0, p_b = 0;
  int target = -1, against = -1;      // what is measured: logit(target) − logit(against); against -1: logit(target)
  float difference_a = 0, difference_b = 0;  // that number in A and in B
  float rest_a = 0, rest_b = 0;       // the share of everything but this layer's heads (embeddings, MLPs, …)
  bool ablated = false;               // the heads' answers with each switched off were computed
  std::vector<AskedHead> heads;
};
constexpr int kAskReruns = 48;  // heads × layers rerun, both texts together
// Not shown (shown false) for texts of unequal lengths, a position or layer outside them, or a model
// attribute_logit cannot read (why_no_attribution). This one measures B's answer against A's (A's
// alone where they agree).
TwinAsk ask_twins(const Transformer& model, const ModelTrace& a, const ModelTrace& b, int position, int layer);
// ... and this one logit(target) − logit(against) (against −1: logit(target)); target must be a token.
TwinAsk ask_twins(const Transformer& model, const ModelTrace& a, const ModelTrace& b, int position, int layer, int target,
                  int against);

// Sweeps: one intervention per cell, each rerun from its layer (rerun_forward). `progress(done,
// total)` after each cell; it returns false to stop, leaving the cells not reached NaN. A stopped
// sweep passed back as `resume` (same model, runs and request) continues from its next cell, with
// the same numbers as one uninterrupted sweep (a page runs a few cells per frame so).
using SweepProgress = std::function<bool(int done, int total)>;
struct Sweep {
  Matrix values;           // (L, H) for heads, (L, T) for stream positions
  double baseline = 0;     // the metric of the unchanged run (B's for patching)
  double source = 0;       // patching: A's metric
  int done = 0;
  bool cancelled = false;
};
// Each head ablated alone: Δ log p(target) at `position` against the unablated run.
Sweep ablation_sweep(const Transformer& model, const ModelTrace& base, int position, int target, AblateKind kind,
                     const SweepProgress& progress = {}, Backend backend = Backend::Simd, const Sweep* resume = nullptr);
// Each head's output (or each layer's stream at each position) copied from `source` (A) into `base`
// (B), both runs of as many tokens: the fraction of log p_A − log p_B of target it restores.
Sweep head_patch_sweep(const Transformer& model, const ModelTrace& source, const ModelTrace& base, int position,
                       int target, const SweepProgress& progress = {}, Backend backend = Backend::Simd,
                       const Sweep* resume = nullptr);
Sweep stream_patch_sweep(const Transformer& model, const ModelTrace& source, const ModelTrace& base, int position,
                         int target, const SweepProgress& progress = {}, Backend backend = Backend::Simd,
                         const Sweep* resume = nullptr);
// What a patch copies: head `head`'s output (T, head_dim), or the stream entering `layer` at
// `position` (C), of the run `source`.
HeadPatch head_patch_from(const Transformer& model, const ModelTrace& source, int layer, int head,
                          Backend backend = Backend::Simd);
StreamPatch stream_patch_from(const Transformer& model, const ModelTrace& source, int layer, int position,
                              Backend backend = Backend::Simd);

}  // namespace attn
