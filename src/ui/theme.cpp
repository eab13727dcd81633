// The explainer's look: dark or light theme, rounded frames, sizes scaled for the device-pixel ratio
// (and presentation mode's type).
#include <imgui.h>

#include "panels.h"

namespace attn::ui {

float ui_scale(float dpr, bool present, bool narrow) {
  return dpr * (present ? (narrow ? kPresentScaleNarrow : kPresentScale) : 1.0f);
}

void apply_theme(float scale, bool light) {
  ImGuiStyle style;
  if (light)
    ImGui::StyleColorsLight(&style);
  else
    ImGui::StyleColorsDark(&style);
  style.WindowRounding = 0.0f;
  style.ChildRounding = 4.0f;
  style.FrameRounding = 4.0f;
  style.GrabRounding = 4.0f;
  style.TabRounding = 4.0f;
  style.FramePadding = ImVec2(6.0f, 4.0f);
  style.ItemSpacing = ImVec2(8.0f, 6.0f);
  style.WindowPadding = ImVec2(10.0f, 8.0f);
  style.ScrollbarSize = 14.0f;
  ImVec4* c = style.Colors;
  if (light) {
    c[ImGuiCol_WindowBg] = ImVec4(0.97f, 0.97f, 0.98f, 1.0f);
    c[ImGuiCol_ChildBg] = ImVec4(0.93f, 0.94f, 0.96f, 1.0f);
    c[ImGuiCol_PlotLinesHovered] = ImVec4(0.85f, 0.20f, 0.10f, 1.0f);  // the selected-token highlight
    c[ImGuiCol_TextDisabled] = ImVec4(0.36f, 0.38f, 0.44f, 1.0f);     // hints: dimmer but readable
  } else {
    c[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.10f, 0.12f, 1.0f);
    c[ImGuiCol_ChildBg] = ImVec4(0.11f, 0.12f, 0.15f, 1.0f);
    c[ImGuiCol_PlotLinesHovered] = ImVec4(1.0f, 0.45f, 0.35f, 1.0f);
    c[ImGuiCol_TextDisabled] = ImVec4(0.62f, 0.64f, 0.70f, 1.0f);
  }
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

}  // namespace attn::ui
