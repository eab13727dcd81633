// How the window is laid out for the screen it is on, decided in one place from the canvas's CSS
// size: one column on a phone, the full two columns elsewhere. Panels ask here; nothing here draws.
#pragma once

namespace attn::ui {

struct Layout {
  float css_width = 0, css_height = 0;  // the canvas, in CSS pixels
  float dpr = 1;                        // device pixels per CSS pixel (the window draws in device pixels)
  bool touch = false;                   // the main pointer is a finger (a phone or a tablet)
  bool narrow = false;  // one column: the controls fold into a bar at the top, the views into a menu
  bool short_height = false;  // little height (a landscape phone, a small embed): intros shrink to one line
  bool tall_controls = false;  // buttons, boxes and switches at least kTouchTarget CSS px tall

  // CSS pixels to the device pixels ImGui works in.
  float px(float css) const { return css * dpr; }
};

constexpr float kNarrowBelow = 700.0f;       // CSS px of width
constexpr float kShortBelow = 420.0f;        // CSS px of height
constexpr float kTouchTarget = 40.0f;        // CSS px: the smallest control a finger hits reliably

// Called once a frame by the platform edge, before the frame is drawn.
void set_screen(float css_width, float css_height, float dpr, bool touch);
const Layout& layout();

}  // namespace attn::ui
