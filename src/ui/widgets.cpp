// Drawing helpers shared by the panels (see widgets.h).
#include "widgets.h"

#include <imgui_internal.h>  // the nav cursor (kKeyboardFocus), a box's content height

#include "../gpu/matrix_image.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cfloat>
#include <map>
#include <utility>

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
  // ImGui culls glyphs against the clip rect before the rotation, where the text still runs to the
  // right (and one line down): a label near the window's right edge lost its end ("punctuati").
  // The clip rect is widened that way only, where the rotated text never goes.
  const ImVec2 size = ImGui::CalcTextSize(text), clip_min = dl->GetClipRectMin(), clip_max = dl->GetClipRectMax();
  dl->PushClipRect(clip_min, ImVec2(std::max(clip_max.x, bottom_left.x + size.x), std::max(clip_max.y, bottom_left.y + size.y)));
  const int first = dl->VtxBuffer.Size;
  dl->AddText(bottom_left, color, text);
  dl->PopClipRect();
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

void draw_masked_cell(ImDrawList* dl, ImVec2 a, ImVec2 b) {
  const Palette& p = palette();
  dl->AddRectFilled(a, b, color(p.masked_fill));
  const float step = std::max(4.0f, (b.x - a.x) / 4.0f);
  dl->PushClipRect(a, b, true);
  for (float x = a.x - (b.y - a.y); x < b.x; x += step)
    dl->AddLine(ImVec2(x, b.y), ImVec2(x + (b.y - a.y), a.y), color(p.masked_line), 1.0f);
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
      const ImU32 c = j == s.highlight_col ? ImGui::GetColorU32(ImGuiCol_PlotLinesHovered)
                                           : s.col_label_color ? s.col_label_color : label_color;
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
      const ImU32 c = i == s.highlight_row ? ImGui::GetColorU32(ImGuiCol_PlotLinesHovered)
                                           : s.row_label_color ? s.row_label_color : label_color;
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
      dl->AddRect(a, ImVec2(a.x + std::max(cell_w, 2.0f), a.y + std::max(cell, 2.0f)), ImGui::GetColorU32(ImGuiCol_Text), 0, 0, 2.0f);
    }
  }
  return hover;
}

namespace {
// The end labels of a colour scale: whole ranges print whole ("1"), others with two significant
// digits ("0.031").
std::pair<std::string, std::string> range_labels(const HeatmapStyle& s) {
  const int decimals = s.range == std::floor(s.range) ? 0 : std::max(1, 1 - static_cast<int>(std::floor(std::log10(s.range))));
  return {s.signed_values ? number_text(-s.range, decimals) : "0", number_text(s.range, decimals)};
}

void draw_ramp(ImDrawList* dl, ImVec2 p, float width, float h, bool signed_values) {
  const int steps = 32;
  for (int k = 0; k < steps; ++k) {
    const float t = (k + 0.5f) / steps;
    const ImU32 c = signed_values ? color_diverging(t * 2.0f - 1.0f) : color_sequential(t);
    dl->AddRectFilled(ImVec2(p.x + width * k / steps, p.y), ImVec2(p.x + width * (k + 1) / steps + 0.5f, p.y + h), c);
  }
}
}  // namespace

void legend(const char* caption, const HeatmapStyle& s, float width, bool signs_only) {
  ImGui::TextUnformatted(caption);
  ImGui::SameLine();
  const auto [lo, hi] = signs_only ? std::pair<std::string, std::string>("−", "+") : range_labels(s);
  ImGui::TextUnformatted(lo.c_str());
  ImGui::SameLine();
  const float h = ImGui::GetTextLineHeight();
  draw_ramp(ImGui::GetWindowDrawList(), ImGui::GetCursorScreenPos(), width, h, s.signed_values);
  ImGui::Dummy(ImVec2(width, h));
  ImGui::SameLine();
  ImGui::TextUnformatted(hi.c_str());
}

float scale_bar(ImDrawList* dl, ImVec2 pos, float width, const HeatmapStyle& s) {
  const auto [lo, hi] = range_labels(s);
  const float line = ImGui::GetTextLineHeight(), gap = ImGui::GetFontSize() * 0.25f;
  const float lo_w = ImGui::CalcTextSize(lo.c_str()).x, hi_w = ImGui::CalcTextSize(hi.c_str()).x;
  const float bar = width - lo_w - hi_w - gap * 2.0f;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  if (bar < line) {  // too narrow for the ramp between its ends: the range in words
    const std::string range = s.signed_values ? "±" + hi : lo + "…" + hi;
    dl->AddText(pos, text, range.c_str());
    return line;
  }
  dl->AddText(pos, text, lo.c_str());
  draw_ramp(dl, ImVec2(pos.x + lo_w + gap, pos.y + line * 0.25f), bar, line * 0.5f, s.signed_values);
  dl->AddText(ImVec2(pos.x + width - hi_w, pos.y), text, hi.c_str());
  return line;
}

void qkv_legend() {
  const Palette& p = palette();
  const float h = ImGui::GetTextLineHeight();
  const std::pair<const char*, Rgb> entries[] = {{"query q", p.query}, {"key k", p.key}, {"value v", p.value}};
  bool first = true;
  for (const auto& [name, hue] : entries) {
    const float width = h * 0.9f + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(name).x;
    if (!first) same_line_if_fits(width, ImGui::GetFontSize());
    first = false;
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(at.x, at.y + h * 0.1f), ImVec2(at.x + h * 0.8f, at.y + h * 0.9f),
                                              color(hue), h * 0.15f);
    ImGui::Dummy(ImVec2(h * 0.9f, h));
    ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::TextColored(ImVec4(hue.r, hue.g, hue.b, 1.0f), "%s", name);
  }
}

void heading(const char* text, ImU32 text_color) {
  ImGui::Dummy(ImVec2(0, ImGui::GetFontSize() * 0.45f));
  // the font's glyphs drawn 1.2× (one font in the atlas keeps the first load small), wrapped at the
  // view's wrap position like a paragraph
  ImFont* font = ImGui::GetFont();
  const float size = ImGui::GetFontSize() * 1.2f;
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float wrap_pos = ImGui::GetCurrentWindow()->DC.TextWrapPos;
  const float wrap = std::max(size * 6.0f, wrap_pos >= 0 ? ImGui::CalcWrapWidthForPos(at, wrap_pos)
                                                         : ImGui::GetContentRegionAvail().x);
  const ImVec2 extent = font->CalcTextSizeA(size, FLT_MAX, wrap, text);
  ImGui::GetWindowDrawList()->AddText(font, size, at, text_color ? text_color : ImGui::GetColorU32(ImGuiCol_Text), text,
                                      nullptr, wrap);
  ImGui::Dummy(ImVec2(extent.x, extent.y + ImGui::GetFontSize() * 0.1f));
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

void same_line_if_fits(float width, float spacing, float right_edge) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float gap = spacing < 0 ? style.ItemSpacing.x : spacing;
  if (right_edge < 0) right_edge = ImGui::GetWindowPos().x + ImGui::GetWindowWidth() - style.ScrollbarSize - style.WindowPadding.x;
  if (ImGui::GetItemRectMax().x + gap + width <= right_edge) ImGui::SameLine(0, spacing);
}

std::string bytes_text(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 || bytes >= 100 || bytes == std::floor(bytes) ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
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

void publish_picture_rect(View view) { publish_item_rect(view_row(view).picture); }
void publish_picture_rect(View view, ImVec2 min, ImVec2 max) { publish_rect(view_row(view).picture, min, max); }

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

// [SECTION] Explanations

namespace {

constexpr const char* kPinnedBox = "##explanation_pinned";  // the box of a pinned explanation
constexpr const char* kColumn = "Explanations##column";     // presentation mode's column

struct Pin {
  ImGuiID id = 0;  // the pinned picture or marker (0: nothing pinned)
  int part = -1;
  ImVec2 at;       // where its box goes, from its window's content origin (it scrolls with the view)
};

struct Explanations {
  Pin pin;
  bool click_taken = false;  // a click this frame pinned something (else a click unpins)
  bool present = false;
  ImVec2 column_min, column_max;
  bool column_begun = false;   // the column's heading is drawn (its window is begun again per part)
  bool in_column = false;      // drawing into the column now
  bool part_shown = false;     // the column shows a part this frame
  bool any = false, any_last = false;  // explanations in the view this frame, last frame
  bool any_parts = false;
  // Presentation mode shows one picture's part: last frame's best (hovered, then pinned, then a fallback).
  ImGuiID column_site = 0, best_site = 0;
  int best_rank = 0;
  ShownExplanation shown, shown_next;
};

Explanations& explanations() {
  static Explanations e;
  return e;
}

ImVec2 content_origin() {
  const ImVec2 pos = ImGui::GetWindowPos();
  return ImVec2(pos.x - ImGui::GetScrollX(), pos.y - ImGui::GetScrollY());
}

// What `body` writes as text (Dear ImGui's log of the rendered text), for getState.
std::string capture_text(const std::function<void()>& body) {
  const bool logging = !GImGui->LogEnabled;
  if (logging) ImGui::LogToBuffer();
  body();
  if (!logging) return "";
  std::string text = GImGui->LogBuffer.c_str();
  ImGui::LogFinish();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// The pinned explanation's box at `at` (screen), kept inside the screen by last frame's size.
void pinned_box(ImVec2 at, const std::function<void()>& body) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImVec2 size(0, 0);
  if (const ImGuiWindow* w = ImGui::FindWindowByName(kPinnedBox)) size = w->Size;
  at.x = std::clamp(at.x, vp->WorkPos.x, std::max(vp->WorkPos.x, vp->WorkPos.x + vp->WorkSize.x - size.x));
  at.y = std::clamp(at.y, vp->WorkPos.y, std::max(vp->WorkPos.y, vp->WorkPos.y + vp->WorkSize.y - size.y));
  ImGui::SetNextWindowPos(at);
  // A tooltip's window that ignores the mouse: a click goes through it to what is under it.
  ImGui::Begin(kPinnedBox, nullptr,
               ImGuiWindowFlags_Tooltip | ImGuiWindowFlags_NoInputs | ImGuiWindowFlags_NoTitleBar |
                   ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav);
  ImGui::TextDisabled("Pinned: a click elsewhere closes it");
  Explanations& e = explanations();
  e.shown_next.text = capture_text(body);
  e.shown_next.pinned = true;
  publish_rect("explanation:pinned", ImGui::GetWindowPos(),
               ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowWidth(), ImGui::GetWindowPos().y + ImGui::GetWindowHeight()));
  ImGui::End();
}

void tooltip(const std::function<void()>& body) {
  ImGui::BeginTooltip();
  body();
  ImGui::EndTooltip();
}

// Presentation mode's column (begun again for each thing it shows this frame: Dear ImGui appends).
void begin_column() {
  Explanations& e = explanations();
  ImGui::SetNextWindowPos(e.column_min);
  ImGui::SetNextWindowSize(ImVec2(e.column_max.x - e.column_min.x, e.column_max.y - e.column_min.y));
  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImGui::GetStyleColorVec4(ImGuiCol_ChildBg));
  ImGui::Begin(kColumn, nullptr,
               ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoFocusOnAppearing);  // (NoBringToFrontOnFocus would create it behind the app)
  ImGui::PopStyleColor();
  ImGui::PushTextWrapPos(0.0f);  // every line wraps at the column's edge, even plain Text
  e.in_column = true;
  if (!e.column_begun) {
    e.column_begun = true;
    ImGui::TextDisabled("Explanation");
    publish_rect("explanations", e.column_min, e.column_max);
  }
}

void end_column() {
  explanations().in_column = false;
  ImGui::PopTextWrapPos();
  ImGui::End();
}

}  // namespace

bool explanation_in_column() { return explanations().in_column; }

float explanation_wrap(float ems) {
  const float wanted = ImGui::GetFontSize() * ems;
  return explanations().in_column ? std::min(wanted, ImGui::GetContentRegionMax().x) : wanted;
}

void explain_item(const char* text, bool marker) {
  Explanations& e = explanations();
  const bool item_hovered = ImGui::IsItemHovered();
  const auto body = [text] {
    ImGui::PushTextWrapPos(explanation_wrap(24.0f));
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
  };
  if (!marker) {  // the item's own click shows what this says: a hover tooltip is enough
    if (item_hovered) tooltip(body);
    return;
  }
  if (e.present) {  // listed in the column, on screen for the whole room
    e.any = true;
    e.shown_next.items.emplace_back(text);
    return;
  }
  // The marker: dimmed, without a frame, as tall as the controls (a finger-sized target where they are).
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::PushID(text);
  ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0, 0, 0, 0));
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::Button("(?)");
  ImGui::PopStyleColor(2);
  const ImGuiID id = ImGui::GetItemID();
  const bool marker_hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  const ImVec2 below(ImGui::GetItemRectMin().x, ImGui::GetItemRectMax().y);
  ImGui::PopID();
  if (clicked) {  // the marker toggles its text
    const ImVec2 origin = content_origin();
    e.pin = e.pin.id == id ? Pin{} : Pin{id, 0, ImVec2(below.x - origin.x, below.y - origin.y)};
    e.click_taken = true;
  }
  if (e.pin.id == id) {
    const ImVec2 origin = content_origin();
    pinned_box(ImVec2(origin.x + e.pin.at.x, origin.y + e.pin.at.y), body);
  } else if (item_hovered || marker_hovered) {
    tooltip(body);
  }
}

void explain_parts(const char* id, int parts, int hovered, int fallback, const std::function<void(int part)>& body) {
  Explanations& e = explanations();
  const ImGuiID site = ImGui::GetID(id);
  if (hovered >= parts) hovered = -1;
  if (fallback >= parts) fallback = -1;
  if (e.pin.id == site && e.pin.part >= parts) e.pin = Pin{};  // its part is gone
  if (hovered >= 0 && ImGui::IsMouseClicked(0)) {
    const ImVec2 origin = content_origin(), mouse = ImGui::GetIO().MousePos;
    const float offset = ImGui::GetFontSize();  // beside the finger or the pointer, not under it
    e.pin = Pin{site, hovered, ImVec2(mouse.x - origin.x + offset, mouse.y - origin.y + offset)};
    e.click_taken = true;
  }
  const int pinned = e.pin.id == site ? e.pin.part : -1;
  e.any = true;
  e.any_parts = true;
  if (e.present) {
    const int rank = hovered >= 0 ? 3 : pinned >= 0 ? 2 : fallback >= 0 ? 1 : 0;
    if (rank > e.best_rank) {
      e.best_rank = rank;
      e.best_site = site;
    }
    const int part = hovered >= 0 ? hovered : pinned >= 0 ? pinned : fallback;
    if (site != e.column_site || part < 0 || e.part_shown) return;
    e.part_shown = true;
    begin_column();
    e.shown_next.text = capture_text([&] { body(part); });
    e.shown_next.pinned = part == pinned;
    ImGui::Separator();
    end_column();
    return;
  }
  if (pinned >= 0) {
    const ImVec2 origin = content_origin();
    pinned_box(ImVec2(origin.x + e.pin.at.x, origin.y + e.pin.at.y), [&] { body(pinned); });
  }
  if (hovered >= 0 && hovered != pinned) tooltip([&] { body(hovered); });
}

void explanations_begin_frame(bool present) {
  Explanations& e = explanations();
  e.present = present;
  e.column_min = e.column_max = ImVec2(0, 0);
  e.click_taken = false;
  e.column_begun = e.part_shown = e.any = e.any_parts = false;
  e.best_site = 0;
  e.best_rank = 0;
  e.shown_next = ShownExplanation{};
}

void explanations_end_frame() {
  Explanations& e = explanations();
  if (e.present && (e.any || e.any_last)) {
    begin_column();
    if (!e.part_shown && e.any_parts) hint("Click or tap a cell, a bar or a box: its explanation stays here.");
    for (const std::string& text : e.shown_next.items) {
      paragraph(text.c_str());
      ImGui::Spacing();
    }
    end_column();
  }
  // Rects of what is not on screen this frame are empty (tests read them between frames).
  if (!e.shown_next.pinned || e.present) publish_rect("explanation:pinned", ImVec2(0, 0), ImVec2(0, 0));
  if (!e.column_begun) publish_rect("explanations", ImVec2(0, 0), ImVec2(0, 0));
  if (ImGui::IsMouseClicked(0) && !e.click_taken) e.pin = Pin{};  // a click elsewhere unpins
  e.column_site = e.best_site;
  e.any_last = e.any;
  e.shown = std::move(e.shown_next);
}

void explanations_column(ImVec2 min, ImVec2 max) {
  explanations().column_min = min;
  explanations().column_max = max;
}

bool explanations_in_view() { return explanations().any_last; }

const ShownExplanation& shown_explanation() { return explanations().shown; }

void paragraph(const char* text) { ImGui::TextWrapped("%s", text); }

void hint(const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s", text);
  ImGui::PopStyleColor();
}

ImVec4 warning_color() { return ImGui::ColorConvertU32ToFloat4(color(palette().warning)); }

}  // namespace attn::ui
