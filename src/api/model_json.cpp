// The JSON of a loaded model and of its forward pass (see model_json.h).
// Not the forward itself: src/core/transformer.cpp computes, this only formats.
#include "model_json.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace attn {

using nlohmann::json;

namespace {
// Past this many attention numbers (layers × heads × T × T) the JSON would be hundreds of MB.
constexpr long long kMaxAttentionNumbers = 2'097'152;
}  // namespace

json model_info_json(const LoadedModel& m) {
  const TransformerConfig& c = m.model->config;
  json windows = json::array();
  for (const LayerSpec& l : c.layers) windows.push_back(l.window > 0 ? json(l.window) : json(nullptr));
  json info = {{"name", m.name},
               {"family", c.family},
               {"layers", c.n_layer},
               {"heads", c.n_head},
               {"kv_heads", c.n_kv_head},
               {"d_model", c.d_model},
               {"d_head", c.head_dim},
               {"d_ff", c.d_ff},
               {"vocab_size", c.vocab_size},
               {"positions", position_kind_name(c.positions)},
               {"causal", c.causal},
               {"windows", windows},
               {"norm", norm_kind_name(c.norm)},
               {"activation", activation_name(c.activation)},
               {"gated_mlp", c.gated_mlp},
               {"qk_norm", c.qk_norm},
               {"attn_softcap", c.attn_softcap > 0 ? json(c.attn_softcap) : json(nullptr)},
               {"final_softcap", c.final_softcap > 0 ? json(c.final_softcap) : json(nullptr)},
               {"score_scale", c.score_scale},
               {"scale_attn_weights", c.score_scale != 1.0f || c.head_dim == 1},
               {"dtype", dtype_name(m.model->embed.dtype)},
               {"weight_bytes", m.model->weight_bytes()},
               {"params", m.model->parameter_count()}};
  if (c.positions == PositionKind::Learned) info["n_positions"] = c.n_positions;
  if (c.positions == PositionKind::Rope) {
    json rope = json::array();
    for (const LayerSpec& l : c.layers)
      rope.push_back({{"theta", l.rope.theta}, {"scaling", rope_scaling_name(l.rope.scaling)}, {"factor", l.rope.factor}});
    info["rope"] = rope;
  }
  if (!m.skipped.empty()) info["skipped"] = m.skipped;
  return info;
}

json model_trace_json(const LoadedModel& m, const std::string& text, int top) {
  if (text.empty()) throw std::invalid_argument("text: is empty; give the model something to read");
  return model_trace_json(m, m.tokenizer->encode(text, /*add_special=*/true), top);  // what the model reads
}

void check_attention_size(const TransformerConfig& c, long long T) {
  if (T * T * c.n_layer * c.n_head > kMaxAttentionNumbers)
    throw std::invalid_argument("text: " + std::to_string(T) + " tokens make " + std::to_string(T * T * c.n_layer * c.n_head) +
                                " attention numbers (layers × heads × T × T); the limit is " +
                                std::to_string(kMaxAttentionNumbers) + ": shorten the text");
}

json matrix_json(const Matrix& w) {
  json rows = json::array();
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    json row = json::array();
    for (Eigen::Index j = 0; j < w.cols(); ++j) row.push_back(std::isfinite(w(i, j)) ? json(w(i, j)) : json(nullptr));
    rows.push_back(std::move(row));
  }
  return rows;
}

json layer_attention_json(const LayerDetail& detail) {
  json heads = json::array();
  for (const Matrix& w : detail.weights) heads.push_back(matrix_json(w));
  return heads;
}

json attention_json(const Transformer& model, const ModelTrace& trace) {
  json attention = json::array();
  for (int l = 0; l < model.config.n_layer; ++l) attention.push_back(layer_attention_json(layer_detail(model, trace, l)));
  return attention;
}

json next_json(const LoadedModel& m, const ModelTrace& trace, int top) {
  json next = json::array();
  for (int t = 0; t < static_cast<int>(trace.token_ids.size()); ++t) {
    json options = json::array();
    for (const NextToken& n : top_next_tokens(trace, t, top))
      options.push_back({{"token", n.id < m.tokenizer->vocab_size() ? m.tokenizer->decode({n.id}) : m.tokenizer->display(n.id)},
                         {"id", n.id}, {"p", n.p}});
    next.push_back(std::move(options));
  }
  return next;
}

json model_trace_json(const LoadedModel& m, const std::vector<int>& ids, int top) {
  if (top < 1 || top > 100) throw std::invalid_argument("top: must be a whole number from 1 to 100");
  check_attention_size(m.model->config, static_cast<long long>(ids.size()));
  ForwardOptions options;
  options.top_k = top;
  options.stream_bytes = std::numeric_limits<std::int64_t>::max();  // every layer's detail follows: none run twice
  const ModelTrace trace = transformer_forward(*m.model, ids, options);
  json tokens = json::array();
  for (int id : ids) tokens.push_back(m.tokenizer->decode({id}));
  return {{"model", model_info_json(m)}, {"tokens", tokens}, {"token_ids", ids},
          {"attention", attention_json(*m.model, trace)}, {"next", next_json(m, trace, top)}};
}

}  // namespace attn
