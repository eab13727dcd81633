// What the panels need to know of the current model: hand-made or a loaded one, the chosen
// layer and head in words, column names that exist only for the hand-made model, the next-token
// strip. Not AppState (the lead's) and not the loader: it only reads what apply_inputs computed.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "../state/app_state.h"

namespace attn::ui {

// (current_loaded_model, real_model, causal_shown, cross_shown and head_caption: src/state/app_state.h)
// One dim line under a view's intro naming the model, layer and head shown (nothing for the
// hand-made model, whose views are the lesson's).
void head_banner(const AppState& state);

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

// The top-k next-token predictions at the selected position ({display text, id, p}), empty for the
// hand-made model (it predicts nothing).
struct NextTokenRow {
  std::string text;
  int id = 0;
  float p = 0;
};
std::vector<NextTokenRow> next_tokens(const AppState& state, int k = kShownNextTokens);
// What the chosen layer computes for one projection, with the model's own parts: `which` is 'q', 'k'
// or 'v' and `x` the input's name. "x·W_Q" for the hand-made model; "x·W_Q + b_Q" for GPT-2;
// "RoPE(RMSNorm(x·W_Q))" for Qwen 3. And the name of the norm a real layer's input went through.
std::string projection_formula(const AppState& state, char which, const std::string& x);
std::string input_norm_name(const AppState& state);  // "LayerNorm" | "RMSNorm"; "" for the hand-made model
// How the chosen head turns its dot products into the scores its softmax sees, read from the trace's
// factor and the model's cap: "q·k_j / √d" for the lesson's rule, "q·k_j × 0.0625" for a model's own
// factor (Gemma's query_pre_attn_scalar), "50·tanh(q·k_j / √d / 50)" with a soft-cap, "÷ 0.5" for a
// temperature; `matrix` writes it for every token at once (QKᵀ). And the cap itself (0: none).
std::string score_formula(const AppState& state, bool matrix);
float score_softcap(const AppState& state);

// The strip: "Next token after ·it, by the whole model" and five bars with probabilities. Draws
// nothing for the hand-made model. Below it the learner's changes inside the model (intervention_list).
void next_token_strip(const AppState& state, AppInputs& next);
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
// Its progress bar and Cancel while it runs, else its start (or Continue) button; returns whether it
// runs from the next frame (`on` when nothing was pressed). `id` names the published rects
// (ID_progress, ID_cancel, ID).
bool sweep_controls(const SweepRun& r, bool on, const char* start, const std::string& id);
// Its map, signed cells of rows × cols labelled, the hovered (or the largest) cell in words.
void sweep_map(const std::string& id, const SweepRun& r, const std::vector<std::string>& rows,
               const std::vector<std::string>& cols, const char* caption, float min_range,
               const std::function<std::string(int row, int col, float value)>& cell_text);
// Its values as [rows][cols] (null: not run yet, or nothing to restore).
nlohmann::json sweep_values_json(const SweepRun& r);

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
// The changes with a button each to undo it, and Undo all: under the next-token strip (a loaded
// model) and the Weights view (the hand-made model, whose only change is a cut link).
void intervention_list(const AppState& state, AppInputs& next);
bool head_ablated(const AppInputs& in, int layer, int head);
// next without entry `e` of the learner's changes
void remove_intervention(AppInputs& next, const InterventionEntry& e);

}  // namespace attn::ui
