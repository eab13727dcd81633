// The Steps view's words: the seven steps with their titles and formulas (each as this model
// computes it), numbers written as short as they can be read, and which keys the causal mask (and a
// window) hides from the selected query, in words. The numbers themselves are state.views.steps
// (view_numbers.h); the panel (src/ui/panel_steps.cpp) draws them, step_view_data (view_data.h)
// reports them. No ImGui.
#pragma once
#include <string>

#include "app_state.h"
#include "view_data.h"

namespace attn {

struct StepText {
  const char* title;
  const char* formula;
};

inline constexpr StepText kSteps[kStepCount] = {
    {"Make a query, a key and a value", "q = x·W_Q      k = x·W_K      v = x·W_V"},
    {"Score the query against every key", "score_j = q·k_j / √d"},
    {"Softmax turns the scores into weights", "weight_j = exp(score_j) / Σₖ exp(score_k)"},
    {"The output is a weighted sum of the values", "output = Σⱼ weight_j · v_j"},
    {"Every token at once, as matrices", "A = softmax(Q·Kᵀ / √d)      output = A·V"},
    {"Why divide by √d", "spread of q·k ≈ √d     →     spread of q·k / √d ≈ 1"},
    {"The causal mask: no looking ahead", "score_ij = −∞ for every key j after query i, before the softmax"},
};

// A step's formula as this model computes it: step 1's projections with the model's biases, q/k norm
// and RoPE (projection_formula), steps 2 and 5's scores with its own factor and cap (score_formula);
// the others as written in kSteps.
std::string step_formula(const AppState& state, int step);
// Which keys the selected query may see, in words: the causal mask hides the later ones, and a
// sliding-window layer also those that fell out of its window (query i sees i − w + 1 … i).
std::string mask_row_text(const AppState& state);

// A number as short as it can be read: at most 2 decimals, no trailing zeros ("3", "0.5", "-0.37").
std::string compact(float v);
// A real model's vectors (64 numbers a head) are written out only this far.
constexpr int kVectorShown = 6;
// "[0.65, 0.09, 0, 0.06]"; long vectors: the first kVectorShown entries and how many more.
std::string vector_text(const float* values, int count);
// exp values span many orders of magnitude: three significant digits ("20.1", "0.368", "1.2e+05").
std::string exp_text(double v);

}  // namespace attn
