// The weights view (first version; see panels.h).
#include <imgui.h>

#include "panels.h"
#include "widgets.h"

namespace attn::ui {

void draw_weights_panel(const AppState& state, AppInputs& next) {
  (void)next;
  const auto& t = state.model.trace;
  const auto rows = query_labels(state), cols = key_labels(state);
  HeatmapStyle s;
  s.row_labels = &rows;
  s.col_labels = &cols;
  s.show_values = true;
  s.highlight_row = state.inputs.token;
  heatmap("##w", t.weights.data(), static_cast<int>(t.weights.rows()), static_cast<int>(t.weights.cols()), s);
  legend("weight", s, ImGui::GetFontSize() * 8);
}

}  // namespace attn::ui
