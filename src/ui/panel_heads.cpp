// The heads view: every layer × head of the current model as a small weight matrix (click one to
// choose it), the chosen head's lines from the selected token, and a summary per head.
// Not the maths: the summaries come from src/core.
#include <imgui.h>

#include "panels.h"

namespace attn::ui {

void draw_heads_panel(const AppState& state, AppInputs& next) {
  (void)next;
  panel_intro("Every layer and head of the model (being built).");
  ImGui::Text("%zu layer(s)", state.model.forward ? state.model.forward->layers.size() : 0);
}

nlohmann::json heads_view_data(const AppState& state) {
  (void)state;
  return nlohmann::json::object();
}

}  // namespace attn::ui
