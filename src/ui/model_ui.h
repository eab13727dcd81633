// The panels' drawing of the current model: the head banner, the next-token strip, the sweeps'
// controls and maps, the learner's changes with their undo buttons. Their texts are the state's
// (src/state/view_text.h); not AppState and not the loader: it only draws what apply_inputs computed.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "../state/app_state.h"
#include "../state/view_text.h"

namespace attn::ui {

// (current_loaded_model, real_model, causal_shown, cross_shown and head_caption: src/state/app_state.h;
// the toy's notes, column names, formulas, the strip's and the changes' texts: src/state/view_text.h)
// One dim line under a view's intro naming the model, layer and head shown (nothing for the
// hand-made model, whose views are the lesson's).
void head_banner(const AppState& state);

// The strip: "Next token after ·it, by the whole model" and five bars with probabilities. Draws
// nothing for the hand-made model. Below it the learner's changes inside the model (intervention_list).
void next_token_strip(const AppState& state, AppInputs& next);

// [SECTION] Sweeps (the Heads view's and Compare's, app_state.h's SweepRun)

// Its progress bar and Cancel while it runs, else its start (or Continue) button; returns whether it
// runs from the next frame (`on` when nothing was pressed). `id` names the published rects
// (ID_progress, ID_cancel, ID).
bool sweep_controls(const SweepRun& r, bool on, const char* start, const std::string& id);
// Its map, signed cells of rows × cols labelled, the hovered (or the largest) cell in words.
void sweep_map(const std::string& id, const SweepRun& r, const std::vector<std::string>& rows,
               const std::vector<std::string>& cols, const char* caption, float min_range,
               const std::function<std::string(int row, int col, float value)>& cell_text);

// [SECTION] Asking the model why

// The changes with a button each to undo it, and Undo all: under the next-token strip (a loaded
// model) and the Weights view (the hand-made model, whose only change is a cut link).
void intervention_list(const AppState& state, AppInputs& next);

}  // namespace attn::ui
