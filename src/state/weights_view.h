// The Weights view's words: where the selected token parks its weight on a short first value (an
// attention sink), how much a decoder's mask would hide in an encoder's head, and what the
// value-weighted and rollout readings show and assume. The panel (src/ui/panel_weights.cpp) draws
// them, weights_view_data (view_data.h) reports them. No ImGui.
#pragma once
#include <string>

#include "app_state.h"

namespace attn {

// A model that reads both ways (an encoder): how much of the chosen head's weight a decoder's causal
// mask would hide, read off the head's summary (its mean weight on keys after the query); "" otherwise.
std::string both_ways_note(const AppState& state);
// The selected token puts most of its weight on the first token whose value is short: an attention
// sink, in words ("" when it does not).
std::string sink_note(const AppState& state);
// What the reading (input weights_show) shows and assumes, and where it disagrees with the weights
// on the selected row ("" without a reading).
std::string reading_text(const AppState& state);

}  // namespace attn
