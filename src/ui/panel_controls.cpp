// The controls column: sentence, token picker, causal mask, √d scaling, temperature, reset.
// Not a view: it edits AppInputs (through `next`), every view reads the result.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

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

// The query-token combo (width set by the caller).
void token_picker(const AppState& state, AppInputs& next) {
  const auto& tokens = state.model.queries.tokens;
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
  publish_item_rect("token");
}

void export_buttons(const AppState& state) {
  ImGui::TextUnformatted("Export");
  if (ImGui::SmallButton("Weights CSV")) save_text_file("attention-weights.csv", "text/csv", weights_csv(state));
  publish_item_rect("export:csv");
  ImGui::SameLine();
  if (ImGui::SmallButton("Weights PNG") && !export_weights_png()) ImGui::OpenPopup("png-unavailable");
  publish_item_rect("export:png");
  if (ImGui::SmallButton("State JSON"))
    save_text_file("attention-state.json", "application/json", state_to_json(state).dump(2));
  publish_item_rect("export:json");
  ImGui::SameLine();
  if (ImGui::SmallButton("Copy link") && !copy_permalink()) ImGui::OpenPopup("link-unavailable");
  publish_item_rect("copy-link");
  if (ImGui::BeginPopup("png-unavailable")) {
    ImGui::TextUnformatted("PNG export works in the browser version.");
    ImGui::EndPopup();
  }
  if (ImGui::BeginPopup("link-unavailable")) {
    ImGui::TextUnformatted("Links work in the browser version (the address bar holds the state).");
    ImGui::EndPopup();
  }
}

// Which backend computes the large problems (the cost view's), and a one-line why. The sentence
// itself is tiny (T ≤ 128, d = 4): its numbers always come from the exact reference trace.
void backend_picker(const AppState& state, AppInputs& next) {
  ImGui::TextUnformatted("Large problems computed by");
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##backend", state.inputs.backend.c_str())) {
    std::vector<const char*> names = {"auto"};
    names.insert(names.end(), std::begin(kBackendNames), std::end(kBackendNames));
    for (const char* name : names)
      if (ImGui::Selectable(name, state.inputs.backend == name)) next.backend = name;
    ImGui::EndCombo();
  }
  publish_item_rect("backend");
  const BackendChoice live = live_backend(state);
  const GpuFacts gpu = gpu_facts();
  ImGui::Text("Live: %s", live.name.c_str());
  hint(live.reason.c_str());
  if (!gpu.available) {  // the short visible notice: no GPU path, the CPU computes
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_PlotHistogram]);
    ImGui::TextWrapped("GPU path off: %s.", gpu.unavailable_reason.c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace

void draw_compact_controls(const AppState& state, AppInputs& next) {
  const float font = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(std::min(font * 14.0f, ImGui::GetContentRegionAvail().x * 0.45f));
  token_picker(state, next);
  ImGui::SameLine();
  ImGui::Checkbox("Causal", &next.causal);
  publish_item_rect("causal");
  ImGui::SameLine();
  ImGui::Checkbox("÷√d", &next.scale);
  publish_item_rect("scale");
}

void draw_controls(const AppState& state, AppInputs& next) {
  static TextBox sentence, kv_sentence;  // what is typed, kept while it is invalid

  ImGui::TextUnformatted("Sentence (queries)");
  if (sentence_box("##sentence", state.inputs.sentence, state.revision, sentence)) next.sentence = sentence.buffer;
  publish_item_rect("sentence");
  error_line(state, "sentence");

  ImGui::TextUnformatted("Query token");
  ImGui::SetNextItemWidth(-1);
  token_picker(state, next);
  const auto& tokens = state.model.queries.tokens;
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left) && next.token > 0) --next.token;
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right) && next.token + 1 < static_cast<int>(tokens.size())) ++next.token;
  ImGui::SameLine();
  hint("or keys [ ]");
  ImGui::Separator();
  ImGui::Checkbox("Causal mask", &next.causal);
  publish_item_rect("causal");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Each token may look only at itself and earlier tokens (as in GPT).");
  ImGui::Checkbox("Divide by √d", &next.scale);
  publish_item_rect("scale");
  ImGui::TextUnformatted("Temperature");
  ImGui::SetNextItemWidth(-1);
  ImGui::SliderFloat("##temperature", &next.temperature, kMinTemperature, kMaxTemperature, "%.2f", ImGuiSliderFlags_Logarithmic);
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
  ImGui::Separator();
  backend_picker(state, next);
  ImGui::Separator();
  export_buttons(state);
  ImGui::Checkbox("Light theme", &next.light_theme);
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
