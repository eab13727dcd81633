// The explainer's look: dark theme, rounded frames, sizes scaled for the device-pixel ratio.
#include <imgui.h>

#include "panels.h"

namespace attn::ui {

void apply_theme(float dpr) {
  ImGuiStyle style;
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
  c[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.10f, 0.12f, 1.0f);
  c[ImGuiCol_ChildBg] = ImVec4(0.11f, 0.12f, 0.15f, 1.0f);
  c[ImGuiCol_PlotLinesHovered] = ImVec4(1.0f, 0.45f, 0.35f, 1.0f);  // the selected-token highlight
  c[ImGuiCol_TextDisabled] = ImVec4(0.62f, 0.64f, 0.70f, 1.0f);     // hints: dimmer but readable
  style.ScaleAllSizes(dpr);
  ImGui::GetStyle() = style;
}

}  // namespace attn::ui
