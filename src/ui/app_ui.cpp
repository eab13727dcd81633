// The app's frame: title, view tabs, the controls column and the open view (see panels.h).
// Not a panel itself: it only lays out the others and applies what they ask for.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {
using PanelFn = void (*)(const AppState&, AppInputs&);

PanelFn panel_for(View v) {
  switch (v) {
    case View::Flow: return draw_flow_panel;
    case View::Weights: return draw_weights_panel;
    case View::Library: return draw_library_panel;
    default: return nullptr;
  }
}

void draw_view_tabs(const AppState& state, AppInputs& next) {
  static View shown = View::Flow;  // which tab ImGui shows; forced when the view changes elsewhere
  static bool first = true;
  const bool external = first || shown != state.inputs.view;
  first = false;
  if (!ImGui::BeginTabBar("views", ImGuiTabBarFlags_FittingPolicyScroll)) return;
  for (int i = 0; i < kViewCount; ++i) {
    const View v = static_cast<View>(i);
    if (!panel_for(v)) continue;
    const ImGuiTabItemFlags flags = external && v == state.inputs.view ? ImGuiTabItemFlags_SetSelected : 0;
    if (ImGui::BeginTabItem(view_title(v), nullptr, flags)) {
      if (!external && v != state.inputs.view) next.view = v;
      shown = external ? state.inputs.view : v;
      ImGui::EndTabItem();
    }
  }
  ImGui::EndTabBar();
}
}  // namespace

std::vector<std::string> query_labels(const AppState& state) {
  std::vector<std::string> out;
  for (const Token& t : state.model.queries.tokens) out.push_back(t.text);
  return out;
}

std::vector<std::string> key_labels(const AppState& state) {
  std::vector<std::string> out;
  for (const Token& t : state.model.keys.tokens) out.push_back(t.text);
  return out;
}

void panel_intro(const char* text) {
  hint(text);
  ImGui::Spacing();
}

void draw_app(AppState& state, double now) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("Self-attention explainer", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  AppInputs next = state.inputs;

  ImGui::TextUnformatted("Self-attention");
  ImGui::SameLine();
  hint("softmax(QKᵀ/√d)·V, live on a real sentence");

  const float font = ImGui::GetFontSize();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float controls_width = std::clamp(avail * 0.3f, font * 13.0f, font * 18.0f);
  ImGui::BeginChild("controls", ImVec2(controls_width, 0), true);
  draw_controls(state, next);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("view", ImVec2(0, 0), false);
  draw_view_tabs(state, next);
  ImGui::BeginChild("view_body", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  if (PanelFn panel = panel_for(state.inputs.view)) panel(state, next);
  ImGui::EndChild();
  ImGui::EndChild();
  ImGui::End();

  if (next != state.inputs) apply_inputs(state, next, now);
}

}  // namespace attn::ui
