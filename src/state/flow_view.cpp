// The Flow view's boxes and words (see flow_view.h): what each box of X → Q, K, V → scores →
// weights → output shows and says, the selected token's strongest keys and the part around the
// chosen head in words, and the view's data. Not their layout or drawing (src/ui/panel_flow.cpp).
#include "flow_view.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "view_data.h"
#include "view_text.h"

namespace attn {

// A token's text, with its position when the same text occurs twice ("the (5)"), so a learner
// can tell the two apart in a list.
std::string token_name(const std::vector<std::string>& labels, int index) {
  const std::string& text = labels[static_cast<std::size_t>(index)];
  const auto same = std::count(labels.begin(), labels.end(), text);
  return same > 1 ? text + " (" + std::to_string(index + 1) + ")" : text;
}

std::string shape_text(const Matrix& m) {
  return "(" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + ")";
}

// Largest |value| of the finite entries (masked −∞ scores do not count), 1 when all are 0.
float max_abs_finite(const Matrix& m) {
  float largest = 0;
  for (Eigen::Index i = 0; i < m.size(); ++i)
    if (std::isfinite(m.data()[i])) largest = std::max(largest, std::fabs(m.data()[i]));
  return largest > 0 ? largest : 1.0f;
}

// "name 1.00, name 0.50, ..." for one row. Wide rows (scores, weights over many keys) list only
// their largest entries, best first; narrow ones list every entry in column order.
std::string row_entries(const Matrix& m, int row, const std::vector<std::string>& col_names, int max_listed) {
  const int cols = static_cast<int>(m.cols());
  std::vector<int> order(static_cast<std::size_t>(cols));
  std::iota(order.begin(), order.end(), 0);
  const bool only_largest = cols > max_listed;
  if (only_largest) {
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return m(row, a) > m(row, b); });
    order.resize(static_cast<std::size_t>(max_listed));
  }
  std::string out;
  for (int j : order) {
    if (!out.empty()) out += ", ";
    out += token_name(col_names, j) + " " + number_text(m(row, j), 2);
  }
  if (only_largest) out += "  (largest " + std::to_string(max_listed) + " of " + std::to_string(cols) + ")";
  return out;
}

namespace {

FlowBox make_box(const char* id, std::string name, std::string formula, std::string meaning, std::string detail,
                   const Matrix& matrix) {
  FlowBox node;
  node.id = id;
  node.name = std::move(name);
  node.shape = shape_text(matrix);
  node.formula = std::move(formula);
  node.formula_short = node.formula;
  node.meaning = std::move(meaning);
  node.detail = std::move(detail);
  node.matrix = &matrix;
  return node;
}

}  // namespace

FlowBoxes flow_boxes(const AppState& state) {
  const AttentionTrace& t = state.model.trace;
  const float temperature = state.inputs.temperature;
  const bool cross = cross_shown(state);
  FlowBoxes n;
  n.cross = cross;

  const bool real = real_model(state);
  const std::string layer_name = "layer " + std::to_string(state.inputs.layer + 1);
  if (real) {
    n.x = make_box("##flow_x", "X", layer_name + " input",
                    "X: what " + layer_name + " reads, after its LayerNorm: one row per token, " +
                        std::to_string(state.model.queries.x.cols()) + " numbers each.",
                    "Its columns have no names: the model learned what they mean.", state.model.queries.x);
    n.x.formula_short = layer_name;
  } else {
    n.x = make_box("##flow_x", "X", cross ? "query sentence" : "token vectors",
                    "X: one row per token, one column per hand-made word feature.",
                    cross ? "In cross-attention only the queries are made from it." : "", state.model.queries.x);
    n.x.formula_short = cross ? "sentence 1" : "tokens";
  }
  n.x.selectable = n.x.highlight_selected = true;
  n.x.col_names = column_names(state, Columns::Features, static_cast<int>(state.model.queries.x.cols()));

  n.x_kv =
      make_box("##flow_x_kv", "X_kv", "second sentence", "X_kv: the token vectors of the second sentence.",
                "In cross-attention the keys and values are made from these rows, not from X.", state.model.keys.x);
  n.x_kv.formula_short = "sentence 2";
  n.x_kv.rows = RowsAre::KeyTokens;
  n.x_kv.col_names = column_names(state, Columns::Features, static_cast<int>(state.model.keys.x.cols()));

  const std::string kv_source = cross ? "X_kv" : "X";
  const std::string fq = projection_formula(state, 'q', "X"), fk = projection_formula(state, 'k', kv_source),
                    fv = projection_formula(state, 'v', kv_source);
  n.q = make_box("##flow_q", "Q", fq, "Q = " + fq + ": each token's query, what it is looking for.", "", t.query);
  n.q.stage = 1;
  n.q.selectable = n.q.highlight_selected = true;
  n.q.col_names = column_names(state, Columns::Query, static_cast<int>(t.query.cols()));

  n.k = make_box("##flow_k", "K", fk, "K = " + fk + ": each token's key, what it offers to queries for matching.", "",
                  t.key);
  n.k.stage = 1;
  n.k.col_names = column_names(state, Columns::Key, static_cast<int>(t.key.cols()));

  n.v = make_box("##flow_v", "V", fv, "V = " + fv + ": each token's value, what it hands on to whoever attends to it.",
                  "", t.value);
  n.v.stage = 1;
  n.v.col_names = column_names(state, Columns::Value, static_cast<int>(t.value.cols()));
  // In self-attention K and V rows are the query tokens too, so a click there may select one.
  for (FlowBox* kv : {&n.k, &n.v}) {
    kv->rows = cross ? RowsAre::KeyTokens : RowsAre::QueryTokens;
    kv->selectable = !cross;
  }

  std::string scaling = "Each raw score q·k is multiplied by " + number_text(t.score_factor, 3);
  const Scaling how = trace_scaling(t, temperature);
  scaling += how == Scaling::SqrtD         ? " = 1/√" + std::to_string(t.key.cols())
             : how == Scaling::ModelFactor ? " (this model's own factor, not 1/√" + std::to_string(t.key.cols()) + ")"
                                           : " (not divided by √d)";
  if (temperature != 1.0f) scaling += ", temperature " + number_text(temperature, 2) + " included";
  scaling += ".";
  if (score_softcap(state) > 0)
    scaling += " Then the model caps it: " + score_formula(state, true) + " keeps every score within ±" +
               number_text(score_softcap(state), 0) + ".";
  if (causal_shown(state))
    scaling += state.model.family->window > 0
                   ? " Hatched cells are later tokens, or tokens before this layer's window of " +
                         std::to_string(state.model.family->window) + ": set to −∞, so softmax gives them nothing."
                   : " Hatched cells are later tokens: set to −∞, so softmax gives them nothing.";
  n.scores =
      make_box("##flow_scores", "scores", score_formula(state, true) + (causal_shown(state) ? ", masked" : ""),
                "scores = " + score_formula(state, true) + ": row i, column j says how well query i matches key j.", scaling,
                t.masked_scores);
  n.scores.formula_short = score_formula(state, true);  // the hatching shows the mask
  n.scores.stage = 2;
  n.scores.selectable = n.scores.highlight_selected = true;
  n.scores.col_names = key_labels(state);

  // Say what the rows really sum to: a mistake variant (Mistakes view) can break it.
  const bool rows_sum_to_one = state.views.flow.rows_sum_to_one;
  n.weights = make_box("##flow_weights", "weights", rows_sum_to_one ? "rows sum to 1" : "rows do NOT sum to 1",
                        "weights = softmax of each score row: all ≥ 0, each row adds up to 1.",
                        "A row is one token's attention: how much of each value it will take.", t.weights);
  n.weights.formula_short = "softmax";  // the compact layout has no room for the arrow's label
  n.weights.stage = 3;
  n.weights.signed_values = false;
  n.weights.selectable = n.weights.highlight_selected = true;
  n.weights.col_names = key_labels(state);

  n.output = make_box("##flow_output", "output", "weights·V",
                       "output = weights·V: each token's blend of the values, mixed by its weights.", "", t.output);
  n.output.stage = 4;
  n.output.selectable = n.output.highlight_selected = true;
  n.output.col_names = column_names(state, Columns::Value, static_cast<int>(t.output.cols()));

  for (FlowBox* node : {&n.x, &n.x_kv, &n.q, &n.k, &n.v, &n.scores, &n.weights, &n.output}) {
    node->range = node->signed_values ? max_abs_finite(*node->matrix) : 1.0f;
    node->squeeze = real && node->col_count() > kSqueezeFrom;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------

// "'animal' 0.65, 'street' 0.09, 'it' 0.03", or for a tie "8 keys tie at 0.03 each: 'The', 'the', ...".
std::string strongest_keys_text(const StrongestKeys& s, const std::vector<std::string>& key_tokens) {
  std::string text;
  constexpr std::size_t kNamed = 4;
  if (s.tied > 1) {
    text = std::to_string(s.tied) + " keys tie at " + number_text(s.weights[0], 2) + " each: ";
    for (std::size_t i = 0; i < s.keys.size() && i < kNamed; ++i) text += (i ? ", " : "") + token_name(key_tokens, s.keys[i]);
    if (s.keys.size() > kNamed) text += " and " + std::to_string(s.keys.size() - kNamed) + " more";
    return text;
  }
  for (std::size_t i = 0; i < s.keys.size(); ++i)
    text += (i ? ", " : "") + token_name(key_tokens, s.keys[i]) + " " + number_text(s.weights[i], 2);
  return text;
}

std::string around_text(const AppState& state) {
  const AroundHeadView& a = state.model.around;
  const LoadedModel* m = current_loaded_model(state);
  const bool o_bias = m && m->model->config.o_bias;  // W_O's bias is a part of the update too
  const std::string token = "“" + state.model.queries.tokens[static_cast<std::size_t>(a.token)].text + "”";
  std::string text = "At " + token + ", head " + std::to_string(a.head + 1) + "'s part of the attention's output has length " +
                     number_text(a.head_parts[static_cast<std::size_t>(a.head)], 2) + " (its output × its rows of W_O)";
  if (a.shares_add_up)
    text += "; along the direction of the whole update it brings " +
            number_text(a.head_shares[static_cast<std::size_t>(a.head)] * 100.0f, 0) +
            "% of it. The heads' shares" + (o_bias ? " and b_O's" : "") +
            " add up to 100%; a negative share pushes against the others.";
  else
    text += ". This model norms the attention's output before adding it (sandwich norms), so the heads' parts do "
            "not add up to what reaches the stream; their lengths still compare the heads.";
  return text;
}


nlohmann::json flow_view_data(const AppState& state) {
  const StrongestKeys& s = state.views.flow.strongest;
  nlohmann::json top = nlohmann::json::array();
  for (std::size_t i = 0; i < s.keys.size(); ++i)
    top.push_back({{"key", s.keys[i]}, {"token", state.model.keys.tokens[s.keys[i]].text}, {"weight", s.weights[i]}});
  // what each box's scale bar shows: its colours' range (signed boxes ±their largest |value|)
  nlohmann::json scales = nlohmann::json::array();
  const FlowBoxes boxes = flow_boxes(state);
  for (const FlowBox* node : boxes.all())
    scales.push_back({{"box", node->name}, {"formula", node->formula}, {"low", node->signed_values ? -node->range : 0.0f},
                      {"high", node->range}});
  nlohmann::json around = nullptr;
  if (const AroundHeadView& a = state.model.around; a.loaded)
    around = {{"token", a.token},          {"head", a.head},
              {"stream_in", a.stream_in},  {"attention_update", a.attention_update},
              {"mlp_update", a.mlp_update}, {"stream_out", a.stream_out},
              {"head_parts", a.head_parts}, {"head_shares", a.head_shares},
              {"shares_add_up", a.shares_add_up}, {"text", around_text(state)}};
  return {{"strongest", top}, {"tied", s.tied}, {"scales", scales}, {"around", around}};
}

}  // namespace attn
