// The controls column: sentence, token picker, causal mask, √d scaling, temperature, reset.
// Not a view: it edits AppInputs (through `next`), every view reads the result.
#include <imgui.h>

#include <cstring>
#include <string>

#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// A text box whose typing is kept while it is invalid (the state keeps its last good sentence).
// Returns true when the text changed this frame.
struct TextBox {
  char buffer[4200] = {};
  unsigned synced_revision = ~0u;
  bool active = false;
};

bool sentence_box(const char* label, const std::string& current, unsigned revision, TextBox& box) {
  if (box.synced_revision != revision && !box.active) {  // changed elsewhere (URL, API, reset)
    std::snprintf(box.buffer, sizeof box.buffer, "%s", current.c_str());
    box.synced_revision = revision;
  }
  ImGui::SetNextItemWidth(-1);
  const bool edited = ImGui::InputText(label, box.buffer, sizeof box.buffer);
  box.active = ImGui::IsItemActive();
  return edited;
}

void error_line(const AppState& state, const char* key) {
  if (state.error.empty() || state.error_key != key) return;
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 120, 110, 255));
  ImGui::TextWrapped("%s", state.error.c_str());
  ImGui::PopStyleColor();
  hint("The views still show the last valid sentence.");
}

}  // namespace

void draw_controls(const AppState& state, AppInputs& next) {
  static TextBox sentence, kv_sentence;  // what is typed, kept while it is invalid

  ImGui::TextUnformatted("Sentence (queries)");
  if (sentence_box("##sentence", state.inputs.sentence, state.revision, sentence)) next.sentence = sentence.buffer;
  error_line(state, "sentence");

  ImGui::TextUnformatted("Query token");
  const auto& tokens = state.model.queries.tokens;
  ImGui::SetNextItemWidth(-1);
  char preview[160];
  std::snprintf(preview, sizeof preview, "%s  (row %d of %d)", tokens[state.inputs.token].text.c_str(),
                state.inputs.token + 1, static_cast<int>(tokens.size()));
  if (ImGui::BeginCombo("##token", preview, ImGuiComboFlags_HeightLarge)) {
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
      char item[160];
      std::snprintf(item, sizeof item, "%d  %s%s", i + 1, tokens[i].text.c_str(),
                    state.model.queries.unknown[i] ? "  (not in lexicon)" : "");
      if (ImGui::Selectable(item, i == state.inputs.token)) next.token = i;
    }
    ImGui::EndCombo();
  }
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left) && next.token > 0) --next.token;
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right) && next.token + 1 < static_cast<int>(tokens.size())) ++next.token;
  ImGui::SameLine();
  hint("previous / next token");

  ImGui::Separator();
  ImGui::Checkbox("Causal mask (look back only)", &next.causal);
  publish_item_rect("causal");
  ImGui::Checkbox("Divide by √d", &next.scale);
  publish_item_rect("scale");
  ImGui::TextUnformatted("Temperature");
  ImGui::SetNextItemWidth(-1);
  ImGui::SliderFloat("##temperature", &next.temperature, 0.1f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic);
  hint("Scores are divided by it: < 1 sharpens the weights, > 1 flattens them.");

  ImGui::Separator();
  ImGui::Checkbox("Cross-attention", &next.cross);
  publish_item_rect("cross");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Queries come from the sentence above; keys and values from a second sentence.");
  if (next.cross || state.inputs.cross) {
    ImGui::TextUnformatted("Second sentence (keys, values)");
    if (sentence_box("##kv_sentence", state.inputs.kv_sentence, state.revision, kv_sentence))
      next.kv_sentence = kv_sentence.buffer;
    error_line(state, "kv_sentence");
  }

  ImGui::Separator();
  if (ImGui::Button("Reset", ImVec2(-1, 0))) {
    const View keep = next.view;
    next = AppInputs{};
    next.view = keep;
  }
  publish_item_rect("reset");
  ImGui::Spacing();
  const auto& e = state.model.queries;
  int unknown = 0;
  for (bool u : e.unknown) unknown += u;
  ImGui::Text("T = %d tokens, d = %d", static_cast<int>(e.tokens.size()), static_cast<int>(state.model.trace.key.cols()));
  if (unknown)
    hint("Words outside the small lexicon get a fixed pseudo-random vector: their attention means little.");
  hint("The model is hand-made, not trained: its numbers were chosen so you can read why each token looks where it does.");
}

}  // namespace attn::ui
