// The mistakes view: the lesson's common mistakes as switches, one on at a time, each computed for
// real by the core, its symptom shown where it happens, beside the correct weights.
// Not the maths: the mistaken numbers are the app's trace; the correct ones are attend() run again
// on the same Q, K, V without the mistake.
//
// [SECTION] The mistakes and what to say about them
// [SECTION] Measurements (shared by the drawing and by view_data)
// [SECTION] The weight matrix with its row and column sums
// [SECTION] Per-mistake evidence
// [SECTION] draw_mistakes_panel
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "family_panels.h"
#include "../state/mistakes_view.h"
#include "layout.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {


namespace {

using nlohmann::json;

constexpr float kSumTolerance = 0.005f;  // a sum that prints as 1.00 is fine
constexpr float kOneHot = 0.99f;         // diagnose()'s threshold for an almost one-hot row
// The theme's warning and good colours (readable on either theme: tests/unit/test_palette.cpp).
ImVec4 bad_color() { return ImGui::ColorConvertU32ToFloat4(color(palette().warning)); }
ImVec4 good_color() { return ImGui::ColorConvertU32ToFloat4(color(palette().good)); }

// ---------------------------------------------------------------------------------------------
// [SECTION] The mistakes and what to say about them
// ---------------------------------------------------------------------------------------------

struct MistakeText {
  Mistake mistake;
  const char* label;  // the radio button
  const char* wrong;  // what is wrong in the computation
  const char* see;    // what you would see
  const char* fix;
};

constexpr MistakeText kMistakes[] = {
    {Mistake::None, "None (correct)",
     "Nothing: scores = Q·Kᵀ/√d, the mask (if on) is −∞ before the softmax, the "
     "softmax runs along each row, and the output is A·V.",
     "Every row of weights adds up to 1, and with the mask on no token gives weight to a later one.",
     "Pick a mistake above to see what it breaks."},
    {Mistake::ForgetScale, "Forget √d", "The scores Q·Kᵀ go into the softmax without being divided by √d.",
     "With wide vectors the scores are large and far apart, so each row piles its weight onto one key (almost "
     "one-hot). The softmax then passes almost no gradient back, and those rows stop learning.",
     "Multiply the scores by 1/√d before the softmax."},
    {Mistake::SoftmaxWrongAxis, "Softmax on the wrong axis",
     "The softmax normalises down each column (over the queries) instead of along each row (over the keys).",
     "Each column adds up to 1 and the rows add up to anything. A token's output is no longer an average of "
     "values: it can be too large, too small, or nearly empty.",
     "Normalise each row: the softmax must run over the keys, the last axis of the (T, T) scores."},
    {Mistake::MaskAfterSoftmax, "Mask after the softmax",
     "The softmax runs over every key, later tokens included; only then are the later weights set to 0.",
     "The rows add up to less than 1 (all but the last). The later tokens still took their share of the total, "
     "so they changed the weights of the earlier ones: the future leaks in. The leak lasts only as long as "
     "nobody renormalises: divide each row by its new sum and the weights are exactly the correct ones again.",
     "Set the later scores to −∞ before the softmax, so they never enter the total (or renormalise each row "
     "after zeroing, which gives the same weights at the cost of a second pass)."},
    {Mistake::MaskWithZero, "Mask with 0, not −∞",
     "The scores of later tokens are set to 0 instead of −∞ before the softmax.",
     "exp(0) = 1, not 0: every later token keeps a share of the weight. The model can read the words it is "
     "supposed to predict.",
     "Fill with −∞ (or a very large negative number), so exp gives exactly 0."},
    {Mistake::SwapKeysValues, "Swap keys and values",
     "The query is matched against the values, and the keys are passed on as the content.",
     "Matching now uses what a token would hand on, not what it offers to be found by, and the output is a "
     "blend of keys. The weights still look like valid weights: no sum gives it away.",
     "Scores from Q·Kᵀ (keys are for matching); output from A·V (values are the content)."},
};

const MistakeText& text_for(Mistake m) {
  for (const MistakeText& t : kMistakes)
    if (t.mistake == m) return t;
  return kMistakes[0];
}
// ---------------------------------------------------------------------------------------------
// [SECTION] Measurements
// ---------------------------------------------------------------------------------------------


// ---------------------------------------------------------------------------------------------
// [SECTION] The weight matrix with its row and column sums
// ---------------------------------------------------------------------------------------------

struct MatrixLayout {
  float cell = 0;        // row height (and width)
  float cell_width = 0;  // narrower columns where ten are too wide for a phone (0: square cells)
  float column() const { return cell_width > 0 ? cell_width : cell; }
  float label_width = 0;
  float max_label = 0;  // longer token names are shortened with "…"
  bool show_row_max = false;  // the "forget √d" mistake: each row's largest weight
};

// Tighter on a phone, where the forget-√d mistake's two columns must fit beside ten cells.
float sums_column_width() {
  return ImGui::CalcTextSize("0.00").x + ImGui::GetStyle().ItemSpacing.x * (layout().narrow ? 1.0f : 2.0f);
}

float matrix_block_width(const AppState& state, const MatrixLayout& layout) {
  const float extra = sums_column_width() * (layout.show_row_max ? 2.0f : 1.0f);
  return layout.label_width + layout.column() * static_cast<float>(state.model.trace.weights.cols()) + extra;
}

// How many decimals fit in `width` ("0.00", then "0.0"), or -1 when no number does.
int decimals_that_fit(float width) {
  for (int decimals = 2; decimals >= 1; --decimals)
    if (ImGui::CalcTextSize(number_text(0.5f, decimals).c_str()).x <= width - 2.0f) return decimals;
  return -1;
}

// One number under a column or right of a row: red on a dark red band when it is flagged.
void sum_text(ImDrawList* dl, ImVec2 pos, float width, float height, float value, bool flagged) {
  const float line = ImGui::GetTextLineHeight();
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const int decimals = decimals_that_fit(width);
  if (decimals < 0 || height < line) {  // too small for digits: a mark, red where flagged
    dl->AddRectFilled(ImVec2(pos.x + 1, pos.y + 1), ImVec2(pos.x + width - 1, pos.y + std::min(height, line) - 1),
                      flagged ? ImGui::GetColorU32(bad_color()) : color(palette().box_border));
    return;
  }
  const std::string text = number_text(value, decimals);
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  const ImVec2 at(pos.x + (width - size.x) * 0.5f, pos.y + (height - line) * 0.5f);
  if (flagged) dl->AddRectFilled(ImVec2(at.x - 2, pos.y + 1), ImVec2(at.x + size.x + 2, pos.y + height - 1), color(palette().warning, 0.16f));
  dl->AddText(at, flagged ? ImGui::GetColorU32(bad_color()) : dim, text.c_str());
}

// The weights of `trace` as a heatmap, each row's sum at its right (red when not 1), each column's
// sum underneath, optionally each row's largest weight (red above 0.99), and the later keys that
// still get weight under the causal mask outlined in red.
void weights_with_sums(const char* id, const char* caption, const AppState& state, const AttentionTrace& trace,
                       const MatrixLayout& layout) {
  const int rows = static_cast<int>(trace.weights.rows()), cols = static_cast<int>(trace.weights.cols());
  const std::vector<std::string> queries = query_labels(state), keys = key_labels(state);
  std::vector<std::string> row_labels(queries.size()), col_labels(keys.size());
  for (std::size_t i = 0; i < queries.size(); ++i) row_labels[i] = fit_text(queries[i], layout.max_label);
  for (std::size_t j = 0; j < keys.size(); ++j) col_labels[j] = fit_text(keys[j], layout.max_label);
  const Matrix shown = weights_for_display(trace);
  const ImGuiStyle& style = ImGui::GetStyle();
  const float line = ImGui::GetTextLineHeight(), cell = layout.cell, cell_w = layout.column();
  const float sums_w = sums_column_width();

  ImGui::BeginGroup();
  ImGui::TextUnformatted(caption);
  HeatmapStyle s;
  s.cell = cell;
  s.cell_width = layout.cell_width;
  s.show_values = true;
  s.highlight_row = state.inputs.token;
  s.row_labels = &row_labels;
  s.col_labels = &col_labels;
  s.row_label_color = color(palette().query);  // rows are queries, columns keys: their hues
  s.col_label_color = color(palette().key);
  s.label_width = layout.label_width;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size = heatmap_size(rows, cols, s);
  const HeatmapHover hover = heatmap(id, shown.data(), rows, cols, s);
  const ImVec2 grid(origin.x + layout.label_width, origin.y + size.y - cell * static_cast<float>(rows));
  ImDrawList* dl = ImGui::GetWindowDrawList();

  // The future leaking in: outline every later key that still has weight.
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      if (leaks(trace, i, j)) {
        const ImVec2 a(grid.x + cell_w * j, grid.y + cell * i);
        dl->AddRect(ImVec2(a.x + 1, a.y + 1), ImVec2(a.x + cell_w - 2, a.y + cell - 2), ImGui::GetColorU32(bad_color()), 0, 0,
                    std::max(2.0f, cell * 0.07f));
      }

  // Right of the rows: their sums, then (forget √d) their largest weights.
  const float sums_x = grid.x + cell_w * static_cast<float>(cols) + style.ItemSpacing.x * 0.5f;
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->AddText(
      ImVec2(sums_x + (sums_w - ImGui::CalcTextSize("sum").x) * 0.5f, grid.y - line - style.ItemSpacing.y * 0.5f), dim,
      "sum");
  if (layout.show_row_max)
    dl->AddText(ImVec2(sums_x + sums_w + (sums_w - ImGui::CalcTextSize("max").x) * 0.5f,
                       grid.y - line - style.ItemSpacing.y * 0.5f),
                dim, "max");
  for (int i = 0; i < rows; ++i) {
    const float sum = trace.weights.row(i).sum(), largest = trace.weights.row(i).maxCoeff();
    const ImVec2 at(sums_x, grid.y + cell * i);
    sum_text(dl, at, sums_w, cell, sum, std::fabs(sum - 1.0f) > kSumTolerance);
    // A row that sees a single key (the first one under the mask) is one-hot by necessity, not a symptom.
    if (layout.show_row_max)
      sum_text(dl, ImVec2(at.x + sums_w, at.y), sums_w, cell, largest, largest > kOneHot && visible_keys(trace, i) > 1);
  }

  // Under the columns: their sums (they need not be 1; under the wrong-axis mistake they are).
  const float bottom = grid.y + cell * static_cast<float>(rows) + style.ItemSpacing.y * 0.5f;
  dl->AddText(ImVec2(grid.x - ImGui::CalcTextSize("sum").x - style.ItemSpacing.x * 0.5f, bottom), dim, "sum");
  for (int j = 0; j < cols; ++j)
    sum_text(dl, ImVec2(grid.x + cell_w * j, bottom), cell_w, line, trace.weights.col(j).sum(), false);

  // Presentation mode explains the selected token's strongest weight first.
  const int token = std::clamp(state.inputs.token, 0, rows - 1);
  Eigen::Index strongest = 0;
  trace.weights.row(token).maxCoeff(&strongest);
  explain_parts(id, rows * cols, hover.row >= 0 ? hover.row * cols + hover.col : -1,
                token * cols + static_cast<int>(strongest), [&](int cell) {
    const int row = cell / cols, col = cell % cols;
    ImGui::Text("'%s' looking at '%s': weight %s%s", queries[row].c_str(), keys[col].c_str(),
                std::isfinite(shown(row, col)) ? number_text(trace.weights(row, col), 3).c_str() : "0 (hidden by the mask)",
                leaks(trace, row, col) ? "\nA later token with weight: the mask leaks." : "");
  });
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(matrix_block_width(state, layout), size.y + line + style.ItemSpacing.y));
  ImGui::EndGroup();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Per-mistake evidence
// ---------------------------------------------------------------------------------------------

// The four measured symptoms, correct vs with the mistake; the ones this mistake is about in colour.
void symptoms_table(const AppState& state, const Symptoms& correct, const Symptoms& mistaken) {
  const Mistake m = state.inputs.mistake;
  const bool causal = causal_shown(state);
  struct Line {
    const char* name;
    std::string correct, mistaken;
    bool about_this_mistake;
  };
  const Line lines[] = {
      {"largest |row sum − 1|", number_text(correct.max_row_sum_error, 3), number_text(mistaken.max_row_sum_error, 3),
       m == Mistake::SoftmaxWrongAxis || m == Mistake::MaskAfterSoftmax},
      {"largest |column sum − 1|", number_text(correct.max_col_sum_error, 3),
       number_text(mistaken.max_col_sum_error, 3), m == Mistake::SoftmaxWrongAxis},
      {"largest weight on a later token", causal ? number_text(correct.future_weight, 3) : "(mask off)",
       causal ? number_text(mistaken.future_weight, 3) : "(mask off)", m == Mistake::MaskWithZero},
      {"rows almost one-hot (max > 0.99)", percent(correct.frac_one_hot), percent(mistaken.frac_one_hot),
       m == Mistake::ForgetScale},
  };
  // Where the names and numbers do not fit on one line each (a phone), the names wrap in a column
  // that takes what the numbers leave.
  const ImGuiStyle& style = ImGui::GetStyle();
  float longest = 0;
  for (const Line& l : lines) longest = std::max(longest, ImGui::CalcTextSize(l.name).x);
  const float numbers = ImGui::CalcTextSize("correct").x + ImGui::CalcTextSize("with the mistake").x;
  const float width = ImGui::GetContentRegionAvail().x - style.ScrollbarSize;
  const bool wrap_names = longest + numbers + style.CellPadding.x * 6.0f + 2.0f > width;
  ImGuiTableFlags flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV;
  if (!wrap_names) flags |= ImGuiTableFlags_NoHostExtendX;
  if (!ImGui::BeginTable("##symptoms", 3, flags, ImVec2(wrap_names ? width : 0.0f, 0))) return;
  ImGui::TableSetupColumn("measured", wrap_names ? ImGuiTableColumnFlags_WidthStretch : ImGuiTableColumnFlags_None);
  ImGui::TableSetupColumn("correct");
  ImGui::TableSetupColumn("with the mistake");
  ImGui::TableHeadersRow();
  for (const Line& l : lines) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushTextWrapPos(wrap_names ? 0.0f : -1.0f);  // 0: at the column's edge, not the view's
    ImGui::TextUnformatted(l.name);
    ImGui::PopTextWrapPos();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(l.correct.c_str());
    ImGui::TableNextColumn();
    const bool changed = l.correct != l.mistaken;
    if (l.about_this_mistake && changed)
      ImGui::TextColored(bad_color(), "%s", l.mistaken.c_str());
    else
      ImGui::TextUnformatted(l.mistaken.c_str());
  }
  ImGui::EndTable();
}

// What / see / fix, as three labelled paragraphs.
void mistake_explanation(const MistakeText& text) {
  if (!ImGui::BeginTable("##explain", 2, ImGuiTableFlags_SizingStretchProp)) return;
  ImGui::TableSetupColumn("label", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("What is wrong").x);
  ImGui::TableSetupColumn("text", ImGuiTableColumnFlags_WidthStretch);
  const bool none = text.mistake == Mistake::None;
  const char* labels[] = {none ? "The recipe" : "What is wrong", "What you see", none ? "Try" : "The fix"};
  const char* texts[] = {text.wrong, text.see, text.fix};
  for (int k = 0; k < 3; ++k) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const ImVec4 dim = ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
    ImGui::TextColored(none ? dim : (k == 2 ? good_color() : (k == 0 ? bad_color() : dim)), "%s", labels[k]);
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", texts[k]);
  }
  ImGui::EndTable();
}

// Forget √d: the share of one-hot rows and what to expect at d = 4, with the way to d = 512.
void forget_scale_evidence(const AppState& state, const AttentionTrace& correct, AppInputs& next) {
  const AttentionTrace& t = state.model.trace;
  const int row = state.inputs.token;
  const int d = static_cast<int>(t.key.cols());
  ImGui::TextWrapped("Row %s: largest weight %s with the division, %s without it.",
                     ("'" + state.model.queries.tokens[row].text + "'").c_str(),
                     number_text(correct.weights.row(row).maxCoeff(), 2).c_str(),
                     number_text(t.weights.row(row).maxCoeff(), 2).c_str());
  // Rows that see a single key are one-hot whatever the scale: count only the others.
  int one_hot_rows = 0, rows_with_choice = 0;
  for (int i = 0; i < static_cast<int>(t.weights.rows()); ++i) {
    if (visible_keys(t, i) < 2) continue;
    ++rows_with_choice;
    one_hot_rows += t.weights.row(i).maxCoeff() > kOneHot;
  }
  char note[400];
  std::snprintf(note, sizeof note,
                "In this small example (d = %d), leaving out the division multiplies the scores by only √%d = %s: the "
                "rows sharpen, and %d of the %d rows that have a choice pass 0.99. At d = 512 the factor is about 23: "
                "the Break view runs that test.",
                d, d, number_text(std::sqrt(static_cast<float>(d)), 0).c_str(), one_hot_rows, rows_with_choice);
  hint(note);
  if (ImGui::Button("Open the Break view (d = 512)")) next.view = View::Break;
  publish_item_rect("mistake:open_break");
}

// Swap keys and values: the scores now come from Q·Vᵀ, and the keys are what gets blended.
void swap_evidence(const AppState& state, const AttentionTrace& correct, float width) {
  const AttentionTrace& t = state.model.trace;
  const int row = state.inputs.token, keys = static_cast<int>(t.raw_scores.cols());
  const std::vector<std::string> key_names = key_labels(state);
  ImGui::TextWrapped("The scores of %s, before scaling: q·k (correct) and q·v (the mistake, what Q·Vᵀ gives).",
                     ("'" + state.model.queries.tokens[row].text + "'").c_str());
  Matrix both(2, keys);
  both.row(0) = correct.raw_scores.row(row);
  both.row(1) = t.raw_scores.row(row);
  const std::vector<std::string> row_names = {"q·k", "q·v"};
  HeatmapStyle s;
  s.signed_values = true;
  s.range = std::max(both.cwiseAbs().maxCoeff(), 1e-6f);
  s.show_values = true;
  s.value_decimals = 1;
  s.row_labels = &row_names;
  s.col_labels = &key_names;
  s.col_label_color = color(palette().key);
  s.cell = std::clamp((width - ImGui::CalcTextSize("q·v").x - ImGui::GetFontSize()) / static_cast<float>(keys),
                      ImGui::GetTextLineHeight() + 1.0f, ImGui::GetFontSize() * 2.4f);
  const HeatmapHover hover = heatmap("##swap_scores", both.data(), 2, keys, s);
  explain_parts("##swap_scores", 2 * keys, hover.row >= 0 ? hover.row * keys + hover.col : -1, -1, [&](int cell) {
    ImGui::Text("%s with %s: %s", row_names[cell / keys].c_str(), key_names[cell % keys].c_str(),
                number_text(both(cell / keys, cell % keys), 3).c_str());
  });

  // This hand-made model's keys may be a multiple of its values (both read the same word features):
  // then the swap only rescales, and that is worth saying rather than hiding.
  const float vv = t.value.squaredNorm();
  if (!real_model(state) && t.key.cols() == t.value.cols() && vv > 0) {
    const float ratio = (t.key.array() * t.value.array()).sum() / vv;
    if ((t.key - t.value * ratio).norm() <= 1e-4f * std::max(1.0f, t.key.norm())) {
      char note[400];
      std::snprintf(note, sizeof note,
                    "In this hand-made model every key is exactly %s × its value (both are built from the same word "
                    "features), so the swap only shrinks the scores and enlarges the outputs. In a trained model "
                    "keys and values are learned for different jobs, and the swap makes tokens match on the wrong "
                    "thing.",
                    number_text(ratio, 2).c_str());
      hint(note);
    }
  }
  const std::vector<std::string> dims = column_names(state, Columns::Value, static_cast<int>(t.output.cols()));
  Matrix outputs(2, t.output.cols());
  outputs.row(0) = correct.output.row(row);
  outputs.row(1) = t.output.row(row);
  const std::vector<std::string> output_rows = {"A·V (correct)", "A·K (mistake)"};
  HeatmapStyle o;
  o.signed_values = true;
  o.range = std::max(outputs.cwiseAbs().maxCoeff(), 1e-6f);
  o.show_values = true;
  o.row_labels = &output_rows;
  o.col_labels = &dims;
  o.cell = ImGui::GetFontSize() * 2.6f;
  if (outputs.cols() > 16) {  // a real model's head: two strips of colour, the tooltip has the numbers
    o.col_labels = nullptr;
    o.show_values = false;
    o.cell = ImGui::GetFontSize() * 1.2f;
    o.cell_width = std::min(o.cell, ImGui::GetFontSize() * 20.0f / static_cast<float>(outputs.cols()));
  }
  ImGui::Spacing();
  ImGui::TextUnformatted("Its output: a blend of values (correct) or of keys (the mistake).");
  heatmap("##swap_outputs", outputs.data(), 2, static_cast<int>(outputs.cols()), o);
}

// The radio buttons, wrapped onto as many lines as the width needs.
void mistake_switches(const AppState& state, AppInputs& next, float width) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float left = ImGui::GetCursorScreenPos().x;
  bool first = true;
  for (const MistakeText& m : kMistakes) {
    const float w = ImGui::GetFrameHeight() + style.ItemInnerSpacing.x + ImGui::CalcTextSize(m.label).x;
    if (!first) {
      ImGui::SameLine(0, style.ItemSpacing.x * 2.0f);
      if (ImGui::GetCursorScreenPos().x + w > left + width) ImGui::NewLine();
    }
    first = false;
    if (ImGui::RadioButton(m.label, state.inputs.mistake == m.mistake)) next.mistake = m.mistake;
    publish_item_rect((std::string("mistake:") + mistake_name(m.mistake)).c_str());
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] draw_mistakes_panel
// ---------------------------------------------------------------------------------------------

// The mistake's name as the learner reads it ("Mask with 0, not −∞"); panel_steps.cpp names it too.
const char* mistake_label(Mistake m) { return text_for(m).label; }

void draw_mistakes_panel(const AppState& state, Action& action, UiState&) {
  AppInputs& next = action.inputs;
  const AttentionTrace& t = state.model.trace;
  const Mistake m = state.inputs.mistake;
  const MistakeText& text = text_for(m);
  const float font = ImGui::GetFontSize();
  // The view scrolls sideways, so ImGui counts the room under its vertical scrollbar as free.
  const float width = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);

  panel_intro(
      "The lesson's common mistakes, each computed for real. Switch one on and compare with the correct "
      "weights: the symptom is marked where it happens.");
  head_banner(state);
  // With little height (a small embed, a phone on its side) the weights come first, the switches after.
  const bool matrices_first = layout().short_height;
  if (!matrices_first) {
    mistake_switches(state, next, width);
    ImGui::Spacing();
    mistake_explanation(text);
  }
  const AttentionTrace& correct = state.model.without_mistake;
  if (const std::string note = own_factor_note(state, correct); !note.empty()) hint(note.c_str());

  if (needs_causal(m) && !causal_shown(state)) {
    ImGui::PushStyleColor(ImGuiCol_Text, bad_color());
    ImGui::TextWrapped("This mistake is about the causal mask, which is off: without the mask it changes nothing.");
    ImGui::PopStyleColor();
    if (ImGui::Button("Turn on the causal mask")) next.causal = true;
    publish_item_rect("mistake:causal_on");
  }
  if (m == Mistake::SwapKeysValues) {
    ImGui::Spacing();
    swap_evidence(state, correct, width);
  }

  // Side by side while both fit with cells big enough for their numbers; else one above the other.
  MatrixLayout layout;
  layout.show_row_max = m == Mistake::ForgetScale;
  layout.max_label = font * (width < font * 26.0f ? 4.0f : 6.0f);  // a phone: shorter names, room for the cells
  float label_width = 0;
  for (const std::string& q : query_labels(state))
    label_width = std::max(label_width, ImGui::CalcTextSize(fit_text(q, layout.max_label).c_str()).x);
  layout.label_width = label_width + ImGui::GetStyle().ItemSpacing.x;
  const float fixed = layout.label_width + sums_column_width() * (layout.show_row_max ? 2.0f : 1.0f);
  const float cols = static_cast<float>(t.weights.cols());
  const bool compare = m != Mistake::None;
  const float gap = font * 1.5f;
  const float beside_cell = (width - gap - fixed * 2.0f) / (cols * 2.0f);
  const bool beside = compare && beside_cell >= font * 1.2f;  // the sums carry the symptom even without cell digits
  const float fitting = beside ? beside_cell : (width - fixed) / cols;
  layout.cell = std::clamp(fitting, ImGui::GetTextLineHeight() + 1.0f, font * 2.4f);
  // A phone: rows stay tall enough for the sums' digits, the columns narrow to the width (down to
  // about a letter: the vertical key names still read).
  if (fitting < layout.cell) layout.cell_width = std::max(fitting, font * 0.85f);

  ImGui::Spacing();
  ImGui::Separator();
  ImGui::Spacing();
  HeatmapStyle legend_style;
  legend("weight", legend_style, font * 7.0f);
  if (causal_shown(state)) {
    same_line_if_fits(ImGui::GetTextLineHeight() * 1.5f + ImGui::GetStyle().ItemSpacing.x +
                          ImGui::CalcTextSize("hidden by the mask").x,
                      font * 1.5f);
    masked_legend("hidden by the mask");
  }
  // Beside each other: correct on the left. One above the other: the mistake first, where its
  // symptom is, so a small window shows it without scrolling.
  const std::string mistaken_caption = std::string("With the mistake: ") + text.label;
  if (compare && !beside) {
    weights_with_sums("##mistaken", mistaken_caption.c_str(), state, t, layout);
    publish_picture_rect(View::Mistakes);
    ImGui::Spacing();
  }
  weights_with_sums("##correct", compare ? "Correct" : "Correct (no mistake is on)", state, correct, layout);
  if (!compare || beside) publish_picture_rect(View::Mistakes);
  if (compare && beside) {
    ImGui::SameLine(0, gap);
    weights_with_sums("##mistaken", mistaken_caption.c_str(), state, t, layout);
  }
  if (matrices_first) {
    ImGui::Spacing();
    mistake_switches(state, next, width);
    ImGui::Spacing();
    mistake_explanation(text);
  }
  hint(
      "Red marks a symptom: a row that does not add up to 1, a row's largest weight above 0.99, or a later "
      "token that still gets weight under the causal mask. Columns need not add up to 1.");
  if (m == Mistake::ForgetScale) forget_scale_evidence(state, correct, next);
  if (m == Mistake::MaskAfterSoftmax && causal_shown(state)) {
    char note[320];
    std::snprintf(note, sizeof note,
                  "Renormalised (each row divided by its sum), the leaked weights differ from the correct ones by at "
                  "most %s: the future leaks in only while the rows are left unnormalised.",
                  number_text(renormalised_error(t.weights, correct.weights), 6).c_str());
    hint(note);
  }

  ImGui::Spacing();
  ImGui::TextUnformatted("Measured over the whole matrix");
  symptoms_table(state, diagnose(correct), diagnose(t));
  if (m == Mistake::SwapKeysValues)
    hint(
        "None of these numbers catches this mistake: the weights are still proper rows of weights. The scores "
        "above show where it happens.");
  if (causal_shown(state))
    hint(
        "Under the causal mask the first token sees only itself, so its row is always one-hot: that is not a "
        "symptom.");
  ImGui::PopTextWrapPos();
}


}  // namespace attn::ui
