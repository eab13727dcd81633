// The Compare view's numbers and words: one query word in two sentences (or two query words of one
// sentence), each with its row of weights, the difference between them, the verdict in words, what
// the model answers in both, and the patching sweep in words. Computed from AppState on demand; the
// panel (src/ui/panel_compare.cpp) draws them, the check asks about them, compare_view_data
// (view_data.h) reports them. No ImGui.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app_state.h"

namespace attn {

struct CompareSide {
  std::string title;              // "A: the sentence in the controls", "B: ..."
  std::string sentence;
  int query = 0;                  // the query row
  std::string query_text;
  std::vector<std::string> keys;  // key token texts
  std::vector<float> weights;     // that row's weights (−∞ where the causal mask hides a key)
  int best = 0;                   // the largest weight's key (the first of a tie)
  int tied = 1;                   // how many keys share the largest weight
};

struct Comparison {
  bool tokens = false;              // two query tokens of one sentence (else two sentences)
  CompareSide a, b;
  // B − A per key position where the two rows line up: the same key token there, or two sentences
  // of the same length (the twins differ in one word: "tired/wide"); NaN where they do not.
  std::vector<float> difference;
  std::vector<std::string> difference_keys;  // "street", or "tired/wide" where the words differ
  int largest_change = -1;          // the key of A with the largest |B − A| ≥ kVisibleChange, or -1
  bool top_moved = false;           // the best key's text differs between A and B (both without a tie)
};

// A change of a weight smaller than this does not show at two decimals: two forwards of different
// lengths can differ in the last float bits (the kernels' blocks follow T) where the maths is equal.
constexpr float kVisibleChange = 0.005f;

// The two rows the view sets side by side, for the current inputs.
Comparison compare(const AppState& state);
// The verdict under the rows: where each query looks most, the largest change and why it can or cannot move.
std::string verdict(const AppState& state, const Comparison& c);
// What the model answers in both sentences and what the chosen layer's heads do to it, one line
// each (drawn under the verdict; view_data.ask for the mirror). Empty where nothing was asked.
std::vector<std::string> ask_lines(const AppState& state, const Comparison& c);
// Whether B runs with the learner's switched-off heads and cut links too ("" when there are none).
std::string edits_note(const AppState& state);
// What the patching sweep measured, in words (under its map; view_data.patch_sweep.text).
std::string patch_sweep_text(const AppState& state);

}  // namespace attn
