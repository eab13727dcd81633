// The GPT-2 forward pass, one function per layer type as llm.c writes it (see gpt2.h).
// Not the trainer and not a loader: inference over named tensors, keeping what the views show.
#include "gpt2.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/matmul.h"
#include "random.h"

namespace attn {

namespace {

[[noreturn]] void bad(const std::string& what, const std::string& why) { throw std::invalid_argument(what + ": " + why); }

void check_range(const std::string& what, const char* key, int value, int lo, int hi) {
  if (value < lo || value > hi)
    bad(what, std::string(key) + " is " + std::to_string(value) + "; it must be from " + std::to_string(lo) + " to " +
                  std::to_string(hi));
}

// out (T, N) = in (T, K) · w (K, N) + bias (N)
void linear_forward(const Matrix& in, const Matrix& w, const Vector& bias, Matrix& out, Backend backend) {
  out.resize(in.rows(), w.cols());
  MatmulProblem p;
  p.layout = MatmulLayout::NN;
  p.a = in.data(), p.b = w.data(), p.bias = bias.size() ? bias.data() : nullptr;
  p.M = static_cast<int>(in.rows()), p.K = static_cast<int>(in.cols()), p.N = static_cast<int>(w.cols());
  matmul(backend, p, out.data());
}

// out (T, C) = (in − mean) / √(var + ε) · g + b, per row; the variance is the biased one, as torch's.
void layernorm_forward(const Matrix& in, const Vector& g, const Vector& b, float eps, Matrix& out) {
  out.resize(in.rows(), in.cols());
  const Eigen::Index C = in.cols();
  for (Eigen::Index t = 0; t < in.rows(); ++t) {
    const float* x = in.row(t).data();
    double mean = 0;
    for (Eigen::Index i = 0; i < C; ++i) mean += x[i];
    mean /= static_cast<double>(C);
    double var = 0;
    for (Eigen::Index i = 0; i < C; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<double>(C);
    const double rstd = 1.0 / std::sqrt(var + eps);
    float* y = out.row(t).data();
    for (Eigen::Index i = 0; i < C; ++i) y[i] = static_cast<float>((x[i] - mean) * rstd) * g[i] + b[i];
  }
}

// GELU, tanh approximation (GPT-2's gelu_new): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
void gelu_forward(Matrix& x) {
  const float k = 0.7978845608028654f;  // √(2/π)
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const float v = x.data()[i];
    x.data()[i] = 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
  }
}

// Columns [first, first + width) of m as a contiguous matrix (one head's slice).
Matrix columns(const Matrix& m, Eigen::Index first, Eigen::Index width) { return m.middleCols(first, width); }

}  // namespace

bool Gpt2Config::operator==(const Gpt2Config& o) const {
  return n_layer == o.n_layer && n_head == o.n_head && n_embd == o.n_embd && n_positions == o.n_positions &&
         vocab_size == o.vocab_size && layer_norm_epsilon == o.layer_norm_epsilon &&
         scale_attn_weights == o.scale_attn_weights;
}

void validate_config(const Gpt2Config& c, const std::string& what) {
  check_range(what, "n_layer", c.n_layer, 1, kMaxModelLayers);
  check_range(what, "n_head", c.n_head, 1, kMaxModelHeads);
  check_range(what, "n_embd", c.n_embd, 1, kMaxModelWidth);
  check_range(what, "n_positions", c.n_positions, 1, kMaxModelPositions);
  check_range(what, "vocab_size", c.vocab_size, 1, kMaxVocab);
  if (c.n_embd % c.n_head != 0)
    bad(what, "n_embd (" + std::to_string(c.n_embd) + ") is not divisible by n_head (" + std::to_string(c.n_head) +
                  "): every head needs the same width");
  if (!std::isfinite(c.layer_norm_epsilon) || c.layer_norm_epsilon <= 0 || c.layer_norm_epsilon > 1)
    bad(what, "layer_norm_epsilon must be a number in (0, 1]");
}

Gpt2Model::Gpt2Model(const Gpt2Config& c) : config(c) {
  validate_config(c, "config");
  const int C = c.n_embd;
  wte = Matrix::Zero(c.vocab_size, C);
  wpe = Matrix::Zero(c.n_positions, C);
  blocks.resize(c.n_layer);
  for (Gpt2Block& b : blocks) {
    b.ln_1_g = Vector::Zero(C), b.ln_1_b = Vector::Zero(C);
    b.c_attn_w = Matrix::Zero(C, 3 * C), b.c_attn_b = Vector::Zero(3 * C);
    b.attn_c_proj_w = Matrix::Zero(C, C), b.attn_c_proj_b = Vector::Zero(C);
    b.ln_2_g = Vector::Zero(C), b.ln_2_b = Vector::Zero(C);
    b.c_fc_w = Matrix::Zero(C, 4 * C), b.c_fc_b = Vector::Zero(4 * C);
    b.mlp_c_proj_w = Matrix::Zero(4 * C, C), b.mlp_c_proj_b = Vector::Zero(C);
  }
  ln_f_g = Vector::Zero(C), ln_f_b = Vector::Zero(C);
}

std::int64_t Gpt2Model::parameter_count() const {
  std::int64_t n = wte.size() + wpe.size() + ln_f_g.size() + ln_f_b.size() + lm_head.size();
  for (const Gpt2Block& b : blocks)
    n += b.ln_1_g.size() + b.ln_1_b.size() + b.c_attn_w.size() + b.c_attn_b.size() + b.attn_c_proj_w.size() +
         b.attn_c_proj_b.size() + b.ln_2_g.size() + b.ln_2_b.size() + b.c_fc_w.size() + b.c_fc_b.size() +
         b.mlp_c_proj_w.size() + b.mlp_c_proj_b.size();
  return n;
}

Gpt2Model random_gpt2(const Gpt2Config& config, std::uint64_t seed) {
  Gpt2Model m(config);
  Rng rng(seed);
  const auto fill = [&](auto& t) {
    for (Eigen::Index i = 0; i < t.size(); ++i) t.data()[i] = static_cast<float>(0.02 * rng.normal());
  };
  fill(m.wte), fill(m.wpe);
  for (Gpt2Block& b : m.blocks) {
    b.ln_1_g.setOnes(), b.ln_2_g.setOnes();
    fill(b.c_attn_w), fill(b.attn_c_proj_w), fill(b.c_fc_w), fill(b.mlp_c_proj_w);
  }
  m.ln_f_g.setOnes();
  return m;
}

ModelTrace gpt2_forward(const Gpt2Model& model, const std::vector<int>& token_ids, Backend backend) {
  const Gpt2Config& cfg = model.config;
  const int T = static_cast<int>(token_ids.size()), C = cfg.n_embd, H = cfg.n_head, hd = cfg.head_dim();
  const int longest = std::min(cfg.n_positions, kMaxModelTokens);
  if (T == 0) throw std::invalid_argument("text: no tokens to read");
  if (T > longest)
    throw std::invalid_argument("text: " + std::to_string(T) + " tokens; this model reads at most " +
                                std::to_string(longest));
  for (int id : token_ids)
    if (id < 0 || id >= cfg.vocab_size)
      throw std::invalid_argument("text: token id " + std::to_string(id) + " is outside the vocabulary (0 to " +
                                  std::to_string(cfg.vocab_size - 1) + ")");
  ModelTrace trace;
  trace.token_ids = token_ids;
  trace.layers.resize(cfg.n_layer);

  // pass 1: the residual stream starts as token embedding + position embedding, x (T, C)
  Matrix x(T, C);
  for (int t = 0; t < T; ++t) x.row(t) = model.wte.row(token_ids[t]) + model.wpe.row(t);

  Matrix qkv, q_h, k_h, v_h, out_h(T, hd), projected, normed, hidden;
  for (int l = 0; l < cfg.n_layer; ++l) {
    const Gpt2Block& b = model.blocks[l];
    LayerTrace& layer = trace.layers[l];
    // pass 2: attention on ln_1(x); each head sees its own hd columns of Q, K and V
    layernorm_forward(x, b.ln_1_g, b.ln_1_b, cfg.layer_norm_epsilon, layer.x);
    linear_forward(layer.x, b.c_attn_w, b.c_attn_b, qkv, backend);
    layer.query = columns(qkv, 0, C), layer.key = columns(qkv, C, C), layer.value = columns(qkv, 2 * C, C);
    layer.weights.resize(H);
    layer.head_outputs.resize(T, C);
    for (int h = 0; h < H; ++h) {
      q_h = columns(layer.query, h * hd, hd), k_h = columns(layer.key, h * hd, hd), v_h = columns(layer.value, h * hd, hd);
      AttentionProblem p;
      p.query = q_h.data(), p.key = k_h.data(), p.value = v_h.data();
      p.Tq = p.Tk = T, p.d = p.dv = hd;
      p.scale = cfg.scale_attn_weights ? 1.0f / std::sqrt(static_cast<float>(hd)) : 1.0f;
      p.causal = true;  // a decoder: position t reads positions 0 … t only
      layer.weights[h].resize(T, T);
      attention_forward(backend, p, out_h.data(), layer.weights[h].data());
      layer.head_outputs.middleCols(h * hd, hd) = out_h;
    }
    linear_forward(layer.head_outputs, b.attn_c_proj_w, b.attn_c_proj_b, projected, backend);
    x += projected;
    // pass 3: the MLP on ln_2(x): C → 4C, GELU, 4C → C
    layernorm_forward(x, b.ln_2_g, b.ln_2_b, cfg.layer_norm_epsilon, normed);
    linear_forward(normed, b.c_fc_w, b.c_fc_b, hidden, backend);
    gelu_forward(hidden);
    linear_forward(hidden, b.mlp_c_proj_w, b.mlp_c_proj_b, projected, backend);
    x += projected;
  }

  // pass 4: final LayerNorm, logits = ln_f(x) · Eᵀ with E the (tied) token embedding, softmax per row
  layernorm_forward(x, model.ln_f_g, model.ln_f_b, cfg.layer_norm_epsilon, normed);
  const Matrix& head = model.lm_head.size() ? model.lm_head : model.wte;
  trace.probs.resize(T, cfg.vocab_size);
  MatmulProblem p;
  p.layout = MatmulLayout::NT;
  p.a = normed.data(), p.b = head.data();
  p.M = T, p.K = C, p.N = cfg.vocab_size;
  matmul(backend, p, trace.probs.data());
  for (int t = 0; t < T; ++t) {
    float* row = trace.probs.row(t).data();
    const float max = *std::max_element(row, row + cfg.vocab_size);  // subtracted so exp cannot overflow
    double sum = 0;
    for (int v = 0; v < cfg.vocab_size; ++v) sum += (row[v] = std::exp(row[v] - max));
    const float inv = static_cast<float>(1.0 / sum);
    for (int v = 0; v < cfg.vocab_size; ++v) row[v] *= inv;
  }
  return trace;
}

Matrix gpt2_head_w(const Gpt2Block& block, int head, int head_dim, int which) {
  const Eigen::Index C = block.c_attn_w.rows();
  return block.c_attn_w.middleCols(which * C + static_cast<Eigen::Index>(head) * head_dim, head_dim);
}

AttentionTrace gpt2_head_trace(const ModelTrace& trace, int layer, int head, int head_dim,
                               const AttentionOptions& options) {
  if (layer < 0 || layer >= static_cast<int>(trace.layers.size())) bad("layer", "outside the model");
  const LayerTrace& l = trace.layers[layer];
  if (head < 0 || head >= static_cast<int>(l.weights.size())) bad("head", "outside the layer");
  const Eigen::Index first = static_cast<Eigen::Index>(head) * head_dim;
  return attend(columns(l.query, first, head_dim), columns(l.key, first, head_dim), columns(l.value, first, head_dim),
                options);
}

std::vector<NextToken> top_next_tokens(const ModelTrace& trace, int position, int k) {
  std::vector<NextToken> out;
  if (trace.probs.size() == 0 || position < 0 || position >= trace.probs.rows() || k <= 0) return out;
  const float* row = trace.probs.row(position).data();
  const int V = static_cast<int>(trace.probs.cols());
  std::vector<int> ids(V);
  for (int v = 0; v < V; ++v) ids[v] = v;
  k = std::min(k, V);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                    [&](int a, int b) { return row[a] != row[b] ? row[a] > row[b] : a < b; });
  for (int i = 0; i < k; ++i) out.push_back({ids[i], row[ids[i]]});
  return out;
}

}  // namespace attn
