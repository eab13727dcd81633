// The Mistakes view's measurements: what a common attention mistake does to the weights (row and
// column sums, each row's largest weight, the future leaking in under the mask), and how a model with
// its own score factor is told apart. Computed from the trace with the mistake and the one without
// (state.model.without_mistake); the panel (src/ui/panel_mistakes.cpp) draws them, mistakes_view_data
// (view_data.h) reports them. No ImGui.
#pragma once
#include <string>
#include <vector>

#include "app_state.h"

namespace attn {

// The mistakes whose symptom needs the causal mask on (masking after the softmax, masking with 0).
bool needs_causal(Mistake m);
// The recipe says ÷√d; a model whose heads use a factor of their own is told apart ("" when the
// correct side divides by √d, as the lesson's).
std::string own_factor_note(const AppState& state, const AttentionTrace& correct);
// Largest |w − correct| after dividing each row of `weights` by its sum (the "mask after softmax"
// weights renormalised): 0 up to float rounding, because that equals masking before.
float renormalised_error(const Matrix& weights, const Matrix& correct);
std::vector<float> row_sums(const Matrix& weights);
std::vector<float> col_sums(const Matrix& weights);
std::vector<float> row_maxima(const Matrix& weights);
// How many keys row `row` may look at (all of them without the causal mask).
int visible_keys(const AttentionTrace& t, int row);
// A weight a query gives to a later key although the mask is on: the future leaking in.
bool leaks(const AttentionTrace& t, int row, int col);

}  // namespace attn
