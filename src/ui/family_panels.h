// The pieces of the Heads and Cost views that show what a model family adds to attention: grouped
// K/V heads, local/global layers, rotary positions, the window, soft-capping, q/k norm, the K/V
// cache. They only draw state.model.family (src/state/family_views.h), computed once per input change.
#pragma once
#include <nlohmann/json.hpp>

#include "../state/app_state.h"

namespace attn::ui {

// Heads view: one line saying which query heads share a K/V head (nothing for the hand-made model).
void draw_head_groups_line(const AppState& state);
// Heads view: the layers as a strip of boxes marked local (window w) or global, the chosen one lit;
// a click chooses a layer. Drawn only when some layer has a window.
void draw_layer_strip(const AppState& state, AppInputs& next);
// Heads view, under the chosen head: its positions, and where they apply its window, cap and q/k norm.
void draw_family_sections(const AppState& state, AppInputs& next);
// (their numbers, getState().view_data.family of the Heads view: family_view_data, src/state/view_data.h)

// (trace_scaling: src/state/view_text.h)

// Cost view: what the K/V cache of the loaded model holds at the current T, shared and not.
void draw_kv_cache_section(const AppState& state);
nlohmann::json kv_cache_view_data(const AppState& state);

}  // namespace attn::ui
