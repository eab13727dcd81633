// The Steps view's words and data (see steps_view.h): each step's formula as this model computes it,
// numbers written short, the mask's row in words, and each step's data. Not their drawing
// (src/ui/panel_steps.cpp); the numbers themselves are state.views.steps (view_numbers.h).
#include "steps_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "view_data.h"
#include "view_text.h"

namespace attn {

using nlohmann::json;

// A number as short as it can be read: at most 2 decimals, no trailing zeros ("3", "0.5", "-0.37").
std::string compact(float v) {
  std::string s = number_text(v, 2);
  if (!std::isfinite(v) || s.find('.') == std::string::npos) return s;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

// "[0.65, 0.09, 0, 0.06]"; long vectors: the first kVectorShown entries and how many more.
std::string vector_text(const float* values, int count) {
  std::string out = "[";
  const int shown = count > kVectorShown + 2 ? kVectorShown : count;
  for (int c = 0; c < shown; ++c) out += (c ? ", " : "") + compact(values[c]);
  if (shown < count) out += ", … " + std::to_string(count - shown) + " more";
  return out + "]";
}


// exp values span many orders of magnitude: three significant digits ("20.1", "0.368", "1.2e+05").
std::string exp_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

namespace {

json row_json(const Matrix& m, int row) {
  json a = json::array();
  for (Eigen::Index j = 0; j < m.cols(); ++j) {
    const float v = m(row, j);
    a.push_back(std::isfinite(v) ? json(static_cast<double>(v)) : json(nullptr));  // null: masked
  }
  return a;
}

json floats_json(const std::vector<float>& values) {
  json a = json::array();
  for (float v : values) a.push_back(std::isfinite(v) ? json(static_cast<double>(v)) : json(nullptr));
  return a;
}


}  // namespace

// A step's formula as this model computes it: step 1's projections with the model's biases, q/k norm
// and RoPE (projection_formula), steps 2 and 5's scores with its own factor and cap (score_formula);
// the others as written in kSteps.
std::string step_formula(const AppState& state, int step) {
  if (step == 1) return "score_j = " + score_formula(state, false);
  if (step == 4) return "A = softmax(" + score_formula(state, true) + ")      output = A·V";
  if (step == 6 && state.model.family->window > 0)
    return "score_ij = −∞ for every key j after query i, and for j ≤ i − " + std::to_string(state.model.family->window) +
           " (this layer's window), before the softmax";
  if (step != 0) return kSteps[step].formula;
  return "q = " + projection_formula(state, 'q', "x") + "      k = " + projection_formula(state, 'k', "x") +
         "      v = " + projection_formula(state, 'v', "x");
}


// Which keys the selected query may see, in words: the causal mask hides the later ones, and a
// sliding-window layer also those that fell out of its window (query i sees i − w + 1 … i).
std::string mask_row_text(const AppState& state) {
  const AttentionTrace& t = state.model.trace;
  const int token = state.inputs.token;
  const std::string name = in_quotes(state.model.queries.tokens[static_cast<std::size_t>(token)].text);
  int hidden = 0;
  for (Eigen::Index k = 0; k < t.masked_scores.cols(); ++k) hidden += !std::isfinite(t.masked_scores(token, k));
  const int window = state.model.family->window;
  const int before = window > 0 ? std::max(0, token - window + 1) : 0, after = hidden - before;
  const std::string at = name + " is token " + std::to_string(token + 1) + ": ";
  if (hidden == 0) return at + "every key comes at or before it, so none is hidden.";
  if (before == 0)
    return at + "it may look at keys 1 to " + std::to_string(token + 1) + "; the " + std::to_string(hidden) +
           " after it " + (hidden == 1 ? "is" : "are") + " hidden.";
  return at + "this layer's window of " + std::to_string(window) + " tokens lets it look at keys " +
         std::to_string(before + 1) + " to " + std::to_string(token + 1) + " only; the " + std::to_string(before) +
         " before them" + (after > 0 ? " and the " + std::to_string(after) + " after it are" : (before == 1 ? " is" : " are")) +
         " hidden.";
}

json steps_view_data(const AppState& state) { return step_view_data(state, state.inputs.step); }

json step_view_data(const AppState& state, int shown_step) {
  const AttentionTrace& t = state.model.trace;
  const int step = std::clamp(shown_step, 0, kStepCount - 1), row = state.inputs.token;
  json j;
  j["step"] = step;
  j["title"] = kSteps[step].title;
  j["formula"] = step_formula(state, step);
  j["token"] = row;
  j["token_text"] = state.model.queries.tokens[row].text;
  switch (step) {
    case 0:
      j["x"] = row_json(state.model.queries.x, row);
      j["q"] = row_json(t.query, row);
      if (!cross_shown(state)) {
        j["k"] = row_json(t.key, row);
        j["v"] = row_json(t.value, row);
      }
      break;
    case 1:
      j["raw_scores"] = row_json(t.raw_scores, row);
      j["scaled_scores"] = row_json(t.scaled_scores, row);
      j["scores"] = row_json(t.capped_scores, row);  // what the softmax sees before the mask
      j["score_factor"] = t.score_factor;
      j["softcap"] = score_softcap(state);
      break;
    case 2: {
      const StepsNumbers& n = state.views.steps;
      j["scores"] = floats_json(n.softmax_scores);
      j["exps"] = n.softmax.exps;
      j["exp_shift"] = n.softmax.shift;
      j["sum_of_exps"] = n.softmax.sum_of_exps;
      j["weights"] = row_json(t.weights, row);
      break;
    }
    case 3: {
      json contributors = json::array();
      for (int k : state.views.steps.keys_by_weight)
        contributors.push_back({{"key", k}, {"text", state.model.keys.tokens[k].text}, {"weight", t.weights(row, k)}});
      j["contributors"] = contributors;
      j["weights"] = row_json(t.weights, row);
      j["output"] = row_json(t.output, row);
      j["output_dims"] = column_names(state, Columns::Value, static_cast<int>(t.output.cols()));
      break;
    }
    case 4:
      j["shape_A"] = {t.weights.rows(), t.weights.cols()};
      j["shape_output"] = {t.output.rows(), t.output.cols()};
      j["weights"] = row_json(t.weights, row);
      j["output"] = row_json(t.output, row);
      break;
    case 5: {
      const StepsNumbers& n = state.views.steps;
      j["sqrt_d"] = n.sqrt_d;
      j["score_std_raw"] = n.std_raw;
      j["score_std_scaled"] = n.std_divided;
      j["weights_scaled"] = floats_json(n.weights_divided);
      j["weights_unscaled"] = floats_json(n.weights_undivided);
      break;
    }
    default: {
      json hidden = json::array();
      for (Eigen::Index k = 0; k < t.masked_scores.cols(); ++k)
        if (!std::isfinite(t.masked_scores(row, k))) hidden.push_back(k);
      j["causal"] = causal_shown(state);
      j["masked_keys"] = hidden;
      j["window"] = state.model.family->window;
      j["seen"] = mask_row_text(state);
      j["scores"] = row_json(t.masked_scores, row);
      j["weights"] = row_json(t.weights, row);
      break;
    }
  }
  return j;
}

}  // namespace attn
