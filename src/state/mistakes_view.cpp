// The Mistakes view's measurements and data (see mistakes_view.h): row and column sums, the largest
// weight of each row, the leak of the future, the renormalised error, the model's own factor in words.
// Not the drawing of the matrix and the evidence (src/ui/panel_mistakes.cpp).
#include "mistakes_view.h"

#include <algorithm>
#include <cmath>

#include "view_data.h"
#include "view_text.h"

namespace attn {

using nlohmann::json;

namespace {

json symptoms_json(const Symptoms& s) {
  return {{"max_row_sum_error", s.max_row_sum_error},
          {"max_col_sum_error", s.max_col_sum_error},
          {"future_weight", s.future_weight},
          {"frac_one_hot", s.frac_one_hot}};
}

}  // namespace


bool needs_causal(Mistake m) { return m == Mistake::MaskAfterSoftmax || m == Mistake::MaskWithZero; }

// The recipe above says ÷√d; a model whose heads use a factor of their own is told apart ("" when
// the correct side divides by √d, as the lesson's).
std::string own_factor_note(const AppState& state, const AttentionTrace& correct) {
  if (trace_scaling(correct, state.inputs.temperature) != Scaling::ModelFactor) return "";
  const int d = static_cast<int>(correct.key.cols());
  return "This model's heads do not divide by √" + std::to_string(d) + ": they multiply q·k by a factor its "
         "config sets, " + number_text(correct.score_factor * state.inputs.temperature, 4) + " (1/√d would be " +
         number_text(1.0f / std::sqrt(static_cast<float>(d)), 4) + "). \"Correct\" below uses the model's own factor, and "
         "\"Forget √d\" leaves that factor out.";
}



// Largest |w − correct| after dividing each row of `weights` by its sum (the "mask after softmax"
// weights renormalised): 0 up to float rounding, because that equals masking before.
float renormalised_error(const Matrix& weights, const Matrix& correct) {
  float worst = 0;
  for (Eigen::Index i = 0; i < weights.rows(); ++i) {
    const float sum = weights.row(i).sum();
    if (sum > 0) worst = std::max(worst, (weights.row(i) / sum - correct.row(i)).cwiseAbs().maxCoeff());
  }
  return worst;
}

std::vector<float> row_sums(const Matrix& weights) {
  std::vector<float> sums;
  for (Eigen::Index i = 0; i < weights.rows(); ++i) sums.push_back(weights.row(i).sum());
  return sums;
}

std::vector<float> col_sums(const Matrix& weights) {
  std::vector<float> sums;
  for (Eigen::Index j = 0; j < weights.cols(); ++j) sums.push_back(weights.col(j).sum());
  return sums;
}

std::vector<float> row_maxima(const Matrix& weights) {
  std::vector<float> maxima;
  for (Eigen::Index i = 0; i < weights.rows(); ++i) maxima.push_back(weights.row(i).maxCoeff());
  return maxima;
}

// How many keys row `row` may look at (all of them without the causal mask).
int visible_keys(const AttentionTrace& t, int row) {
  int count = 0;
  for (Eigen::Index j = 0; j < t.weights.cols(); ++j) count += !key_hidden_by_mask(t, row, static_cast<int>(j));
  return count;
}

// A weight a query gives to a later key although the mask is on: the future leaking in.
bool leaks(const AttentionTrace& t, int row, int col) {
  return t.options.causal && col > row && t.weights(row, col) > 1e-6f;
}


json mistakes_view_data(const AppState& state) {
  const AttentionTrace& t = state.model.trace;
  const AttentionTrace& correct = state.model.without_mistake;
  json j;
  j["mistake"] = mistake_name(state.inputs.mistake);
  j["needs_causal"] = needs_causal(state.inputs.mistake);
  j["causal"] = causal_shown(state);
  j["symptoms"] = symptoms_json(diagnose(t));
  j["correct_symptoms"] = symptoms_json(diagnose(correct));
  j["row_sums"] = row_sums(t.weights);
  j["col_sums"] = col_sums(t.weights);
  j["row_max"] = row_maxima(t.weights);
  j["correct_row_sums"] = row_sums(correct.weights);
  j["correct_col_sums"] = col_sums(correct.weights);
  if (const std::string note = own_factor_note(state, correct); !note.empty()) j["own_factor"] = note;
  if (state.inputs.mistake == Mistake::MaskAfterSoftmax)
    j["renormalised_error"] = renormalised_error(t.weights, correct.weights);
  return j;
}

}  // namespace attn
