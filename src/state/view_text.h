// The texts the views write about the current model and its numbers: number formats, the toy's
// notes, the chosen head's formulas, the next-token strip's words, the learner's changes inside the
// model in words. Shared by the panels (which draw them) and the views' JSON and checks (which
// report and ask them); computed from AppState only. Not their drawing (src/ui/model_ui.h); no ImGui.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app_state.h"

namespace attn {

// [SECTION] Numbers and words

// Text of a number: "−∞" for -inf, "—" for NaN, never "-0.00".
std::string number_text(float v, int decimals);
// A token or word as the texts quote it: 'it'.
std::string in_quotes(const std::string& text);
// A share as a whole percent: "43%", "<1%" for a share that is not 0 but rounds to it.
std::string percent(float share);
// A whole number with its thousands apart: "4 194 304" (no-break spaces, so it never wraps inside).
std::string grouped_digits(double whole);

// [SECTION] The chosen head's scores

// How a trace's raw scores were scaled: by 1/√d, by the model's own factor (Gemma's
// query_pre_attn_scalar^−½), or not at all (the temperature aside).
enum class Scaling { SqrtD, ModelFactor, None };
Scaling trace_scaling(const AttentionTrace& trace, float temperature);
// The current loaded model's cap on its scores (0: none, and for the hand-made model).
float score_softcap(const AppState& state);
// How the chosen head turns its dot products into the scores its softmax sees, read from the trace's
// factor and the model's cap: "q·k_j / √d" for the lesson's rule, "q·k_j × 0.0625" for a model's own
// factor (Gemma's query_pre_attn_scalar), "50·tanh(q·k_j / √d / 50)" with a soft-cap, "÷ 0.5" for a
// temperature; `matrix` writes it for every token at once (QKᵀ).
std::string score_formula(const AppState& state, bool matrix);
// What the chosen layer computes for one projection, with the model's own parts: `which` is 'q', 'k'
// or 'v' and `x` the input's name. "x·W_Q" for the hand-made model; "x·W_Q + b_Q" for GPT-2;
// "RoPE(RMSNorm(x·W_Q))" for Qwen 3. And the name of the norm a real layer's input went through.
std::string projection_formula(const AppState& state, char which, const std::string& x);
std::string input_norm_name(const AppState& state);  // "LayerNorm" | "RMSNorm"; "" for the hand-made model

// [SECTION] The hand-made toy

// Where the hand-made toy fails on the current sentence and query, said where it shows (each
// view's banner, getState().view_data.model_notes). Empty for a loaded model and wherever the toy
// does what a reader would. id: "wide_twin" (a later adjective that fits a thing, as in "...because
// it was wide": the pronoun's query still seeks a creature) or "no_positions" (several creatures:
// their keys are the same wherever they stand, so the weight is split evenly between them).
struct ModelNote {
  std::string id, text;
};
std::vector<ModelNote> toy_model_notes(const AppState& state);
// What the toy can and cannot do, in two sentences (the model's description in the controls).
const char* toy_model_description();

// Column names for the views' tooltips and read-outs: the hand-made model's named features and
// dimensions, or "dim 0" … "dim n−1" where a real model's dimensions have no names.
enum class Columns { Features, Query, Key, Value };
std::vector<std::string> column_names(const AppState& state, Columns which, int count);

// [SECTION] The next-token strip

// The top-k next-token predictions at the selected position ({display text, id, p}), empty for the
// hand-made model (it predicts nothing).
struct NextTokenRow {
  std::string text;
  int id = 0;
  float p = 0;
};
std::vector<NextTokenRow> next_tokens(const AppState& state, int k = kShownNextTokens);
// The strip's title, what its bars are and, for the trained model, whether it was trained to predict
// here; all empty for the hand-made model.
struct NextStripTexts {
  std::string title, note, trained_here;
  std::string prompt;  // where there is nothing to show: why, and (an encoder) how to ask (type its mask token)
  std::string write;   // a decoder's: how to write with it (a click adds the token to the text), or why not now
  bool writes = false; // a click on a token adds it to the text (a decoder, the text's last token selected)
};
NextStripTexts next_strip_texts(const AppState& state);
// The strip's prediction at `position` in words: "after 'it' the model's likeliest next token" (a
// decoder), "at [MASK] (token 13) the model's likeliest word" (an encoder).
std::string prediction_phrase(const AppState& state, int position);

// [SECTION] Sweeps (the Heads view's and Compare's, app_state.h's SweepRun)

// The cell of the largest |value| (row-major index), -1 before any.
int largest_cell(const Matrix& values);
// Its values as [rows][cols] (null: not run yet, or nothing to restore).
nlohmann::json sweep_values_json(const SweepRun& r);
// A sweep for view_data: null before one, else {running, done, total, position, target, baseline
// (log p with nothing changed), values, text, where: "worker" | "page" ("" before its first cell)}.
nlohmann::json sweep_run_json(const SweepRun& r, bool running, const std::string& text);

// [SECTION] Asking the model why: what the learner changed inside it (inputs ablate, cut, patch)

struct InterventionEntry {
  enum Kind { Ablate, Cut, Patch } kind;
  int index = 0;     // in inputs.ablate or inputs.cuts (Patch: 0)
  std::string text;  // "L1 H2 switched off (its output set to zero)"
};
// Each change in words, what it did to the answer at the selected token (loaded models), and what a
// new model or text dropped; all empty when nothing is changed.
struct InterventionTexts {
  std::vector<InterventionEntry> entries;
  std::string effect, restored, note;
};
InterventionTexts intervention_texts(const AppState& state);
bool head_ablated(const AppInputs& in, int layer, int head);
// next without entry `e` of the learner's changes
void remove_intervention(AppInputs& next, const InterventionEntry& e);

}  // namespace attn
