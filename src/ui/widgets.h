// Drawing helpers shared by the panels: colour maps, matrix heatmaps with labels, legends, arrows.
// Not a panel: widgets know nothing of AppState, only of the numbers handed to them.
#pragma once
#include <imgui.h>

#include <functional>
#include <string>
#include <vector>

#include "../state/palette.h"
#include "../state/view_text.h"

namespace attn::ui {

// The current theme's colours (set by apply_theme) and one of them as an ImGui colour.
const Palette& palette();
ImU32 color(Rgb c, float alpha = 1.0f);

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
  ImU32 row_label_color = 0;  // e.g. the query hue where rows are queries (0: the text colour)
  ImU32 col_label_color = 0;  // e.g. the key hue where columns are keys
};

struct HeatmapHover {
  int row = -1, col = -1;     // the cell under the mouse, or -1
};

// A (rows x cols) row-major matrix as coloured cells at the cursor; advances the cursor.
// Non-finite entries are "masked": drawn hatched grey, never as a number that looks like 0.
HeatmapHover heatmap(const char* id, const float* data, int rows, int cols, const HeatmapStyle& style);

// Size heatmap() will take for these settings (to lay out side by side).
ImVec2 heatmap_size(int rows, int cols, const HeatmapStyle& style);

// A horizontal colour bar with its end labels, e.g. "0" ... "1" (weights), or only "−" ... "+"
// (`signs_only`: where each matrix has its own range, shown by its scale_bar).
void legend(const char* caption, const HeatmapStyle& style, float width, bool signs_only = false);
// A small bar inside a box, `width` wide at `pos` (screen): "lo", the colour ramp, "hi", for the
// range of that one matrix. Returns its height (one text line).
float scale_bar(ImDrawList* dl, ImVec2 pos, float width, const HeatmapStyle& style);
// Which hue is which: "query q", "key k", "value v" as swatches (the same in every view).
void qkv_legend();
// A section heading: a size up from the body text, with room above it (in `color`, else the text's).
void heading(const char* text, ImU32 color = 0);
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
// SameLine(0, spacing) when `width` more still fits before the view's visible right edge (or `right_edge`, a
// screen x), else the next item starts a new line: rows of fields and pictures wrap on a phone instead of
// scrolling sideways.
void same_line_if_fits(float width, float spacing = -1.0f, float right_edge = -1.0f);
// "512 bytes", "1.5 KiB", "16 MiB": a size in memory (powers of 1024), whole where it is whole.
std::string bytes_text(double bytes);

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
// The view's main picture: the last drawn item (or the rect min–max) under the name the table of
// views gives it (ViewRow::picture, src/state/views.h).
void publish_picture_rect(View view);
void publish_picture_rect(View view, ImVec2 min, ImVec2 max);
bool find_item_rect(const std::string& name, ImVec2* min, ImVec2* max);

// [SECTION] Explanations: every explanation that hovering shows goes through these two, so it behaves
// the same everywhere. Hovering shows it in a tooltip; a click or a tap pins it on screen until a click
// elsewhere (projectors and phones have no hover; a long press on touch still hovers). In
// presentation mode they are on screen without hovering, in the explanations column.

// The explanation of the last drawn item (a control). With `marker`, a small "(?)" after the item
// toggles it pinned on a click (for items whose own click does something else, a switch or a slider);
// without, the item's own click already shows what the text says (a numbered step, a link) and the
// text stays a hover tooltip. Presentation mode lists the marked ones in the explanations column.
void explain_item(const char* text, bool marker = true);

// The explanations of a picture made of parts (cells, bars, books, points) that the learner points at.
// `id` names the picture (under the ID stack), its parts are 0 to `parts` − 1, `hovered` is the part
// under the mouse (-1: none), `body(part)` draws one part's explanation (text, tables). A click on a
// part pins it (a pin whose part is gone, the sentence having shrunk, is dropped). Presentation
// mode shows in the explanations column the hovered part, else the pinned one, else `fallback`
// (-1: none), the part worth reading first (the selected token's strongest cell).
void explain_parts(const char* id, int parts, int hovered, int fallback, const std::function<void(int part)>& body);

// A wrap width of `ems` font sizes for an explanation's text, narrower where its box is narrower.
float explanation_wrap(float ems);
// Whether an explanation is drawn into presentation mode's column now (a fixed width: tables
// stretch to it and wrap, where a tooltip grows to fit them).
bool explanation_in_column();

// Called by the app's frame: first, whether it is presentation mode; before the view, where its
// explanations column is; last, the column's list and the click elsewhere that unpins.
void explanations_begin_frame(bool present);
void explanations_column(ImVec2 min, ImVec2 max);
void explanations_end_frame();
// Whether the view drawn last frame had explanations (presentation mode keeps them a column then).
bool explanations_in_view();

// What is on screen without hovering, for getState().view_data.explanation: the pinned (or in
// presentation mode, the shown) part's text as drawn, and presentation mode's list of item texts.
struct ShownExplanation {
  std::string text;                // "" when none
  bool pinned = false;             // by a click (else presentation mode's hovered or fallback part)
  std::vector<std::string> items;  // presentation mode: the view's item explanations
};
const ShownExplanation& shown_explanation();

// (number_text, in_quotes: src/state/view_text.h)
// The theme's warning red, for a warning line (it reads on either theme: tests/unit/test_palette.cpp).
ImVec4 warning_color();

}  // namespace attn::ui
