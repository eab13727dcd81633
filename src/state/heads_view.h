// The Heads view's words: every head of the current forward with its summary in words (a label, a
// reading, the numbers behind it), what the sweep (every head switched off alone) and the direct
// logit attribution measured, in words. Computed from AppState; the panel (src/ui/panel_heads.cpp)
// draws them, heads_view_data (view_data.h) reports them. No ImGui.
#pragma once
#include <string>

#include "app_state.h"

namespace attn {

// The heads the view shows: every layer × head of the current forward (a loaded model's, or the
// hand-made model's one head, which follows the controls), with what the forward kept of each: its
// summary and its thumbnail (weights max-pooled to at most kThumbnailSide², so a frame never reads
// 144 heads of 256 × 256).
struct HeadGrid {
  int layers = 0, heads = 0;
  const ModelTrace* forward = nullptr;
  const LayerTrace& layer(int l) const { return forward->layers[static_cast<std::size_t>(l)]; }
  const Matrix& thumbnail(int l, int h) const { return layer(l).thumbnails[static_cast<std::size_t>(h)]; }
};
HeadGrid head_grid(const AppState& state);

// The key token's text ("?" out of range).
std::string key_text(const AppState& state, int key);
// The summary in a few words: "previous token", "mostly ·animal", ...
std::string summary_label(const AppState& state, const HeadSummary& s);
// What the label means where it needs more than its words: a sink, too few rows, an added token.
std::string summary_reading(const AppState& state, const HeadSummary& s);
// The numbers behind the label, as a learner reads them.
std::string summary_numbers(const HeadSummary& s);

// What the sweep measured, in words (under its map; view_data.sweep.text for the mirror).
std::string sweep_text(const AppState& state);
// The attribution in words: what the map shows, the parts beside the heads and that they add up.
std::string attribution_text(const AppState& state);
// Why a loaded model has no attribution ("" when it can have one): its logit is no sum of parts.
std::string attribution_note(const AppState& state);

}  // namespace attn
