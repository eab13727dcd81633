// Unit tests for the themes' colours: every text colour reads on every surface of its theme.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "../../src/state/palette.h"

using namespace attn::ui;

TEST_CASE("palette: contrast ratio of known pairs") {
  CHECK(contrast_ratio({0, 0, 0}, {1, 1, 1}) == doctest::Approx(21.0).epsilon(1e-4));
  CHECK(contrast_ratio({1, 1, 1}, {1, 1, 1}) == doctest::Approx(1.0).epsilon(1e-6));
  // #777777 on white is the classic borderline grey: 4.48, just under AA
  const float grey = 0x77 / 255.0f;
  CHECK(contrast_ratio({grey, grey, grey}, {1, 1, 1}) == doctest::Approx(4.48).epsilon(2e-3));
}

TEST_CASE("palette: every text colour has contrast >= 4.5 on every surface, both themes") {
  for (const bool light : {false, true}) {
    const Palette& p = palette_for(light);
    const std::vector<std::pair<const char*, Rgb>> texts = {
        {"text", p.text},   {"text_dim", p.text_dim}, {"query", p.query},     {"key", p.key},
        {"value", p.value}, {"accent", p.accent}, {"selected", p.selected}, {"warning", p.warning}, {"good", p.good}};
    const std::vector<std::pair<const char*, Rgb>> surfaces = {
        {"window_bg", p.window_bg}, {"child_bg", p.child_bg}, {"frame_bg", p.frame_bg},
        {"box_bg", p.box_bg},       {"box_lit_bg", p.box_lit_bg}};
    // (no structured bindings: doctest's CAPTURE is a lambda, and clang 14 cannot capture them)
    for (const auto& text : texts)
      for (const auto& surface : surfaces) {
        CAPTURE(light);
        CAPTURE(std::string(text.first) + " on " + surface.first);
        CHECK(contrast_ratio(text.second, surface.second) >= 4.5f);
      }
  }
}

TEST_CASE("palette: plot lines read as their captions on the surfaces plots sit on, both themes") {
  for (const bool light : {false, true}) {
    const Palette& p = palette_for(light);
    const std::vector<std::pair<const char*, Rgb>> lines = {
        {"line_blue", p.line_blue}, {"line_orange", p.line_orange}, {"line_green", p.line_green}, {"line_red", p.line_red}};
    for (const auto& line : lines)
      for (const Rgb surface : {p.window_bg, p.child_bg, p.frame_bg}) {
        CAPTURE(light);
        CAPTURE(line.first);
        CHECK(contrast_ratio(line.second, surface) >= 4.5f);
      }
  }
}

TEST_CASE("palette: the light theme is light and the dark theme dark") {
  // a surface's luminance against the text: light surfaces carry dark text and the reverse
  CHECK(contrast_ratio(palette_for(true).window_bg, {1, 1, 1}) < 1.1f);
  CHECK(contrast_ratio(palette_for(false).window_bg, {0, 0, 0}) < 1.3f);
}
