// The explainer's look: dark or light theme, rounded frames, sizes scaled for the device-pixel ratio
// (and presentation mode's type).
#include <imgui.h>

#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {
bool g_light = false;  // the theme apply_theme last set (palette() answers for it)
ImVec4 vec(Rgb c, float alpha = 1.0f) { return ImVec4(c.r, c.g, c.b, alpha); }
}  // namespace

const Palette& palette() { return palette_for(g_light); }

ImU32 color(Rgb c, float alpha) { return ImGui::ColorConvertFloat4ToU32(vec(c, alpha)); }

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
  // Every surface and text colour from the palette (palette.cpp), so both themes are checked for
  // contrast in one place; ImGui's own accents (buttons, tabs, sliders) stay its theme's.
  g_light = light;
  const Palette& p = palette();
  ImVec4* c = style.Colors;
  c[ImGuiCol_WindowBg] = vec(p.window_bg);
  c[ImGuiCol_ChildBg] = vec(p.child_bg);
  c[ImGuiCol_PopupBg] = vec(p.window_bg, 0.97f);
  c[ImGuiCol_FrameBg] = vec(p.frame_bg);
  c[ImGuiCol_Text] = vec(p.text);
  c[ImGuiCol_TextDisabled] = vec(p.text_dim);   // hints: dimmer but readable
  c[ImGuiCol_PlotLinesHovered] = vec(p.selected);  // the selected-token highlight
  c[ImGuiCol_Border] = vec(p.box_border, 0.6f);
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

}  // namespace attn::ui
