// The JSON of a loaded model and of its forward pass (see model_json.h).
// Not the forward itself: src/core/transformer.cpp computes, this only formats.
#include "model_json.h"

#include <algorithm>
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
  if (c.post_norm) info["post_norm"] = true;
  if (c.embed_norm) info["embed_norm"] = true;
  if (c.n_token_types > 0) info["token_types"] = c.n_token_types;
  if (c.position_offset > 0) info["position_offset"] = c.position_offset;
  if (!c.causal) info["mlm_head"] = c.has_lm_head;  // an encoder: whether it can fill in a mask
  if (c.positions == PositionKind::Rope) {
    json rope = json::array();
    for (const LayerSpec& l : c.layers)
      rope.push_back({{"theta", l.rope.theta}, {"scaling", rope_scaling_name(l.rope.scaling)}, {"factor", l.rope.factor}});
    info["rope"] = rope;
  }
  if (!m.skipped.empty()) info["skipped"] = m.skipped;
  return info;
}

std::vector<int> model_text_ids(const LoadedModel& m, const std::string& text, const std::string& what) {
  if (text.empty()) throw std::invalid_argument(what + ": is empty; give the model something to read");
  if (!m.model->config.causal && m.tokenizer->mask_id() < 0)
    for (const char* mask : {"[MASK]", "<mask>"})
      if (text.find(mask) != std::string::npos)
        throw std::invalid_argument(what + ": has " + mask +
                                    " but this model's tokenizer has no mask token, so there is no word to fill in");
  return m.tokenizer->encode(text, /*add_special=*/true);  // what the model reads
}

void check_mask_tokens(const LoadedModel& m, const std::vector<int>& ids) {
  const TransformerConfig& c = m.model->config;
  const int mask = m.tokenizer->mask_id();
  if (!c.causal && !c.has_lm_head && mask >= 0 && std::find(ids.begin(), ids.end(), mask) != ids.end())
    throw std::invalid_argument("text: has a mask token but the model's file has no masked-LM head, so it cannot fill it in");
}

json model_trace_json(const LoadedModel& m, const std::string& text, int top, int padding) {
  return model_trace_json(m, model_text_ids(m, text), top, padding);
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

json masked_json(const LoadedModel& m, const ModelTrace& trace, int top) {
  json masked = json::array();
  const int mask = m.tokenizer->mask_id();
  const int real = static_cast<int>(trace.token_ids.size()) - trace.padding;
  const json next = next_json(m, trace, top);
  for (int t = 0; t < real && mask >= 0; ++t)
    if (trace.token_ids[static_cast<std::size_t>(t)] == mask) masked.push_back({{"position", t}, {"top", next[static_cast<std::size_t>(t)]}});
  return masked;
}

namespace {
int padding_token(const LoadedModel& m) {
  for (const char* pad : {"[PAD]", "<pad>"})
    if (m.tokenizer->special_id(pad) >= 0) return m.tokenizer->special_id(pad);
  throw std::invalid_argument("padding: this model's tokenizer has no [PAD] or <pad> token to pad with");
}
}  // namespace

std::vector<int> padded_ids(const LoadedModel& m, std::vector<int> ids, int padding) {
  if (padding < 0 || padding > kMaxModelTokens)
    throw std::invalid_argument("padding: must be a whole number from 0 to " + std::to_string(kMaxModelTokens));
  if (padding > 0) ids.insert(ids.end(), static_cast<std::size_t>(padding), padding_token(m));
  return ids;
}

std::vector<int> model_trace_ids(const LoadedModel& m, const std::vector<int>& ids_in, int top, int padding) {
  if (top < 1 || top > 100) throw std::invalid_argument("top: must be a whole number from 1 to 100");
  std::vector<int> ids = padded_ids(m, ids_in, padding);
  check_attention_size(m.model->config, static_cast<long long>(ids.size()));
  check_mask_tokens(m, ids_in);
  return ids;
}

ModelTrace model_trace_numbers(const Transformer& model, const std::vector<int>& ids, int top, int padding) {
  ForwardOptions options;
  options.top_k = top;
  options.padding = padding;
  options.stream_bytes = std::numeric_limits<std::int64_t>::max();  // every layer's detail follows: none run twice
  return transformer_forward(model, ids, options);
}

json model_trace_answer(const LoadedModel& m, const ModelTrace& trace, json attention, int top) {
  json tokens = json::array();
  for (int id : trace.token_ids) tokens.push_back(m.tokenizer->decode({id}));
  json out = {{"model", model_info_json(m)}, {"tokens", tokens}, {"token_ids", trace.token_ids},
              {"attention", std::move(attention)}};
  // an encoder fills in its mask tokens; a decoder predicts the next token everywhere
  if (m.model->config.causal) out["next"] = next_json(m, trace, top);
  else out["masked"] = masked_json(m, trace, top);
  if (trace.padding > 0) out["padding"] = trace.padding;
  return out;
}

json model_trace_json(const LoadedModel& m, const std::vector<int>& ids_in, int top, int padding) {
  const std::vector<int> ids = model_trace_ids(m, ids_in, top, padding);
  const ModelTrace trace = model_trace_numbers(*m.model, ids, top, padding);
  return model_trace_answer(m, trace, attention_json(*m.model, trace), top);
}

}  // namespace attn
