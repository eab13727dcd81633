// The one forward pass of every family, decoder or encoder (see transformer.h), one function per layer type as
// llm.c writes it. Not the trainer and not a loader: inference over named tensors, keeping what the
// views show.
#include "transformer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "kernels/matmul.h"
#include "random.h"
#include "refuse.h"

namespace attn {

namespace {

void check_range(const std::string& what, const char* key, long long value, long long lo, long long hi) {
  if (value < lo || value > hi)
    refuse(what, std::string(key) + " is " + std::to_string(value) + "; it must be from " + std::to_string(lo) + " to " +
                  std::to_string(hi));
}

// out (T, N) = in (T, K) · W (+ bias), with W as stored: (K, N) used as is, or (N, K) transposed.
void linear_forward(const Matrix& in, const Weights& w, const Vector& bias, Matrix& out, Backend backend) {
  out.resize(in.rows(), w.out());
  MatmulProblem p;
  p.layout = w.transposed ? MatmulLayout::NT : MatmulLayout::NN;
  p.a = in.data();
  if (w.dtype == Dtype::F32) p.b = w.f32.data();
  else p.b16 = w.u16.data(), p.b_dtype = w.dtype;
  p.bias = bias.size() ? bias.data() : nullptr;
  p.M = static_cast<int>(in.rows()), p.K = w.in(), p.N = w.out();
  matmul(backend, p, out.data());
}

// One row normalised: LayerNorm (x − mean) / √(var + ε) · w + b, the biased variance as torch's; or
// RMSNorm x / √(mean(x²) + ε) · w (· (1 + w) for Gemma). Accumulated in double.
void norm_row(const float* x, int n, const TransformerConfig& c, const float* w, const float* b, float* y) {
  const auto [mean, rstd] = norm_stats(x, n, c);
  for (int i = 0; i < n; ++i) {
    const float scale = c.norm_plus_one ? 1.0f + w[i] : w[i];
    y[i] = static_cast<float>((x[i] - mean) * rstd) * scale + (b ? b[i] : 0.0f);
  }
}

void norm_forward(const Matrix& in, const Vector& w, const Vector& b, const TransformerConfig& c, Matrix& out) {
  out.resize(in.rows(), in.cols());
  for (Eigen::Index t = 0; t < in.rows(); ++t)
    norm_row(in.row(t).data(), static_cast<int>(in.cols()), c, w.data(), b.size() ? b.data() : nullptr,
             out.row(t).data());
}

}  // namespace

NormStats norm_stats(const float* x, int n, const TransformerConfig& c) {
  double mean = 0;
  if (c.norm == NormKind::LayerNorm) {
    for (int i = 0; i < n; ++i) mean += x[i];
    mean /= n;
  }
  double var = 0;
  for (int i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= n;
  return {mean, 1.0 / std::sqrt(var + c.norm_eps)};
}

Vector norm_scale(const Vector& w, const TransformerConfig& c) {
  return c.norm_plus_one ? Vector((w.array() + 1.0f).matrix()) : w;
}

namespace {

// Each head's hd columns of x (T, heads · hd) RMS-normalised with w (hd): Qwen 3's and Gemma 3's q/k norm.
void head_norm_forward(Matrix& x, int heads, int hd, const Vector& w, const TransformerConfig& c) {
  TransformerConfig rms = c;
  rms.norm = NormKind::RmsNorm;
  std::vector<float> row(static_cast<std::size_t>(hd));
  for (Eigen::Index t = 0; t < x.rows(); ++t)
    for (int h = 0; h < heads; ++h) {
      float* head = x.row(t).data() + static_cast<std::ptrdiff_t>(h) * hd;
      std::copy(head, head + hd, row.begin());
      norm_row(row.data(), hd, rms, w.data(), nullptr, head);
    }
}

float activate(Activation a, float v) {
  switch (a) {
    case Activation::GeluTanh: {
      const float k = 0.7978845608028654f;  // √(2/π)
      return 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
    }
    case Activation::GeluErf: return 0.5f * v * (1.0f + std::erf(v * 0.7071067811865476f));
    case Activation::Silu: return v / (1.0f + std::exp(-v));
  }
  return v;
}

// The MLP's hidden layer in place: act(h) for a plain MLP; act(gate) ⊙ up for a gated one, whose
// (T, 2·d_ff) input holds [gate | up] and whose output is the first d_ff columns.
void mlp_activation(Matrix& hidden, const TransformerConfig& c) {
  if (!c.gated_mlp) {
    for (Eigen::Index i = 0; i < hidden.size(); ++i) hidden.data()[i] = activate(c.activation, hidden.data()[i]);
    return;
  }
  const Eigen::Index F = c.d_ff;
  Matrix gated(hidden.rows(), F);
  for (Eigen::Index t = 0; t < hidden.rows(); ++t)
    for (Eigen::Index i = 0; i < F; ++i) gated(t, i) = activate(c.activation, hidden(t, i)) * hidden(t, F + i);
  hidden = std::move(gated);
}

}  // namespace

// [SECTION] names and the configuration ------------------------------------------------------

const char* norm_kind_name(NormKind k) { return k == NormKind::LayerNorm ? "layernorm" : "rmsnorm"; }
const char* position_kind_name(PositionKind k) { return k == PositionKind::Learned ? "learned" : "rope"; }
const char* activation_name(Activation a) {
  switch (a) {
    case Activation::GeluTanh: return "gelu_tanh";
    case Activation::GeluErf: return "gelu";
    case Activation::Silu: return "silu";
  }
  return "?";
}
const char* rope_scaling_name(RopeScaling s) {
  switch (s) {
    case RopeScaling::None: return "none";
    case RopeScaling::Linear: return "linear";
    case RopeScaling::Llama3: return "llama3";
    case RopeScaling::Yarn: return "yarn";
  }
  return "?";
}

bool RopeConfig::operator==(const RopeConfig& o) const {
  return theta == o.theta && scaling == o.scaling && factor == o.factor && low_freq_factor == o.low_freq_factor &&
         high_freq_factor == o.high_freq_factor && original_max_positions == o.original_max_positions &&
         beta_fast == o.beta_fast && beta_slow == o.beta_slow && attention_factor == o.attention_factor &&
         truncate == o.truncate;
}

bool TransformerConfig::any_window() const {
  return std::any_of(layers.begin(), layers.end(), [](const LayerSpec& l) { return l.window > 0; });
}

bool TransformerConfig::operator==(const TransformerConfig& o) const {
  return family == o.family && n_layer == o.n_layer && n_head == o.n_head && n_kv_head == o.n_kv_head &&
         head_dim == o.head_dim && d_model == o.d_model && d_ff == o.d_ff && vocab_size == o.vocab_size &&
         n_positions == o.n_positions && norm == o.norm && norm_plus_one == o.norm_plus_one &&
         norm_eps == o.norm_eps && sandwich_norms == o.sandwich_norms && positions == o.positions &&
         layers == o.layers && qkv_bias == o.qkv_bias && o_bias == o.o_bias && mlp_bias == o.mlp_bias &&
         qk_norm == o.qk_norm && attn_softcap == o.attn_softcap && final_softcap == o.final_softcap &&
         score_scale == o.score_scale && embed_scale == o.embed_scale && gated_mlp == o.gated_mlp &&
         activation == o.activation && causal == o.causal && post_norm == o.post_norm && embed_norm == o.embed_norm &&
         n_token_types == o.n_token_types && position_offset == o.position_offset && has_lm_head == o.has_lm_head &&
         head_transform == o.head_transform && head_bias == o.head_bias;
}

void validate_config(const TransformerConfig& c, const std::string& what) {
  check_range(what, "the number of layers", c.n_layer, 1, kMaxModelLayers);
  check_range(what, "the number of heads", c.n_head, 1, kMaxModelHeads);
  check_range(what, "the number of key/value heads", c.n_kv_head, 1, c.n_head);
  check_range(what, "the head width", c.head_dim, 1, kMaxModelHeadDim);
  check_range(what, "the model width", c.d_model, 1, kMaxModelWidth);
  check_range(what, "heads × head width", static_cast<long long>(c.n_head) * c.head_dim, 1, kMaxModelWidth);
  check_range(what, "the MLP width", c.d_ff, 1, kMaxModelFfWidth);
  check_range(what, "the vocabulary size", c.vocab_size, 1, kMaxVocab);
  if (c.n_head % c.n_kv_head != 0)
    refuse(what, std::to_string(c.n_head) + " query heads cannot share " + std::to_string(c.n_kv_head) +
                  " key/value heads evenly (heads must be a multiple of key/value heads)");
  if (c.positions == PositionKind::Learned) check_range(what, "the position table's rows", c.n_positions, 1, kMaxModelPositions);
  check_range(what, "the token-type table's rows", c.n_token_types, 0, kMaxModelPositions);
  if (c.positions == PositionKind::Learned)
    check_range(what, "the first position's row", c.position_offset, 0, c.n_positions - 1);
  else if (c.position_offset != 0)
    refuse(what, "a position offset needs a learned position table");
  if ((c.head_transform || c.head_bias) && !c.has_lm_head) refuse(what, "a masked-LM head's parts without an LM head");
  if (c.positions == PositionKind::Rope && c.head_dim % 2 != 0)
    refuse(what, "rotary positions need an even head width (got " + std::to_string(c.head_dim) + ")");
  if (static_cast<int>(c.layers.size()) != c.n_layer)
    refuse(what, "the per-layer settings list " + std::to_string(c.layers.size()) + " layers, not " + std::to_string(c.n_layer));
  for (const LayerSpec& l : c.layers) {
    if (l.window < 0) refuse(what, "a sliding window must be at least 1 token");
    const RopeConfig& r = l.rope;
    if (c.positions == PositionKind::Rope) {
      if (!(r.theta > 1 && r.theta < 1e12)) refuse(what, "rope theta must be a number above 1");
      if (!(r.factor >= 1 && r.factor <= 1e4) && r.scaling != RopeScaling::None)
        refuse(what, "the rope scaling factor must be a number from 1 to 10000");
      if ((r.scaling == RopeScaling::Llama3 || r.scaling == RopeScaling::Yarn) &&
          (r.original_max_positions < 1 || r.original_max_positions > (1 << 24)))
        refuse(what, "rope scaling needs original_max_position_embeddings from 1 to 16777216");
      if (r.scaling == RopeScaling::Llama3 && !(r.high_freq_factor > r.low_freq_factor && r.low_freq_factor > 0))
        refuse(what, "llama3 rope scaling needs 0 < low_freq_factor < high_freq_factor");
      if (r.scaling == RopeScaling::Yarn && !(r.beta_fast > 0 && r.beta_slow > 0 && r.attention_factor > 0 &&
                                              std::isfinite(r.attention_factor) && r.attention_factor < 100))
        refuse(what, "yarn rope scaling needs positive beta_fast, beta_slow and attention_factor");
    }
  }
  const auto finite_nonnegative = [&](float v, const char* name) {
    if (!(v >= 0 && std::isfinite(v))) refuse(what, std::string(name) + " must be a finite number ≥ 0");
  };
  if (!(c.norm_eps > 0 && c.norm_eps <= 1)) refuse(what, "the norm epsilon must be a number in (0, 1]");
  finite_nonnegative(c.attn_softcap, "the attention soft-cap");
  finite_nonnegative(c.final_softcap, "the final logit soft-cap");
  if (!(c.score_scale > 0 && c.score_scale <= 1e3)) refuse(what, "the score scale must be a number in (0, 1000]");
  if (!(c.embed_scale > 0 && c.embed_scale <= 1e4)) refuse(what, "the embedding scale must be a number in (0, 10000]");
}

// [SECTION] weights --------------------------------------------------------------------------

void Weights::allocate(Dtype d, int r, int c, bool t, bool zeros) {
  dtype = d, rows = r, cols = c, transposed = t;
  f32.clear(), u16.clear();
  const std::size_t n = static_cast<std::size_t>(r) * static_cast<std::size_t>(c);
  d == Dtype::F32 ? f32.resize(n) : u16.resize(n);  // unset, then zeros where asked
  if (zeros && n > 0) std::memset(data(), 0, bytes());
}

float Weights::at(int r, int c) const {
  const std::size_t i = static_cast<std::size_t>(r) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(c);
  return dtype == Dtype::F32 ? f32[i] : widen16(dtype, u16[i]);
}

Vector Weights::row(int r) const {
  Vector v(cols);
  for (int c = 0; c < cols; ++c) v[c] = at(r, c);
  return v;
}

Matrix Weights::output_columns(int first, int n) const {
  Matrix m(in(), n);
  for (int i = 0; i < in(); ++i)
    for (int j = 0; j < n; ++j) m(i, j) = transposed ? at(first + j, i) : at(i, first + j);
  return m;
}

bool Weights::operator==(const Weights& o) const {
  return dtype == o.dtype && rows == o.rows && cols == o.cols && transposed == o.transposed && f32 == o.f32 && u16 == o.u16;
}

Transformer::Transformer(const TransformerConfig& c, Dtype dtype, WeightLayout layout, bool zero_matrices) : config(c) {
  validate_config(c, "config");
  const int C = c.d_model, F = c.d_ff, hd = c.head_dim;
  const int qkv_out = (c.n_head + 2 * c.n_kv_head) * hd;
  const bool layernorm = c.norm == NormKind::LayerNorm;
  const bool transposed = layout == WeightLayout::OutIn;
  // a block's matrix from `in` to `out` numbers, stored as the layout says
  const auto matrix = [&](Weights& w, int in, int out) {
    transposed ? w.allocate(dtype, out, in, true, zero_matrices) : w.allocate(dtype, in, out, false, zero_matrices);
  };
  embed.allocate(dtype, c.vocab_size, C, true, zero_matrices);
  if (c.positions == PositionKind::Learned) position_table.allocate(dtype, c.n_positions, C, true, zero_matrices);
  if (c.n_token_types > 0) token_type_table.allocate(dtype, c.n_token_types, C, true, zero_matrices);
  if (c.embed_norm) embed_norm_w = embed_norm_b = Vector::Zero(C);
  blocks.resize(static_cast<std::size_t>(c.n_layer));
  for (TransformerBlock& b : blocks) {
    b.attn_norm_w = Vector::Zero(C);
    if (layernorm) b.attn_norm_b = Vector::Zero(C);
    matrix(b.qkv, C, qkv_out);
    if (c.qkv_bias) b.qkv_b = Vector::Zero(qkv_out);
    if (c.qk_norm) b.q_norm_w = Vector::Zero(hd), b.k_norm_w = Vector::Zero(hd);
    matrix(b.o, c.n_head * hd, C);
    if (c.o_bias) b.o_b = Vector::Zero(C);
    if (c.sandwich_norms) b.post_attn_norm_w = Vector::Zero(C), b.post_mlp_norm_w = Vector::Zero(C);
    b.mlp_norm_w = Vector::Zero(C);
    if (layernorm) b.mlp_norm_b = Vector::Zero(C);
    const int up_out = c.gated_mlp ? 2 * F : F;
    matrix(b.up, C, up_out);
    if (c.mlp_bias) b.up_b = Vector::Zero(up_out), b.down_b = Vector::Zero(C);
    matrix(b.down, F, C);
  }
  if (!c.post_norm) {
    final_norm_w = Vector::Zero(C);
    if (layernorm) final_norm_b = Vector::Zero(C);
  }
  if (c.head_transform) {
    matrix(head_dense, C, C);
    head_dense_b = head_norm_w = head_norm_b = Vector::Zero(C);
  }
  if (c.head_bias) lm_head_b = Vector::Zero(c.vocab_size);
}

std::int64_t Transformer::parameter_count() const {
  if (weights_released) return released_parameters_;
  std::int64_t n = embed.size() + position_table.size() + final_norm_w.size() + final_norm_b.size() + lm_head.size() +
                  token_type_table.size() + embed_norm_w.size() + embed_norm_b.size() + head_dense.size() +
                  head_dense_b.size() + head_norm_w.size() + head_norm_b.size() + lm_head_b.size();
  for (const TransformerBlock& b : blocks)
    n += b.attn_norm_w.size() + b.attn_norm_b.size() + b.qkv.size() + b.qkv_b.size() + b.q_norm_w.size() +
         b.k_norm_w.size() + b.o.size() + b.o_b.size() + b.post_attn_norm_w.size() + b.mlp_norm_w.size() +
         b.mlp_norm_b.size() + b.up.size() + b.up_b.size() + b.down.size() + b.down_b.size() + b.post_mlp_norm_w.size();
  return n;
}

void Transformer::release_weights() {
  if (weights_released) return;
  released_parameters_ = parameter_count();
  released_bytes_ = weight_bytes();
  const auto release = [](Weights& w) {  // (its dtype and shape stay: a view may name them)
    decltype(w.f32)().swap(w.f32);
    decltype(w.u16)().swap(w.u16);
  };
  for (Weights* w : {&embed, &position_table, &lm_head, &token_type_table, &head_dense}) release(*w);
  for (Vector* v : {&final_norm_w, &final_norm_b, &embed_norm_w, &embed_norm_b, &head_dense_b, &head_norm_w, &head_norm_b, &lm_head_b})
    v->resize(0);
  for (TransformerBlock& b : blocks) {
    for (Weights* w : {&b.qkv, &b.o, &b.up, &b.down}) release(*w);
    for (Vector* v : {&b.attn_norm_w, &b.attn_norm_b, &b.qkv_b, &b.q_norm_w, &b.k_norm_w, &b.o_b, &b.post_attn_norm_w,
                      &b.mlp_norm_w, &b.mlp_norm_b, &b.up_b, &b.down_b, &b.post_mlp_norm_w})
      v->resize(0);
  }
  weights_released = true;
}

std::uint64_t Transformer::weight_bytes() const {
  if (weights_released) return released_bytes_;
  std::uint64_t n = embed.bytes() + position_table.bytes() + lm_head.bytes() + token_type_table.bytes() + head_dense.bytes() +
                    4 * static_cast<std::uint64_t>(final_norm_w.size() + final_norm_b.size() + embed_norm_w.size() +
                                                   embed_norm_b.size() + head_dense_b.size() + head_norm_w.size() +
                                                   head_norm_b.size() + lm_head_b.size());
  for (const TransformerBlock& b : blocks)
    n += b.qkv.bytes() + b.o.bytes() + b.up.bytes() + b.down.bytes() +
         4 * static_cast<std::uint64_t>(b.attn_norm_w.size() + b.attn_norm_b.size() + b.qkv_b.size() +
                                        b.q_norm_w.size() + b.k_norm_w.size() + b.o_b.size() +
                                        b.post_attn_norm_w.size() + b.mlp_norm_w.size() + b.mlp_norm_b.size() +
                                        b.up_b.size() + b.down_b.size() + b.post_mlp_norm_w.size());
  return n;
}

std::uint64_t transformer_weight_bytes(const TransformerConfig& c, Dtype dtype) {
  const std::uint64_t C = static_cast<std::uint64_t>(c.d_model), F = static_cast<std::uint64_t>(c.d_ff);
  const std::uint64_t hd = static_cast<std::uint64_t>(c.head_dim);
  const std::uint64_t H = static_cast<std::uint64_t>(c.n_head), KV = static_cast<std::uint64_t>(c.n_kv_head);
  const std::uint64_t w = dtype_bytes(dtype), norm_vectors = c.norm == NormKind::LayerNorm ? 2 : 1;
  std::uint64_t matrices = static_cast<std::uint64_t>(c.vocab_size) * C + static_cast<std::uint64_t>(c.n_positions) * C +
                          static_cast<std::uint64_t>(c.n_token_types) * C + (c.head_transform ? C * C : 0);
  std::uint64_t vectors = (c.post_norm ? 0 : norm_vectors * C) + (c.embed_norm ? 2 * C : 0) + (c.head_transform ? 3 * C : 0) +
                          (c.head_bias ? static_cast<std::uint64_t>(c.vocab_size) : 0);
  const std::uint64_t per_block_matrices = C * (H + 2 * KV) * hd + H * hd * C + C * F * (c.gated_mlp ? 2 : 1) + F * C;
  std::uint64_t per_block_vectors = 2 * norm_vectors * C + (c.sandwich_norms ? 2 * C : 0) + (c.qk_norm ? 2 * hd : 0) +
                                    (c.qkv_bias ? (H + 2 * KV) * hd : 0) + (c.o_bias ? C : 0) +
                                    (c.mlp_bias ? F * (c.gated_mlp ? 2 : 1) + C : 0);
  matrices += static_cast<std::uint64_t>(c.n_layer) * per_block_matrices;
  vectors += static_cast<std::uint64_t>(c.n_layer) * per_block_vectors;
  return w * matrices + 4 * vectors;
}

// [SECTION] rotary positions -----------------------------------------------------------------

std::vector<double> rope_inv_freq(const RopeConfig& r, int hd) {
  const int half = hd / 2;
  std::vector<double> inv(static_cast<std::size_t>(half));
  for (int i = 0; i < half; ++i) inv[i] = 1.0 / std::pow(r.theta, 2.0 * i / hd);
  const double pi = 3.14159265358979323846;
  switch (r.scaling) {
    case RopeScaling::None: break;
    case RopeScaling::Linear:
      for (double& f : inv) f /= r.factor;
      break;
    case RopeScaling::Llama3: {
      // Long wavelengths (past the trained context / low_freq_factor) slow down by the factor,
      // short ones (under context / high_freq_factor) keep their speed, and between the two a
      // linear blend in context / wavelength.
      const double context = r.original_max_positions;
      const double low_wavelength = context / r.low_freq_factor, high_wavelength = context / r.high_freq_factor;
      for (double& f : inv) {
        const double wavelength = 2 * pi / f;
        if (wavelength > low_wavelength) {
          f /= r.factor;
        } else if (wavelength >= high_wavelength) {
          const double smooth = (context / wavelength - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
          f = (1 - smooth) * f / r.factor + smooth * f;
        }
      }
      break;
    }
    case RopeScaling::Yarn: {
      // Dimensions that turn fewer than beta_slow times over the trained context are interpolated
      // (÷ factor), those turning more than beta_fast times kept, a linear ramp between.
      const double context = r.original_max_positions;
      const auto correction_dim = [&](double rotations) {
        return hd * std::log(context / (rotations * 2 * pi)) / (2 * std::log(r.theta));
      };
      double low = correction_dim(r.beta_fast), high = correction_dim(r.beta_slow);
      if (r.truncate) low = std::floor(low), high = std::ceil(high);
      low = std::max(low, 0.0), high = std::min(high, static_cast<double>(hd - 1));
      if (low == high) high += 0.001;
      for (int i = 0; i < half; ++i) {
        const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
        const double keep = 1 - ramp;  // the share of the original frequency
        inv[i] = inv[i] / r.factor * (1 - keep) + inv[i] * keep;
      }
      break;
    }
  }
  return inv;
}

void apply_rope(Matrix& x, int heads, int hd, const RopeConfig& rope, int first_position) {
  const std::vector<double> inv = rope_inv_freq(rope, hd);
  const int half = hd / 2;
  const double gain = rope.scaling == RopeScaling::Yarn ? rope.attention_factor : 1.0;
  for (Eigen::Index t = 0; t < x.rows(); ++t) {
    const double position = static_cast<double>(first_position + t);
    for (int i = 0; i < half; ++i) {
      const double angle = position * inv[i];
      const double c = std::cos(angle) * gain, s = std::sin(angle) * gain;
      for (int h = 0; h < heads; ++h) {
        float* v = x.row(t).data() + static_cast<std::ptrdiff_t>(h) * hd;
        const double a = v[i], b = v[i + half];
        v[i] = static_cast<float>(a * c - b * s);
        v[i + half] = static_cast<float>(b * c + a * s);
      }
    }
  }
}

// [SECTION] the forward pass -----------------------------------------------------------------

namespace {

// A head's output (T, hd) as the intervention has it: the source run's when patched; zeros, or at
// each query the mean over the positions it may see (0 … i when causal, all otherwise; never the
// last `padding` ones), when ablated.
void edit_head_output(const Intervention& edit, bool causal, int layer, int head, int padding, Matrix& out) {
  for (const HeadPatch& patch : edit.head_patches)
    if (patch.layer == layer && patch.head == head) {
      out = patch.output;
      return;
    }
  if (std::find(edit.ablate.begin(), edit.ablate.end(), HeadRef{layer, head}) == edit.ablate.end()) return;
  if (edit.ablate_kind == AblateKind::Zero) {
    out.setZero();
    return;
  }
  const Eigen::Index seen = out.rows() - padding;  // the rows a mean may read
  if (!causal) {
    const Eigen::RowVectorXf mean = out.topRows(seen).colwise().mean();
    out.rowwise() = mean;
    return;
  }
  Eigen::RowVectorXd sum = Eigen::RowVectorXd::Zero(out.cols());  // running sum over 0 … i, in double
  for (Eigen::Index i = 0; i < out.rows(); ++i) {
    if (i < seen) sum += out.row(i).cast<double>();
    out.row(i) = (sum / static_cast<double>(std::min(i + 1, seen))).cast<float>();
  }
}

// The stream entering layer `layer` with the intervention's rows for it written in.
void patch_stream(const Intervention* edit, int layer, Matrix& x) {
  if (!edit) return;
  for (const StreamPatch& patch : edit->stream_patches)
    if (patch.layer == layer) x.row(patch.position) = patch.row;
}

// A layer's heads from its normalised input x (T, C): q, k, v, then each head's q/k norm and
// rotation, then attention per query head over its shared K/V head with the layer's scale, cap and
// mask. The forward and layer_detail both run this, so a recomputed layer has the forward's numbers.
// `detail` (layer_detail): keep q and k before the norm and the rotation and every head's weights;
// otherwise one weights buffer serves every head, and `keep` (when given) gets each head's summary
// and thumbnail. `edit` (may be null) is the run's intervention, applied to layer `layer`: cut links
// hidden before each head's softmax, ablated or patched heads' outputs replaced after it. The last
// `padding` keys are hidden from every query.
void attend_layer(const TransformerConfig& cfg, const TransformerBlock& b, const LayerSpec& spec, const Matrix& x,
                  bool detail, Backend backend, LayerDetail& d, LayerTrace* keep, const Intervention* edit, int layer,
                  int padding) {
  const int T = static_cast<int>(x.rows()), H = cfg.n_head, KV = cfg.n_kv_head, hd = cfg.head_dim;
  Matrix qkv;
  linear_forward(x, b.qkv, b.qkv_b, qkv, backend);
  d.query = qkv.middleCols(0, H * hd);
  d.key = qkv.middleCols(H * hd, KV * hd);
  d.value = qkv.middleCols((H + KV) * hd, KV * hd);
  const bool keep_projected = detail && (cfg.qk_norm || cfg.positions == PositionKind::Rope);
  if (keep_projected) d.query_projected = d.query, d.key_projected = d.key;
  if (cfg.qk_norm) {
    head_norm_forward(d.query, H, hd, b.q_norm_w, cfg);
    head_norm_forward(d.key, KV, hd, b.k_norm_w, cfg);
    if (detail) d.query_normed = d.query, d.key_normed = d.key;
  }
  if (cfg.positions == PositionKind::Rope) {
    apply_rope(d.query, H, hd, spec.rope);
    apply_rope(d.key, KV, hd, spec.rope);
  }
  d.weights.resize(detail ? static_cast<std::size_t>(H) : 1);
  d.head_outputs.resize(T, H * hd);
  Matrix q_h, k_h, v_h, out_h(T, hd);
  for (int h = 0; h < H; ++h) {
    const int g = cfg.kv_head_of(h);
    q_h = d.query.middleCols(h * hd, hd), k_h = d.key.middleCols(g * hd, hd), v_h = d.value.middleCols(g * hd, hd);
    AttentionProblem p;
    p.query = q_h.data(), p.key = k_h.data(), p.value = v_h.data();
    p.Tq = p.Tk = T, p.d = p.dv = hd;
    p.scale = cfg.score_scale;
    p.causal = cfg.causal;
    p.window = spec.window;
    p.softcap = cfg.attn_softcap;
    std::vector<unsigned char> cut;
    if (edit || padding > 0) {
      AttentionOptions cuts;
      if (edit) cuts.cuts = head_cuts(*edit, layer, h);
      cut = cut_mask(cuts, T, T);
      if (padding > 0) {
        // the padding keys (trailing columns) hidden from every query, as the cut links are
        if (cut.empty()) cut.assign(static_cast<std::size_t>(T) * static_cast<std::size_t>(T), 0);
        for (int i = 0; i < T; ++i)
          for (int j = T - padding; j < T; ++j) cut[static_cast<std::size_t>(i) * static_cast<std::size_t>(T) + j] = 1;
      }
      p.cut = cut.empty() ? nullptr : cut.data();
    }
    Matrix& w = d.weights[detail ? static_cast<std::size_t>(h) : 0];
    w.resize(T, T);
    attention_forward(backend, p, out_h.data(), w.data());
    if (edit) edit_head_output(*edit, cfg.causal, layer, h, padding, out_h);
    d.head_outputs.middleCols(h * hd, hd) = out_h;
    if (keep) {
      keep->summaries.push_back(summarize_head(w, cfg.causal, &v_h));
      keep->thumbnails.push_back(max_pooled(w, kThumbnailSide));
    }
  }
}

// What the attention adds to the stream: W_O over the joined head outputs (+ b_O), normed again with
// sandwich norms. Row by row: a row of the output depends on that row of head_outputs only.
Matrix attention_update(const TransformerConfig& cfg, const TransformerBlock& b, const Matrix& head_outputs,
                        Backend backend) {
  Matrix projected;
  linear_forward(head_outputs, b.o, b.o_b, projected, backend);
  if (cfg.sandwich_norms) norm_forward(Matrix(projected), b.post_attn_norm_w, Vector(), cfg, projected);
  return projected;
}

// What the MLP adds to the stream x (after the attention's update), row by row as well: on kMlpRows
// rows at a time, so its hidden layer, 2 · d_ff wide when gated, stays (kMlpRows, 2 · d_ff) at any T.
Matrix mlp_update(const TransformerConfig& cfg, const TransformerBlock& b, const Matrix& x, Backend backend) {
  Matrix normed, projected(x.rows(), x.cols());
  if (cfg.post_norm) normed = x;  // post-norm: the MLP reads the stream itself, its norm comes after the add
  else norm_forward(x, b.mlp_norm_w, b.mlp_norm_b, cfg, normed);
  constexpr Eigen::Index kMlpRows = 128;
  Matrix rows, hidden, out;
  for (Eigen::Index t0 = 0; t0 < x.rows(); t0 += kMlpRows) {
    const Eigen::Index n = std::min(kMlpRows, x.rows() - t0);
    rows = normed.middleRows(t0, n);
    linear_forward(rows, b.up, b.up_b, hidden, backend);
    mlp_activation(hidden, cfg);
    linear_forward(hidden, b.down, b.down_b, out, backend);
    projected.middleRows(t0, n) = out;
  }
  if (cfg.sandwich_norms) norm_forward(Matrix(projected), b.post_mlp_norm_w, Vector(), cfg, projected);
  return projected;
}

// One block on the residual stream x (T, C), in place: x += attention(norm(x)), then x += MLP(norm(x)).
// The forward runs it on every layer; layer_detail on the layers between the nearest kept stream and
// the one asked for. The attention's buffers are gone before the MLP's exist: the forward's memory is
// the larger of the two, not their sum.
// The block's attention on the stream x: d.x its norm (the stream itself with post-norm blocks), then
// every head (in full with `detail`).
void attend_block(const TransformerConfig& cfg, const TransformerBlock& b, const LayerSpec& spec, const Matrix& x,
                  bool detail, Backend backend, LayerDetail& d, LayerTrace* keep, const Intervention* edit, int layer,
                  int padding) {
  if (cfg.post_norm) d.x = x;
  else norm_forward(x, b.attn_norm_w, b.attn_norm_b, cfg, d.x);
  attend_layer(cfg, b, spec, d.x, detail, backend, d, keep, edit, layer, padding);
}

// Post-norm blocks (an encoder's) norm after each add: x = attn_norm(x + attn(x)), x = mlp_norm(x + mlp(x)).
void block_forward(const TransformerConfig& cfg, const TransformerBlock& b, const LayerSpec& spec, Matrix& x,
                   Backend backend, LayerTrace* keep, const Intervention* edit, int layer, int padding) {
  {
    LayerDetail d;
    attend_block(cfg, b, spec, x, false, backend, d, keep, edit, layer, padding);
    x += attention_update(cfg, b, d.head_outputs, backend);
    if (cfg.post_norm) norm_forward(Matrix(x), b.attn_norm_w, b.attn_norm_b, cfg, x);
  }
  x += mlp_update(cfg, b, x, backend);
  if (cfg.post_norm) norm_forward(Matrix(x), b.mlp_norm_w, b.mlp_norm_b, cfg, x);
}

// The masked-LM head's transform on rows (R, C), in place: dense (+ bias), the activation, LayerNorm.
void head_transform_forward(const Transformer& model, Matrix& rows, Backend backend) {
  const TransformerConfig& cfg = model.config;
  Matrix dense;
  linear_forward(rows, model.head_dense, model.head_dense_b, dense, backend);
  for (Eigen::Index i = 0; i < dense.size(); ++i) dense.data()[i] = activate(cfg.activation, dense.data()[i]);
  norm_forward(dense, model.head_norm_w, model.head_norm_b, cfg, rows);
}

// The LM head: its own, or the tied embedding; (V, C) either way.
const Weights& lm_head(const Transformer& model) { return model.lm_head.empty() ? model.embed : model.lm_head; }

// The LM head on the final-normed rows (rows, C): for each row the k most likely next tokens. The
// head (V, C) is read in slices of the vocabulary (a slice of a (V, C) matrix is a run of its rows),
// each slice's logits folded into a running softmax (its max and its sum of exponentials) and a
// running top k, so no (rows, V) block of logits exists: a 262 144-token vocabulary at T = 256 would
// be 256 MiB of them, SmolLM2's 49 152 is 48 MiB.
// The slices are sized for `slice_rows` rows (the rows given, unless the caller predicts a part of
// a larger set and wants that set's slices: the sums, and so the last bits of p, follow them).
void predict_next(const TransformerConfig& cfg, const Weights& head, const Vector& head_b, const Matrix& rows_in, int k,
                  Backend backend, std::vector<NextToken>* next, int slice_rows = -1) {
  constexpr std::int64_t kLogitFloats = 1 << 18;  // one slice's logits: 1 MiB
  const int R = static_cast<int>(rows_in.rows()), V = cfg.vocab_size, C = cfg.d_model;
  const int sized_for = slice_rows >= 0 ? slice_rows : R;
  const int slice = static_cast<int>(std::clamp<std::int64_t>(kLogitFloats / std::max(sized_for, 1), 256, V));
  struct Candidate {
    float logit;
    int id;
  };
  // the better of two: the larger logit, ties the lower id
  const auto better = [](const Candidate& a, const Candidate& b) { return a.logit != b.logit ? a.logit > b.logit : a.id < b.id; };
  std::vector<double> max(static_cast<std::size_t>(R), -std::numeric_limits<double>::infinity()), sum(static_cast<std::size_t>(R), 0.0);
  std::vector<std::vector<Candidate>> best(static_cast<std::size_t>(R));  // per row: the k best so far, best first
  std::vector<Candidate> pool;  // one row's k best and what of the slice may beat them
  Matrix logits;
  for (int v0 = 0; v0 < V; v0 += slice) {
    const int n = std::min(slice, V - v0);
    logits.resize(R, n);
    MatmulProblem p;
    p.layout = MatmulLayout::NT;
    p.a = rows_in.data();
    const std::size_t offset = static_cast<std::size_t>(v0) * static_cast<std::size_t>(C);
    if (head.dtype == Dtype::F32) p.b = head.f32.data() + offset;
    else p.b16 = head.u16.data() + offset, p.b_dtype = head.dtype;
    p.bias = head_b.size() ? head_b.data() + v0 : nullptr;  // the head's own bias (a masked-LM head's)
    p.M = R, p.K = C, p.N = n;
    matmul(backend, p, logits.data());
    for (int r = 0; r < R; ++r) {
      float* row = logits.row(r).data();
      if (cfg.final_softcap > 0)
        for (int v = 0; v < n; ++v) row[v] = std::tanh(row[v] / cfg.final_softcap) * cfg.final_softcap;
      double& m = max[static_cast<std::size_t>(r)];
      double& s = sum[static_cast<std::size_t>(r)];
      const double slice_max = *std::max_element(row, row + n);
      if (slice_max > m) s *= std::exp(m - slice_max), m = slice_max;  // subtracted so exp cannot overflow
      const float mf = static_cast<float>(m);  // a logit, so exactly a float
      for (int v = 0; v < n; ++v) s += std::exp(row[v] - mf);
      std::vector<Candidate>& b = best[static_cast<std::size_t>(r)];
      // once k are kept, only a larger logit than the k-th can enter (an equal one has a higher id)
      const bool full = static_cast<int>(b.size()) == k;
      const float floor = full ? b.back().logit : -std::numeric_limits<float>::infinity();
      pool.assign(b.begin(), b.end());
      for (int v = 0; v < n; ++v)
        if (!full || row[v] > floor) pool.push_back({row[v], v0 + v});
      if (static_cast<int>(pool.size()) > k) std::nth_element(pool.begin(), pool.begin() + (k - 1), pool.end(), better);
      b.assign(pool.begin(), pool.begin() + std::min<std::ptrdiff_t>(k, static_cast<std::ptrdiff_t>(pool.size())));
      std::sort(b.begin(), b.end(), better);
    }
  }
  for (int r = 0; r < R; ++r) {
    const double m = max[static_cast<std::size_t>(r)], inv = 1.0 / sum[static_cast<std::size_t>(r)];
    std::vector<NextToken>& out = next[r];
    for (const Candidate& c : best[static_cast<std::size_t>(r)]) out.push_back({c.id, static_cast<float>(std::exp(c.logit - m) * inv)});
    // best first by probability as shown (ties: the lower id first)
    std::sort(out.begin(), out.end(), [](const NextToken& a, const NextToken& b) { return a.p != b.p ? a.p > b.p : a.id < b.id; });
  }
}

// Layers from … n_layer − 1 on the stream x entering `from`, then the final norm and the LM head
// (positions predict_from … T − 1), into trace (its layers and streams before `from` already there).
// Layer l of the forward on x (T, C), kept into trace.
void run_layer(const Transformer& model, const ForwardOptions& options, int l, Matrix& x, ModelTrace& trace) {
  const TransformerConfig& cfg = model.config;
  const Intervention* edit = trace.intervention.empty() ? nullptr : &trace.intervention;
  patch_stream(edit, l, x);
  if (l % trace.stream_every == 0) trace.streams.push_back(x);
  block_forward(cfg, model.blocks[static_cast<std::size_t>(l)], cfg.layers[static_cast<std::size_t>(l)], x,
                options.backend, &trace.layers[static_cast<std::size_t>(l)], edit, l, trace.padding);
}

// After the last layer: the final norm, the head's transform and the LM head's rows.
void finish_forward(const Transformer& model, const ForwardOptions& options, Matrix& x, ModelTrace& trace) {
  const TransformerConfig& cfg = model.config;
  const int T = static_cast<int>(x.rows());
  if (cfg.post_norm) trace.final_normed = x;  // the last block ended with its norm
  else norm_forward(x, model.final_norm_w, model.final_norm_b, cfg, trace.final_normed);
  if (cfg.head_transform) head_transform_forward(model, trace.final_normed, options.backend);
  trace.next.resize(static_cast<std::size_t>(T));
  const int first = std::clamp(options.predict_from, 0, T);
  if (!cfg.has_lm_head || options.top_k <= 0 || first == T) return;
  predict_next(cfg, lm_head(model), model.lm_head_b, trace.final_normed.bottomRows(T - first),
               std::min(options.top_k, cfg.vocab_size), options.backend, trace.next.data() + first);
}

void run_layers(const Transformer& model, const ForwardOptions& options, int from, Matrix& x, ModelTrace& trace) {
  for (int l = from; l < model.config.n_layer; ++l) run_layer(model, options, l, x, trace);
  finish_forward(model, options, x, trace);
}

// transformer_forward's refusals (see transformer.h).
void check_forward_inputs(const Transformer& model, const std::vector<int>& token_ids, const ForwardOptions& options) {
  const TransformerConfig& cfg = model.config;
  const int T = static_cast<int>(token_ids.size());
  const int longest = cfg.positions == PositionKind::Learned ? std::min(cfg.n_positions - cfg.position_offset, kMaxModelTokens)
                                                             : kMaxModelTokens;
  if (T == 0) throw std::invalid_argument("text: no tokens to read");
  if (T > longest)
    throw std::invalid_argument("text: " + std::to_string(T) + " tokens; this model reads at most " +
                                std::to_string(longest));
  for (int id : token_ids)
    if (id < 0 || id >= cfg.vocab_size)
      throw std::invalid_argument("text: token id " + std::to_string(id) + " is outside the vocabulary (0 to " +
                                  std::to_string(cfg.vocab_size - 1) + ")");
  if (options.padding < 0 || options.padding >= T)
    throw std::invalid_argument("padding: " + std::to_string(options.padding) + " of " + std::to_string(T) +
                                " tokens; it must leave at least one token that is not padding");
  const std::vector<int>& types = options.token_types;
  if (!types.empty()) {
    if (static_cast<int>(types.size()) != T)
      throw std::invalid_argument("token types: " + std::to_string(types.size()) + " for " + std::to_string(T) + " tokens");
    for (int type : types)
      if (type < 0 || type >= std::max(cfg.n_token_types, 1) || (cfg.n_token_types == 0 && type != 0))
        throw std::invalid_argument("token types: type " + std::to_string(type) + " is not one this model has (" +
                                    (cfg.n_token_types > 0 ? "0 to " + std::to_string(cfg.n_token_types - 1) : std::string("none")) + ")");
  }
  const Intervention* edit = options.intervention && !options.intervention->empty() ? options.intervention : nullptr;
  if (edit) validate_intervention(cfg, T, *edit, options.padding);
}

// Every layer's stream while they fit in the budget, else every stream_every-th.
int stream_every_for(const TransformerConfig& cfg, int T, const ForwardOptions& options) {
  const std::int64_t all_streams = static_cast<std::int64_t>(cfg.n_layer) * T * cfg.d_model * static_cast<std::int64_t>(sizeof(float));
  const std::int64_t budget = std::max<std::int64_t>(options.stream_bytes, 1);
  const std::int64_t every = all_streams / budget + (all_streams % budget != 0);  // ⌈all / budget⌉ without overflow
  return static_cast<int>(std::clamp<std::int64_t>(every, 1, std::max(cfg.n_layer, 1)));
}

// The residual stream entering layer 0 at positions first … T − 1 ((T − first, C)): the token's
// embedding (· embed_scale), plus its position's row for a learned table (from row
// position_offset) and its type's row for a token-type table, then the embedding norm where the
// model has one. Row by row.
Matrix embed_tokens(const Transformer& model, const std::vector<int>& token_ids, const std::vector<int>& types, int first) {
  const TransformerConfig& cfg = model.config;
  const int T = static_cast<int>(token_ids.size());
  Matrix x(T - first, cfg.d_model);
  for (int t = first; t < T; ++t) {
    auto row = x.row(t - first);
    row = model.embed.row(token_ids[static_cast<std::size_t>(t)]) * cfg.embed_scale;
    if (cfg.n_token_types > 0) row += model.token_type_table.row(types.empty() ? 0 : types[static_cast<std::size_t>(t)]);
    if (cfg.positions == PositionKind::Learned) row += model.position_table.row(t + cfg.position_offset);
  }
  if (cfg.embed_norm) norm_forward(Matrix(x), model.embed_norm_w, model.embed_norm_b, cfg, x);
  return x;
}

}  // namespace

namespace {
// The trace's frame before the first layer, and the embedded tokens (T, C) into x.
ModelTrace begin_forward(const Transformer& model, const std::vector<int>& token_ids, const ForwardOptions& options, Matrix& x) {
  check_forward_inputs(model, token_ids, options);
  const TransformerConfig& cfg = model.config;
  const int T = static_cast<int>(token_ids.size());
  const Intervention* edit = options.intervention && !options.intervention->empty() ? options.intervention : nullptr;
  ModelTrace trace;
  trace.token_ids = token_ids;
  trace.padding = options.padding;
  trace.token_types = options.token_types;
  if (edit) trace.intervention = *edit;
  trace.layers.resize(static_cast<std::size_t>(cfg.n_layer));
  trace.stream_every = stream_every_for(cfg, T, options);
  x = embed_tokens(model, token_ids, options.token_types, 0);
  return trace;
}
}  // namespace

ModelTrace transformer_forward(const Transformer& model, const std::vector<int>& token_ids, const ForwardOptions& options) {
  Matrix x;
  ModelTrace trace = begin_forward(model, token_ids, options, x);
  run_layers(model, options, 0, x, trace);
  return trace;
}

ForwardInSlices::ForwardInSlices(std::shared_ptr<const Transformer> model, const std::vector<int>& token_ids,
                                 const ForwardOptions& options)
    : model_(std::move(model)), options_(options) {
  if (options_.intervention && !options_.intervention->empty()) refuse("forward in slices", "an intervention is not sliced");
  options_.intervention = nullptr;
  trace_ = begin_forward(*model_, token_ids, options_, x_);
}

bool ForwardInSlices::step() {
  const int L = model_->config.n_layer;
  if (layer_ > L) return true;
  if (layer_ < L) run_layer(*model_, options_, layer_, x_, trace_);
  else finish_forward(*model_, options_, x_, trace_);
  ++layer_;
  return layer_ > L;
}

ModelTrace rerun_forward(const Transformer& model, const ModelTrace& base, const Intervention& intervention,
                         const ForwardOptions& options) {
  const TransformerConfig& cfg = model.config;
  const int T = static_cast<int>(base.token_ids.size());
  if (!base.intervention.empty()) refuse("rerun", "the run to start from has an intervention of its own");
  if (static_cast<int>(base.layers.size()) != cfg.n_layer || base.streams.empty()) refuse("rerun", "the run is not this model's");
  validate_intervention(cfg, T, intervention, base.padding);
  if (intervention.empty()) {
    ForwardOptions same = options;
    same.intervention = nullptr, same.padding = base.padding, same.token_types = base.token_types;
    return transformer_forward(model, base.token_ids, same);
  }
  // from the nearest kept stream at or before the first layer it changes; the layers before are base's
  const int from = std::min(intervention.first_layer(), cfg.n_layer - 1) / base.stream_every * base.stream_every;
  ModelTrace trace;
  trace.token_ids = base.token_ids;
  trace.intervention = intervention;
  trace.padding = base.padding;
  trace.token_types = base.token_types;
  trace.stream_every = base.stream_every;
  trace.layers.assign(base.layers.begin(), base.layers.begin() + from);
  trace.layers.resize(static_cast<std::size_t>(cfg.n_layer));
  trace.streams.assign(base.streams.begin(), base.streams.begin() + from / base.stream_every);
  Matrix x = base.streams[static_cast<std::size_t>(from / base.stream_every)];
  run_layers(model, options, from, x, trace);
  return trace;
}

// [SECTION] the incremental forward ----------------------------------------------------------

std::size_t ForwardCache::bytes() const {
  std::size_t n = 0;
  for (const Layer& l : layers) {
    n += sizeof(float) * static_cast<std::size_t>(l.key.size() + l.value.size() + l.head_outputs.size()) +
         sizeof(std::size_t) * l.row_start.size();
    for (const std::vector<float>& rows : l.weight_rows) n += sizeof(float) * rows.size();
  }
  return n;
}

namespace {

// The kernels' flavours now: a cache made on others is dropped (their rows' last bits differ).
std::string kernel_flavours() { return std::string(simd_flavour()) + "/" + matmul_simd_flavour(); }

// Query rows the attention kernel computes together in this model's layers (see
// attention_row_block): the incremental forward starts at a multiple of it. 1 where every row is
// alone or where the rows' numbers depend on T anyway (the Eigen form).
int row_alignment(const TransformerConfig& cfg, Backend backend) {
  int align = 1;
  for (const LayerSpec& spec : cfg.layers) {
    AttentionProblem p;
    p.causal = cfg.causal, p.window = spec.window, p.softcap = cfg.attn_softcap;
    const int block = attention_row_block(backend, p);
    if (block > 1) align = std::lcm(align, block);
  }
  return align;
}

// The attention's and the MLP's updates of rows x from their heads' joined outputs, as block_forward adds them.
void add_updates(const TransformerConfig& cfg, const TransformerBlock& b, const Matrix& head_outputs, Matrix& x,
                 Backend backend) {
  x += attention_update(cfg, b, head_outputs, backend);
  if (cfg.post_norm) norm_forward(Matrix(x), b.attn_norm_w, b.attn_norm_b, cfg, x);
  x += mlp_update(cfg, b, x, backend);
  if (cfg.post_norm) norm_forward(Matrix(x), b.mlp_norm_w, b.mlp_norm_b, cfg, x);
}

// Layer `layer` for the rows first … T − 1 of the text, on their stream x ((T − first, C), in
// place): the forward's block_forward and attend_layer, row by row, each new query row against
// every cached key (the cache's K and V hold rows 0 … first − 1 on entry, 0 … T − 1 on return).
// Each head's summary and thumbnail are read again over all T weight rows.
// `sums_at`: the row whose summary sums the cache keeps for the next call (where an append would start).
void block_forward_rows(const TransformerConfig& cfg, const TransformerBlock& b, const LayerSpec& spec, int first, int T,
                        int sums_at, Matrix& x, Backend backend, ForwardCache::Layer& cached, LayerTrace& keep) {
  const int n = T - first, H = cfg.n_head, KV = cfg.n_kv_head, hd = cfg.head_dim;
  // pass 1: q, k, v of the new rows (norm, projection, q/k norm, RoPE at positions first …)
  Matrix normed, qkv;
  if (cfg.post_norm) normed = x;
  else norm_forward(x, b.attn_norm_w, b.attn_norm_b, cfg, normed);
  linear_forward(normed, b.qkv, b.qkv_b, qkv, backend);
  Matrix query = qkv.middleCols(0, H * hd), key = qkv.middleCols(H * hd, KV * hd),
         value = qkv.middleCols((H + KV) * hd, KV * hd);
  if (cfg.qk_norm) {
    head_norm_forward(query, H, hd, b.q_norm_w, cfg);
    head_norm_forward(key, KV, hd, b.k_norm_w, cfg);
  }
  if (cfg.positions == PositionKind::Rope) {
    apply_rope(query, H, hd, spec.rope, first);
    apply_rope(key, KV, hd, spec.rope, first);
  }
  // pass 2: the cache's K and V grow to T rows
  cached.key.conservativeResize(T, KV * hd);
  cached.value.conservativeResize(T, KV * hd);
  cached.key.bottomRows(n) = key;
  cached.value.bottomRows(n) = value;
  // where each weight row begins: row i keeps the keys lo_i … i it may see
  const auto lowest_key = [&](int i) { return spec.window > 0 ? std::max(0, i - spec.window + 1) : 0; };
  cached.row_start.resize(static_cast<std::size_t>(first) + 1);
  for (int i = first; i < T; ++i)
    cached.row_start.push_back(cached.row_start.back() + static_cast<std::size_t>(i - lowest_key(i) + 1));
  cached.weight_rows.resize(static_cast<std::size_t>(H));
  // pass 3: per query head, the new rows against all T keys of its K/V head, then its summary (the
  // cached sums of the rows before, where they reach no further than the rows kept) and thumbnail
  Matrix head_outputs(n, H * hd), q_h, k_h, v_h, out_h(n, hd), w(n, T);
  const bool sums_kept = static_cast<int>(cached.sums.size()) == H && cached.sums_row <= first;
  const int sums_from = sums_kept ? cached.sums_row : 0;
  cached.sums.resize(static_cast<std::size_t>(H));
  for (int h = 0; h < H; ++h) {
    const int g = cfg.kv_head_of(h);
    q_h = query.middleCols(h * hd, hd), k_h = cached.key.middleCols(g * hd, hd), v_h = cached.value.middleCols(g * hd, hd);
    std::vector<float>& rows = cached.weight_rows[static_cast<std::size_t>(h)];
    rows.resize(cached.row_start[static_cast<std::size_t>(first)]);
    if (n > 0) {
      AttentionProblem p;
      p.query = q_h.data(), p.key = k_h.data(), p.value = v_h.data();
      p.Tq = n, p.Tk = T, p.d = p.dv = hd;
      p.first_query = first;
      p.scale = cfg.score_scale;
      p.causal = cfg.causal;
      p.window = spec.window;
      p.softcap = cfg.attn_softcap;
      attention_forward(backend, p, out_h.data(), w.data());
      head_outputs.middleCols(h * hd, hd) = out_h;
      for (int i = first; i < T; ++i) {
        const float* row = w.row(i - first).data();
        rows.insert(rows.end(), row + lowest_key(i), row + i + 1);
      }
    }
    // the forward's summary and thumbnail of the whole (T, T) matrix: exactly 0 off the kept keys
    HeadSummarySums sums = sums_kept ? cached.sums[static_cast<std::size_t>(h)] : HeadSummarySums();
    keep.thumbnails.emplace_back();
    PooledRows pool(keep.thumbnails.back(), T, T, kThumbnailSide);
    for (int i = 0; i < T; ++i) {
      const float* kept = rows.data() + cached.row_start[static_cast<std::size_t>(i)];
      const int lo = lowest_key(i);
      pool.add_row(i, kept, lo, i - lo + 1);
      if (i == sums_at) cached.sums[static_cast<std::size_t>(h)] = sums;
      if (i >= sums_from) sums.add_row(i, i + 1, kept, lo);
    }
    if (sums_at == T) cached.sums[static_cast<std::size_t>(h)] = sums;
    keep.summaries.push_back(sums.summary(T, &v_h));
  }
  cached.sums_row = sums_at;
  if (n == 0) return;
  cached.head_outputs.conservativeResize(T, H * hd);
  cached.head_outputs.bottomRows(n) = head_outputs;
  // pass 4: the attention's and the MLP's updates of the new rows
  add_updates(cfg, b, head_outputs, x, backend);
}

// A hash (FNV-1a) of 16 numbers spread over each matrix and of the norms' first weight: a model
// loaded at the same address, or trained since, differs in them.
std::uint64_t weights_sample(const Transformer& model) {
  std::uint64_t hash = 1469598103934665603ull;
  const auto mix = [&](float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    hash = (hash ^ bits) * 1099511628211ull;
  };
  const auto sample = [&](const Weights& w) {
    const std::int64_t n = w.size();
    for (std::int64_t i = 0; i < std::min<std::int64_t>(n, 16); ++i) {
      const std::int64_t at = n > 16 ? i * (n / 16) + i % (n / 16) : i;
      mix(w.at(static_cast<int>(at / w.cols), static_cast<int>(at % w.cols)));
    }
  };
  sample(model.embed), sample(model.position_table), sample(model.lm_head);
  for (const TransformerBlock& b : model.blocks) {
    sample(b.qkv), sample(b.o), sample(b.up), sample(b.down);
    for (const Vector* v : {&b.attn_norm_w, &b.mlp_norm_w, &b.qkv_b})
      if (v->size()) mix((*v)[0]);
  }
  if (model.final_norm_w.size()) mix(model.final_norm_w[0]);
  return hash;
}

// Whether the cache was made by this model with these options (and can be extended to T tokens).
bool cache_matches(const ForwardCache& cache, const Transformer& model, const ForwardOptions& options) {
  return !cache.token_ids.empty() && cache.model == &model && cache.config == model.config &&
         cache.weights_sample == weights_sample(model) &&
         cache.backend == options.backend && cache.top_k == options.top_k && cache.predict_from == options.predict_from &&
         cache.stream_bytes == options.stream_bytes && cache.kernels == kernel_flavours() &&
         static_cast<int>(cache.layers.size()) == model.config.n_layer;
}

}  // namespace

ModelTrace transformer_forward_cached(const Transformer& model, const std::vector<int>& token_ids, ForwardCache& cache,
                                      const ForwardOptions& options, int* recomputed_from) {
  check_forward_inputs(model, token_ids, options);
  const TransformerConfig& cfg = model.config;
  const int T = static_cast<int>(token_ids.size()), C = cfg.d_model, L = cfg.n_layer;
  if (recomputed_from) *recomputed_from = 0;
  const bool edited = options.intervention && !options.intervention->empty();
  if (!cfg.causal || edited || options.padding > 0 || !options.token_types.empty()) {
    // a key after the query may count (an encoder), or a run the cache does not describe
    cache.clear();
    return transformer_forward(model, token_ids, options);
  }
  // first: where the rows to compute begin. The rows before the first changed token are kept, from
  // the start of the kernel's block of query rows that holds it (its rows' last bits depend on the
  // rows computed with them). The kept streams must be kept in the old trace too.
  const int every = stream_every_for(cfg, T, options);
  const int align = row_alignment(cfg, options.backend);
  const int sums_at = T / align * align;  // where the next call starts when it appends
  int first = 0;
  if (cache_matches(cache, model, options)) {
    const int old_T = static_cast<int>(cache.token_ids.size());
    const auto changed = std::mismatch(token_ids.begin(), token_ids.end(), cache.token_ids.begin(), cache.token_ids.end());
    const int same = static_cast<int>(changed.first - token_ids.begin());
    if (same == T && T == old_T) {
      if (recomputed_from) *recomputed_from = T;
      return cache.trace;
    }
    const int old_every = cache.trace.stream_every;
    // a prefix of the old text recomputes its last row (at least one row keeps every matrix non-empty)
    if (every % old_every == 0) first = std::min(same, T - 1) / align * align;  // the kept layers: a subset of the old
  }
  if (first == 0) {
    cache.clear();
    cache.model = &model, cache.config = cfg, cache.weights_sample = weights_sample(model), cache.backend = options.backend;
    cache.top_k = options.top_k, cache.predict_from = options.predict_from, cache.stream_bytes = options.stream_bytes;
    cache.kernels = kernel_flavours();
    cache.layers.resize(static_cast<std::size_t>(L));
    for (ForwardCache::Layer& l : cache.layers) l.row_start = {0};
  }
  const ModelTrace& old = cache.trace;
  ModelTrace trace;
  trace.token_ids = token_ids;
  trace.layers.resize(static_cast<std::size_t>(L));
  trace.stream_every = every;
  Matrix x = embed_tokens(model, token_ids, {}, first);  // (T − first, C): the rows computed
  for (int l = 0; l < L; ++l) {
    const std::size_t li = static_cast<std::size_t>(l);
    if (l % every == 0) {
      Matrix stream(T, C);
      if (first > 0) stream.topRows(first) = old.streams[static_cast<std::size_t>(l / old.stream_every)].topRows(first);
      stream.bottomRows(T - first) = x;
      trace.streams.push_back(std::move(stream));
    }
    block_forward_rows(cfg, model.blocks[li], cfg.layers[li], first, T, sums_at, x, options.backend, cache.layers[li],
                       trace.layers[li]);
  }
  // the final norm (or the last block's own) and the head's transform, row by row
  trace.final_normed.resize(T, C);
  if (first > 0) trace.final_normed.topRows(first) = old.final_normed.topRows(first);
  Matrix normed;
  if (cfg.post_norm) normed = x;
  else norm_forward(x, model.final_norm_w, model.final_norm_b, cfg, normed);
  if (cfg.head_transform) head_transform_forward(model, normed, options.backend);
  trace.final_normed.bottomRows(T - first) = normed;
  // the LM head on the new rows, its vocabulary slices sized as the whole forward sizes them
  trace.next.resize(static_cast<std::size_t>(T));
  for (int t = 0; t < first; ++t) trace.next[static_cast<std::size_t>(t)] = old.next[static_cast<std::size_t>(t)];
  const int predicted = std::clamp(options.predict_from, 0, T), from = std::max(predicted, first);
  if (cfg.has_lm_head && options.top_k > 0 && from < T)
    predict_next(cfg, lm_head(model), model.lm_head_b, trace.final_normed.bottomRows(T - from),
                 std::min(options.top_k, cfg.vocab_size), options.backend, trace.next.data() + from, T - predicted);
  cache.token_ids = token_ids;
  cache.trace = trace;
  if (recomputed_from) *recomputed_from = first;
  return trace;
}

std::vector<LayerDetail> cached_layer_rows(const Transformer& model, const ForwardCache& cache, int position, Backend backend) {
  const TransformerConfig& cfg = model.config;
  if (cache.token_ids.empty() || cache.model != &model || !(cache.config == cfg) ||
      static_cast<int>(cache.layers.size()) != cfg.n_layer)
    refuse("cache", "it was not made by this model");
  if (position < 0 || position >= static_cast<int>(cache.token_ids.size())) refuse("position", "outside the text");
  const ModelTrace& trace = cache.trace;
  std::vector<LayerDetail> rows(static_cast<std::size_t>(cfg.n_layer));
  Matrix x;
  for (int l = 0; l < cfg.n_layer; ++l) {
    const std::size_t li = static_cast<std::size_t>(l);
    // the stream: the trace's where it keeps this layer's, else the row carried on from the last kept one
    if (l % trace.stream_every == 0) x = trace.streams[static_cast<std::size_t>(l / trace.stream_every)].row(position);
    else add_updates(cfg, model.blocks[li - 1], rows[li - 1].head_outputs, x, backend);
    rows[li].stream_in = x;
    rows[li].head_outputs = cache.layers[li].head_outputs.row(position);
  }
  return rows;
}

std::vector<NextToken> next_tokens_at(const Transformer& model, const ModelTrace& trace, int position, int k, Backend backend) {
  if (position < 0 || position >= trace.final_normed.rows() || k <= 0 || !model.config.has_lm_head) return {};
  std::vector<NextToken> next;
  predict_next(model.config, lm_head(model), model.lm_head_b, trace.final_normed.row(position),
               std::min(k, model.config.vocab_size), backend, &next);
  return next;
}

std::vector<NextToken> top_next_tokens(const ModelTrace& trace, int position, int k) {
  if (position < 0 || position >= static_cast<int>(trace.next.size()) || k <= 0) return {};
  const std::vector<NextToken>& all = trace.next[static_cast<std::size_t>(position)];
  return {all.begin(), all.begin() + std::min<std::size_t>(all.size(), static_cast<std::size_t>(k))};
}

// [SECTION] interventions ----------------------------------------------------------------------

const char* ablate_kind_name(AblateKind k) { return k == AblateKind::Zero ? "zero" : "mean"; }

int Intervention::first_layer() const {
  int first = std::numeric_limits<int>::max();
  for (const HeadRef& a : ablate) first = std::min(first, a.layer);
  for (const LinkCut& c : cuts) first = std::min(first, c.layer);
  for (const HeadPatch& p : head_patches) first = std::min(first, p.layer);
  for (const StreamPatch& p : stream_patches) first = std::min(first, p.layer);
  return first;
}

std::vector<std::pair<int, int>> head_cuts(const Intervention& edit, int layer, int head) {
  std::vector<std::pair<int, int>> links;
  for (const LinkCut& c : edit.cuts)
    if (c.layer == layer && (c.head == head || c.head < 0)) links.emplace_back(c.query, c.key);
  return links;
}

void validate_intervention(const TransformerConfig& c, int T, const Intervention& edit, int padding) {
  const auto name = [](int layer, int head) { return std::to_string(layer) + "." + (head < 0 ? "*" : std::to_string(head)); };
  const auto check_head = [&](const std::string& what, int layer, int head, bool all_allowed) {
    if (layer < 0 || layer >= c.n_layer)
      refuse(what, "layer " + std::to_string(layer) + " is outside the model (layers 0 to " + std::to_string(c.n_layer - 1) + ")");
    if (head < (all_allowed ? -1 : 0) || head >= c.n_head)
      refuse(what, "head " + std::to_string(head) + " is outside the layer (heads 0 to " + std::to_string(c.n_head - 1) + ")");
  };
  for (const HeadRef& a : edit.ablate) check_head("ablate " + name(a.layer, a.head), a.layer, a.head, false);
  std::vector<HeadRef> patched;
  for (const HeadPatch& p : edit.head_patches) {
    const std::string what = "patch " + name(p.layer, p.head);
    check_head(what, p.layer, p.head, false);
    if (p.output.rows() != T || p.output.cols() != c.head_dim)
      refuse(what, "the source's output is " + std::to_string(p.output.rows()) + " × " + std::to_string(p.output.cols()) +
                    ", not " + std::to_string(T) + " × " + std::to_string(c.head_dim) +
                    " (the two texts must have the same number of tokens)");
    if (std::find(patched.begin(), patched.end(), HeadRef{p.layer, p.head}) != patched.end()) refuse(what, "the head is patched twice");
    if (std::find(edit.ablate.begin(), edit.ablate.end(), HeadRef{p.layer, p.head}) != edit.ablate.end())
      refuse(what, "the head is ablated and patched at once: choose one");
    patched.push_back({p.layer, p.head});
  }
  for (const StreamPatch& p : edit.stream_patches) {
    const std::string what = "patch-resid " + std::to_string(p.layer) + "@" + std::to_string(p.position);
    if (p.layer < 0 || p.layer >= c.n_layer)
      refuse(what, "layer " + std::to_string(p.layer) + " is outside the model (layers 0 to " + std::to_string(c.n_layer - 1) + ")");
    if (p.position < 0 || p.position >= T)
      refuse(what, "position " + std::to_string(p.position) + " is outside the text (0 to " + std::to_string(T - 1) + ")");
    if (p.row.size() != c.d_model) refuse(what, "the source's row has " + std::to_string(p.row.size()) + " numbers, not " + std::to_string(c.d_model));
  }
  for (const LinkCut& cut : edit.cuts) {
    const std::string what = "cut " + name(cut.layer, cut.head) + ":" + std::to_string(cut.query) + "-" + std::to_string(cut.key);
    check_head(what, cut.layer, cut.head, true);
    // the head's links together (this one among them): in range, not hidden already, no query left without a key
    for (int h = cut.head < 0 ? 0 : cut.head; h < (cut.head < 0 ? c.n_head : cut.head + 1); ++h) {
      AttentionOptions o = model_attention_options(c, cut.layer);
      o.cuts = head_cuts(edit, cut.layer, h);
      // the padding keys are hidden already: a cut sees keys 0 … T − padding − 1 only
      validate_cuts(o, T, T - std::max(0, std::min(padding, T - 1)), cut.head < 0 ? what + " (head " + name(cut.layer, h) + ")" : what);
    }
  }
}

// [SECTION] one head for the views -----------------------------------------------------------

AttentionOptions model_attention_options(const TransformerConfig& c, int layer) {
  AttentionOptions o;
  o.causal = c.causal;
  o.score_scale = c.score_scale;
  o.softcap = c.attn_softcap;
  if (layer >= 0 && layer < static_cast<int>(c.layers.size())) o.window = c.layers[static_cast<std::size_t>(layer)].window;
  return o;
}

LayerDetail layer_detail(const Transformer& model, const ModelTrace& trace, int layer, Backend backend) {
  if (layer < 0 || layer >= static_cast<int>(trace.layers.size()) || layer >= model.config.n_layer)
    refuse("layer", "outside the model");
  const TransformerConfig& cfg = model.config;
  // the nearest kept stream at or before the layer, run through the layers between
  const int from = layer / trace.stream_every * trace.stream_every;
  const std::size_t kept = static_cast<std::size_t>(from / trace.stream_every);
  if (kept >= trace.streams.size()) refuse("layer", "the trace keeps no stream before it");
  const Intervention* edit = trace.intervention.empty() ? nullptr : &trace.intervention;
  Matrix x = trace.streams[kept];  // patched already where the intervention writes into it
  for (int l = from; l < layer; ++l) {
    patch_stream(edit, l, x);
    block_forward(cfg, model.blocks[static_cast<std::size_t>(l)], cfg.layers[static_cast<std::size_t>(l)], x, backend,
                  nullptr, edit, l, trace.padding);
  }
  patch_stream(edit, layer, x);
  LayerDetail d;
  const std::size_t l = static_cast<std::size_t>(layer);
  attend_block(cfg, model.blocks[l], cfg.layers[l], x, true, backend, d, nullptr, edit, layer, trace.padding);
  d.stream_in = std::move(x);
  return d;
}

StreamUpdates stream_updates(const TransformerConfig& c, const TransformerBlock& b, const LayerDetail& l, int row,
                             Backend backend) {
  if (row < 0 || row >= l.head_outputs.rows()) refuse("row", "outside the text");
  // every part of the block works row by row: this row alone gives the forward's numbers for it, up to
  // the last bit where the kernels block one row differently from many
  StreamUpdates u;
  const Matrix in = l.stream_in.row(row);
  u.attention = attention_update(c, b, l.head_outputs.middleRows(row, 1), backend).row(0);
  Matrix after = in + u.attention;
  if (c.post_norm) {
    // post-norm: the update is what the add and the norm together change
    norm_forward(Matrix(after), b.attn_norm_w, b.attn_norm_b, c, after);
    u.attention = (after - in).row(0);
  }
  u.mlp = mlp_update(c, b, after, backend).row(0);
  if (c.post_norm) {
    Matrix out = after + u.mlp;
    norm_forward(Matrix(out), b.mlp_norm_w, b.mlp_norm_b, c, out);
    u.mlp = (out - after).row(0);
  }
  return u;
}

Matrix head_contributions(const TransformerConfig& c, const TransformerBlock& b, const LayerDetail& l, int row,
                          Backend backend) {
  if (row < 0 || row >= l.head_outputs.rows()) refuse("row", "outside the text");
  // each head's output alone in its own row (zeros in the other heads' columns): one product with W_O
  const int H = c.n_head, hd = c.head_dim;
  Matrix spread = Matrix::Zero(H, static_cast<Eigen::Index>(H) * hd), parts;
  for (int h = 0; h < H; ++h) spread.block(h, h * hd, 1, hd) = l.head_outputs.block(row, h * hd, 1, hd);
  linear_forward(spread, b.o, Vector(), parts, backend);
  return parts;
}

Matrix through_head_output(const TransformerConfig& c, const TransformerBlock& b, int head, const Matrix& rows,
                           Backend backend) {
  if (head < 0 || head >= c.n_head || rows.cols() != c.head_dim) refuse("head", "outside the layer");
  // the rows in head `head`'s columns of the joined outputs, zeros elsewhere: one product with W_O
  const int hd = c.head_dim;
  Matrix spread = Matrix::Zero(rows.rows(), static_cast<Eigen::Index>(c.n_head) * hd), out;
  spread.middleCols(head * hd, hd) = rows;
  linear_forward(spread, b.o, Vector(), out, backend);
  return out;
}

Vector logits_at(const Transformer& model, const ModelTrace& trace, int position, bool capped, Backend backend) {
  if (position < 0 || position >= trace.final_normed.rows()) refuse("position", "outside the text");
  if (!model.config.has_lm_head) refuse("logits", "this model was read without its LM head (no predictions)");
  Matrix logits;
  linear_forward(trace.final_normed.row(position), lm_head(model), model.lm_head_b, logits, backend);
  const float cap = model.config.final_softcap;
  if (capped && cap > 0) logits = ((logits / cap).array().tanh() * cap).matrix();
  return logits.row(0);
}

Vector unembedding(const Transformer& model, int token) {
  if (token < 0 || token >= model.config.vocab_size) refuse("token", "outside the vocabulary");
  if (!model.config.has_lm_head) refuse("unembedding", "this model was read without its LM head (no predictions)");
  return lm_head(model).row(token);
}

AttentionTrace head_trace(const TransformerConfig& c, const LayerDetail& l, int head, const AttentionOptions& options) {
  if (head < 0 || head >= static_cast<int>(l.weights.size())) refuse("head", "outside the layer");
  const Eigen::Index hd = c.head_dim, g = c.kv_head_of(head);
  return attend(l.query.middleCols(head * hd, hd), l.key.middleCols(g * hd, hd), l.value.middleCols(g * hd, hd), options);
}

Matrix max_pooled(const Matrix& w, int side) {
  const int rows = static_cast<int>(w.rows()), cols = static_cast<int>(w.cols());
  if (rows <= side && cols <= side) return w;
  Matrix out;
  PooledRows pool(out, rows, cols, side);
  for (int i = 0; i < rows; ++i) pool.add_row(i, w.row(i).data(), 0, cols);
  return out;
}

PooledRows::PooledRows(Matrix& out, int rows, int cols, int side)
    : out_(out), rows_(rows), pooled_(rows > side || cols > side), column_cell_(static_cast<std::size_t>(cols)) {
  const int pr = pooled_ ? std::min(rows, side) : rows, pc = pooled_ ? std::min(cols, side) : cols;
  out_.setZero(pr, pc);
  for (int j = 0; j < cols; ++j) column_cell_[static_cast<std::size_t>(j)] = static_cast<int>(static_cast<long>(j) * pc / cols);
}

void PooledRows::add_row(int i, const float* weights, int lo, int count) {
  if (!pooled_) {  // no pooling: the row itself
    std::copy(weights, weights + count, out_.row(i).data() + lo);
    return;
  }
  float* cells = out_.row(static_cast<Eigen::Index>(static_cast<long>(i) * out_.rows() / rows_)).data();
  for (int j = 0; j < count; ++j) {
    float& cell = cells[column_cell_[static_cast<std::size_t>(lo + j)]];
    if (std::isfinite(weights[j])) cell = std::max(cell, weights[j]);
  }
}

Matrix head_weights(const TransformerConfig& c, const TransformerBlock& b, int head, Projection which) {
  const int hd = c.head_dim;
  switch (which) {
    case Projection::Query: return b.qkv.output_columns(head * hd, hd);
    case Projection::Key: return b.qkv.output_columns((c.n_head + c.kv_head_of(head)) * hd, hd);
    case Projection::Value: return b.qkv.output_columns((c.n_head + c.n_kv_head + c.kv_head_of(head)) * hd, hd);
  }
  return {};
}

Vector head_bias(const TransformerConfig& c, const TransformerBlock& b, int head, Projection which) {
  const int hd = c.head_dim;
  if (b.qkv_b.size() == 0) return Vector::Zero(hd);
  const int first = which == Projection::Query ? head * hd
                    : which == Projection::Key ? (c.n_head + c.kv_head_of(head)) * hd
                                               : (c.n_head + c.n_kv_head + c.kv_head_of(head)) * hd;
  return b.qkv_b.segment(first, hd);
}

// [SECTION] GPT-2's configuration and random models ------------------------------------------

TransformerConfig gpt2_config(int n_layer, int n_head, int d_model, int n_positions, int vocab_size,
                              bool scale_attn_weights, float layer_norm_epsilon) {
  TransformerConfig c;
  c.family = "gpt2";
  c.n_layer = n_layer, c.n_head = c.n_kv_head = n_head;
  c.head_dim = n_head > 0 ? d_model / n_head : 0;
  c.d_model = d_model, c.d_ff = 4 * d_model, c.vocab_size = vocab_size, c.n_positions = n_positions;
  c.norm = NormKind::LayerNorm, c.norm_eps = layer_norm_epsilon;
  c.positions = PositionKind::Learned;
  c.layers.assign(static_cast<std::size_t>(std::max(n_layer, 0)), LayerSpec{});
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.score_scale = scale_attn_weights && c.head_dim > 0 ? 1.0f / std::sqrt(static_cast<float>(c.head_dim)) : 1.0f;
  c.activation = Activation::GeluTanh;
  return c;
}

Transformer random_transformer(const TransformerConfig& config, std::uint64_t seed, Dtype dtype, WeightLayout layout,
                               double std) {
  Transformer m(config, dtype, layout);
  Rng rng(seed);
  const auto fill = [&](Weights& w) {
    for (std::int64_t i = 0; i < w.size(); ++i) {
      const float v = static_cast<float>(std * rng.normal());
      if (dtype == Dtype::F32) w.f32[static_cast<std::size_t>(i)] = v;
      else w.u16[static_cast<std::size_t>(i)] = dtype == Dtype::BF16 ? float_to_bf16(v) : float_to_half(v);
    }
  };
  const float unit = config.norm_plus_one ? 0.0f : 1.0f;  // (1 + w) norms start at w = 0
  fill(m.embed), fill(m.position_table), fill(m.token_type_table), fill(m.head_dense);
  for (Vector* v : {&m.embed_norm_w, &m.head_norm_w}) v->setConstant(unit);
  for (TransformerBlock& b : m.blocks) {
    for (Vector* v : {&b.attn_norm_w, &b.mlp_norm_w, &b.post_attn_norm_w, &b.post_mlp_norm_w, &b.q_norm_w, &b.k_norm_w})
      v->setConstant(unit);
    fill(b.qkv), fill(b.o), fill(b.up), fill(b.down);
  }
  m.final_norm_w.setConstant(unit);
  return m;
}

}  // namespace attn
