// The two themes' colours (see palette.h). Each hue is chosen so that it reads as text on every
// surface of its own theme (tests/unit/test_palette.cpp measures it).
#include "palette.h"

#include <algorithm>
#include <cmath>

namespace attn::ui {

namespace {

constexpr Rgb hex(unsigned v) {
  return {static_cast<float>((v >> 16) & 0xff) / 255.0f, static_cast<float>((v >> 8) & 0xff) / 255.0f,
          static_cast<float>(v & 0xff) / 255.0f};
}

float linear(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }

float luminance(Rgb c) { return 0.2126f * linear(c.r) + 0.7152f * linear(c.g) + 0.0722f * linear(c.b); }

Palette dark_palette() {
  Palette p;
  p.window_bg = hex(0x17191f);
  p.child_bg = hex(0x1c1f26);
  p.frame_bg = hex(0x252a35);
  p.box_bg = hex(0x232a3a);
  p.box_lit_bg = hex(0x263a5c);
  p.box_border = hex(0x4a5468);
  p.text = hex(0xe8eaef);
  p.text_dim = hex(0xa3a8b5);
  p.query = hex(0xf08cc8);  // magenta
  p.key = hex(0x4fd1b5);    // teal
  p.value = hex(0xe3b04b);  // amber
  p.accent = hex(0x7cb8ff);
  p.selected = hex(0xff8466);
  p.warning = hex(0xff8a7a);
  p.good = hex(0x7fd88f);
  p.line_blue = hex(0x5aaaff);
  p.line_orange = hex(0xfab43c);
  p.line_green = hex(0xaadc78);
  p.line_red = hex(0xff7a70);
  p.masked_fill = hex(0x46464c);
  p.masked_line = hex(0x787882);
  return p;
}

Palette light_palette() {
  Palette p;
  p.light = true;
  p.window_bg = hex(0xf8f8fa);
  p.child_bg = hex(0xeef0f4);
  p.frame_bg = hex(0xffffff);
  p.box_bg = hex(0xe6ebf4);
  p.box_lit_bg = hex(0xd8e5f8);
  p.box_border = hex(0x9aa4b8);
  p.text = hex(0x1b1d23);
  p.text_dim = hex(0x4d5260);
  p.query = hex(0xa3206c);  // magenta
  p.key = hex(0x0b6b5a);    // teal
  p.value = hex(0x865400);  // amber
  p.accent = hex(0x1d5bb8);
  p.selected = hex(0xa82e14);
  p.warning = hex(0xb3261e);
  p.good = hex(0x1b6e33);
  p.line_blue = hex(0x1f5fbf);
  p.line_orange = hex(0x9a4f00);
  p.line_green = hex(0x2e6b32);
  p.line_red = hex(0xc0282b);
  p.masked_fill = hex(0xc4c4ca);
  p.masked_line = hex(0x8c8c96);
  return p;
}

}  // namespace

const Palette& palette_for(bool light) {
  static const Palette dark = dark_palette(), bright = light_palette();
  return light ? bright : dark;
}

float contrast_ratio(Rgb a, Rgb b) {
  const float la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05f) / (std::min(la, lb) + 0.05f);
}

}  // namespace attn::ui
