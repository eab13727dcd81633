// The Weights view's words and data (see weights_view.h): the sink and both-ways notes, the
// value-weighted and rollout readings in words, and the view's data. Not the matrix's drawing
// (src/ui/panel_weights.cpp); each cell's softmax arithmetic is state.views.weights (view_numbers.h).
#include "weights_view.h"

#include <algorithm>
#include <cstdio>

#include "../api/compute_json.h"
#include "view_data.h"
#include "view_text.h"

namespace attn {

// A model that reads both ways (an encoder): how much of the chosen head's weight a decoder's causal
// mask would hide, read off the head's summary (its mean weight on keys after the query).
std::string both_ways_note(const AppState& state) {
  const LoadedModel* m = current_loaded_model(state);
  if (!m || m->model->config.causal || !state.model.forward) return "";
  const HeadSummary& s = state.model.forward->layers[static_cast<std::size_t>(state.inputs.layer)]
                             .summaries[static_cast<std::size_t>(state.inputs.head)];
  char share[16];
  std::snprintf(share, sizeof share, "%.0f%%", static_cast<double>(s.ahead) * 100);
  return std::string("No causal mask: this model is an encoder and reads the whole text, so cells right of the diagonal "
                     "(a word looking at later words) are live. In this head ") + share + " of a row's weight sits "
         "there on average: a decoder's mask would hide all of it.";
}

std::string sink_note(const AppState& state) {
  const AttentionTrace& t = state.model.trace;
  const int row = state.inputs.token;
  if (row == 0 || t.weights(row, 0) < kHeadPatternShare) return "";
  double mean = 0;
  int seen = 0;
  for (int j = 0; j < static_cast<int>(t.value.rows()); ++j)
    if (!key_hidden_by_mask(t, row, j)) mean += t.value.row(j).norm(), ++seen;
  mean /= std::max(1, seen);
  const double ratio = mean > 0 ? t.value.row(0).norm() / mean : 1.0;
  if (ratio >= kSinkValueRatio) return "";
  const auto& tokens = state.model.queries.tokens;
  char text[480];
  std::snprintf(text, sizeof text,
                "%s puts %.0f%% of its weight on the first token, whose value is short (%.2f × the mean length of "
                "the values it sees): an attention sink. The weight parked there adds little to the output; it is "
                "the head's way of looking nowhere when nothing else matches its query.",
                tokens[static_cast<std::size_t>(row)].text.c_str(), static_cast<double>(t.weights(row, 0)) * 100, ratio);
  return text;
}

std::string reading_text(const AppState& state) {
  const AppModel::Influence* influence = state.model.influence.get();
  if (!influence) return "";
  const AttentionTrace& t = state.model.trace;
  const int row = state.inputs.token, cols = static_cast<int>(t.weights.cols());
  const std::vector<std::string> keys = key_labels(state);
  const bool real = current_loaded_model(state) != nullptr;
  int by_weight = -1, by_reading = -1;
  for (int j = 0; j < cols; ++j) {
    if (key_hidden_by_mask(t, row, j)) continue;
    if (by_weight < 0 || t.weights(row, j) > t.weights(row, by_weight)) by_weight = j;
    if (by_reading < 0 || influence->values(row, j) > influence->values(row, by_reading)) by_reading = j;
  }
  const std::string query = in_quotes(state.model.queries.tokens[static_cast<std::size_t>(row)].text);
  const auto key = [&](int j) { return in_quotes(keys[static_cast<std::size_t>(j)]); };
  if (state.inputs.weights_show == WeightsShow::Rollout) {
    std::string text = "Rollout: each layer's weights averaged over its heads, with half of every token kept by the "
                       "residual stream (0.5·A + 0.5·I, rows summing to 1), multiplied through layers 1 to " +
                       std::to_string(state.inputs.layer + 1) + ". It assumes mixing is all a layer does: no W_O, no "
                       "value sizes, no MLP; a rough map of where information can have come from, not a measurement.";
    Eigen::Index top = 0;
    influence->values.row(row).maxCoeff(&top);
    return text + " By it, " + query + "'s stream holds most of " + key(static_cast<int>(top)) + " (" + number_text(influence->values(row, top), 2) + ").";
  }
  const std::string sent = real ? "‖v·W_O‖, the length of what the key's value adds to the stream through this head's "
                                  "rows of W_O"
                                : "‖v‖, the length of the key's value (this model has no W_O)";
  std::string text = "Value-weighted (Kobayashi et al., 2020): each weight times " + sent + ". It assumes length is "
                     "effect; it ignores the direction a value points and what later layers do with it.";
  if (by_weight < 0) return text;
  if (by_weight == by_reading)
    return text + " Here both agree: " + query + " gives " + key(by_weight) + " the most weight and takes the most from it.";
  const float mean = influence->value_norms.mean();
  return text + " Here they disagree: " + query + " gives " + key(by_weight) + " the most weight (" +
         number_text(t.weights(row, by_weight), 2) + ") but its value is short (" +
         number_text(influence->value_norms[by_weight], 2) + " against " + number_text(mean, 2) +
         " on average), so by what is sent " + key(by_reading) + " leads.";
}


nlohmann::json weights_view_data(const AppState& state) {
  const std::string sink = sink_note(state);
  nlohmann::json reading = nullptr;
  if (const AppModel::Influence* influence = state.model.influence.get()) {
    nlohmann::json values = nlohmann::json::array();
    for (Eigen::Index i = 0; i < influence->values.rows(); ++i) {
      nlohmann::json row = nlohmann::json::array();
      for (Eigen::Index j = 0; j < influence->values.cols(); ++j) row.push_back(exact_float(influence->values(i, j)));
      values.push_back(std::move(row));
    }
    nlohmann::json norms = nlohmann::json::array();
    for (Eigen::Index j = 0; j < influence->value_norms.size(); ++j) norms.push_back(exact_float(influence->value_norms[j]));
    reading = {{"kind", weights_show_name(state.inputs.weights_show)}, {"values", values}, {"value_norms", norms},
               {"text", reading_text(state)}};
  }
  const std::string both_ways = both_ways_note(state);
  return {{"sink", sink.empty() ? nlohmann::json(nullptr) : nlohmann::json(sink)}, {"reading", reading},
          {"both_ways", both_ways.empty() ? nlohmann::json(nullptr) : nlohmann::json(both_ways)}};
}

}  // namespace attn
