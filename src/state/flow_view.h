// The Flow view's boxes and words: what each box of the lesson's picture X → Q, K, V → scores →
// weights → output shows (its matrix, shape, formula, colour range) and says (its tooltip lines), the
// selected token's strongest keys and the part around the chosen head in words. Computed from
// AppState; the panel (src/ui/panel_flow.cpp) lays them out and draws them. No ImGui.
#pragma once
#include <string>
#include <vector>

#include "app_state.h"

namespace attn {

// A real model's matrices with more columns than this are squeezed (drawn as a narrow image).
constexpr int kSqueezeFrom = 16;

enum class RowsAre { QueryTokens, KeyTokens };

struct FlowBox {
  const char* id;             // ImGui id of its heatmap
  std::string name;           // "Q"
  std::string shape;          // "(10, 4)": (rows, columns) as computed now
  std::string formula;        // the recipe under the name, "X·W_Q"
  std::string formula_short;  // the same for the compact layout (narrow windows)
  std::string meaning;        // first tooltip line: formula and what the rows mean
  std::string detail;         // optional second tooltip paragraph
  const Matrix* matrix = nullptr;
  bool signed_values = true;  // diverging colours over ±max|value|, else weights in [0, 1]
  int stage = 0;              // when the change pulse reaches it (0 = X ... 4 = output)
  RowsAre rows = RowsAre::QueryTokens;
  bool selectable = false;  // a click on a row picks that token as the query
  bool highlight_selected = false;
  bool squeeze = false;                // a wide matrix (a real model's 768 columns): drawn as a narrow image
  std::vector<std::string> col_names;  // for tooltips: features, dimensions or key tokens
  float range = 1.0f;         // its colours: ±range when signed, else [0, 1]

  int row_count() const { return static_cast<int>(matrix->rows()); }
  int col_count() const { return static_cast<int>(matrix->cols()); }
};

struct FlowBoxes {
  FlowBox x, x_kv, q, k, v, scores, weights, output;
  bool cross = false;
  // Every box in drawing order; x_kv only in cross-attention.
  std::vector<const FlowBox*> all() const {
    std::vector<const FlowBox*> list = {&x, &q, &k, &v, &scores, &weights, &output};
    if (cross) list.insert(list.begin() + 1, &x_kv);
    return list;
  }
};

// Every box for the current state (its matrices point into state.model).
FlowBoxes flow_boxes(const AppState& state);

// A token's text, with its position when the same text occurs twice ("the (5)"), so a learner
// can tell the two apart in a list.
std::string token_name(const std::vector<std::string>& labels, int index);
// "name 1.00, name 0.50, ..." for one row. Wide rows (scores, weights over many keys) list only
// their largest entries, best first; narrow ones list every entry in column order.
std::string row_entries(const Matrix& m, int row, const std::vector<std::string>& col_names, int max_listed);
std::string shape_text(const Matrix& m);  // "(10, 4)"
// Largest |value| of the finite entries (masked −∞ scores do not count), 1 when all are 0.
float max_abs_finite(const Matrix& m);
// "'animal' 0.65, 'street' 0.09, 'it' 0.03", or for a tie "8 keys tie at 0.03 each: 'The', 'the', ...".
std::string strongest_keys_text(const StrongestKeys& s, const std::vector<std::string>& key_tokens);
// The chosen head's part around it (a loaded model) in words: its length and its share of the update.
std::string around_text(const AppState& state);

}  // namespace attn
