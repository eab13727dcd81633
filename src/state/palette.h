// The explainer's colours, one table per theme: surfaces, text, the query/key/value hues that every
// view shares, and the few signal colours (selected token, warning, good). Plain numbers, no ImGui:
// theme.cpp hands them to ImGui, and the unit tests check their text contrast.
#pragma once

namespace attn::ui {

struct Rgb {
  float r = 0, g = 0, b = 0;  // sRGB, 0..1
};

struct Palette {
  bool light = false;  // a light theme: dark text on light surfaces
  // Surfaces, back to front: the window, a child region, a frame (text fields, boxes of the diagrams).
  Rgb window_bg, child_bg, frame_bg;
  // A box that carries a formula or a diagram node (Steps), and the lit (current) one.
  Rgb box_bg, box_lit_bg, box_border;
  Rgb text, text_dim;
  // One fixed hue each, in every view: the query, the key, the value (text, borders, swatches).
  Rgb query, key, value;
  Rgb accent;    // the current step, a lit diagram box
  Rgb selected;  // the selected token (outline, its name)
  Rgb warning;   // a mistake, a refused input
  Rgb good;      // a right answer, a met check
  // The lines of plots (Cost's timings, Train's curves), also as their captions' text.
  Rgb line_blue, line_orange, line_green, line_red;
  // Masked cells: hatch lines on a flat fill.
  Rgb masked_fill, masked_line;
};

const Palette& palette_for(bool light);

// WCAG 2 contrast ratio of two opaque colours (1 .. 21); text needs ≥ 4.5.
float contrast_ratio(Rgb a, Rgb b);

}  // namespace attn::ui
