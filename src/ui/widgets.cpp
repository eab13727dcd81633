// Drawing helpers shared by the panels (see widgets.h).
#include "widgets.h"

#include <imgui_internal.h>  // the nav cursor (kKeyboardFocus), a box's content height

#include "../gpu/matrix_image.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace attn::ui {

namespace {

ImU32 lerp_stops(const float (*stops)[3], int count, float t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0f, 0.0f, 1.0f) * static_cast<float>(count - 1);
  const int i = std::min(static_cast<int>(t), count - 2);
  const float f = t - static_cast<float>(i);
  float c[3];
  for (int k = 0; k < 3; ++k) c[k] = stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f;
  return IM_COL32(static_cast<int>(c[0] * 255.0f + 0.5f), static_cast<int>(c[1] * 255.0f + 0.5f),
                  static_cast<int>(c[2] * 255.0f + 0.5f), 255);
}

}  // namespace

void text_vertical(ImDrawList* dl, ImVec2 bottom_left, ImU32 color, const char* text) {
  const int first = dl->VtxBuffer.Size;
  dl->AddText(bottom_left, color, text);
  // rotate every vertex of the text by -90° about bottom_left: (x, y) -> (y', -x')
  for (int i = first; i < dl->VtxBuffer.Size; ++i) {
    ImVec2& p = dl->VtxBuffer[i].pos;
    const float dx = p.x - bottom_left.x, dy = p.y - bottom_left.y;
    p = ImVec2(bottom_left.x + dy, bottom_left.y - dx);
  }
}

std::string fit_text(const std::string& text, float max_width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= max_width) return text;
  const char* ellipsis = "…";
  const float room = max_width - ImGui::CalcTextSize(ellipsis).x;
  std::size_t fits = 0;
  while (fits < text.size()) {
    std::size_t next = fits + 1;
    while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
    if (ImGui::CalcTextSize(text.data(), text.data() + next).x > room) break;
    fits = next;
  }
  return text.substr(0, fits) + ellipsis;
}

ImU32 color_sequential(float t) {
  static const float viridis[9][3] = {{0.267f, 0.005f, 0.329f}, {0.279f, 0.175f, 0.483f}, {0.230f, 0.322f, 0.546f},
                                      {0.173f, 0.449f, 0.558f}, {0.128f, 0.567f, 0.551f}, {0.153f, 0.682f, 0.506f},
                                      {0.369f, 0.789f, 0.383f}, {0.678f, 0.864f, 0.190f}, {0.993f, 0.906f, 0.144f}};
  return lerp_stops(viridis, 9, t);
}

ImU32 color_diverging(float t) {
  static const float blue_orange[5][3] = {{0.129f, 0.400f, 0.675f}, {0.573f, 0.773f, 0.871f}, {0.969f, 0.969f, 0.969f},
                                          {0.992f, 0.722f, 0.388f}, {0.702f, 0.345f, 0.024f}};
  return lerp_stops(blue_orange, 5, (t + 1.0f) * 0.5f);
}

ImU32 text_color_on(ImU32 bg) {
  const float r = ((bg >> IM_COL32_R_SHIFT) & 0xff) / 255.0f, g = ((bg >> IM_COL32_G_SHIFT) & 0xff) / 255.0f,
              b = ((bg >> IM_COL32_B_SHIFT) & 0xff) / 255.0f;
  return 0.299f * r + 0.587f * g + 0.114f * b > 0.55f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

std::string number_text(float v, int decimals) {
  if (std::isinf(v)) return v < 0 ? "−∞" : "+∞";
  if (std::isnan(v)) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, static_cast<double>(v));
  if (std::string(buf).find_first_not_of("-0.") == std::string::npos && buf[0] == '-') return buf + 1;  // no "-0.00"
  return buf;
}

void draw_masked_cell(ImDrawList* dl, ImVec2 a, ImVec2 b) {
  dl->AddRectFilled(a, b, IM_COL32(70, 70, 76, 255));
  const float step = std::max(4.0f, (b.x - a.x) / 4.0f);
  dl->PushClipRect(a, b, true);
  for (float x = a.x - (b.y - a.y); x < b.x; x += step)
    dl->AddLine(ImVec2(x, b.y), ImVec2(x + (b.y - a.y), a.y), IM_COL32(120, 120, 130, 255), 1.0f);
  dl->PopClipRect();
}

static float row_label_width(const HeatmapStyle& s) {
  if (s.label_width > 0) return s.label_width;
  if (!s.row_labels) return 0;
  float w = 0;
  for (const std::string& l : *s.row_labels) w = std::max(w, ImGui::CalcTextSize(l.c_str()).x);
  return w + ImGui::GetStyle().ItemSpacing.x;
}

static float col_label_height(const HeatmapStyle& s, float cell) {
  if (!s.col_labels) return 0;
  float w = 0;
  for (const std::string& l : *s.col_labels) w = std::max(w, ImGui::CalcTextSize(l.c_str()).x);
  const float line = ImGui::GetTextLineHeight();
  return (w <= cell - 2 ? line : w) + ImGui::GetStyle().ItemSpacing.y;
}

// Below this cell size, and from this many cells, heatmap() asks the GPU for one image instead.
constexpr float kGpuCellBelow = 6.0f;
constexpr long kGpuCellsFrom = 4096;

static float cell_size(const HeatmapStyle& s) { return s.cell > 0 ? s.cell : ImGui::GetFrameHeight(); }
static float cell_width_of(const HeatmapStyle& s) { return s.cell_width > 0 ? s.cell_width : cell_size(s); }

ImVec2 heatmap_size(int rows, int cols, const HeatmapStyle& s) {
  const float cell = cell_size(s), cell_w = cell_width_of(s);
  return ImVec2(row_label_width(s) + cell_w * cols, col_label_height(s, cell_w) + cell * rows);
}

HeatmapHover heatmap(const char* id, const float* data, int rows, int cols, const HeatmapStyle& s) {
  HeatmapHover hover;
  const float cell = cell_size(s), cell_w = cell_width_of(s);
  const float label_w = row_label_width(s), label_h = col_label_height(s, cell_w);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size(label_w + cell_w * cols, label_h + cell * rows);
  ImGui::InvisibleButton(id, ImVec2(std::max(size.x, 1.0f), std::max(size.y, 1.0f)));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 label_color = ImGui::GetColorU32(ImGuiCol_Text);
  const ImVec2 grid(origin.x + label_w, origin.y + label_h);

  if (s.col_labels) {
    const bool vertical = label_h > ImGui::GetTextLineHeight() + ImGui::GetStyle().ItemSpacing.y + 0.5f;
    for (int j = 0; j < cols && j < static_cast<int>(s.col_labels->size()); ++j) {
      const char* text = (*s.col_labels)[j].c_str();
      const ImVec2 ts = ImGui::CalcTextSize(text);
      const ImU32 c = j == s.highlight_col ? ImGui::GetColorU32(ImGuiCol_PlotLinesHovered) : label_color;
      if (vertical)
        text_vertical(dl, ImVec2(grid.x + cell_w * j + (cell_w - ts.y) * 0.5f, grid.y - ImGui::GetStyle().ItemSpacing.y), c, text);
      else
        dl->AddText(ImVec2(grid.x + cell_w * j + (cell_w - ts.x) * 0.5f, origin.y), c, text);
    }
  }
  if (s.row_labels)
    for (int i = 0; i < rows && i < static_cast<int>(s.row_labels->size()); ++i) {
      const char* text = (*s.row_labels)[i].c_str();
      const ImVec2 ts = ImGui::CalcTextSize(text);
      const ImU32 c = i == s.highlight_row ? ImGui::GetColorU32(ImGuiCol_PlotLinesHovered) : label_color;
      dl->AddText(ImVec2(grid.x - ts.x - ImGui::GetStyle().ItemSpacing.x * 0.5f, grid.y + cell * i + (cell - ts.y) * 0.5f),
                  c, text);
    }

  const float gap = std::min(cell, cell_w) >= 8 ? 1.0f : 0.0f;
  // Many tiny cells: one textured quad coloured by a shader (src/gpu) instead of a rectangle per
  // cell; where the GPU image is not available right now, the cells are drawn as usual.
  // Cells under a pixel wide or high are always one image (rectangles that thin would smear).
  const float smaller = std::min(cell, cell_w);
  const bool tiny_cells = (smaller < kGpuCellBelow && static_cast<long>(rows) * cols >= kGpuCellsFrom) || smaller < 1.0f;
  // The image's key is the widget's ImGui ID (the ID stack included), not the label: two heatmaps
  // labelled "##weights" under different PushID scopes are two images.
  char image_key[24];
  if (tiny_cells) std::snprintf(image_key, sizeof image_key, "heatmap:%08x", ImGui::GetID(id));
  const ImTextureID image =
      tiny_cells ? gpu::matrix_image(image_key, data, rows, cols, s.signed_values ? -s.range : 0.0f, s.range,
                                     s.signed_values ? gpu::ColourMap::Diverging : gpu::ColourMap::Sequential)
                 : nullptr;
  if (image) dl->AddImage(image, grid, ImVec2(grid.x + cell_w * cols, grid.y + cell * rows));
  // Values are written in cells wide enough for the shortest number ("0.00"), formatted only then.
  const bool values_fit = s.show_values && ImGui::CalcTextSize(number_text(0.0f, s.value_decimals).c_str()).x <= cell_w - 2;
  for (int i = 0; i < rows && !image; ++i)
    for (int j = 0; j < cols; ++j) {
      const float v = data[static_cast<std::size_t>(i) * cols + j];
      const ImVec2 a(grid.x + cell_w * j, grid.y + cell * i), b(a.x + cell_w - gap, a.y + cell - gap);
      if (!std::isfinite(v)) {
        draw_masked_cell(dl, a, b);
        continue;
      }
      const ImU32 bg = s.signed_values ? color_diverging(v / s.range) : color_sequential(v / s.range);
      dl->AddRectFilled(a, b, bg);
      if (values_fit) {
        const std::string text = number_text(v, s.value_decimals);
        const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
        if (ts.x <= cell_w - 2)
          dl->AddText(ImVec2(a.x + (cell_w - gap - ts.x) * 0.5f, a.y + (cell - gap - ts.y) * 0.5f), text_color_on(bg),
                      text.c_str());
      }
    }
  const ImU32 outline = ImGui::GetColorU32(ImGuiCol_PlotLinesHovered);
  const float thick = std::max(2.0f, cell * 0.08f);
  if (s.highlight_row >= 0 && s.highlight_row < rows)
    dl->AddRect(ImVec2(grid.x - 1, grid.y + cell * s.highlight_row - 1),
                ImVec2(grid.x + cell_w * cols, grid.y + cell * (s.highlight_row + 1)), outline, 0, 0, thick);
  if (s.highlight_col >= 0 && s.highlight_col < cols)
    dl->AddRect(ImVec2(grid.x + cell_w * s.highlight_col - 1, grid.y - 1),
                ImVec2(grid.x + cell_w * (s.highlight_col + 1), grid.y + cell * rows), outline, 0, 0, thick);

  if (hovered) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int j = static_cast<int>(std::floor((m.x - grid.x) / cell_w)), i = static_cast<int>(std::floor((m.y - grid.y) / cell));
    if (i >= 0 && i < rows && j >= 0 && j < cols) {
      hover.row = i;
      hover.col = j;
      const ImVec2 a(grid.x + cell_w * j, grid.y + cell * i);
      dl->AddRect(a, ImVec2(a.x + std::max(cell_w, 2.0f), a.y + std::max(cell, 2.0f)), IM_COL32(255, 255, 255, 255), 0, 0, 2.0f);
    }
  }
  return hover;
}

void legend(const char* caption, const HeatmapStyle& s, float width) {
  ImGui::TextUnformatted(caption);
  ImGui::SameLine();
  // Whole ranges print whole ("1"), others with two significant digits ("0.031").
  const int decimals = s.range == std::floor(s.range) ? 0 : std::max(1, 1 - static_cast<int>(std::floor(std::log10(s.range))));
  const std::string lo = s.signed_values ? number_text(-s.range, decimals) : "0", hi = number_text(s.range, decimals);
  ImGui::TextUnformatted(lo.c_str());
  ImGui::SameLine();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int steps = 32;
  for (int k = 0; k < steps; ++k) {
    const float t = (k + 0.5f) / steps;
    const ImU32 c = s.signed_values ? color_diverging(t * 2.0f - 1.0f) : color_sequential(t);
    dl->AddRectFilled(ImVec2(p.x + width * k / steps, p.y), ImVec2(p.x + width * (k + 1) / steps + 0.5f, p.y + h), c);
  }
  ImGui::Dummy(ImVec2(width, h));
  ImGui::SameLine();
  ImGui::TextUnformatted(hi.c_str());
}

void masked_legend(const char* caption) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  draw_masked_cell(ImGui::GetWindowDrawList(), p, ImVec2(p.x + h * 1.5f, p.y + h));
  ImGui::Dummy(ImVec2(h * 1.5f, h));
  ImGui::SameLine();
  ImGui::TextUnformatted(caption);
}

void arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color, float thickness) {
  const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
  if (len < 1.0f) return;
  const float ux = dx / len, uy = dy / len, head = thickness * 4.0f;
  const ImVec2 base(b.x - ux * head, b.y - uy * head);
  dl->AddLine(a, base, color, thickness);
  dl->AddTriangleFilled(b, ImVec2(base.x - uy * head * 0.5f, base.y + ux * head * 0.5f),
                        ImVec2(base.x + uy * head * 0.5f, base.y - ux * head * 0.5f), color);
}

namespace {
std::map<std::string, std::pair<ImVec2, ImVec2>>& item_rects() {
  static std::map<std::string, std::pair<ImVec2, ImVec2>> rects;
  return rects;
}
}  // namespace

void same_line_if_fits(float width, float spacing) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float gap = spacing < 0 ? style.ItemSpacing.x : spacing;
  const float right_edge = ImGui::GetWindowPos().x + ImGui::GetWindowWidth() - style.ScrollbarSize - style.WindowPadding.x;
  if (ImGui::GetItemRectMax().x + gap + width <= right_edge) ImGui::SameLine(0, spacing);
}

float button_width(const char* label) {
  return ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().FramePadding.x * 2.0f;
}

float radio_width(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}

namespace {
struct SidewaysBox {
  float content_height = 0;  // last frame's
  bool wider = false;        // than the box, last frame: it shows its scrollbar and the hint
};
std::map<ImGuiID, SidewaysBox>& sideways_boxes() {
  static std::map<ImGuiID, SidewaysBox> boxes;
  return boxes;
}
}  // namespace

void begin_sideways_box(const char* id) {
  const ImGuiID key = ImGui::GetID(id);
  const auto it = sideways_boxes().find(key);
  // The first frame guesses a few lines; the box takes its content's height from the next one.
  const SidewaysBox last = it != sideways_boxes().end() ? it->second : SidewaysBox{ImGui::GetFrameHeightWithSpacing() * 4.0f, false};
  const ImGuiStyle& style = ImGui::GetStyle();
  // As wide as the view's visible part (its vertical scrollbar left out), plus room for the box's own bar.
  const float width = ImGui::GetWindowPos().x + ImGui::GetWindowWidth() - style.ScrollbarSize - style.WindowPadding.x -
                      ImGui::GetCursorScreenPos().x;
  ImGui::BeginChild(key, ImVec2(std::max(width, 1.0f), last.content_height + (last.wider ? style.ScrollbarSize : 0.0f)),
                    false, ImGuiWindowFlags_HorizontalScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  ImGui::PushID("sideways");
  ImGui::PushTextWrapPos(-1.0f);  // no wrapping at the view's edge in here: the box scrolls instead
}

void end_sideways_box(const char* published_name) {
  ImGui::PopTextWrapPos();
  ImGui::PopID();
  const ImGuiWindow* box = ImGui::GetCurrentWindow();
  SidewaysBox& measured = sideways_boxes()[box->ID];
  measured.content_height = box->DC.CursorMaxPos.y - box->DC.CursorStartPos.y + box->WindowPadding.y * 2.0f;
  measured.wider = box->DC.CursorMaxPos.x - box->DC.CursorStartPos.x > box->InnerRect.GetWidth() + 0.5f;
  ImGui::EndChild();
  if (published_name) publish_item_rect(published_name);
  if (measured.wider) hint("↔ Wider than the screen: drag it sideways for the rest.");
}

void publish_item_rect(const char* name) { publish_rect(name, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()); }

void publish_rect(const char* name, ImVec2 min, ImVec2 max) { item_rects()[name] = {min, max}; }

bool find_item_rect(const std::string& name, ImVec2* min, ImVec2* max) {
  if (name == kKeyboardFocus) {  // Dear ImGui's nav cursor, while the keyboard is driving it
    const ImGuiContext& g = *GImGui;
    if (!g.NavWindow || !g.NavId || g.NavDisableHighlight) return false;
    const ImRect r = ImGui::WindowRectRelToAbs(g.NavWindow, g.NavWindow->NavRectRel[g.NavLayer]);
    *min = r.Min;
    *max = r.Max;
    return true;
  }
  const auto it = item_rects().find(name);
  if (it == item_rects().end()) return false;
  *min = it->second.first;
  *max = it->second.second;
  return true;
}

void paragraph(const char* text) { ImGui::TextWrapped("%s", text); }

void hint(const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s", text);
  ImGui::PopStyleColor();
}

}  // namespace attn::ui
