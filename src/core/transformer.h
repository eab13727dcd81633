// Transformers of every family the explainer opens (the decoders GPT-2, Llama, Mistral, Qwen, Gemma
// and the encoders BERT, DistilBERT, RoBERTa) as ONE configuration of what a block is made of, one set of named tensors and one forward pass that
// keeps what the views show. Not a loader: src/api/model_files.h turns files (and family names)
// into this; nothing here knows a family's name or its tensor names.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attention.h"
#include "dtype.h"
#include "head_summary.h"
#include "kernels/kernels.h"
#include "matrix.h"

namespace attn {

enum class NormKind { LayerNorm, RmsNorm };                   // LayerNorm: mean and bias too
enum class PositionKind { Learned, Rope };                    // added to X, or rotating q and k
enum class Activation { GeluTanh, GeluErf, Silu };
enum class RopeScaling { None, Linear, Llama3, Yarn };       // the rope_scaling types checkpoints use
const char* norm_kind_name(NormKind k);                       // "layernorm" | "rmsnorm"
const char* position_kind_name(PositionKind k);               // "learned" | "rope"
const char* activation_name(Activation a);                    // "gelu_tanh" | "gelu" | "silu"
const char* rope_scaling_name(RopeScaling s);                 // "none" | "linear" | "llama3" | "yarn"

// Rotary positions in Hugging Face's convention: dimension i of a head turns together with
// dimension i + head_dim/2, by the angle position · inv_freq[i], inv_freq[i] = theta^(−2i/head_dim)
// before scaling.
struct RopeConfig {
  double theta = 10000.0;
  RopeScaling scaling = RopeScaling::None;
  double factor = 1.0;                               // linear, llama3, yarn
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  int original_max_positions = 0;                    // llama3, yarn: the context trained before scaling
  double beta_fast = 32.0, beta_slow = 1.0;          // yarn
  double attention_factor = 1.0;                     // yarn: cos and sin are multiplied by it
  bool truncate = true;                              // yarn: round the correction range outwards
  bool operator==(const RopeConfig& o) const;
};

// What one layer's attention does beyond the model-wide settings.
struct LayerSpec {
  int window = 0;   // 0: full attention; w > 0: query i sees keys i − w + 1 … i only
  RopeConfig rope;  // per layer (Gemma 3's local layers use another theta and no scaling)
  bool operator==(const LayerSpec& o) const { return window == o.window && rope == o.rope; }
};

// The shape and make-up of a model. Every field says what the block does; none says which family.
struct TransformerConfig {
  std::string family;       // config.json's model_type, shown to the learner; never branched on
  int n_layer = 0;          // blocks
  int n_head = 0;           // query heads per block
  int n_kv_head = 0;        // key/value heads per block; n_head % n_kv_head == 0 (grouped-query attention)
  int head_dim = 0;         // width of one head's q, k and v (not always d_model / n_head)
  int d_model = 0;          // C: width of the residual stream
  int d_ff = 0;             // width of the MLP's hidden layer
  int vocab_size = 0;       // rows of the token embedding
  int n_positions = 0;      // learned positions: rows of the position table; RoPE: 0 (no table)
  NormKind norm = NormKind::LayerNorm;
  bool norm_plus_one = false;   // RMSNorm multiplies by (1 + w) (Gemma), not by w
  float norm_eps = 1e-5f;
  bool sandwich_norms = false;  // a norm also on each sublayer's output, before it is added (Gemma 2 / 3)
  PositionKind positions = PositionKind::Learned;
  std::vector<LayerSpec> layers;  // n_layer entries
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  bool qk_norm = false;         // an RMSNorm over head_dim on each head's q and k, before RoPE
  float attn_softcap = 0;       // > 0: scaled scores become tanh(s / c) · c before the mask
  float final_softcap = 0;      // > 0: the logits likewise
  float score_scale = 0;        // what q·k is multiplied by (1/√head_dim, Gemma's query_pre_attn_scalar^−½, or 1)
  float embed_scale = 1;        // the token embedding is multiplied by it (Gemma: √d_model)
  bool gated_mlp = false;       // act(x·W_gate) ⊙ (x·W_up), then ·W_down; else act(x·W_up)·W_down
  Activation activation = Activation::GeluTanh;
  bool causal = true;           // a decoder: query i never sees a later key; false: an encoder, every query sees every key
  // What an encoder's blocks and head do (all off for a decoder):
  bool post_norm = false;       // x = norm(x + attn(x)); x = norm(x + mlp(x)) with the attention's and the MLP's norm
                                // weights, nothing normed before a sublayer, and no final norm (the last block ends with one)
  bool embed_norm = false;      // a LayerNorm on the embeddings' sum before layer 0 (its own weight and bias)
  int n_token_types = 0;        // rows of the token-type table added to the embedding (0: none)
  int position_offset = 0;      // learned positions: token t reads row t + offset (RoBERTa: padding_idx + 1)
  bool has_lm_head = true;      // false: no LM head (an encoder whose file has no masked-LM head): no predictions
  bool head_transform = false;  // before the LM head: a dense layer (C → C, with bias), the activation and a
                                // LayerNorm (the masked-LM head's transform)
  bool head_bias = false;       // the LM head adds its own bias (V) to the logits

  int kv_group() const { return n_kv_head > 0 ? n_head / n_kv_head : 0; }  // query heads per K/V head
  int kv_head_of(int head) const { return kv_group() > 0 ? head / kv_group() : 0; }
  int q_width() const { return n_head * head_dim; }
  int kv_width() const { return n_kv_head * head_dim; }
  bool any_window() const;
  bool operator==(const TransformerConfig& o) const;
};

// Documented limits on a model's shape (past them: refused when the config is read).
constexpr int kMaxModelLayers = 128;
constexpr int kMaxModelHeads = 128;
constexpr int kMaxModelWidth = 16384;      // d_model and n_head · head_dim
constexpr int kMaxModelHeadDim = 512;
constexpr int kMaxModelFfWidth = 65536;
constexpr int kMaxModelPositions = 8192;   // rows of a learned position table
constexpr int kMaxVocab = 1 << 20;
// Longest text a model reads in the app, the CLI and modelTrace (a learned table bounds it too).
constexpr int kMaxModelTokens = 1024;

// Throws std::invalid_argument("<what>: ...") when a config is outside the limits or inconsistent.
void validate_config(const TransformerConfig& config, const std::string& what);

// std::allocator, except that a vector's resize leaves its new numbers unset: a loader that writes every
// number at once skips a pass of zeros over the whole model (418 MB for BERT-base: most of its parse time).
template <class T>
struct UnsetAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UnsetAllocator<U>;
  };
  UnsetAllocator() = default;
  template <class U>
  UnsetAllocator(const UnsetAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};

// A weight matrix kept as the file gave it: float, or 16-bit (F16 / BF16) widened inside the matmul.
// rows × cols as stored. `transposed`: stored (out, in), used as x·Wᵀ (nn.Linear, the embedding as
// the LM head); else stored (in, out), used as x·W (GPT-2's Conv1D).
struct Weights {
  Dtype dtype = Dtype::F32;
  int rows = 0, cols = 0;
  bool transposed = false;
  std::vector<float, UnsetAllocator<float>> f32;
  std::vector<std::uint16_t, UnsetAllocator<std::uint16_t>> u16;

  // Zeros, or (zeros = false) numbers unset: the caller writes every one before anything reads them.
  void allocate(Dtype dtype, int rows, int cols, bool transposed, bool zeros = true);
  bool empty() const { return rows == 0 || cols == 0; }
  int in() const { return transposed ? cols : rows; }
  int out() const { return transposed ? rows : cols; }
  std::int64_t size() const { return static_cast<std::int64_t>(rows) * cols; }
  std::size_t bytes() const { return static_cast<std::size_t>(size()) * dtype_bytes(dtype); }
  void* data() { return dtype == Dtype::F32 ? static_cast<void*>(f32.data()) : static_cast<void*>(u16.data()); }
  float at(int row, int col) const;   // as stored
  Vector row(int r) const;            // one stored row, widened (an embedding's token)
  // Outputs [first, first + n) as an (in, n) float matrix: x · this = those outputs (a head's W_Q).
  Matrix output_columns(int first, int n) const;
  bool operator==(const Weights& o) const;
};

// One block. Post-norm (an encoder): x = attn_norm(x + attn(x)); x = mlp_norm(x + mlp(x)). With sandwich norms: x += post_attn(attn(attn_norm(x))); x += post_mlp(mlp(mlp_norm(x)));
// without: x += attn(attn_norm(x)); x += mlp(mlp_norm(x)).
struct TransformerBlock {
  Vector attn_norm_w, attn_norm_b;  // (C); b empty without a bias (RMSNorm)
  Weights qkv;                      // C → (n_head + 2·n_kv_head)·hd: every query head, then key heads, then value heads
  Vector qkv_b;                     // ((n_head + 2·n_kv_head)·hd), or empty
  Vector q_norm_w, k_norm_w;        // (hd) when qk_norm
  Weights o;                        // n_head·hd → C
  Vector o_b;                       // (C) or empty
  Vector post_attn_norm_w;          // (C) with sandwich norms
  Vector mlp_norm_w, mlp_norm_b;
  Weights up;                       // C → d_ff, or gated C → 2·d_ff: [gate | up]
  Vector up_b;
  Weights down;                     // d_ff → C
  Vector down_b;
  Vector post_mlp_norm_w;
};

// How the loader found the block's matrices stored: (in, out) used as x·W (GPT-2's Conv1D), or
// (out, in) used as x·Wᵀ (nn.Linear: every other family). Each file streams in as it is stored.
enum class WeightLayout { InOut, OutIn };

struct Transformer {
  TransformerConfig config;
  Weights embed;                    // (vocab, C), transposed: a row per token; the LM head too unless lm_head is set
  Weights position_table;           // (n_positions, C) learned positions, else empty
  std::vector<TransformerBlock> blocks;
  Vector final_norm_w, final_norm_b;  // empty with post_norm (no final norm)
  Weights lm_head;                  // (vocab, C) transposed when the checkpoint has its own head; empty: tied
  // encoders
  Weights token_type_table;         // (n_token_types, C), else empty
  Vector embed_norm_w, embed_norm_b;  // (C) with embed_norm
  Weights head_dense;               // C → C with head_transform (stored as the layout says)
  Vector head_dense_b, head_norm_w, head_norm_b;  // (C) each with head_transform
  Vector lm_head_b;                 // (vocab) with head_bias

  // Allocates every tensor for `config` (zeros, float or `dtype`), so a loader can write in place; with
  // zero_matrices = false the matrices' numbers are left unset (the loader writes every one, or zeroes it).
  // Norm weights and biases are always float (small, zeros); the matrices take `dtype`.
  Transformer(const TransformerConfig& config, Dtype dtype, WeightLayout layout, bool zero_matrices = true);
  Transformer() = default;
  std::int64_t parameter_count() const;  // as Hugging Face counts them (a tied head once)
  std::uint64_t weight_bytes() const;    // memory the weights take as held
  // Every tensor's numbers freed in place (a page whose model's weights moved into its worker): the config,
  // the matrices' dtype and shape, the two counts above and the model's identity stay, and nothing may compute
  // with it afterwards (weights_released tells).
  void release_weights();
  bool weights_released = false;

 private:
  std::int64_t released_parameters_ = 0;  // the counts as they were before release_weights
  std::uint64_t released_bytes_ = 0;
};

// Bytes the weights of `config` take in `dtype` (a tied head once), computed without allocating.
std::uint64_t transformer_weight_bytes(const TransformerConfig& config, Dtype dtype);

// The frequencies a head's dimension pairs turn at (head_dim / 2 of them), after the scaling.
std::vector<double> rope_inv_freq(const RopeConfig& rope, int head_dim);
// Rotates every head of x (T, heads · hd) in place: position t turns pair (i, i + hd/2) by t · inv_freq[i].
void apply_rope(Matrix& x, int heads, int head_dim, const RopeConfig& rope, int first_position = 0);

// What the forward keeps of one layer for T tokens: per query head, what a view of every head at
// once reads. All the rest of a layer is recomputed, exactly, by layer_detail from the residual
// stream the trace keeps (ModelTrace::streams).
constexpr int kThumbnailSide = 64;  // a thumbnail has at most this many rows and columns
struct LayerTrace {
  std::vector<HeadSummary> summaries;  // per query head: what its weights mostly do
  std::vector<Matrix> thumbnails;      // per query head: its weights max-pooled to at most kThumbnailSide²
};

// One layer in full, as the forward computed it. Query head h is columns h·hd … (h+1)·hd − 1 of
// `query`; it reads K/V head config.kv_head_of(h), those columns of `key` and `value`.
struct LayerDetail {
  Matrix x;                     // (T, C) the attention norm's output: the X the heads project
  Matrix query, key, value;     // (T, H·hd), (T, KV·hd) ×2: what the scores use (after bias, q/k norm, RoPE)
  Matrix query_projected, key_projected;  // (T, H·hd), (T, KV·hd): x·W (+ b) before q/k norm and RoPE; empty when neither applies
  Matrix query_normed, key_normed;        // after q/k norm, before RoPE; empty without q/k norm
  std::vector<Matrix> weights;  // per query head (T, T): exactly 0 where the mask hides a key
  Matrix head_outputs;          // (T, H·hd): every head's weights · V, side by side, before W_O
  Matrix stream_in;             // (T, C) the residual stream entering the layer (stream_updates reads it)
};

// The k most likely next tokens after a position (ties: the lower id first).
struct NextToken {
  int id = 0;
  float p = 0;
};

// [SECTION] interventions: change one thing inside the model and let it answer again. Layers, heads
// and positions count from 0. A head's output is its weights · V, before W_O.
enum class AblateKind {
  Zero,  // the head's output replaced by zeros: as if it were not there (what b_O and the rest do alone)
  Mean,  // replaced at query i by its mean output over positions 0 … i of this text (all positions
         // without a causal mask): the head's typical contribution kept, what it says about this
         // token removed; never a later position, so a causal model still cannot see the future
};
const char* ablate_kind_name(AblateKind k);  // "zero" | "mean"
struct HeadRef {
  int layer = 0, head = 0;
  bool operator==(const HeadRef& o) const { return layer == o.layer && head == o.head; }
};
struct LinkCut {
  int layer = 0;
  int head = -1;  // −1: every head of the layer
  int query = 0, key = 0;
  bool operator==(const LinkCut& o) const { return layer == o.layer && head == o.head && query == o.query && key == o.key; }
};
struct HeadPatch {
  int layer = 0, head = 0;
  Matrix output;  // (T, head_dim): the head's output in the source run, used in place of its own
};
struct StreamPatch {
  int layer = 0, position = 0;
  Vector row;  // (C): the residual stream entering `layer` at `position` in the source run
};
struct Intervention {
  std::vector<HeadRef> ablate;
  AblateKind ablate_kind = AblateKind::Zero;
  std::vector<LinkCut> cuts;
  std::vector<HeadPatch> head_patches;
  std::vector<StreamPatch> stream_patches;
  bool empty() const { return ablate.empty() && cuts.empty() && head_patches.empty() && stream_patches.empty(); }
  int first_layer() const;  // the first layer it changes; a large number when empty
};
// Throws std::invalid_argument naming the entry ("ablate 3.1: …", "cut 2.*:5-4: …") for a layer,
// head or position outside the model or the text of T tokens, a head both ablated and patched or
// patched twice, a patch of the wrong shape, a link the mask hides already, or cuts that leave a
// query no key. The last `padding` keys are hidden already (a cut may not name them).
void validate_intervention(const TransformerConfig& config, int T, const Intervention& intervention, int padding = 0);
// The (query, key) links the intervention cuts in one head (its own cuts and its layer's "all heads").
std::vector<std::pair<int, int>> head_cuts(const Intervention& intervention, int layer, int head);

struct ModelTrace {
  std::vector<int> token_ids;
  Intervention intervention;  // what was changed in this run (empty: the model as it is)
  std::vector<LayerTrace> layers;
  // The residual stream entering layers 0, stream_every, 2·stream_every, … ((T, C) each): every
  // layer's while they fit in ForwardOptions::stream_bytes, else every stream_every-th (SmolLM2's 30
  // layers at T = 256: 17.7 MB for all, 3.5 MB for every 5th), and layer_detail runs the layers in
  // between again.
  int stream_every = 1;
  std::vector<Matrix> streams;
  // next[t]: the most likely next tokens after position t, best first (empty: the model has no
  // LM head here, as the hand-made one, or the position was not asked for).
  std::vector<std::vector<NextToken>> next;
  Matrix final_normed;  // (T, C) the LM head's input (next_tokens_at reads it): the final norm's output, or with a
                        // head transform its output (dense, activation, LayerNorm); post-norm without it: the last stream
  int padding = 0;      // the last `padding` tokens were padding (ForwardOptions::padding)
  std::vector<int> token_types;  // each token's type as given (empty: every token type 0)
};

struct ForwardOptions {
  Backend backend = Backend::Simd;
  int top_k = 100;          // next tokens kept per position (0: no LM head at all)
  int predict_from = 0;     // the LM head runs for positions predict_from … T − 1 only
  std::int64_t stream_bytes = 4 << 20;  // the residual stream kept in the trace, at most (one layer's at least)
  const Intervention* intervention = nullptr;  // applied when given (validated first)
  // The last `padding` tokens are padding (Hugging Face's attention_mask 0): hidden as keys from every
  // query, so the other tokens' numbers are those of the text without them; a mean ablation averages
  // over the other tokens only. 0 … T − 1.
  int padding = 0;
  // Each token's type (the token-type table's row), empty: type 0 for every token. Refused unless the
  // model has a token-type table and every entry is one of its rows.
  std::vector<int> token_types;
};

// The whole forward pass. Throws std::invalid_argument for no tokens, too many (> kMaxModelTokens,
// or the learned position table past its offset) or an id outside the vocabulary, padding that leaves
// no token, or token types the model has no row for.
ModelTrace transformer_forward(const Transformer& model, const std::vector<int>& token_ids,
                               const ForwardOptions& options = {});

// The whole forward a layer at a time (the page's own, between frames, where no worker runs: each step
// is one layer, then one for the final norm and the LM head), the same numbers as transformer_forward.
// Throws what transformer_forward throws, at construction; no intervention.
class ForwardInSlices {
 public:
  ForwardInSlices(std::shared_ptr<const Transformer> model, const std::vector<int>& token_ids, const ForwardOptions& options);
  bool step();  // one slice more; true when the trace is complete
  bool done() const { return layer_ > model_->config.n_layer; }
  int steps_done() const { return layer_; }
  int steps() const { return model_->config.n_layer + 1; }
  ModelTrace take() { return std::move(trace_); }  // once done

 private:
  std::shared_ptr<const Transformer> model_;
  ForwardOptions options_;
  ModelTrace trace_;
  Matrix x_;
  int layer_ = 0;
};

// The forward again on base's tokens with `intervention` (validated), reusing every layer of `base`
// before the first one it changes (from the nearest kept stream): the same numbers as
// transformer_forward with options.intervention = &intervention, for less. base must be a run with
// no intervention of its own. Its padding and token types are base's (options' are not read).
ModelTrace rerun_forward(const Transformer& model, const ModelTrace& base, const Intervention& intervention,
                         const ForwardOptions& options = {});

// [SECTION] the incremental forward: a text that grows (or changes late) by a few tokens reruns
// only its new rows. Under a causal mask row i of every layer reads rows 0 … i only, so the rows
// before the first changed token are the same as before; the new rows need only each layer's K and
// V of the old ones. What the cache holds for T tokens, besides the last trace (its streams,
// final_normed and next tokens give the old rows):
struct ForwardCache {
  std::vector<int> token_ids;  // the text cached (empty: nothing)
  ModelTrace trace;            // the trace of token_ids
  struct Layer {
    Matrix key, value;  // (T, KV·hd) each: what the scores use (after bias, q/k norm and RoPE)
    Matrix head_outputs;  // (T, H·hd): every head's weights · V, before W_O (what attribution reads)
    // Per query head, the weight rows one after another, row i holding only the keys it may see
    // (lo_i … i: lo_i = 0, or i − w + 1 in a sliding window of w): the head's summary and thumbnail
    // read every row again when rows are added. row_start[i]: where row i begins (T + 1 entries).
    std::vector<std::vector<float>> weight_rows;
    std::vector<std::size_t> row_start;
    // Per query head, its summary's sums over rows 0 … sums_row − 1 (where the next append starts),
    // so a longer text adds only its new rows to them.
    std::vector<HeadSummarySums> sums;
    int sums_row = 0;
  };
  std::vector<Layer> layers;
  // What the cache was made with; any change drops it (the text is then computed in full).
  const Transformer* model = nullptr;
  TransformerConfig config;
  std::uint64_t weights_sample = 0;  // a hash of a few of every matrix's numbers: another model at the same address, or one trained since
  Backend backend = Backend::Simd;
  int top_k = 0, predict_from = 0;
  std::int64_t stream_bytes = 0;
  std::string kernels;  // the SIMD flavours the kernels ran on (select_simd_flavour, ATTN_SIMD_ISA)
  void clear() { *this = ForwardCache(); }
  std::size_t bytes() const;  // what the cache holds beyond its trace (K, V, heads' outputs and weight rows)
};

// The numbers of transformer_forward(model, ids, options), computed from the first position where
// ids differ from the cache's text (appending a token computes its row of every layer against the
// cached keys), and the cache updated to ids. `*recomputed_from` (when given): the first position
// computed again (T: nothing new; 0: all). The cache is used only when it was made by this model
// (the same object and config, and the same sample of its weights: a model changed in place where
// the sample does not look should call cache.clear()) with the same backend, kernels and options;
// otherwise, and for a non-causal model (an encoder), an intervention, padding or token types, the
// text is computed in full (the last four leave the cache empty).
// Numbers: with the scalar backend, and with the SIMD backend on layers its blocked kernel runs
// (no window, no soft-cap), bit-identical to transformer_forward: every pass works row by row, and
// the kernel's blocks of query rows are kept aligned (it starts at a multiple of
// attention_row_block(), so up to that many − 1 rows before the change are computed again). Two
// exceptions, where the whole forward's own numbers change in the last bits with the text's length
// (so no cache can match them bit for bit; the tests allow 2e-6 of the largest value for the first, 1e-6 for the
// second: under wasm SIMD, Gemma's final norm came to 1.07e-6):
//  - layers in the Eigen matrix form (the Eigen backend; the SIMD backend with a sliding window or
//    a soft-cap: Mistral, Gemma) sum in an order that depends on T: those layers' rows, and what
//    follows from them, agree to float rounding;
//  - next tokens' p at the kept positions: the LM head reads the vocabulary in slices sized by T
//    (once T · V > 2^18), and its running softmax sum follows the slices; the ids are the same
//    (but where two p are equal to float rounding) and the new positions' p are bit-identical.
// Memory (ForwardCache::bytes): K and V, and every head's weight rows (T² / 2 floats per head, a
// window's band only), which the heads' summaries and thumbnails read again at each new T: GPT-2
// small at T = 257: 36 MB.
ModelTrace transformer_forward_cached(const Transformer& model, const std::vector<int>& token_ids, ForwardCache& cache,
                                      const ForwardOptions& options = {}, int* recomputed_from = nullptr);
// Each layer's row `position` of the cache's text, from what the cache keeps: a LayerDetail per layer
// holding that row only, its stream_in (1, C) and head_outputs (1, H·hd), nothing else. The heads'
// outputs are the forward's own; so is the stream where the trace keeps that layer's, and between kept
// ones it is carried on from the last (the attention's and the MLP's updates of the one row: the
// forward's numbers to the last bits where the kernels block one row differently from many). What
// attribute_logit needs, without computing any layer again. Throws for a cache another model made, or empty.
std::vector<LayerDetail> cached_layer_rows(const Transformer& model, const ForwardCache& cache, int position,
                                           Backend backend = Backend::Simd);

// For an encoder with a masked-LM head the "next tokens" at a position are its masked-LM predictions
// for that position: the same machinery, the head's numbers (empty everywhere without an LM head).
// The top next tokens after `position` that the forward kept (empty when it kept none there).
std::vector<NextToken> top_next_tokens(const ModelTrace& trace, int position, int k);
// The k most likely next tokens after `position`, by the LM head on that row of the trace's
// final_normed: the forward's numbers there (to float rounding), for a page that shows one
// position's predictions and so runs the head on that row only (ForwardOptions::predict_from = T).
std::vector<NextToken> next_tokens_at(const Transformer& model, const ModelTrace& trace, int position, int k,
                                      Backend backend = Backend::Simd);

// Layer `layer` of a forward in full (its X, q, k, v at every step, weights, head outputs), recomputed
// from the nearest stream the trace keeps by the forward's own code and backend, with the trace's
// intervention: the same numbers the forward had (up to stream_every − 1 layers run again first).
LayerDetail layer_detail(const Transformer& model, const ModelTrace& trace, int layer, Backend backend = Backend::Simd);
// Around the heads at one position: what the attention adds to the stream there (W_O over the joined
// head outputs, + b_O, then the post-attention norm where the model has sandwich norms) and what the
// MLP then adds; stream_in + attention + mlp is the next layer's stream_in at that row (with post-norm
// blocks each is what its add and norm change: norm(x + attn(x)) − x, norm(y + mlp(y)) − y). Computed for
// the row alone with the block's own functions (each works row by row), so a layer's detail keeps no
// (T, C) copies of them.
struct StreamUpdates {
  Vector attention, mlp;
};
StreamUpdates stream_updates(const TransformerConfig& config, const TransformerBlock& block, const LayerDetail& detail,
                             int row, Backend backend = Backend::Simd);
// Each head's share of the attention's output at one position, (H, C): row h is head h's output
// times its rows of W_O (no b_O, before any post-attention norm); the rows add up to W_O applied to
// the joined outputs.
Matrix head_contributions(const TransformerConfig& config, const TransformerBlock& block, const LayerDetail& detail,
                          int row, Backend backend = Backend::Simd);
// Rows (N, head_dim) taken as head `head`'s outputs, through its rows of W_O: (N, C), no b_O.
Matrix through_head_output(const TransformerConfig& config, const TransformerBlock& block, int head, const Matrix& rows,
                           Backend backend = Backend::Simd);

// The logits after `position` (V) as the model computes them, from the trace's final_normed row,
// + the LM head's bias, after any final soft-cap (`capped` false: before it). Throws without an LM head.
Vector logits_at(const Transformer& model, const ModelTrace& trace, int position, bool capped = true,
                 Backend backend = Backend::Simd);
// One token's row of the LM head (C): its logit is final_normed · this.
Vector unembedding(const Transformer& model, int token);
// What a norm divides by and subtracts for one row: y = (x − mean) · rstd · scale (+ b), mean 0 for RMSNorm.
struct NormStats {
  double mean = 0, rstd = 1;
};
NormStats norm_stats(const float* x, int n, const TransformerConfig& config);
// The norm's per-dimension scale: w, or 1 + w for Gemma's.
Vector norm_scale(const Vector& w, const TransformerConfig& config);

// One query head of a layer as the lesson's full trace (raw, scaled, capped, masked scores, weights,
// output), recomputed by attend() from that head's q and its K/V head's k and v, with the model's
// own scale, cap and window unless `options` switch them (the views' experiments).
AttentionTrace head_trace(const TransformerConfig& config, const LayerDetail& layer, int head,
                          const AttentionOptions& options);
// A head's weights max-pooled to at most side × side (a block shows its largest weight, so a
// one-hot pattern stays visible; non-finite entries count as 0); smaller matrices as they are.
Matrix max_pooled(const Matrix& weights, int side);
// max_pooled of a (rows, cols) matrix given row by row, each row as a run of its columns (the others
// 0): the incremental forward's kept weight rows pooled without the whole matrix. `out` is the result.
class PooledRows {
 public:
  PooledRows(Matrix& out, int rows, int cols, int side);
  void add_row(int i, const float* weights, int lo, int count);  // row i's columns lo … lo + count − 1

 private:
  Matrix& out_;
  int rows_;
  bool pooled_;
  std::vector<int> column_cell_;
};
// The AttentionOptions that reproduce layer `layer` of `config` exactly (its scale, cap, window, mask).
AttentionOptions model_attention_options(const TransformerConfig& config, int layer);

// Query head h's slice of the layer's W_Q, and its K/V head's of W_K and W_V: (C, hd) each, x · W.
enum class Projection { Query = 0, Key = 1, Value = 2 };
Matrix head_weights(const TransformerConfig& config, const TransformerBlock& block, int head, Projection which);
// The matching slice of the bias ((hd), zeros when the model has none).
Vector head_bias(const TransformerConfig& config, const TransformerBlock& block, int head, Projection which);

// A GPT-2-shaped configuration (LayerNorm, learned positions, tanh GELU, biases everywhere,
// 4·C MLP, tied head): the trainer's model and the tests' default.
TransformerConfig gpt2_config(int n_layer, int n_head, int d_model, int n_positions, int vocab_size,
                              bool scale_attn_weights = true, float layer_norm_epsilon = 1e-5f);
// A model with N(0, std) matrices, unit norm weights and zero biases, deterministic for a seed: for
// tests and benchmarks (GPT-2's initialisation with std 0.02).
Transformer random_transformer(const TransformerConfig& config, std::uint64_t seed, Dtype dtype = Dtype::F32,
                               WeightLayout layout = WeightLayout::InOut, double std = 0.02);

}  // namespace attn
