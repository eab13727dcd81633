// Drawing helpers shared by the panels: colour maps, matrix heatmaps with labels, legends, arrows.
// Not a panel: widgets know nothing of AppState, only of the numbers handed to them.
#pragma once
#include <imgui.h>

#include <string>
#include <vector>

namespace attn::ui {

// Sequential map for weights in [0, 1] (viridis: readable with colour blindness, dark = 0).
ImU32 color_sequential(float t);
// Diverging map for signed values in [-1, 1] (blue = negative, near-white = 0, orange = positive).
ImU32 color_diverging(float t);
// Black or white, whichever reads better on `background`.
ImU32 text_color_on(ImU32 background);

struct HeatmapStyle {
  float cell = 0;             // cell size in pixels (0: one text line high)
  float cell_width = 0;       // cell width when it differs from the height (wide matrices; 0: square)
  bool signed_values = false; // diverging map over [-range, range], else sequential over [0, range]
  float range = 1.0f;         // value that maps to the end of the colour map
  bool show_values = false;   // print each value inside its cell (when it fits)
  int value_decimals = 2;
  int highlight_row = -1;     // drawn with a bright outline (the selected token)
  int highlight_col = -1;
  const std::vector<std::string>* row_labels = nullptr;  // drawn left of the rows
  const std::vector<std::string>* col_labels = nullptr;  // drawn above the columns (rotated if long)
  float label_width = 0;      // width reserved for row labels (0: measured)
};

struct HeatmapHover {
  int row = -1, col = -1;     // the cell under the mouse, or -1
};

// A (rows x cols) row-major matrix as coloured cells at the cursor; advances the cursor.
// Non-finite entries are "masked": drawn hatched grey, never as a number that looks like 0.
HeatmapHover heatmap(const char* id, const float* data, int rows, int cols, const HeatmapStyle& style);

// Size heatmap() will take for these settings (to lay out side by side).
ImVec2 heatmap_size(int rows, int cols, const HeatmapStyle& style);

// A horizontal colour bar with its end labels, e.g. "0" ... "1" (weights).
void legend(const char* caption, const HeatmapStyle& style, float width);
// A swatch of the masked-cell pattern with its label.
void masked_legend(const char* caption);

// A hatched masked cell (used by heatmap and anywhere a masked value is shown).
void draw_masked_cell(ImDrawList* dl, ImVec2 a, ImVec2 b);

// An arrow from a to b with a filled head.
void arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 color, float thickness);

// `text` shortened with "…" so it is at most `max_width` pixels wide (whole UTF-8 characters only).
std::string fit_text(const std::string& text, float max_width);

// Text turned 90° counter-clockwise (reads bottom to top), its baseline start at `bottom_left`.
void text_vertical(ImDrawList* dl, ImVec2 bottom_left, ImU32 color, const char* text);

// A wrapped paragraph in the default text colour, or dimmed. They wrap at the view's visible edge
// (draw_app sets the wrap position for the whole view).
void paragraph(const char* text);
void hint(const char* text);
// SameLine(0, spacing) when `width` more still fits before the view's visible right edge, else the next
// item starts a new line: rows of fields and pictures wrap on a phone instead of scrolling sideways.
void same_line_if_fits(float width, float spacing = -1.0f);

// The width of ImGui::Button(label) / RadioButton(label) (to ask same_line_if_fits before drawing one).
float button_width(const char* label);
float radio_width(const char* label);

// Content that cannot re-flow (a wide table, a code listing) in a box as wide as the view that
// scrolls sideways on its own, with a hint under it while it is wider than the screen: the view
// itself never scrolls sideways. The box is as tall as its content (measured the frame before).
// `published_name` gets the box's rect (tests find the view's table by it), or nullptr.
void begin_sideways_box(const char* id);
void end_sideways_box(const char* published_name = nullptr);

// Remembers where the last drawn item is, under `name` (for tests and guided tours that click a
// control for real: the page's attentionExplainer.itemRect(name)). Rect in device pixels.
// kKeyboardFocus names the item the keyboard's arrows have reached (absent while the mouse drives).
constexpr const char* kKeyboardFocus = "keyboard-focus";
void publish_item_rect(const char* name);
// The same for a rect that is not one item (device pixels).
void publish_rect(const char* name, ImVec2 min, ImVec2 max);
bool find_item_rect(const std::string& name, ImVec2* min, ImVec2* max);

// Text of a number: "−∞" for -inf, "NaN" never reaches the screen as a number.
std::string number_text(float v, int decimals);

}  // namespace attn::ui
