// The one place that decides the layout from the screen (see layout.h).
#include "layout.h"

namespace attn::ui {

namespace {
Layout g_layout;
}

void set_screen(float css_width, float css_height, float dpr, bool touch) {
  Layout l;
  l.css_width = css_width;
  l.css_height = css_height;
  l.dpr = dpr > 0 ? dpr : 1.0f;
  l.touch = touch;
  l.narrow = css_width < kNarrowBelow;
  l.short_height = css_height < kShortBelow;
  // A phone, or any finger: big targets, except where the height is too precious for them (a
  // landscape phone, a small embed): there the picture comes first.
  l.tall_controls = (touch || l.narrow) && !l.short_height;
  g_layout = l;
}

const Layout& layout() { return g_layout; }

}  // namespace attn::ui
