// Attribution, value-weighted attention, rollout and the intervention sweeps (see attribution.h).
#include "attribution.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "refuse.h"

namespace attn {

namespace {


constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A norm with its statistics frozen from one row: v ↦ (v − mean(v)) · rstd · scale (mean only for
// LayerNorm), linear in v, so the parts of a sum map to parts of the normed sum.
struct FrozenNorm {
  const TransformerConfig* config;
  NormStats stats;
  Vector scale;
  Vector apply(const Vector& v) const {
    const double mean = config->norm == NormKind::LayerNorm ? static_cast<double>(v.sum()) / static_cast<double>(v.size()) : 0.0;
    Vector out(v.size());
    for (Eigen::Index i = 0; i < v.size(); ++i)
      out[i] = static_cast<float>((v[i] - mean) * stats.rstd) * scale[i];
    return out;
  }
};
FrozenNorm freeze(const TransformerConfig& c, const Vector& row, const Vector& w) {
  return {&c, norm_stats(row.data(), static_cast<int>(row.size()), c), norm_scale(w, c)};
}

ForwardOptions sweep_options(Backend backend) {
  ForwardOptions o;
  o.backend = backend;
  o.top_k = 0;  // the metric reads one position's logits itself
  return o;
}

void check_position(const ModelTrace& trace, int position) {
  if (position < 0 || position >= static_cast<int>(trace.token_ids.size()))
    refuse("position", std::to_string(position) + " is outside the text (0 to " + std::to_string(trace.token_ids.size() - 1) + ")");
}
void check_token(const TransformerConfig& c, int token, const char* what) {
  if (token < 0 || token >= c.vocab_size)
    refuse(what, "token id " + std::to_string(token) + " is outside the vocabulary (0 to " + std::to_string(c.vocab_size - 1) + ")");
}

Sweep start_sweep(int rows, int cols) {
  Sweep s;
  s.values = Matrix::Constant(rows, cols, std::numeric_limits<float>::quiet_NaN());
  return s;
}
// One cell done; false when the caller asked to stop.
bool advance(Sweep& s, const SweepProgress& progress) {
  ++s.done;
  if (progress && !progress(s.done, static_cast<int>(s.values.size()))) s.cancelled = true;
  return !s.cancelled;
}

void check_pair(const ModelTrace& source, const ModelTrace& base) {
  if (source.token_ids.size() != base.token_ids.size())
    refuse("patch", "the two texts must have the same number of tokens (" + std::to_string(source.token_ids.size()) +
                     " and " + std::to_string(base.token_ids.size()) + ")");
}

}  // namespace

double LogitAttribution::sum() const {
  return offset + embeddings + static_cast<double>(heads.sum()) + static_cast<double>(biases.sum()) +
         static_cast<double>(mlps.sum());
}

std::string why_no_attribution(const TransformerConfig& c) {
  if (!c.has_lm_head) return "this model has no LM head, so there is no logit to attribute";
  if (c.post_norm || c.head_transform)
    return "direct logit attribution needs the logit to be a sum of parts: this model norms after each add "
           "(post-norm blocks) and its masked-LM head is not linear (dense, GELU, LayerNorm), so no part's share "
           "can be read off alone";
  return "";
}

namespace {

// attribute_logit with layer l's numbers from detail(l): its row `row` is the position's.
LogitAttribution attribute(const Transformer& model, const ModelTrace& trace, int position, int target, int against,
                           Backend backend, const std::function<LayerDetail(int)>& detail, int row) {
  const TransformerConfig& c = model.config;
  if (const std::string why = why_no_attribution(c); !why.empty()) refuse("attribution", why);
  check_position(trace, position);
  check_token(c, target, "target");
  if (against >= 0) check_token(c, against, "against");
  for (const StreamPatch& p : trace.intervention.stream_patches)
    if (p.position == position)
      refuse("attribution", "the stream at position " + std::to_string(position) + " is patched at layer " +
                             std::to_string(p.layer) + ", so what came before the patch is not in its sum");
  const int L = c.n_layer, H = c.n_head;
  LogitAttribution a;
  a.position = position, a.target = target, a.against = against;
  a.post_norms_frozen = c.sandwich_norms;
  a.heads.resize(L, H);
  a.biases.resize(L);
  a.mlps.resize(L);
  // every part of the final stream at `position`, (C) each, in order
  std::vector<Vector> head_parts(static_cast<std::size_t>(L) * H), bias_parts(L), mlp_parts(L);
  Vector stream_in, final_stream;
  // each layer's position alone (its stream and heads' outputs there: all the parts read), the next
  // layer's taken before this one's MLP is read off; one layer's whole detail alive at a time
  const auto position_of = [&](int l) {
    const LayerDetail whole = detail(l);
    LayerDetail one;
    one.stream_in = whole.stream_in.middleRows(row, 1);
    one.head_outputs = whole.head_outputs.middleRows(row, 1);
    return one;
  };
  LayerDetail d, next = position_of(0);
  for (int l = 0; l < L; ++l) {
    const TransformerBlock& b = model.blocks[static_cast<std::size_t>(l)];
    d = std::move(next);
    if (l + 1 < L) next = position_of(l + 1);
    if (l == 0) stream_in = d.stream_in.row(0);
    const Matrix parts = head_contributions(c, b, d, 0, backend);
    const Vector bias = b.o_b.size() ? b.o_b : Vector::Zero(c.d_model);
    if (c.sandwich_norms) {
      // the post-attention norm's scale frozen from this run's sum of the parts (+ b_O)
      const FrozenNorm post = freeze(c, Vector(parts.colwise().sum() + bias), b.post_attn_norm_w);
      for (int h = 0; h < H; ++h) head_parts[static_cast<std::size_t>(l * H + h)] = post.apply(parts.row(h));
      bias_parts[static_cast<std::size_t>(l)] = post.apply(bias);
    } else {
      for (int h = 0; h < H; ++h) head_parts[static_cast<std::size_t>(l * H + h)] = parts.row(h);
      bias_parts[static_cast<std::size_t>(l)] = bias;
    }
    if (l + 1 < L) {
      // the MLP's update: what the next layer's stream adds beyond the attention's parts (the MLP is not
      // run again; the last layer has no next stream to read)
      Vector attention = bias_parts[static_cast<std::size_t>(l)];
      for (int h = 0; h < H; ++h) attention += head_parts[static_cast<std::size_t>(l * H + h)];
      mlp_parts[static_cast<std::size_t>(l)] = next.stream_in.row(0) - d.stream_in.row(0) - attention;
    } else {
      const StreamUpdates u = stream_updates(c, b, d, 0, backend);
      mlp_parts[static_cast<std::size_t>(l)] = u.mlp;
      final_stream = Vector(d.stream_in.row(0)) + u.attention + u.mlp;
    }
  }
  // the final norm frozen from the final stream, then the unembedding (target − against)
  Vector direction = unembedding(model, target);
  if (against >= 0) direction -= unembedding(model, against);
  const FrozenNorm final_norm = freeze(c, final_stream, model.final_norm_w);
  const auto logit_of = [&](const Vector& part) { return static_cast<double>(final_norm.apply(part).dot(direction)); };
  const Vector normed = trace.final_normed.row(position);
  a.logit = static_cast<double>(normed.dot(direction));
  a.offset = model.final_norm_b.size() ? static_cast<double>(model.final_norm_b.dot(direction)) : 0.0;
  a.embeddings = logit_of(stream_in);
  for (int l = 0; l < L; ++l) {
    for (int h = 0; h < H; ++h) a.heads(l, h) = static_cast<float>(logit_of(head_parts[static_cast<std::size_t>(l * H + h)]));
    a.biases[l] = static_cast<float>(logit_of(bias_parts[static_cast<std::size_t>(l)]));
    a.mlps[l] = static_cast<float>(logit_of(mlp_parts[static_cast<std::size_t>(l)]));
  }
  return a;
}

}  // namespace

LogitAttribution attribute_logit(const Transformer& model, const ModelTrace& trace, int position, int target,
                                 int against, Backend backend) {
  return attribute(model, trace, position, target, against, backend,
                   [&](int l) { return layer_detail(model, trace, l, backend); }, position);
}

LogitAttribution attribute_logit(const Transformer& model, const ForwardCache& cache, int position, int target,
                                 int against, Backend backend) {
  if (const std::string why = why_no_attribution(model.config); !why.empty()) refuse("attribution", why);
  const std::vector<LayerDetail> rows = cached_layer_rows(model, cache, position, backend);
  return attribute(model, cache.trace, position, target, against, backend,
                   [&](int l) { return rows[static_cast<std::size_t>(l)]; }, 0);
}

ValueWeighted value_weighted(const TransformerConfig& c, const TransformerBlock& b, const LayerDetail& d, int head,
                             Backend backend) {
  if (head < 0 || head >= static_cast<int>(d.weights.size())) refuse("head", "outside the layer");
  const int hd = c.head_dim, g = c.kv_head_of(head);
  const Matrix sent = through_head_output(c, b, head, d.value.middleCols(g * hd, hd), backend);  // (T, C): v_j W_O^h
  ValueWeighted v;
  v.value_norms = sent.rowwise().norm().transpose();
  v.weighted = d.weights[static_cast<std::size_t>(head)] * v.value_norms.asDiagonal();
  return v;
}

Matrix head_mean_weights(const LayerDetail& d) {
  if (d.weights.empty()) refuse("layer", "no heads");
  Matrix mean = Matrix::Zero(d.weights[0].rows(), d.weights[0].cols());
  for (const Matrix& w : d.weights) mean += w;
  return mean / static_cast<float>(d.weights.size());
}

std::vector<Matrix> attention_rollout(const std::vector<Matrix>& means) {
  std::vector<Matrix> out;
  for (const Matrix& a : means) {
    if (a.rows() != a.cols() || (!out.empty() && a.rows() != out.back().rows())) refuse("rollout", "every layer's weights must be T × T");
    Matrix mixed = 0.5f * a + 0.5f * Matrix::Identity(a.rows(), a.cols());
    const Eigen::VectorXf sums = mixed.rowwise().sum();
    mixed = mixed.array().colwise() / sums.array();
    out.push_back(out.empty() ? mixed : Matrix(mixed * out.back()));
  }
  return out;
}

double token_log_prob(const Transformer& model, const ModelTrace& trace, int position, int token, Backend backend) {
  check_position(trace, position);
  check_token(model.config, token, "target");
  const Vector logits = logits_at(model, trace, position, true, backend);
  const double top = static_cast<double>(logits.maxCoeff());
  double sum = 0;
  for (Eigen::Index v = 0; v < logits.size(); ++v) sum += std::exp(static_cast<double>(logits[v]) - top);
  return static_cast<double>(logits[token]) - top - std::log(sum);
}

double restored_fraction(double patched, double a, double b) {
  return std::fabs(a - b) < kMinRestorable ? kNaN : (patched - b) / (a - b);
}

HeadPatch head_patch_from(const Transformer& model, const ModelTrace& source, int layer, int head, Backend backend) {
  const int hd = model.config.head_dim;
  if (head < 0 || head >= model.config.n_head) refuse("patch", "head " + std::to_string(head) + " is outside the layer");
  const LayerDetail d = layer_detail(model, source, layer, backend);
  return {layer, head, d.head_outputs.middleCols(head * hd, hd)};
}

StreamPatch stream_patch_from(const Transformer& model, const ModelTrace& source, int layer, int position, Backend backend) {
  check_position(source, position);
  const LayerDetail d = layer_detail(model, source, layer, backend);
  return {layer, position, d.stream_in.row(position)};
}

namespace {
// Whether the twins can be asked at position and layer: shown set, with the answers and their probabilities.
bool ask_answers(const Transformer& model, const ModelTrace& a, const ModelTrace& b, int position, int layer, TwinAsk& ask) {
  const TransformerConfig& c = model.config;
  const int T = static_cast<int>(a.token_ids.size());
  if (T != static_cast<int>(b.token_ids.size()) || position < 0 || position >= T || layer < 0 || layer >= c.n_layer) return false;
  if (!why_no_attribution(c).empty()) return false;  // its measure is the heads' direct shares (an encoder has none)
  ask.shown = true;
  ask.position = position;
  ask.layer = layer;
  const NextToken top_a = next_tokens_at(model, a, position, 1).front(), top_b = next_tokens_at(model, b, position, 1).front();
  ask.answer_a = top_a.id, ask.p_a = top_a.p;
  ask.answer_b = top_b.id, ask.p_b = top_b.p;
  return true;
}

void ask_heads(const Transformer& model, const ModelTrace& a, const ModelTrace& b, TwinAsk& ask) {
  const TransformerConfig& c = model.config;
  const int position = ask.position, layer = ask.layer;
  const LogitAttribution la = attribute_logit(model, a, position, ask.target, ask.against);
  const LogitAttribution lb = attribute_logit(model, b, position, ask.target, ask.against);
  ask.difference_a = static_cast<float>(la.logit);
  ask.difference_b = static_cast<float>(lb.logit);
  ask.rest_a = ask.difference_a, ask.rest_b = ask.difference_b;
  ask.ablated = 2 * c.n_head * (c.n_layer - layer) <= kAskReruns;
  ForwardOptions only_stream;  // the LM head on the selected row only, below
  only_stream.predict_from = static_cast<int>(a.token_ids.size());
  // log p of each text's own answer with every head on, once for all the heads below
  const double own_a = ask.ablated ? token_log_prob(model, a, position, ask.answer_a) : 0;
  const double own_b = ask.ablated ? token_log_prob(model, b, position, ask.answer_b) : 0;
  const auto switched_off = [&](const ModelTrace& run, int h, int own, double own_log_prob, int& answer, float& delta) {
    Intervention off;
    off.ablate = {{layer, h}};
    const ModelTrace rerun = rerun_forward(model, run, off, only_stream);
    answer = next_tokens_at(model, rerun, position, 1).front().id;
    delta = static_cast<float>(token_log_prob(model, rerun, position, own) - own_log_prob);
  };
  for (int h = 0; h < c.n_head; ++h) {
    AskedHead head;
    head.share_a = static_cast<float>(la.heads(layer, h));
    head.share_b = static_cast<float>(lb.heads(layer, h));
    ask.rest_a -= head.share_a, ask.rest_b -= head.share_b;
    if (ask.ablated) {
      switched_off(a, h, ask.answer_a, own_a, head.answer_a, head.delta_a);
      switched_off(b, h, ask.answer_b, own_b, head.answer_b, head.delta_b);
    }
    ask.heads.push_back(head);
  }
}
}  // namespace

TwinAsk ask_twins(const Transformer& model, const ModelTrace& a, const ModelTrace& b, int position, int layer) {
  TwinAsk ask;
  if (!ask_answers(model, a, b, position, layer, ask)) return ask;
  ask.target = ask.answer_b;
  ask.against = ask.answer_a == ask.answer_b ? -1 : ask.answer_a;
  ask_heads(model, a, b, ask);
  return ask;
}

TwinAsk ask_twins(const Transformer& model, const ModelTrace& a, const ModelTrace& b, int position, int layer, int target,
                  int against) {
  TwinAsk ask;
  if (!ask_answers(model, a, b, position, layer, ask)) return ask;
  ask.target = target;
  ask.against = against;
  ask_heads(model, a, b, ask);
  return ask;
}

namespace {

// One rerun of `base` per (layer, column) cell: edit(layer, column, detail) is that cell's change
// (`detail`: layer `layer` of the source run, when there is one), the cell log p(target) after it
// less the baseline, or the restored fraction when patching from `source`.
// `resume`: a sweep of the same request that its progress stopped, continued from its next cell.
template <class Edit>
Sweep sweep_cells(const Transformer& model, const ModelTrace& base, const ModelTrace* source, int position, int target,
                  int columns, const Edit& edit, const SweepProgress& progress, Backend backend, const Sweep* resume) {
  const int L = model.config.n_layer;
  if (resume && (resume->values.rows() != L || resume->values.cols() != columns))
    refuse("sweep", "the sweep to continue has another shape");
  Sweep s = resume ? *resume : start_sweep(L, columns);
  s.cancelled = false;
  if (!resume) {
    s.baseline = token_log_prob(model, base, position, target, backend);
    if (source) {
      check_pair(*source, base);
      s.source = token_log_prob(model, *source, position, target, backend);
    }
  }
  for (int l = s.done / columns; l < L; ++l) {
    const LayerDetail detail = source ? layer_detail(model, *source, l, backend) : LayerDetail{};
    for (int col = l == s.done / columns ? s.done % columns : 0; col < columns; ++col) {
      const ModelTrace run = rerun_forward(model, base, edit(l, col, detail), sweep_options(backend));
      const double after = token_log_prob(model, run, position, target, backend);
      s.values(l, col) = static_cast<float>(source ? restored_fraction(after, s.source, s.baseline) : after - s.baseline);
      if (!advance(s, progress)) return s;
    }
  }
  return s;
}

}  // namespace

Sweep ablation_sweep(const Transformer& model, const ModelTrace& base, int position, int target, AblateKind kind,
                     const SweepProgress& progress, Backend backend, const Sweep* resume) {
  return sweep_cells(model, base, nullptr, position, target, model.config.n_head, [&](int l, int h, const LayerDetail&) {
    Intervention edit;
    edit.ablate = {{l, h}};
    edit.ablate_kind = kind;
    return edit;
  }, progress, backend, resume);
}

Sweep head_patch_sweep(const Transformer& model, const ModelTrace& source, const ModelTrace& base, int position,
                       int target, const SweepProgress& progress, Backend backend, const Sweep* resume) {
  const int hd = model.config.head_dim;
  return sweep_cells(model, base, &source, position, target, model.config.n_head, [&](int l, int h, const LayerDetail& d) {
    Intervention edit;
    edit.head_patches.push_back({l, h, d.head_outputs.middleCols(h * hd, hd)});
    return edit;
  }, progress, backend, resume);
}

Sweep stream_patch_sweep(const Transformer& model, const ModelTrace& source, const ModelTrace& base, int position,
                         int target, const SweepProgress& progress, Backend backend, const Sweep* resume) {
  return sweep_cells(model, base, &source, position, target, static_cast<int>(base.token_ids.size()),
                     [&](int l, int t, const LayerDetail& d) {
                       Intervention edit;
                       edit.stream_patches.push_back({l, t, d.stream_in.row(t)});
                       return edit;
                     }, progress, backend, resume);
}

AroundHeadView around_head(const TransformerConfig& config, const TransformerBlock& block, const LayerDetail& detail,
                           int head, int token) {
  AroundHeadView a;
  const int T = static_cast<int>(detail.stream_in.rows());
  if (T == 0 || head < 0 || head >= config.n_head) return a;
  const int i = std::clamp(token, 0, T - 1);
  a.loaded = true, a.head = head, a.token = i;
  const StreamUpdates u = stream_updates(config, block, detail, i);
  a.stream_in = detail.stream_in.row(i).norm();
  a.attention_update = u.attention.norm();
  a.mlp_update = u.mlp.norm();
  a.stream_out = ((detail.stream_in.row(i) + u.attention) + u.mlp).norm();  // the forward's order
  const Matrix parts = head_contributions(config, block, detail, i);
  Vector joined = parts.colwise().sum();
  if (block.o_b.size() != 0) joined += block.o_b;
  const double along = static_cast<double>(joined.squaredNorm());
  a.shares_add_up = !config.sandwich_norms;
  for (int h = 0; h < config.n_head; ++h) {
    a.head_parts.push_back(parts.row(h).norm());
    a.head_shares.push_back(along > 0 ? static_cast<float>(parts.row(h).dot(joined) / along) : 0.0f);
  }
  return a;
}

}  // namespace attn
