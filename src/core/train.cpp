// The trainer: llm.c-style layer functions (forward and backward side by side), the packed-batch
// GPT-2 graph built from them, AdamW and the held-out evaluation. Not inference (gpt2.cpp does that).
#include "train.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "kernels/matmul.h"

namespace attn {

namespace layers {

namespace {

// c (M, N) (+)= a · b in the given layout (+ bias). Float: the project's matmul kernels; double: the
// same sums written out (the gradient checks).
template <typename Real>
void product(MatmulLayout layout, const Real* a, const Real* b, const Real* bias, int M, int K, int N, bool accumulate, Real* c) {
  if (M == 0 || N == 0) return;
  if constexpr (std::is_same_v<Real, float>) {
    MatmulProblem p;
    p.layout = layout, p.a = a, p.b = b, p.bias = bias, p.M = M, p.K = K, p.N = N, p.accumulate = accumulate;
    matmul(Backend::Simd, p, c);
  } else {
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        Real sum = bias ? bias[j] : Real(0);
        for (int k = 0; k < K; ++k) {
          const Real x = layout == MatmulLayout::TN ? a[static_cast<std::size_t>(k) * M + i] : a[static_cast<std::size_t>(i) * K + k];
          const Real y = layout == MatmulLayout::NT ? b[static_cast<std::size_t>(j) * K + k] : b[static_cast<std::size_t>(k) * N + j];
          sum += x * y;
        }
        Real& out = c[static_cast<std::size_t>(i) * N + j];
        out = accumulate ? out + sum : sum;
      }
  }
}

}  // namespace

// out (N, C) = wte[ids[n]] + wpe[pos[n]]
template <typename Real>
void encoder_forward(Real* out, const int* ids, const int* pos, const Real* wte, const Real* wpe, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const Real* token = wte + static_cast<std::size_t>(ids[n]) * C;
    const Real* position = wpe + static_cast<std::size_t>(pos[n]) * C;
    Real* out_n = out + static_cast<std::size_t>(n) * C;
    for (int i = 0; i < C; ++i) out_n[i] = token[i] + position[i];
  }
}

// backward of out[n] = wte[ids[n]] + wpe[pos[n]]: each row's gradient goes to both rows it read
template <typename Real>
void encoder_backward(Real* dwte, Real* dwpe, const Real* dout, const int* ids, const int* pos, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const Real* d = dout + static_cast<std::size_t>(n) * C;
    Real* dtoken = dwte + static_cast<std::size_t>(ids[n]) * C;
    Real* dposition = dwpe + static_cast<std::size_t>(pos[n]) * C;
    for (int i = 0; i < C; ++i) dtoken[i] += d[i], dposition[i] += d[i];
  }
}

// out (N, C): per row, norm = (x − mean) · rstd with rstd = 1/√(var + eps) (biased variance), then
// norm · w + b; mean and rstd (N) kept for the backward.
template <typename Real>
void layernorm_forward(Real* out, Real* mean, Real* rstd, const Real* inp, const Real* w, const Real* b, int N, int C, Real eps) {
  for (int n = 0; n < N; ++n) {
    const Real* x = inp + static_cast<std::size_t>(n) * C;
    Real m = 0;
    for (int i = 0; i < C; ++i) m += x[i];
    m /= C;
    Real var = 0;
    for (int i = 0; i < C; ++i) var += (x[i] - m) * (x[i] - m);
    var /= C;
    const Real s = Real(1) / std::sqrt(var + eps);
    Real* o = out + static_cast<std::size_t>(n) * C;
    for (int i = 0; i < C; ++i) o[i] = (x[i] - m) * s * w[i] + b[i];
    mean[n] = m, rstd[n] = s;
  }
}

// backward of out = norm · w + b, norm = (x − mean) · rstd:
//   db += dout, dw += norm · dout, dx = rstd · (dnorm − mean(dnorm) − norm · mean(dnorm · norm)), dnorm = w · dout
template <typename Real>
void layernorm_backward(Real* dinp, Real* dw, Real* db, const Real* dout, const Real* inp, const Real* w, const Real* mean,
                        const Real* rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const Real* x = inp + static_cast<std::size_t>(n) * C;
    const Real* d = dout + static_cast<std::size_t>(n) * C;
    Real* dx = dinp + static_cast<std::size_t>(n) * C;
    Real dnorm_mean = 0, dnorm_norm_mean = 0;
    for (int i = 0; i < C; ++i) {
      const Real norm = (x[i] - mean[n]) * rstd[n];
      dnorm_mean += w[i] * d[i];
      dnorm_norm_mean += w[i] * d[i] * norm;
    }
    dnorm_mean /= C, dnorm_norm_mean /= C;
    for (int i = 0; i < C; ++i) {
      const Real norm = (x[i] - mean[n]) * rstd[n];
      db[i] += d[i];
      dw[i] += norm * d[i];
      dx[i] += (w[i] * d[i] - dnorm_mean - norm * dnorm_norm_mean) * rstd[n];
    }
  }
}

// out (N, OC) = inp (N, C) · w (C, OC) + bias
template <typename Real>
void matmul_forward(Real* out, const Real* inp, const Real* w, const Real* bias, int N, int C, int OC) {
  product(MatmulLayout::NN, inp, w, bias, N, C, OC, false, out);
}

// backward of out = inp · w + bias to the input: dinp += dout · wᵀ (each row on its own)
template <typename Real>
void matmul_backward_input(Real* dinp, const Real* dout, const Real* w, int N, int C, int OC) {
  product<Real>(MatmulLayout::NT, dout, w, nullptr, N, OC, C, true, dinp);
}

// backward of out = inp · w + bias to the weights: dw += inpᵀ · dout, dbias += Σ_rows dout
template <typename Real>
void matmul_backward_weights(Real* dw, Real* dbias, const Real* dout, const Real* inp, int N, int C, int OC) {
  product<Real>(MatmulLayout::TN, inp, dout, nullptr, C, N, OC, true, dw);
  if (dbias)
    for (int n = 0; n < N; ++n)
      for (int o = 0; o < OC; ++o) dbias[o] += dout[static_cast<std::size_t>(n) * OC + o];
}

// qkv (T, 3C) = [Q | K | V], head h owns columns h·hd … (h+1)·hd − 1 of each; preatt, att (H, T, T);
// out (T, C). Causal: query t sees keys 0 … t; above the diagonal att is exactly 0.
template <typename Real>
void attention_forward(Real* out, Real* preatt, Real* att, const Real* qkv, int T, int C, int H, bool scale) {
  const int hd = C / H;
  const Real s = scale ? Real(1) / std::sqrt(static_cast<Real>(hd)) : Real(1);
  const std::size_t C3 = static_cast<std::size_t>(3) * C;
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t) {
      const Real* query_t = qkv + t * C3 + static_cast<std::size_t>(h) * hd;
      Real* preatt_bth = preatt + (static_cast<std::size_t>(h) * T + t) * T;
      Real* att_bth = att + (static_cast<std::size_t>(h) * T + t) * T;
      // pass 1: scaled scores q·k and their max
      Real maxval = -std::numeric_limits<Real>::infinity();
      for (int t2 = 0; t2 <= t; ++t2) {
        const Real* key_t2 = qkv + t2 * C3 + C + static_cast<std::size_t>(h) * hd;
        Real dot = 0;
        for (int i = 0; i < hd; ++i) dot += query_t[i] * key_t2[i];
        preatt_bth[t2] = dot * s;
        maxval = std::max(maxval, preatt_bth[t2]);
      }
      // pass 2: exp(score − max): the softmax is the same for any shift, and with the max subtracted
      // no exp overflows (the largest term is exp(0) = 1)
      Real sum = 0;
      for (int t2 = 0; t2 <= t; ++t2) sum += att_bth[t2] = std::exp(preatt_bth[t2] - maxval);
      // pass 3: normalise; the causal mask: future keys get weight 0
      for (int t2 = 0; t2 < T; ++t2) {
        att_bth[t2] = t2 <= t ? att_bth[t2] / sum : Real(0);
        if (t2 > t) preatt_bth[t2] = 0;
      }
      // pass 4: out = Σ weights · values
      Real* out_t = out + static_cast<std::size_t>(t) * C + static_cast<std::size_t>(h) * hd;
      for (int i = 0; i < hd; ++i) out_t[i] = 0;
      for (int t2 = 0; t2 <= t; ++t2) {
        const Real* value_t2 = qkv + t2 * C3 + 2 * static_cast<std::size_t>(C) + static_cast<std::size_t>(h) * hd;
        for (int i = 0; i < hd; ++i) out_t[i] += att_bth[t2] * value_t2[i];
      }
    }
}

template <typename Real>
void attention_backward(Real* dqkv, Real* dpreatt, Real* datt, const Real* dout, const Real* qkv, const Real* att, int T, int C,
                        int H, bool scale) {
  const int hd = C / H;
  const Real s = scale ? Real(1) / std::sqrt(static_cast<Real>(hd)) : Real(1);
  const std::size_t C3 = static_cast<std::size_t>(3) * C;
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t) {
      const std::size_t ho = static_cast<std::size_t>(h) * hd;
      const Real* att_bth = att + (static_cast<std::size_t>(h) * T + t) * T;
      Real* datt_bth = datt + (static_cast<std::size_t>(h) * T + t) * T;
      Real* dpreatt_bth = dpreatt + (static_cast<std::size_t>(h) * T + t) * T;
      const Real* dout_t = dout + static_cast<std::size_t>(t) * C + ho;
      // backward of out_t = Σ att[t2] · v[t2]: datt[t2] = dout_t · v[t2], dv[t2] += att[t2] · dout_t
      for (int t2 = 0; t2 <= t; ++t2) {
        const Real* value_t2 = qkv + t2 * C3 + 2 * static_cast<std::size_t>(C) + ho;
        Real* dvalue_t2 = dqkv + t2 * C3 + 2 * static_cast<std::size_t>(C) + ho;
        Real d = 0;
        for (int i = 0; i < hd; ++i) d += value_t2[i] * dout_t[i], dvalue_t2[i] += att_bth[t2] * dout_t[i];
        datt_bth[t2] = d;
      }
      // the softmax VJP: att = softmax(preatt) → dpreatt[j] = att[j] · (datt[j] − Σ_k att[k] · datt[k]);
      // masked keys (j > t) had weight 0 whatever their score: no gradient
      Real weighted = 0;
      for (int t2 = 0; t2 <= t; ++t2) weighted += att_bth[t2] * datt_bth[t2];
      for (int t2 = 0; t2 < T; ++t2) dpreatt_bth[t2] = t2 <= t ? att_bth[t2] * (datt_bth[t2] - weighted) : Real(0);
      // backward of preatt[t2] = s · q_t · k[t2]
      const Real* query_t = qkv + t * C3 + ho;
      Real* dquery_t = dqkv + t * C3 + ho;
      for (int t2 = 0; t2 <= t; ++t2) {
        const Real* key_t2 = qkv + t2 * C3 + C + ho;
        Real* dkey_t2 = dqkv + t2 * C3 + C + ho;
        const Real g = dpreatt_bth[t2] * s;
        for (int i = 0; i < hd; ++i) dquery_t[i] += g * key_t2[i], dkey_t2[i] += g * query_t[i];
      }
    }
}

// out = 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))): GPT-2's gelu_new
template <typename Real>
void gelu_forward(Real* out, const Real* inp, int n) {
  const Real k = std::sqrt(Real(2) / Real(3.14159265358979323846));
  for (int i = 0; i < n; ++i) {
    const Real x = inp[i];
    out[i] = Real(0.5) * x * (Real(1) + std::tanh(k * (x + Real(0.044715) * x * x * x)));
  }
}

// d/dx: 0.5 · (1 + tanh(u)) + 0.5 · x · sech²(u) · √(2/π) · (1 + 3 · 0.044715 · x²), u the tanh argument
template <typename Real>
void gelu_backward(Real* dinp, const Real* inp, const Real* dout, int n) {
  const Real k = std::sqrt(Real(2) / Real(3.14159265358979323846));
  for (int i = 0; i < n; ++i) {
    const Real x = inp[i];
    const Real u = k * (x + Real(0.044715) * x * x * x);
    const Real th = std::tanh(u);
    const Real sech2 = Real(1) - th * th;
    const Real local = Real(0.5) * (Real(1) + th) + Real(0.5) * x * sech2 * k * (Real(1) + Real(3 * 0.044715) * x * x);
    dinp[i] += local * dout[i];
  }
}

template <typename Real>
void residual_forward(Real* out, const Real* a, const Real* b, int n) {
  for (int i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

// backward of out = a + b: both get dout
template <typename Real>
void residual_backward(Real* da, Real* db, const Real* dout, int n) {
  for (int i = 0; i < n; ++i) da[i] += dout[i], db[i] += dout[i];
}

template <typename Real>
Real lm_head_forward(Real* probs, Real* losses, const Real* x, const Real* wte, const int* targets, int N, int C, int V) {
  product<Real>(MatmulLayout::NT, x, wte, nullptr, N, C, V, false, probs);  // logits, made probabilities in place
  Real total = 0;
  int count = 0;
  for (int n = 0; n < N; ++n) {
    Real* row = probs + static_cast<std::size_t>(n) * V;
    const Real maxval = *std::max_element(row, row + V);
    const Real target_logit = targets[n] >= 0 ? row[targets[n]] : Real(0);
    Real sum = 0;
    for (int v = 0; v < V; ++v) sum += row[v] = std::exp(row[v] - maxval);
    for (int v = 0; v < V; ++v) row[v] /= sum;
    // −log softmax(target) = log Σ exp(logits) − logit(target), from the logits (no log of a tiny p)
    losses[n] = targets[n] >= 0 ? std::log(sum) + maxval - target_logit : Real(0);
    if (targets[n] >= 0) total += losses[n], ++count;
  }
  return count ? total / count : Real(0);
}

// backward of the mean of −log softmax(logits)[target] over the batch's `count` targets:
// dlogits = (probs − onehot(target)) / count; logits = x · wteᵀ → dx += dlogits · wte
template <typename Real>
void lm_head_backward_input(Real* dx, Real* dlogits, const Real* probs, const Real* wte, const int* targets, int count, int N, int C,
                            int V) {
  const Real inv = count ? Real(1) / count : Real(0);
  for (int n = 0; n < N; ++n) {
    const Real* p = probs + static_cast<std::size_t>(n) * V;
    Real* d = dlogits + static_cast<std::size_t>(n) * V;
    for (int v = 0; v < V; ++v) d[v] = targets[n] >= 0 ? p[v] * inv : Real(0);
    if (targets[n] >= 0) d[targets[n]] -= inv;
  }
  product<Real>(MatmulLayout::NN, dlogits, wte, nullptr, N, V, C, true, dx);
}

#define ATTN_LAYERS(Real)                                                                                                    \
  template void encoder_forward<Real>(Real*, const int*, const int*, const Real*, const Real*, int, int);                   \
  template void encoder_backward<Real>(Real*, Real*, const Real*, const int*, const int*, int, int);                        \
  template void layernorm_forward<Real>(Real*, Real*, Real*, const Real*, const Real*, const Real*, int, int, Real);         \
  template void layernorm_backward<Real>(Real*, Real*, Real*, const Real*, const Real*, const Real*, const Real*, const Real*, \
                                         int, int);                                                                          \
  template void matmul_forward<Real>(Real*, const Real*, const Real*, const Real*, int, int, int);                          \
  template void matmul_backward_input<Real>(Real*, const Real*, const Real*, int, int, int);                               \
  template void matmul_backward_weights<Real>(Real*, Real*, const Real*, const Real*, int, int, int);                      \
  template void attention_forward<Real>(Real*, Real*, Real*, const Real*, int, int, int, bool);                             \
  template void attention_backward<Real>(Real*, Real*, Real*, const Real*, const Real*, const Real*, int, int, int, bool);   \
  template void gelu_forward<Real>(Real*, const Real*, int);                                                                \
  template void gelu_backward<Real>(Real*, const Real*, const Real*, int);                                                  \
  template void residual_forward<Real>(Real*, const Real*, const Real*, int);                                               \
  template void residual_backward<Real>(Real*, Real*, const Real*, int);                                                    \
  template Real lm_head_forward<Real>(Real*, Real*, const Real*, const Real*, const int*, int, int, int);                    \
  template void lm_head_backward_input<Real>(Real*, Real*, const Real*, const Real*, const int*, int, int, int, int);
ATTN_LAYERS(float)
ATTN_LAYERS(double)
#undef ATTN_LAYERS

}  // namespace layers

// ---- the graph ------------------------------------------------------------------------------------

template <typename Real>
Gpt2TrainGraph<Real>::Gpt2TrainGraph(const Gpt2Config& config, int max_sequences, bool scale)
    : config_(config), max_sequences_(max_sequences), scale_(scale) {
  config_.scale_attn_weights = scale;  // the model it returns says how its scores were scaled
  validate_config(config_.transformer(), "trainer");
  if (max_sequences < 1) throw std::invalid_argument("trainer: the batch needs at least one sequence");
  const std::size_t C = config.n_embd, L = config.n_layer, V = config.vocab_size, P = config.n_positions;
  std::size_t at = 0;
  const auto add = [&](const std::string& name, std::size_t size, bool decay) {
    tensors_.push_back({name, at, size, decay});
    const std::size_t start = at;
    at += size;
    return start;
  };
  // Parameters in one buffer, each kind for all layers in a row (llm.c's ParameterTensors).
  p_.wte = add("embed", V * C, true);
  p_.wpe = add("position_table", P * C, true);
  const auto per_layer = [&](const std::string& suffix, std::size_t size, bool decay) {
    const std::size_t start = at;
    for (std::size_t l = 0; l < L; ++l) add("blocks." + std::to_string(l) + "." + suffix, size, decay);
    return start;
  };
  p_.ln1w = per_layer("attn_norm_w", C, false);
  p_.ln1b = per_layer("attn_norm_b", C, false);
  p_.qkvw = per_layer("qkv", C * 3 * C, true);
  p_.qkvb = per_layer("qkv_b", 3 * C, false);
  p_.projw = per_layer("o", C * C, true);
  p_.projb = per_layer("o_b", C, false);
  p_.ln2w = per_layer("mlp_norm_w", C, false);
  p_.ln2b = per_layer("mlp_norm_b", C, false);
  p_.fcw = per_layer("up", C * 4 * C, true);
  p_.fcb = per_layer("up_b", 4 * C, false);
  p_.fcprojw = per_layer("down", 4 * C * C, true);
  p_.fcprojb = per_layer("down_b", C, false);
  p_.lnfw = add("final_norm_w", C, false);
  p_.lnfb = add("final_norm_b", C, false);
  // Activations for the largest batch, sized once. Refused up front when it all would not fit in
  // kMaxTrainBytes (a wasm page has 4 GB at most), rather than failing halfway through.
  max_tokens_ = max_sequences * config.n_positions;
  const std::size_t NT = static_cast<std::size_t>(max_tokens_), H = config.n_head;
  const std::size_t ATT = static_cast<std::size_t>(max_sequences) * H * P * P;
  const double elements = 4.0 * at + double(L) * NT * (27.0 * C + 4) + 4.0 * L * ATT + (L + 6.0) * NT * C + 2.0 * NT * V +
                          NT * (8.0 * C + std::max(4 * C, V));
  const double bytes = elements * sizeof(Real);
  if (bytes > kMaxTrainBytes)
    throw std::invalid_argument("trainer: this model and batch need about " + std::to_string(static_cast<long long>(bytes / (1 << 20))) +
                                " MB, over the limit of " + std::to_string(kMaxTrainBytes >> 20) + " MB (fewer layers, a narrower model or a smaller batch)");
  params_.assign(at, Real(0));
  grads_.assign(at, Real(0));
  encoded_.assign(NT * C, 0);
  for (auto* v : {&ln1_, &atty_, &attproj_, &residual2_, &ln2_, &fcproj_, &residual3_}) v->assign(L * NT * C, 0);
  for (auto* v : {&ln1_mean_, &ln1_rstd_, &ln2_mean_, &ln2_rstd_}) v->assign(L * NT, 0);
  qkv_.assign(L * NT * 3 * C, 0);
  for (auto* v : {&fch_, &fch_gelu_}) v->assign(L * NT * 4 * C, 0);
  for (auto* v : {&preatt_, &att_}) v->assign(L * ATT, 0);
  lnf_.assign(NT * C, 0);
  for (auto* v : {&lnf_mean_, &lnf_rstd_, &losses_}) v->assign(NT, 0);
  probs_.assign(NT * V, 0);
  d_residual_.assign((L + 1) * NT * C, 0);
  for (auto* v : {&d_fcproj_, &d_attproj_}) v->assign(L * NT * C, 0);
  d_fch_.assign(L * NT * 4 * C, 0);
  d_qkv_.assign(L * NT * 3 * C, 0);
  for (auto* v : {&d_ln_, &d_atty_}) v->assign(NT * C, 0);
  for (auto* v : {&d_preatt_, &d_att_}) v->assign(ATT, 0);
  d_fch_gelu_.assign(NT * 4 * C, 0);
  d_logits_.assign(NT * V, 0);
  slice_.assign(NT * std::max(4 * C, V), 0);  // columns of a weight product's input, for a piece of its rows
  for (auto* v : {&ids_, &pos_, &targets_}) v->assign(NT, 0);
  seq_start_.assign(static_cast<std::size_t>(max_sequences), 0);
  seq_len_.assign(static_cast<std::size_t>(max_sequences), 0);
  att_start_.assign(static_cast<std::size_t>(max_sequences), 0);
}

// The model's tensors in the buffer's order (each kind for every layer), as pointers. `M` is
// Transformer or const Transformer.
template <typename M, typename F>
void for_each_parameter(M& model, F&& visit) {
  visit(model.embed.f32.data(), model.embed.f32.size());
  visit(model.position_table.f32.data(), model.position_table.f32.size());
  const auto each = [&](auto member) {
    for (auto& b : model.blocks) {
      auto& t = b.*member;
      if constexpr (std::is_same_v<std::decay_t<decltype(t)>, Weights>) visit(t.f32.data(), t.f32.size());
      else visit(t.data(), static_cast<std::size_t>(t.size()));
    }
  };
  each(&TransformerBlock::attn_norm_w), each(&TransformerBlock::attn_norm_b);
  each(&TransformerBlock::qkv), each(&TransformerBlock::qkv_b);
  each(&TransformerBlock::o), each(&TransformerBlock::o_b);
  each(&TransformerBlock::mlp_norm_w), each(&TransformerBlock::mlp_norm_b);
  each(&TransformerBlock::up), each(&TransformerBlock::up_b);
  each(&TransformerBlock::down), each(&TransformerBlock::down_b);
  visit(model.final_norm_w.data(), static_cast<std::size_t>(model.final_norm_w.size()));
  visit(model.final_norm_b.data(), static_cast<std::size_t>(model.final_norm_b.size()));
}

template <typename Real>
void Gpt2TrainGraph<Real>::set_parameters(const Transformer& model) {
  TransformerConfig shape = model.config;
  shape.score_scale = config_.transformer().score_scale;  // the weights are taken whichever way they were trained
  if (!(shape == config_.transformer())) throw std::invalid_argument("trainer: the starting model's shape differs from the trainer's");
  if (!model.lm_head.empty()) throw std::invalid_argument("trainer: the starting model has an untied lm_head (the trainer ties it to the embedding)");
  if (model.embed.dtype != Dtype::F32 || model.blocks.empty() || model.blocks[0].qkv.dtype != Dtype::F32 ||
      model.blocks[0].qkv.transposed)
    throw std::invalid_argument("trainer: the starting model must hold float weights in GPT-2's (in, out) layout");
  std::size_t k = 0;
  for_each_parameter(model, [&](const float* data, std::size_t n) {
    if (k + n > params_.size()) throw std::invalid_argument("trainer: the starting model's tensors do not match its config");
    for (std::size_t i = 0; i < n; ++i) params_[k++] = static_cast<Real>(data[i]);
  });
  if (k != params_.size()) throw std::invalid_argument("trainer: the starting model's tensors do not match its config");
}

template <typename Real>
Transformer Gpt2TrainGraph<Real>::to_model() const {
  Transformer model(config_.transformer(), Dtype::F32, WeightLayout::InOut);
  std::size_t k = 0;
  for_each_parameter(model, [&](float* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<float>(params_[k++]);
  });
  return model;
}

template <typename Real>
Real Gpt2TrainGraph<Real>::forward(const std::vector<std::vector<int>>& batch, bool answer_only) {
  pack(batch, answer_only);
  forward_rows(0, B_);
  return loss();
}

template <typename Real>
void Gpt2TrainGraph<Real>::backward() {
  backward_rows(0, B_);
  for (int j = 0; j < weight_products(); ++j) weight_product(j, 0, weight_product_rows(j));
  finish_backward();
}

template <typename Real>
void Gpt2TrainGraph<Real>::pack(const std::vector<std::vector<int>>& batch, bool answer_only) {
  const int H = config_.n_head, V = config_.vocab_size, P = config_.n_positions;
  if (batch.empty() || static_cast<int>(batch.size()) > max_sequences_)
    throw std::invalid_argument("trainer: a batch of " + std::to_string(batch.size()) + " sequences (room for 1.." +
                                std::to_string(max_sequences_) + ")");
  // token n of the batch is token pos_[n] of its sequence
  int n = 0, targets = 0;
  std::size_t att_at = 0;
  for (std::size_t b = 0; b < batch.size(); ++b) {
    const auto& seq = batch[b];
    if (seq.size() < 2 || static_cast<int>(seq.size()) > P)
      throw std::invalid_argument("trainer: a sequence of " + std::to_string(seq.size()) + " tokens (2.." + std::to_string(P) + ")");
    seq_start_[b] = n, seq_len_[b] = static_cast<int>(seq.size()), att_start_[b] = att_at;
    att_at += static_cast<std::size_t>(H) * seq.size() * seq.size();
    for (std::size_t t = 0; t < seq.size(); ++t, ++n) {
      if (seq[t] < 0 || seq[t] >= V) throw std::invalid_argument("trainer: token id " + std::to_string(seq[t]) + " outside the vocabulary");
      ids_[n] = seq[t], pos_[n] = static_cast<int>(t), targets_[n] = t + 1 < seq.size() && (!answer_only || t + 2 == seq.size()) ? seq[t + 1] : -1;
      targets += targets_[n] >= 0;
    }
  }
  N_ = n, B_ = static_cast<int>(batch.size()), target_count_ = targets;
}

// rows n0 … n1 − 1 of the packed batch: the tokens of sequences b0 … b1 − 1
template <typename Real>
void Gpt2TrainGraph<Real>::forward_rows(int b0, int b1) {
  using namespace layers;
  const int C = config_.n_embd, H = config_.n_head, L = config_.n_layer, V = config_.vocab_size, P = config_.n_positions;
  const std::size_t NT = static_cast<std::size_t>(max_tokens_), ATT = static_cast<std::size_t>(max_sequences_) * H * P * P;
  const int n0 = seq_start_[b0], rows = seq_start_[b1 - 1] + seq_len_[b1 - 1] - n0;
  const std::size_t r0 = static_cast<std::size_t>(n0) * C;  // the rows' offset in an (N, C) buffer
  const Real* w = params_.data();
  const Real eps = static_cast<Real>(config_.layer_norm_epsilon);

  encoder_forward(encoded_.data() + r0, ids_.data() + n0, pos_.data() + n0, w + p_.wte, w + p_.wpe, rows, C);
  for (int l = 0; l < L; ++l) {
    const std::size_t lc = l * NT * C + r0, c1 = static_cast<std::size_t>(l) * C, ln = l * NT + n0;
    const Real* in = l == 0 ? encoded_.data() + r0 : residual3_.data() + (l - 1) * NT * C + r0;
    Real* qkv = qkv_.data() + lc * 3;  // (N, 3C): layer l's rows from n0
    layernorm_forward(ln1_.data() + lc, ln1_mean_.data() + ln, ln1_rstd_.data() + ln, in, w + p_.ln1w + c1, w + p_.ln1b + c1, rows, C, eps);
    matmul_forward(qkv, ln1_.data() + lc, w + p_.qkvw + c1 * 3 * C, w + p_.qkvb + c1 * 3, rows, C, 3 * C);
    for (int b = b0; b < b1; ++b) {
      const std::size_t s = static_cast<std::size_t>(seq_start_[b] - n0);
      attention_forward(atty_.data() + lc + s * C, preatt_.data() + l * ATT + att_start_[b], att_.data() + l * ATT + att_start_[b],
                        qkv + s * 3 * C, seq_len_[b], C, H, scale_);
    }
    matmul_forward(attproj_.data() + lc, atty_.data() + lc, w + p_.projw + c1 * C, w + p_.projb + c1, rows, C, C);
    residual_forward(residual2_.data() + lc, in, attproj_.data() + lc, rows * C);
    layernorm_forward(ln2_.data() + lc, ln2_mean_.data() + ln, ln2_rstd_.data() + ln, residual2_.data() + lc, w + p_.ln2w + c1,
                      w + p_.ln2b + c1, rows, C, eps);
    matmul_forward(fch_.data() + lc * 4, ln2_.data() + lc, w + p_.fcw + c1 * 4 * C, w + p_.fcb + c1 * 4, rows, C, 4 * C);
    gelu_forward(fch_gelu_.data() + lc * 4, fch_.data() + lc * 4, rows * 4 * C);
    matmul_forward(fcproj_.data() + lc, fch_gelu_.data() + lc * 4, w + p_.fcprojw + c1 * 4 * C, w + p_.fcprojb + c1, rows, 4 * C, C);
    residual_forward(residual3_.data() + lc, residual2_.data() + lc, fcproj_.data() + lc, rows * C);
  }
  const Real* last = residual3_.data() + (L - 1) * NT * C + r0;
  layernorm_forward(lnf_.data() + r0, lnf_mean_.data() + n0, lnf_rstd_.data() + n0, last, w + p_.lnfw, w + p_.lnfb, rows, C, eps);
  lm_head_forward(probs_.data() + static_cast<std::size_t>(n0) * V, losses_.data() + n0, lnf_.data() + r0, w + p_.wte,
                  targets_.data() + n0, rows, C, V);
}

template <typename Real>
Real Gpt2TrainGraph<Real>::loss() const {
  // lm_head_forward's mean, over the whole batch in the same order
  Real total = 0;
  for (int n = 0; n < N_; ++n)
    if (targets_[n] >= 0) total += losses_[n];
  return target_count_ ? total / target_count_ : Real(0);
}

template <typename Real>
void Gpt2TrainGraph<Real>::zero_grad() {
  std::fill(grads_.begin(), grads_.end(), Real(0));
}

template <typename Real>
void Gpt2TrainGraph<Real>::backward_rows(int b0, int b1) {
  using namespace layers;
  const int C = config_.n_embd, H = config_.n_head, L = config_.n_layer, V = config_.vocab_size, P = config_.n_positions;
  const std::size_t NT = static_cast<std::size_t>(max_tokens_), ATT = static_cast<std::size_t>(max_sequences_) * H * P * P;
  const int n0 = seq_start_[b0], rows = seq_start_[b1 - 1] + seq_len_[b1 - 1] - n0;
  const std::size_t r0 = static_cast<std::size_t>(n0) * C, NC = static_cast<std::size_t>(rows) * C;
  const Real* w = params_.data();
  Real* g = grads_.data();
  // the rows' part of an (N, width·C) buffer, zeroed
  const auto zeroed = [&](std::vector<Real>& v, std::size_t at, int width) {
    Real* p = v.data() + at + r0 * width;
    std::fill(p, p + NC * width, Real(0));
    return p;
  };
  // the gradient of the residual stream entering layer l (l = L: the last output), the rows' part
  const auto dres = [&](int l) { return d_residual_.data() + l * NT * C + r0; };
  for (int l = 0; l <= L; ++l) std::fill(dres(l), dres(l) + NC, Real(0));

  lm_head_backward_input(zeroed(d_ln_, 0, 1), d_logits_.data() + static_cast<std::size_t>(n0) * V, probs_.data() + static_cast<std::size_t>(n0) * V,
                         w + p_.wte, targets_.data() + n0, target_count_, rows, C, V);
  const Real* last = residual3_.data() + (L - 1) * NT * C + r0;
  layernorm_backward(dres(L), g + p_.lnfw, g + p_.lnfb, d_ln_.data() + r0, last, w + p_.lnfw, lnf_mean_.data() + n0, lnf_rstd_.data() + n0,
                     rows, C);
  for (int l = L - 1; l >= 0; --l) {
    const std::size_t lc = l * NT * C, c1 = static_cast<std::size_t>(l) * C, ln = l * NT + n0;
    const Real* in = l == 0 ? encoded_.data() + r0 : residual3_.data() + (l - 1) * NT * C + r0;
    // residual3 = residual2 + fcproj (d_atty_ holds d residual2 for now)
    Real* d_res2 = zeroed(d_atty_, 0, 1);
    Real* d_fcproj = zeroed(d_fcproj_, lc, 1);
    residual_backward(d_res2, d_fcproj, dres(l + 1), rows * C);
    // fcproj = gelu(fch) · W + b; fch = ln2 · W_fc + b_fc; ln2 = layernorm(residual2)
    Real* d_fch_gelu = zeroed(d_fch_gelu_, 0, 4);
    Real* d_fch = zeroed(d_fch_, lc * 4, 4);
    Real* d_ln = zeroed(d_ln_, 0, 1);
    matmul_backward_input(d_fch_gelu, d_fcproj, w + p_.fcprojw + c1 * 4 * C, rows, 4 * C, C);
    gelu_backward(d_fch, fch_.data() + lc * 4 + r0 * 4, d_fch_gelu, rows * 4 * C);
    matmul_backward_input(d_ln, d_fch, w + p_.fcw + c1 * 4 * C, rows, C, 4 * C);
    layernorm_backward(d_res2, g + p_.ln2w + c1, g + p_.ln2b + c1, d_ln, residual2_.data() + lc + r0, w + p_.ln2w + c1,
                       ln2_mean_.data() + ln, ln2_rstd_.data() + ln, rows, C);
    // residual2 = in + attproj
    Real* d_attproj = zeroed(d_attproj_, lc, 1);
    residual_backward(dres(l), d_attproj, d_res2, rows * C);
    // attproj = atty · W_proj + b; atty = attention(qkv); qkv = ln1 · W_attn + b; ln1 = layernorm(in)
    Real* d_atty = zeroed(d_fch_gelu_, 0, 1);  // free again: reused as the (N, C) gradient of atty
    Real* d_qkv = zeroed(d_qkv_, lc * 3, 3);
    d_ln = zeroed(d_ln_, 0, 1);
    matmul_backward_input(d_atty, d_attproj, w + p_.projw + c1 * C, rows, C, C);
    for (int b = b0; b < b1; ++b) {
      const std::size_t s = static_cast<std::size_t>(seq_start_[b] - n0);
      attention_backward(d_qkv + s * 3 * C, d_preatt_.data() + att_start_[b], d_att_.data() + att_start_[b], d_atty + s * C,
                         qkv_.data() + lc * 3 + r0 * 3 + s * 3 * C, att_.data() + l * ATT + att_start_[b], seq_len_[b], C, H, scale_);
    }
    matmul_backward_input(d_ln, d_qkv, w + p_.qkvw + c1 * 3 * C, rows, C, 3 * C);
    layernorm_backward(dres(l), g + p_.ln1w + c1, g + p_.ln1b + c1, d_ln, in, w + p_.ln1w + c1, ln1_mean_.data() + ln,
                       ln1_rstd_.data() + ln, rows, C);
  }
}

// Weight product j: 0 the LM head's (dwte += dlogitsᵀ · lnf), then per layer l the MLP's projection,
// its first matmul, the attention's output projection and the q/k/v projection (4l + 1 … 4l + 4)
template <typename Real>
typename Gpt2TrainGraph<Real>::WeightProduct Gpt2TrainGraph<Real>::weight_product_at(int j) {
  const int C = config_.n_embd, V = config_.vocab_size;
  Real* g = grads_.data();
  if (j == 0) return {g + p_.wte, nullptr, d_logits_.data(), lnf_.data(), V, C};
  const int l = (j - 1) / 4;
  const std::size_t lc = static_cast<std::size_t>(l) * max_tokens_ * C, c1 = static_cast<std::size_t>(l) * C;
  switch ((j - 1) % 4) {
    case 0: return {g + p_.fcprojw + c1 * 4 * C, g + p_.fcprojb + c1, fch_gelu_.data() + lc * 4, d_fcproj_.data() + lc, 4 * C, C};
    case 1: return {g + p_.fcw + c1 * 4 * C, g + p_.fcb + c1 * 4, ln2_.data() + lc, d_fch_.data() + lc * 4, C, 4 * C};
    case 2: return {g + p_.projw + c1 * C, g + p_.projb + c1, atty_.data() + lc, d_attproj_.data() + lc, C, C};
    default: return {g + p_.qkvw + c1 * 3 * C, g + p_.qkvb + c1 * 3, ln1_.data() + lc, d_qkv_.data() + lc * 3, C, 3 * C};
  }
}

template <typename Real>
int Gpt2TrainGraph<Real>::weight_product_rows(int j) const {
  const int C = config_.n_embd;
  return j == 0 ? config_.vocab_size : (j - 1) % 4 == 0 ? 4 * C : C;
}

template <typename Real>
double Gpt2TrainGraph<Real>::weight_row_work(int j) const {
  const int C = config_.n_embd, OC = j == 0 ? C : std::array<int, 4>{C, 4 * C, C, 3 * C}[(j - 1) % 4];
  return static_cast<double>(N_) * OC;
}

template <typename Real>
double Gpt2TrainGraph<Real>::forward_work(int T) const {
  const double C = config_.n_embd;
  // per token and layer: q/k/v 3C², the output C², the MLP 8C², the scores and the weighted sum T·C; the LM head C·V
  return T * (config_.n_layer * (12 * C * C + double(T) * C) + C * config_.vocab_size);
}

// rows r0 … r1 − 1 of dw: the same product over all N rows, on columns r0 … r1 − 1 of its input
template <typename Real>
void Gpt2TrainGraph<Real>::weight_product(int j, int r0, int r1) {
  const WeightProduct p = weight_product_at(j);
  Real* dbias = r0 == 0 ? p.dbias : nullptr;  // its sum over the rows once, with the first piece
  if (r0 == 0 && r1 == p.C) {
    layers::matmul_backward_weights(p.dw, dbias, p.dout, p.inp, N_, p.C, p.OC);
    return;
  }
  const int width = r1 - r0;
  for (int n = 0; n < N_; ++n) {
    const Real* from = p.inp + static_cast<std::size_t>(n) * p.C + r0;
    std::copy(from, from + width, slice_.data() + static_cast<std::size_t>(n) * width);
  }
  layers::matmul_backward_weights(p.dw + static_cast<std::size_t>(r0) * p.OC, dbias, p.dout, slice_.data(), N_, width, p.OC);
}

template <typename Real>
void Gpt2TrainGraph<Real>::finish_backward() {
  layers::encoder_backward(grads_.data() + p_.wte, grads_.data() + p_.wpe, d_residual_.data(), ids_.data(), pos_.data(), N_, config_.n_embd);
}

template <typename Real>
const Real* Gpt2TrainGraph<Real>::probs(int b, int t) const {
  return probs_.data() + static_cast<std::size_t>(seq_start_[b] + t) * config_.vocab_size;
}

template <typename Real>
const Real* Gpt2TrainGraph<Real>::attention_row(int l, int b, int h, int t) const {
  const std::size_t P = config_.n_positions, ATT = static_cast<std::size_t>(max_sequences_) * config_.n_head * P * P;
  const std::size_t T = static_cast<std::size_t>(seq_len_[b]);
  return att_.data() + l * ATT + att_start_[b] + (static_cast<std::size_t>(h) * T + t) * T;
}

template class Gpt2TrainGraph<float>;
template class Gpt2TrainGraph<double>;

// ---- the trainer ------------------------------------------------------------------------------------

void validate_train_settings(const TrainSettings& s) {
  const auto refuse = [](const std::string& what) { throw std::invalid_argument(what); };
  if (s.n_layer < 1 || s.n_layer > 12) refuse("layers: must be 1 to 12, got " + std::to_string(s.n_layer));
  if (s.n_head < 1 || s.n_head > 64) refuse("heads: must be 1 to 64, got " + std::to_string(s.n_head));
  if (s.n_embd < 1 || s.n_embd > 2048) refuse("d_model: must be 1 to 2048, got " + std::to_string(s.n_embd));
  if (s.n_embd % s.n_head != 0)
    refuse("d_model: " + std::to_string(s.n_embd) + " is not divisible by the " + std::to_string(s.n_head) + " heads");
  if (s.batch < 1 || s.batch > 1024) refuse("batch: must be 1 to 1024, got " + std::to_string(s.batch));
  if (!std::isfinite(s.lr) || s.lr <= 0 || s.lr > 1) refuse("lr: must be a number above 0 and at most 1");
  if (!std::isfinite(s.weight_decay) || s.weight_decay < 0 || s.weight_decay >= 1) refuse("weight_decay: must be in [0, 1)");
  if (!std::isfinite(s.beta1) || s.beta1 < 0 || s.beta1 >= 1) refuse("beta1: must be in [0, 1)");
  if (!std::isfinite(s.beta2) || s.beta2 < 0 || s.beta2 >= 1) refuse("beta2: must be in [0, 1)");
  if (!std::isfinite(s.adam_eps) || s.adam_eps <= 0) refuse("adam_eps: must be above 0");
  if (!std::isfinite(s.grad_clip) || s.grad_clip < 0) refuse("grad_clip: must be 0 (off) or above");
}

TrainSettings scale_experiment_settings(bool scale) {
  TrainSettings s;
  // One layer, one head of d_head = 256: q·k sums 256 products. lr 3e-4 (3e-3 · 32/256, the default
  // recipe's rate scaled down with the width). Measured natively, seeds 1–3: with the division 90%
  // held-out by step 150; without it the attention rows are one-hot by step 5 and the loss stays at
  // 2.0 to 2.8 through 300 (ln 16 = 2.77: a guess among the 16 nouns, for a head frozen on "the").
  s.n_layer = 1, s.n_head = 1, s.n_embd = 256;
  s.lr = 3e-4f;
  s.scale = scale;
  return s;
}

TrainSettings roles_recipe_settings(std::uint64_t seed) {
  TrainSettings s;
  s.seed = seed;
  s.corpus = CorpusKind::Roles;
  s.attention_only = true;
  // One head a layer: with two (d_model 32, the same batch and lr) the loss stayed at ln 2 for 2 000
  // steps. Batch 64 at lr 1e-3: at batch 16 every variant tried stayed at ln 2 for 3 000+ steps.
  s.n_layer = 2, s.n_head = 1, s.n_embd = 32;
  s.batch = 64;
  s.lr = 1e-3f;
  return s;
}

TransformerConfig Gpt2Config::transformer() const {
  return gpt2_config(n_layer, n_head, n_embd, n_positions, vocab_size, scale_attn_weights, layer_norm_epsilon);
}

bool Gpt2Config::operator==(const Gpt2Config& o) const {
  return n_layer == o.n_layer && n_head == o.n_head && n_embd == o.n_embd && n_positions == o.n_positions &&
         vocab_size == o.vocab_size && layer_norm_epsilon == o.layer_norm_epsilon &&
         scale_attn_weights == o.scale_attn_weights;
}

Gpt2Config Trainer::model_config() const {
  Gpt2Config c;
  c.n_layer = settings_.n_layer, c.n_head = settings_.n_head, c.n_embd = settings_.n_embd;
  c.n_positions = corpus_.max_length, c.vocab_size = static_cast<int>(corpus_.vocab.size());
  c.scale_attn_weights = settings_.scale;
  return c;
}

namespace {
// The MLP's tensors of every block (blocks.L.up, up_b, down, down_b): zero in an attention-only model.
bool is_mlp_tensor(const std::string& name) {
  for (const char* suffix : {".up", ".up_b", ".down", ".down_b"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) return true;
  }
  return false;
}
void zero_mlp(const Gpt2TrainGraph<float>& g, std::vector<float>& values) {
  for (const auto& t : g.tensors())
    if (is_mlp_tensor(t.name)) std::fill(values.begin() + static_cast<std::ptrdiff_t>(t.offset), values.begin() + static_cast<std::ptrdiff_t>(t.offset + t.size), 0.0f);
}
}  // namespace

void Trainer::init(const TrainSettings& settings) {
  prepare(settings);
  graph_->set_parameters(random_transformer(model_config().transformer(), settings.seed));  // after the size check in prepare
  if (settings.attention_only) zero_mlp(*graph_, graph_->params());
}

void Trainer::init(const TrainSettings& settings, const Transformer& start) {
  prepare(settings);
  graph_->set_parameters(start);
  if (settings.attention_only) zero_mlp(*graph_, graph_->params());
}

void Trainer::prepare(const TrainSettings& settings) {
  validate_train_settings(settings);
  graph_.reset();
  if (corpus_.vocab.empty() || settings.seed != settings_.seed || settings.corpus != corpus_.kind)
    corpus_ = make_corpus(settings.seed, settings.corpus);
  settings_ = settings;
  graph_ = std::make_unique<Gpt2TrainGraph<float>>(model_config(), settings.batch, settings.scale);
  m_.assign(graph_->params().size(), 0.0f);
  v_.assign(graph_->params().size(), 0.0f);
  next_params_.assign(graph_->params().size(), 0.0f);
  phase_ = Phase::Idle;
  batch_.assign(static_cast<std::size_t>(settings.batch), {});
  for (auto& seq : batch_) seq.reserve(static_cast<std::size_t>(corpus_.max_length));
  order_.resize(corpus_.train.size());
  for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
  cursor_ = 0, steps_ = 0, adopted_ = false;
  rng_ = Rng(settings.seed ^ 0x7261696e5f746f6bull);  // its own stream, apart from the init's and the corpus's
}

// The next `batch` training sentences of an epoch order, reshuffled (Fisher-Yates) at each epoch.
void Trainer::sample_batch() {
  for (auto& seq : batch_) {
    if (cursor_ == 0)
      for (std::size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng_.next() % i]);
    seq = corpus_.train[order_[cursor_]].ids;  // capacity reserved: no allocation
    cursor_ = (cursor_ + 1) % order_.size();
  }
}

float Trainer::step() {
  return step_part(std::numeric_limits<double>::infinity()).loss;
}

namespace {
// What one element of the gradient norm and of AdamW costs, in the products' multiply-adds (measured
// in wasm: a double multiply-add in one chain, and AdamW's loads, square root and division)
constexpr double kNormElementWork = 4, kAdamElementWork = 16;
constexpr std::size_t kElementsPerPiece = 4096;  // the smallest piece of the norm or AdamW
}  // namespace

double Trainer::next_part_work() const {
  if (!graph_) return 0;
  switch (phase_) {
    case Phase::Idle: return graph_->sequence_work(corpus_.max_length);
    case Phase::Rows: return graph_->sequence_work(graph_->sequence_length(next_sequence_));
    case Phase::Weights: return next_product_ < graph_->weight_products() ? graph_->weight_row_work(next_product_) : 0;
    case Phase::Norm: return kNormElementWork * static_cast<double>(std::min(kElementsPerPiece, graph_->params().size() - next_element_));
    case Phase::Update: return kAdamElementWork * static_cast<double>(std::min(kElementsPerPiece, graph_->params().size() - next_element_));
  }
  return 0;
}

void Trainer::adopt(int steps, const float* params, std::size_t count) {
  if (!graph_) throw std::invalid_argument("trainer: adopt() before init()");
  if (count != graph_->params().size())
    throw std::invalid_argument("trainer: adopt() of " + std::to_string(count) + " weights, this model has " +
                                std::to_string(graph_->params().size()));
  std::copy(params, params + count, graph_->params().begin());
  steps_ = steps, adopted_ = true, phase_ = Phase::Idle;
}

Trainer::StepPart Trainer::step_part(double work) {
  if (!graph_) throw std::invalid_argument("trainer: step() before init()");
  if (adopted_) throw std::logic_error("trainer: step() after adopt() (the weights were trained elsewhere)");
  Gpt2TrainGraph<float>& g = *graph_;
  StepPart out;
  // how many units of `cost` fit in what is left of `work`; at least one when nothing is done yet
  const auto fit = [&](double cost, std::size_t left) {
    const double room = std::floor((work - out.work) / cost);
    const std::size_t n = room >= static_cast<double>(left) ? left : static_cast<std::size_t>(std::max(0.0, room));
    return out.work == 0 ? std::max<std::size_t>(n, 1) : n;
  };
  // elements of the norm or AdamW: whole pieces of kElementsPerPiece (the last may be shorter)
  const auto fit_elements = [&](double cost, std::size_t left) {
    const std::size_t piece = std::min(kElementsPerPiece, left), n = fit(cost * static_cast<double>(piece), (left + piece - 1) / piece);
    return std::min(left, n * piece);
  };
  if (phase_ == Phase::Idle) {
    sample_batch();
    g.pack(batch_, settings_.answer_only);
    g.zero_grad();
    phase_ = Phase::Rows, next_sequence_ = 0;
  }
  std::vector<float>& grads = g.grads();
  const std::size_t P = grads.size();
  for (;;) {
    if (phase_ == Phase::Rows) {
      // whole sequences: the forward and the backward through the activations
      int b1 = next_sequence_;
      double cost = 0;
      while (b1 < g.sequences() && (out.work + cost == 0 || out.work + cost + g.sequence_work(g.sequence_length(b1)) <= work))
        cost += g.sequence_work(g.sequence_length(b1++));
      if (b1 == next_sequence_) return out;
      g.forward_rows(next_sequence_, b1);
      g.backward_rows(next_sequence_, b1);
      out.work += cost, next_sequence_ = b1;
      if (b1 == g.sequences()) step_loss_ = g.loss(), phase_ = Phase::Weights, next_product_ = next_row_ = 0;
    } else if (phase_ == Phase::Weights) {
      if (next_product_ == g.weight_products()) {
        g.finish_backward();
        // attention only: the MLPs stay zero (with zero weights only down_b would get a gradient)
        if (settings_.attention_only) zero_mlp(g, g.grads());
        phase_ = settings_.grad_clip > 0 ? Phase::Norm : Phase::Update;
        next_element_ = 0, norm_sum_ = 0, clip_coef_ = 1;
        continue;
      }
      const int rows = g.weight_product_rows(next_product_);
      const double row_work = g.weight_row_work(next_product_);
      const int take = static_cast<int>(fit(row_work, static_cast<std::size_t>(rows - next_row_)));
      if (take == 0) return out;
      g.weight_product(next_product_, next_row_, next_row_ + take);
      out.work += take * row_work, next_row_ += take;
      if (next_row_ == rows) ++next_product_, next_row_ = 0;
    } else if (phase_ == Phase::Norm) {
      // optional clipping of the global gradient norm (as torch.nn.utils.clip_grad_norm_): one sum in buffer order
      const std::size_t take = fit_elements(kNormElementWork, P - next_element_);
      if (take == 0) return out;
      for (std::size_t i = next_element_; i < next_element_ + take; ++i) norm_sum_ += static_cast<double>(grads[i]) * grads[i];
      out.work += static_cast<double>(take) * kNormElementWork, next_element_ += take;
      if (next_element_ == P) {
        clip_coef_ = settings_.grad_clip / (std::sqrt(norm_sum_) + 1e-6);
        phase_ = Phase::Update, next_element_ = 0;
      }
    } else {
      // AdamW as torch.optim.AdamW: decoupled decay p ← p·(1 − lr·wd) on the matrices, then
      // p ← p − lr/(1 − β1ᵗ) · m / (√v / √(1 − β2ᵗ) + eps); into next_params_ until the step completes
      const std::size_t take = fit_elements(kAdamElementWork, P - next_element_), e0 = next_element_, e1 = e0 + take;
      if (take == 0) return out;
      const int t = steps_ + 1;
      const double bc1 = 1.0 - std::pow(static_cast<double>(settings_.beta1), t);
      const double bc2 = 1.0 - std::pow(static_cast<double>(settings_.beta2), t);
      const float step_size = static_cast<float>(settings_.lr / bc1), sqrt_bc2 = static_cast<float>(std::sqrt(bc2));
      const float b1 = settings_.beta1, b2 = settings_.beta2;
      const bool clip = clip_coef_ < 1;
      const std::vector<float>& params = g.params();
      for (const auto& tensor : g.tensors()) {
        const std::size_t from = std::max(e0, tensor.offset), to = std::min(e1, tensor.offset + tensor.size);
        if (from >= to) continue;
        const float decay = tensor.decay ? 1.0f - settings_.lr * settings_.weight_decay : 1.0f;
        for (std::size_t i = from; i < to; ++i) {
          const float grad = clip ? static_cast<float>(grads[i] * clip_coef_) : grads[i];
          m_[i] = b1 * m_[i] + (1 - b1) * grad;
          v_[i] = b2 * v_[i] + (1 - b2) * grad * grad;
          float p = params[i];
          p *= decay;
          p -= step_size * m_[i] / (std::sqrt(v_[i]) / sqrt_bc2 + settings_.adam_eps);
          next_params_[i] = p;
        }
      }
      out.work += static_cast<double>(take) * kAdamElementWork, next_element_ = e1;
      if (e1 == P) {
        std::swap(g.params(), next_params_);
        ++steps_;
        phase_ = Phase::Idle;
        out.done = true, out.loss = step_loss_;
        return out;
      }
    }
  }
}

bool predicts_referent(const float* probs, int vocab, const CorpusSentence& s) {
  return static_cast<int>(std::max_element(probs, probs + vocab) - probs) == s.answer_id;
}

double Trainer::heldout_accuracy(const std::vector<std::size_t>& sentences) {
  if (!graph_) throw std::invalid_argument("trainer: heldout_accuracy() before init()");
  if (in_step()) throw std::logic_error("trainer: heldout_accuracy() in the middle of a step (its buffers are the step's)");
  const auto& held = corpus_.heldout;
  const int V = static_cast<int>(corpus_.vocab.size());
  std::vector<std::vector<int>> chunk;
  int correct = 0;
  for (std::size_t start = 0; start < sentences.size(); start += static_cast<std::size_t>(settings_.batch)) {
    const std::size_t end = std::min(sentences.size(), start + static_cast<std::size_t>(settings_.batch));
    chunk.clear();
    for (std::size_t i = start; i < end; ++i) chunk.push_back(held.at(sentences[i]).ids);
    graph_->forward(chunk);
    for (std::size_t i = start; i < end; ++i) {
      const CorpusSentence& s = held[sentences[i]];
      correct += predicts_referent(graph_->probs(static_cast<int>(i - start), s.predict_pos()), V, s);
    }
  }
  return sentences.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(sentences.size());
}

TrainEvaluation Trainer::evaluate() {
  if (!graph_) throw std::invalid_argument("trainer: evaluate() before init()");
  if (in_step()) throw std::logic_error("trainer: evaluate() in the middle of a step (its buffers are the step's)");
  TrainEvaluation e;
  const int H = settings_.n_head, last_layer = settings_.n_layer - 1, V = static_cast<int>(corpus_.vocab.size());

  std::vector<int> head_right(static_cast<std::size_t>(H * settings_.n_layer), 0);  // [layer][head]
  std::vector<int> any_right(static_cast<std::size_t>(settings_.n_layer), 0);       // [layer]: some head right
  // twins: the sentence's twin id → how many of the two are right
  int twin_ids = 0;
  for (const CorpusSentence& s : corpus_.heldout) twin_ids = std::max(twin_ids, s.twin + 1);
  std::vector<int> twins(static_cast<std::size_t>(twin_ids), 0);
  // the same key per last-layer head: how many of the pair's two sentences the head weighs right
  std::vector<int> twin_follow(twins.size() * static_cast<std::size_t>(H), 0);
  std::vector<double> noun_weight(static_cast<std::size_t>(H), 0.0);
  std::vector<std::vector<int>> chunk;
  const auto& held = corpus_.heldout;
  int correct = 0;
  for (std::size_t start = 0; start < held.size(); start += static_cast<std::size_t>(settings_.batch)) {
    const std::size_t end = std::min(held.size(), start + static_cast<std::size_t>(settings_.batch));
    chunk.clear();
    for (std::size_t i = start; i < end; ++i) chunk.push_back(held[i].ids);
    graph_->forward(chunk);
    for (std::size_t i = start; i < end; ++i) {
      const CorpusSentence& s = held[i];
      const int b = static_cast<int>(i - start), t = s.predict_pos();
      const bool right = predicts_referent(graph_->probs(b, t), V, s);
      correct += right;
      const std::size_t key = static_cast<std::size_t>(s.twin);
      twins[key] += right;
      const int right_pos = s.refers_to_creature() ? s.creature_pos : s.thing_pos;
      const int wrong_pos = s.refers_to_creature() ? s.thing_pos : s.creature_pos;
      for (int l = 0; l <= last_layer; ++l) {
        bool any = false;
        for (int h = 0; h < H; ++h) {
          const float* row = graph_->attention_row(l, b, h, t);
          const bool head_is_right = row[right_pos] > row[wrong_pos];
          head_right[static_cast<std::size_t>(l * H + h)] += head_is_right;
          if (l == last_layer) {
            twin_follow[key * static_cast<std::size_t>(H) + static_cast<std::size_t>(h)] += head_is_right;
            noun_weight[static_cast<std::size_t>(h)] += row[right_pos] + row[wrong_pos];
          }
          any = any || head_is_right;
        }
        any_right[static_cast<std::size_t>(l)] += any;
      }
    }
  }
  e.sentences = static_cast<int>(held.size());
  if (held.empty()) return e;
  e.accuracy = static_cast<double>(correct) / held.size();
  int both = 0;
  for (int n : twins) both += n == 2;
  // every key present in the held-out set is one twin pair (both adjectives are held out together)
  const int pairs = static_cast<int>(held.size() / 2);
  e.twin_accuracy = pairs ? static_cast<double>(both) / pairs : 0;
  for (int l = 0; l <= last_layer; ++l) {
    const auto first = head_right.begin() + l * H;
    const int best = static_cast<int>(std::max_element(first, first + H) - first);
    e.layer_head_share.push_back(static_cast<double>(first[best]) / held.size());
    e.layer_any_head_share.push_back(static_cast<double>(any_right[static_cast<std::size_t>(l)]) / held.size());
    if (l == last_layer) e.best_head = best, e.head_share = e.layer_head_share.back();
  }
  e.any_head_share = e.layer_any_head_share.back();
  e.twin_pairs = pairs;
  for (int h = 0; h < H; ++h) {
    int follows = 0;
    for (std::size_t key = 0; key < twins.size(); ++key) follows += twin_follow[key * static_cast<std::size_t>(H) + static_cast<std::size_t>(h)] == 2;
    e.follow_share.push_back(pairs ? static_cast<double>(follows) / pairs : 0);
    e.noun_weight.push_back(noun_weight[static_cast<std::size_t>(h)] / static_cast<double>(held.size()));
  }
  e.follow_head = static_cast<int>(std::max_element(e.follow_share.begin(), e.follow_share.end()) - e.follow_share.begin());
  return e;
}

double ablated_accuracy(const Transformer& model, const Corpus& corpus, const std::vector<HeadRef>& heads) {
  Intervention intervention;
  intervention.ablate = heads;
  int correct = 0;
  for (const CorpusSentence& s : corpus.heldout) {
    const std::vector<int> context(s.ids.begin(), s.ids.end() - 1);  // up to the predict position
    ForwardOptions options;
    options.top_k = 1;
    options.predict_from = s.predict_pos();
    if (!intervention.empty()) options.intervention = &intervention;
    const ModelTrace trace = transformer_forward(model, context, options);
    const auto& next = trace.next[static_cast<std::size_t>(s.predict_pos())];
    correct += !next.empty() && next[0].id == s.answer_id;
  }
  return corpus.heldout.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(corpus.heldout.size());
}

}  // namespace attn
