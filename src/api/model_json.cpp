// The JSON of a loaded model and of its forward pass (see model_json.h).
// Not the forward itself: src/core/gpt2.cpp computes, this only formats.
#include "model_json.h"

#include <stdexcept>

namespace attn {

using nlohmann::json;

namespace {
// Past this many attention numbers (layers × heads × T × T) the JSON would be hundreds of MB.
constexpr long long kMaxAttentionNumbers = 2'097'152;
}  // namespace

json model_info_json(const LoadedModel& m) {
  const Gpt2Config& c = m.model->config;
  return {{"name", m.name},          {"family", "gpt2"},        {"layers", c.n_layer},
          {"heads", c.n_head},       {"d_model", c.n_embd},     {"d_head", c.head_dim()},
          {"vocab_size", c.vocab_size}, {"n_positions", c.n_positions}, {"params", m.model->parameter_count()},
          {"scale_attn_weights", c.scale_attn_weights}};
}

json model_trace_json(const LoadedModel& m, const std::string& text, int top) {
  if (top < 1 || top > 100) throw std::invalid_argument("top: must be a whole number from 1 to 100");
  if (text.empty()) throw std::invalid_argument("text: is empty; give the model something to read");
  const std::vector<int> ids = m.tokenizer->encode(text);
  const Gpt2Config& c = m.model->config;
  const long long T = static_cast<long long>(ids.size());
  if (T * T * c.n_layer * c.n_head > kMaxAttentionNumbers)
    throw std::invalid_argument("text: " + std::to_string(T) + " tokens make " + std::to_string(T * T * c.n_layer * c.n_head) +
                                " attention numbers (layers × heads × T × T); the limit is " +
                                std::to_string(kMaxAttentionNumbers) + ": shorten the text");
  const ModelTrace trace = gpt2_forward(*m.model, ids);
  json tokens = json::array(), attention = json::array(), next = json::array();
  for (int id : ids) tokens.push_back(m.tokenizer->decode({id}));
  for (const LayerTrace& layer : trace.layers) {
    json heads = json::array();
    for (const Matrix& w : layer.weights) {
      json rows = json::array();
      for (Eigen::Index i = 0; i < w.rows(); ++i) {
        json row = json::array();
        for (Eigen::Index j = 0; j < w.cols(); ++j) row.push_back(w(i, j));
        rows.push_back(std::move(row));
      }
      heads.push_back(std::move(rows));
    }
    attention.push_back(std::move(heads));
  }
  for (int t = 0; t < static_cast<int>(T); ++t) {
    json options = json::array();
    for (const NextToken& n : top_next_tokens(trace, t, top))
      options.push_back({{"token", m.tokenizer->decode({n.id})}, {"id", n.id}, {"p", n.p}});
    next.push_back(std::move(options));
  }
  return {{"model", model_info_json(m)}, {"tokens", tokens}, {"token_ids", ids}, {"attention", attention}, {"next", next}};
}

}  // namespace attn
