// The derive view: the lesson's by-hand exercise (3 tokens, d = 2) with editable Q, K, V and every
// intermediate number in six stages, each hidden until the learner asks; a hidden stage takes the
// learner's typed predictions, each cell marked at once (checks.h). Not the maths: scores, weights
// and outputs are read from state.model.derive, the exps, row sums and marks from state.views.derive
// (view_numbers.h); this file only draws them.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../api/compute_json.h"
#include "checks.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// [SECTION] Numbers as the lesson writes them

constexpr float kMaxEntry = 100.0f;   // an editable cell takes numbers from −100 to 100

// "1", "0.707", "4.11", "0.40" (keep_zeros), "1.2e5", "3.0e-4": short, and never a misleading "0".
std::string short_number(double v, int decimals, bool keep_zeros = false) {
  if (!std::isfinite(v)) return number_text(static_cast<float>(v), decimals);
  const double magnitude = std::fabs(v);
  char buf[48];
  const bool too_small = v != 0 && magnitude < 0.5 * std::pow(10.0, -decimals - 1);
  if (magnitude >= 1e5 || too_small) {
    std::snprintf(buf, sizeof buf, "%.1e", v);
    std::string s = buf;  // "1.2e+05" -> "1.2e5", "3.0e-04" -> "3.0e-4"
    const std::size_t e = s.find('e');
    std::string exponent = s.substr(e + 1);
    const bool negative = exponent[0] == '-';
    exponent.erase(0, exponent.find_first_not_of("+-0"));
    return s.substr(0, e + 1) + (negative ? "-" : "") + exponent;
  }
  // One more decimal where the usual ones would round a non-zero value to zero (0.004).
  if (v != 0 && magnitude < 0.5 * std::pow(10.0, -decimals)) ++decimals;
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (!keep_zeros && s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string weight_text(double w) { return short_number(w, 2, true); }

// "[1, 2]": one row of a matrix.
std::string row_text(const Matrix& m, int row) {
  std::string out = "[";
  for (int c = 0; c < m.cols(); ++c) out += (c ? ", " : "") + short_number(m(row, c), 2);
  return out + "]";
}

// [SECTION] A grid of numbers that can hide them ("?")

struct GridCell {
  std::string text;
  ImU32 fill = 0;       // 0: the plain frame colour
  std::string tooltip;  // the arithmetic behind the number
};

struct Grid {
  int rows = 0, cols = 0;
  std::vector<GridCell> cells;  // row-major
  std::vector<std::string> row_labels, col_labels;
  bool hidden = false;          // every cell shows "?" (the learner has not revealed it yet)
  GridCell& at(int i, int j) { return cells[static_cast<std::size_t>(i) * cols + j]; }
};

Grid make_grid(int rows, int cols, std::vector<std::string> row_labels, std::vector<std::string> col_labels) {
  Grid g;
  g.rows = rows;
  g.cols = cols;
  g.cells.resize(static_cast<std::size_t>(rows) * cols);
  g.row_labels = std::move(row_labels);
  g.col_labels = std::move(col_labels);
  return g;
}

std::vector<std::string> numbered(const char* word, int count) {
  std::vector<std::string> out;
  for (int i = 1; i <= count; ++i) out.push_back(std::string(word) + " " + std::to_string(i));
  return out;
}

float widest(const std::vector<std::string>& texts, const char* at_least) {
  float w = ImGui::CalcTextSize(at_least).x;
  for (const std::string& t : texts) w = std::max(w, ImGui::CalcTextSize(t.c_str()).x);
  return w;
}

// The cell width fits the widest revealed number, so revealing a stage never moves the layout.
float grid_cell_width(const Grid& g) {
  std::vector<std::string> texts = g.col_labels;
  for (const GridCell& c : g.cells) texts.push_back(c.text);
  return widest(texts, "0.000") + ImGui::GetFontSize();
}

float grid_label_width(const Grid& g) { return widest(g.row_labels, "") + ImGui::GetStyle().ItemSpacing.x; }

ImVec2 grid_size(const Grid& g) {
  const float line = ImGui::GetTextLineHeightWithSpacing();
  return ImVec2(grid_label_width(g) + grid_cell_width(g) * g.cols, line + ImGui::GetFrameHeight() * g.rows);
}

// The row and column labels of a grid whose top left is `origin`; returns where its first cell is.
ImVec2 draw_grid_labels(const Grid& g, ImVec2 origin) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float cell_w = grid_cell_width(g), cell_h = ImGui::GetFrameHeight();
  const ImVec2 grid(origin.x + grid_label_width(g), origin.y + ImGui::GetTextLineHeightWithSpacing());
  const ImU32 label = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  for (int j = 0; j < g.cols && j < static_cast<int>(g.col_labels.size()); ++j) {
    const ImVec2 ts = ImGui::CalcTextSize(g.col_labels[j].c_str());
    dl->AddText(ImVec2(grid.x + cell_w * j + (cell_w - ts.x) * 0.5f, origin.y), label, g.col_labels[j].c_str());
  }
  for (int i = 0; i < g.rows && i < static_cast<int>(g.row_labels.size()); ++i) {
    const ImVec2 ts = ImGui::CalcTextSize(g.row_labels[i].c_str());
    dl->AddText(ImVec2(grid.x - ts.x - ImGui::GetStyle().ItemSpacing.x, grid.y + cell_h * i + (cell_h - ts.y) * 0.5f),
                label, g.row_labels[i].c_str());
  }
  return grid;
}

void draw_grid(const char* id, const Grid& g) {
  const ImVec2 size = grid_size(g), origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, size);
  const bool hovered = ImGui::IsItemHovered();
  int hovered_cell = -1;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float cell_w = grid_cell_width(g), cell_h = ImGui::GetFrameHeight(), gap = std::max(1.0f, cell_h * 0.06f);
  const ImVec2 grid = draw_grid_labels(g, origin);
  const ImU32 label = ImGui::GetColorU32(ImGuiCol_TextDisabled), text = ImGui::GetColorU32(ImGuiCol_Text);
  for (int i = 0; i < g.rows; ++i) {
    for (int j = 0; j < g.cols; ++j) {
      const GridCell& c = g.cells[static_cast<std::size_t>(i) * g.cols + j];
      const ImVec2 a(grid.x + cell_w * j, grid.y + cell_h * i), b(a.x + cell_w - gap, a.y + cell_h - gap);
      const ImU32 fill = g.hidden || !c.fill ? ImGui::GetColorU32(ImGuiCol_FrameBg) : c.fill;
      dl->AddRectFilled(a, b, fill, ImGui::GetStyle().FrameRounding * 0.5f);
      const char* shown = g.hidden ? "?" : c.text.c_str();
      const ImVec2 ts = ImGui::CalcTextSize(shown);
      dl->AddText(ImVec2(a.x + (b.x - a.x - ts.x) * 0.5f, a.y + (b.y - a.y - ts.y) * 0.5f),
                  g.hidden ? label : (c.fill ? text_color_on(c.fill) : text), shown);
      if (hovered && !g.hidden && !c.tooltip.empty() && ImGui::IsMouseHoveringRect(a, b)) {
        dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0, 0, 2.0f);
        hovered_cell = i * g.cols + j;
      }
    }
  }
  // A hidden stage explains nothing (a pin on it is dropped).
  explain_parts(id, g.hidden ? 0 : g.rows * g.cols, hovered_cell, -1, [&](int cell) {
    ImGui::TextUnformatted(g.cells[static_cast<std::size_t>(cell)].tooltip.c_str());
  });
}

// [SECTION] Predictions typed into a hidden stage

const ImU32 kRightFill = IM_COL32(40, 120, 60, 255), kWrongFill = IM_COL32(140, 50, 45, 255);

// A hidden stage as a grid of fields: each takes a typed prediction and turns green (right within
// the rounding) or red as soon as it is left.
void prediction_grid(const AppState& state, AppInputs& next, int stage, const Grid& g, TypedAnswer& draft) {
  const ImVec2 size = grid_size(g), origin = ImGui::GetCursorScreenPos();
  const float cell_w = grid_cell_width(g), cell_h = ImGui::GetFrameHeight(), gap = std::max(1.0f, cell_h * 0.06f);
  const ImVec2 grid = draw_grid_labels(g, origin);
  for (int i = 0; i < g.rows; ++i)
    for (int j = 0; j < g.cols; ++j) {
      const DeriveCellMark mark = derive_cell_mark(state, stage, i, j);
      ImGui::SetCursorScreenPos(ImVec2(grid.x + cell_w * j, grid.y + cell_h * i));
      const int colours = mark.typed.empty() ? 0 : 2;
      if (colours) {
        ImGui::PushStyleColor(ImGuiCol_FrameBg, mark.right ? kRightFill : kWrongFill);
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 255, 255, 255));
      }
      const std::string id = "##" + derive_cell_id(stage, i, j);
      std::string typed;
      if (typed_answer_field(id.c_str(), mark.typed, cell_w - gap, &typed, draft)) {
        if (typed.empty()) next.checks.erase(derive_cell_id(stage, i, j));
        else next.checks[derive_cell_id(stage, i, j)] = CheckAnswer{typed, "", false, false};
      }
      if (colours) ImGui::PopStyleColor(colours);
      publish_item_rect(("derive:cell:" + std::to_string(stage) + ":" + std::to_string(i) + ":" + std::to_string(j)).c_str());
      if (ImGui::IsItemHovered() && !mark.typed.empty())
        ImGui::SetTooltip("%s", !mark.answered ? "Not a number: type digits, a point and a minus sign."
                                : mark.right   ? "Right."
                                               : "Not right yet: try again, or show the answer.");
    }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(size);
}

// Under a stage: how many predictions are right, and the button that shows its numbers.
void stage_marks(const AppState& state, AppInputs& next, int stage, bool hidden, const Eigen::MatrixXd& answers) {
  int answered = 0, right = 0;
  for (int i = 0; i < answers.rows(); ++i)
    for (int j = 0; j < answers.cols(); ++j) {
      const DeriveCellMark m = derive_cell_mark(state, stage, i, j);
      answered += m.answered;
      right += m.right;
    }
  const int total = static_cast<int>(answers.size());
  if (hidden) {
    ImGui::PushID(stage);
    if (ImGui::SmallButton("Show answer")) next.derive_revealed = std::max(next.derive_revealed, stage + 1);
    publish_item_rect(("derive:show:" + std::to_string(stage)).c_str());
    ImGui::PopID();
    ImGui::SameLine();
  }
  if (answered) ImGui::TextColored(right == total ? mark_colour(state, true) : ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled),
                                   "%d of %d right", right, total);
  else ImGui::TextDisabled(hidden ? "type a prediction" : "no predictions");
}

// [SECTION] Blocks laid out left to right, wrapping to a new line when the next does not fit

class Flow {
 public:
  Flow() : right_(ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x) {}
  // Call before drawing a block of this width (as one group).
  void place(float width) {
    const float spacing = ImGui::GetFontSize() * 1.5f;
    if (!first_ && ImGui::GetItemRectMax().x + spacing + width <= right_) ImGui::SameLine(0, spacing);
    else if (!first_) ImGui::Spacing();
    first_ = false;
  }

 private:
  float right_;
  bool first_ = true;
};

// A stage: numbered title, a wrapped line of what to do (padded to `how_height`, so the grids of
// stages side by side start level), then its content, all `width` wide.
void begin_stage(int number, const std::string& title, const std::string& how, float width, float how_height) {
  ImGui::BeginGroup();
  ImGui::Text("%d  %s", number, title.c_str());
  const float top = ImGui::GetCursorPosY();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
  hint(how.c_str());
  ImGui::PopTextWrapPos();
  const float used = ImGui::GetCursorPosY() - top;
  if (used < how_height) ImGui::Dummy(ImVec2(0, how_height - used - ImGui::GetStyle().ItemSpacing.y));
}

float wrapped_height(const std::string& text, float width) {
  return ImGui::CalcTextSize(text.c_str(), nullptr, false, width).y + ImGui::GetStyle().ItemSpacing.y;
}

// [SECTION] Editing Q, K and V

// The last refused edit, kept so its message stays next to the matrix after the field is left.
using Refusal = UiState::Derive::Refusal;

const char* const kMatrixNames[3] = {"Q", "K", "V"};
const char* const kMatrixRoles[3] = {"query: what it looks for", "key: what it offers", "value: what it passes on"};

void matrix_editors(const AppState& state, AppInputs& next, Refusal& refusal) {
  const Matrix* shown[3] = {&state.inputs.derive_q, &state.inputs.derive_k, &state.inputs.derive_v};
  Matrix* target[3] = {&next.derive_q, &next.derive_k, &next.derive_v};
  const float font = ImGui::GetFontSize(), spacing = ImGui::GetStyle().ItemSpacing.x;
  const float label_w = ImGui::CalcTextSize("token 3").x + spacing, group_gap = font;
  // Six cells and the labels across the view's width: narrower cells on a phone, never below a short number's.
  const float room = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize - label_w - group_gap * 2 - spacing * 4;
  const float cell_w = std::clamp(room / 6.0f, font * 1.8f, font * 3.4f);
  const float matrix_w = cell_w * 2 + spacing;
  const float left = ImGui::GetCursorPosX();  // window coordinates, as SameLine takes them

  // One header line: each matrix's name above its two columns.
  for (int m = 0; m < 3; ++m) {
    if (m == 0) ImGui::SetCursorPosX(left + label_w);
    else ImGui::SameLine(left + label_w + m * (matrix_w + group_gap));
    const Rgb& hue = m == 0 ? palette().query : m == 1 ? palette().key : palette().value;  // every view's hues
    ImGui::TextColored(ImVec4(hue.r, hue.g, hue.b, 1.0f), "%s  (3, 2)", kMatrixNames[m]);
  }
  for (int row = 0; row < 3; ++row) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("token %d", row + 1);
    for (int m = 0; m < 3; ++m)
      for (int col = 0; col < 2; ++col) {
        ImGui::SameLine(left + label_w + m * (matrix_w + group_gap) + col * (cell_w + spacing));
        ImGui::PushID(m * 100 + row * 10 + col);
        const bool refused_here = refusal.matrix == m && refusal.row == row && refusal.col == col;
        if (refused_here) ImGui::PushStyleColor(ImGuiCol_FrameBg, IM_COL32(150, 50, 45, 255));
        ImGui::SetNextItemWidth(cell_w);
        float value = (*shown[m])(row, col);
        if (ImGui::InputFloat("##cell", &value, 0.0f, 0.0f, "%g")) {
          if (std::isfinite(value) && std::fabs(value) <= kMaxEntry) {
            (*target[m])(row, col) = value;
            refusal = Refusal{};
          } else {
            refusal = Refusal{m, row, col, value};
          }
        }
        if (refused_here) ImGui::PopStyleColor();
        // The header and the row label say it too: no marker in every box.
        const std::string what = std::string(kMatrixNames[m]) + ", token " + std::to_string(row + 1) + ", dimension " +
                                 std::to_string(col + 1) + " (" + kMatrixRoles[m] + ")";
        explain_item(what.c_str(), false);
        ImGui::PopID();
      }
  }
  ImGui::TextDisabled("Each row is one token: its query, key and value (d = 2 numbers each).");
  if (refusal.matrix >= 0) {
    const float kept = (*shown[refusal.matrix])(refusal.row, refusal.col);
    const std::string typed = std::isfinite(refusal.typed) ? short_number(refusal.typed, 2) : "a number too large";
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 120, 110, 255));
    ImGui::TextWrapped("%s, token %d, dimension %d: %s refused. Use a number from −100 to 100; the cell keeps %s.",
                       kMatrixNames[refusal.matrix], refusal.row + 1, refusal.col + 1, typed.c_str(),
                       short_number(kept, 2).c_str());
    ImGui::PopStyleColor();
  }
  if (state.error_key == "derive" && !state.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 120, 110, 255));
    ImGui::TextWrapped("%s", state.error.c_str());
    ImGui::PopStyleColor();
  }
}

// [SECTION] The six stages

void draw_stages(const AppState& state, AppInputs& next, TypedAnswer& draft) {
  const AttentionTrace& t = state.model.derive;
  const DeriveNumbers& dv = state.views.derive;
  const int revealed = state.inputs.derive_revealed;
  const int T = static_cast<int>(t.weights.rows()), d = static_cast<int>(t.key.cols());
  const std::vector<std::string> tokens = numbered("token", T), keys = numbered("key", T);
  const std::vector<Eigen::MatrixXd>& answers = dv.stage_answers;
  const float min_width = ImGui::GetFontSize() * 14.0f;
  // No-break spaces: "√2 ≈ 1.414" wraps as one piece.
  const std::string root = "√" + std::to_string(d) + "\u00a0≈\u00a0" + short_number(dv.root_d, 3);
  Flow flow;

  // 1: raw scores
  Grid raw = make_grid(T, T, tokens, keys);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) {
      std::string sum;
      for (int k = 0; k < d; ++k)
        sum += (k ? " + " : "") + short_number(t.query(i, k), 2) + "×" + short_number(t.key(j, k), 2);
      raw.at(i, j) = {short_number(t.raw_scores(i, j), 2), 0,
                      "query " + std::to_string(i + 1) + " · key " + std::to_string(j + 1) + " = " + sum + " = " +
                          short_number(t.raw_scores(i, j), 3)};
    }
  // 2: scaled scores
  Grid scaled = make_grid(T, T, tokens, keys);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j)
      scaled.at(i, j) = {short_number(t.scaled_scores(i, j), 3), 0,
                         short_number(t.raw_scores(i, j), 3) + " ÷ " + short_number(dv.root_d, 3) + " = " +
                             short_number(t.scaled_scores(i, j), 3)};
  // 3: exps
  Grid exps = make_grid(T, T, tokens, keys);
  bool any_shift = false;
  for (int i = 0; i < T; ++i) {
    any_shift |= dv.shift(i) != 0;
    for (int j = 0; j < T; ++j) {
      const std::string s = short_number(t.scaled_scores(i, j), 3);
      exps.at(i, j).text = short_number(dv.exps(i, j), 2);
      exps.at(i, j).tooltip = dv.shift(i) == 0 ? "e^" + s + " = " + short_number(dv.exps(i, j), 3)
                                               : "e^(" + s + " − " + short_number(dv.shift(i), 3) + ") = " +
                                                     short_number(dv.exps(i, j), 3) + "  (row max taken off first)";
    }
  }
  // 4: row sums
  Grid sums = make_grid(T, 1, tokens, {"sum"});
  for (int i = 0; i < T; ++i) {
    std::string terms;
    for (int j = 0; j < T; ++j) terms += (j ? " + " : "") + short_number(dv.exps(i, j), 2);
    sums.at(i, 0) = {short_number(dv.row_sums(i), 2), 0, terms + " = " + short_number(dv.row_sums(i), 3)};
  }
  // 5: weights
  Grid weights = make_grid(T, T, tokens, keys);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j)
      weights.at(i, j) = {weight_text(t.weights(i, j)), color_sequential(t.weights(i, j)),
                          short_number(dv.exps(i, j), 3) + " ÷ " + short_number(dv.row_sums(i), 3) + " = " +
                              short_number(t.weights(i, j), 3)};

  // 6's predictions: one field per entry of the output
  Grid output = make_grid(T, static_cast<int>(t.output.cols()), tokens, numbered("dim", static_cast<int>(t.output.cols())));
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < t.output.cols(); ++j) output.at(i, j).text = short_number(t.output(i, j), 2, true);

  Grid* grids[6] = {&raw, &scaled, &exps, &sums, &weights, &output};
  for (int s = 0; s < 6; ++s) grids[s]->hidden = s >= revealed;
  if (any_shift)
    for (int i = 0; i < T; ++i)
      if (dv.shift(i) != 0) exps.row_labels[i] += " *";

  // 6: the weighted sums of the values, written out per token; the result goes on a line of its
  // own when the whole sum does not fit the view.
  std::vector<std::string> sums_of_values, results, lines;
  const bool hide_output = revealed < 6;
  for (int i = 0; i < T; ++i) {
    std::string sum = "token " + std::to_string(i + 1) + ":  ";
    for (int j = 0; j < T; ++j)
      sum += (j ? " + " : "") + (hide_output ? std::string("?") : weight_text(t.weights(i, j))) + "·" +
             row_text(t.value, j);
    std::string result = "≈  [";
    for (int c = 0; c < t.output.cols(); ++c)
      result += (c ? ", " : "") + (hide_output ? std::string("?") : short_number(t.output(i, c), 2, true));
    sums_of_values.push_back(sum);
    results.push_back(result + "]");
    lines.push_back(sum + "  " + results.back());
  }
  if (widest(lines, "") > ImGui::GetContentRegionAvail().x) {
    lines.clear();
    for (int i = 0; i < T; ++i) {
      lines.push_back(sums_of_values[i]);
      lines.push_back("        " + results[i]);
    }
  }

  const char* titles[6] = {"Q·Kᵀ  (3, 3)",     "÷ √d  (3, 3)",    "exp  (3, 3)",
                           "Row sums  (3, 1)", "Weights  (3, 3)", "Output = weights · V  (3, 2)"};
  const std::string hows[6] = {
      "Query i · key j, for every pair. Bigger: a better match.",
      "d = " + std::to_string(d) + ": divide every score by " + root + ".",
      any_shift ? "e to the power of each score. Rows marked * first take off their max (same weights)."
                : "e to the power of each score (plain exp, as on paper).",
      "Add up each row of stage 3.",
      "Each exp ÷ its row sum: every row adds up to 1.",
      "Each token's weights times the rows of V, added up.",
  };
  float widths[6], how_height = 0;
  for (int s = 0; s < 6; ++s) {
    widths[s] = std::max(s < 5 ? grid_size(*grids[s]).x : std::max(widest(lines, ""), grid_size(output).x), min_width);
    how_height = std::max(how_height, wrapped_height(hows[s], widths[s]));
  }
  for (int s = 0; s < 6; ++s) {
    flow.place(widths[s]);
    begin_stage(s + 1, titles[s], hows[s], widths[s], how_height);
    if (s == 5)
      for (const std::string& line : lines) ImGui::TextUnformatted(line.c_str());
    if (grids[s]->hidden) prediction_grid(state, next, s, *grids[s], draft);
    else if (s < 5) draw_grid(titles[s], *grids[s]);
    stage_marks(state, next, s, grids[s]->hidden, answers[s]);
    ImGui::EndGroup();
  }
}

void reveal_controls(const AppState& state, AppInputs& next) {
  const int revealed = state.inputs.derive_revealed, all = AppInputs::kDeriveStages;
  ImGui::BeginDisabled(revealed == 0);
  if (ImGui::Button("Hide all")) next.derive_revealed = 0;
  ImGui::EndDisabled();
  publish_item_rect("derive:hide_all");
  same_line_if_fits(button_width("Reveal next"));
  ImGui::BeginDisabled(revealed >= all);
  if (ImGui::Button("Reveal next")) next.derive_revealed = std::min(revealed + 1, all);
  publish_item_rect("derive:reveal_next");
  same_line_if_fits(button_width("Show all"));
  if (ImGui::Button("Show all")) next.derive_revealed = all;
  ImGui::EndDisabled();
  publish_item_rect("derive:show_all");
  char shown[48];
  std::snprintf(shown, sizeof shown, "%d of %d stages shown", revealed, all);
  same_line_if_fits(ImGui::CalcTextSize(shown).x);
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("%s", shown);
}

}  // namespace

void draw_derive_panel(const AppState& state, Action& action, UiState& ui) {
  AppInputs& next = action.inputs;
  Refusal& refusal = ui.derive.refusal;  // the last refused cell edit, until the next good one
  panel_intro("The lesson's exercise by hand: 3 tokens, d = 2. Change any number of Q, K or V; every stage "
              "below follows at once.");
  ImGui::BeginGroup();
  matrix_editors(state, next, refusal);
  ImGui::EndGroup();
  publish_picture_rect(View::Derive);
  if (ImGui::Button("Lesson's numbers")) {
    next.derive_q = AppInputs::derive_default_qk();
    next.derive_k = AppInputs::derive_default_qk();
    next.derive_v = AppInputs::derive_default_v();
    refusal = Refusal{};
  }
  publish_item_rect("derive:reset");
  ImGui::SameLine();
  ImGui::AlignTextToFramePadding();
  hint("Q = K = [[1, 0], [0, 1], [1, 1]], V = [[1, 2], [3, 4], [5, 6]]");

  ImGui::Separator();
  paragraph("Predict, then reveal: work out a hidden stage on paper, type your numbers into its cells (Enter "
            "or Tab to the next), and each turns green when it is right or red when not. Then show it and "
            "compare; hover a number to see the sum behind it.");
  hint((std::string("A prediction counts as right within ") + kRoundingRule + ".").c_str());
  reveal_controls(state, next);
  ImGui::Spacing();
  draw_stages(state, next, ui.typed_answer);

  if (state.inputs.derive_revealed >= AppInputs::kDeriveStages) {
    ImGui::Spacing();
    ImGui::Separator();
    hint("Each output row is a blend of the rows of V, mixed by how well that token's query matched each key.");
    const std::vector<RoundingGap>& gaps = state.views.derive.rounding_gaps;
    if (!gaps.empty()) {
      const RoundingGap& g = gaps.front();
      char note[320];
      std::snprintf(note, sizeof note,
                    "The outputs use the unrounded weights. Worked with the weights as printed (two decimals), "
                    "token %d's entry %d comes to %.2f, not %.2f: a last-digit difference, not an error%s.",
                    g.token + 1, g.column + 1, g.by_hand, g.output, gaps.size() > 1 ? " (other entries too)" : "");
      hint(note);
    }
    if (state.model.derive.weights.maxCoeff() > 0.99f)
      hint("Some rows here are nearly one-hot: with scores this far apart, softmax all but picks a single "
           "value (the Break view shows what that does to learning).");
  }
}

}  // namespace attn::ui
